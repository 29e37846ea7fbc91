//! A TF1 `.meta` file (`model.ckpt.meta`): a bare serialized `MetaGraphDef`, as
//! `tf.compat.v1.train.Saver().save` and `tf.compat.v1.train.export_meta_graph` write it, read
//! as `tf.compat.v1.train.import_meta_graph` reads it. What that does, in TensorFlow v2.21.0
//! (the tensorflow-cpu 2.21.0 wheel's sources):
//!
//! * `tensorflow/python/training/saver.py`, `import_meta_graph` →
//!   `_import_meta_graph_with_return_elements`: parses the file (`meta_graph.
//!   read_meta_graph_file`: `MetaGraphDef.ParseFromString`, text format if that fails), imports
//!   it, and returns `Saver(saver_def=...)` (`_create_saver_from_imported_meta_graph`), whose
//!   `restore(sess, prefix)` runs `restore_op_name` feeding the checkpoint prefix to
//!   `filename_tensor_name`;
//! * `tensorflow/python/framework/meta_graph.py`,
//!   `import_scoped_meta_graph_with_return_elements`: `importer.import_graph_def` of the graph
//!   (which runs nothing: every op runs when a session runs it), then every collection restored
//!   ([`crate::collection_defs::collections`]): a `bytes_list` whose name has a registered `from_proto` function is
//!   parsed as that function's proto and handed to it; any other collection is added as its
//!   values are (node names looked up in the graph, numbers and bytes kept).
//!
//! `asset_file_def`, `signature_def` and `object_graph_def` are not read by it (the
//! SavedModel loaders read them): they are reported, not judged. No init op runs.
//!
//! The graph is judged by the SavedModel reader's own code ([`crate::savedmodel::meta_graph`]
//! with [`Loader::ImportMetaGraph`]): the same op rules, the checkpoint ops allowed only in the
//! saver's own subgraph over the file name `saver.restore` feeds, the restore op's inputs what
//! runs when the model is loaded. The checkpoint beside the file (`model.ckpt.index`) is the
//! checkpoint reader's.

use crate::decode::decode;
use crate::outcome::Reading;
use crate::proto::schema::{MESSAGES, META_GRAPH_DEF};
use crate::proto::tensorflow::MetaGraphDef;
use crate::savedmodel::{meta_graph, Loader, MetaGraphAt, Totals};
use bytes::Bytes;
use socair_plugin_api::{Finding, OpenedFile, RowStatus, Severity};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::protobuf::text::{to_wire, Names, TextError};
use socair_plugin_kit::report::refused_as;

/// The format name.
pub const FORMAT: &str = "tf-metagraph";

/// Reads a `.meta` file: in the wire format, else (when it does not decode and opens like
/// one) in protobuf's text format, as `meta_graph.read_meta_graph_file` reads it
/// (`ParseFromString`, then `text_format.Merge` of the file decoded as UTF-8).
pub fn read(file: Bytes) -> OpenedFile {
    let mut out = Reading::new(FORMAT, file.len() as u64);
    let (mg, data, text): (MetaGraphDef, Bytes, bool) = match decode(
        &file,
        META_GRAPH_DEF,
        "meta_graph",
    ) {
        Ok((mg, walked)) => {
            out.walked(&walked);
            (mg, file, false)
        }
        Err(e) if !crate::looks_like_meta_graph_text(&file[..file.len().min(4096)]) => {
            return e.refused(
                FORMAT,
                "not a sound MetaGraphDef: readers may disagree on what it holds",
            )
        }
        Err(_) => {
            let wire = match from_text(&file) {
                Ok(wire) => Bytes::from(wire),
                Err(why) => return text_refused(&why),
            };
            match decode(&wire, META_GRAPH_DEF, "meta_graph") {
                    Ok((mg, walked)) => {
                        out.walked(&walked);
                        (mg, wire, true)
                    }
                    Err(e) => {
                        return e.refused(
                            FORMAT,
                            "a text MetaGraphDef whose message is not sound: readers may disagree on what it holds",
                        )
                    }
                }
        }
    };
    let mut totals = Totals::default();
    let at = MetaGraphAt {
        prefix: "",
        name_prefix: "",
        loader: Loader::ImportMetaGraph,
    };
    meta_graph(&mg, &at, &data, &mut out, &mut totals);
    if text {
        out.metadata
            .push(("tensorflow.meta_graph_format".into(), "text".into()));
        // The tensors located in the wire bytes made from the text lie nowhere in the file:
        // they are carried as their bytes.
        inline_ranges(&mut out, &data);
    }
    if let Some(sd) = &mg.saver_def {
        out.metadata.push((
            "tensorflow.saver_restore_op".into(),
            short(&sd.restore_op_name),
        ));
    }
    let unread: Vec<&str> = [
        ("signature_def", !mg.signature_def.is_empty()),
        ("object_graph_def", mg.object_graph_def.is_some()),
        ("asset_file_def", !mg.asset_file_def.is_empty()),
    ]
    .into_iter()
    .filter_map(|(name, present)| present.then_some(name))
    .collect();
    if !unread.is_empty() {
        out.metadata.push((
            "tensorflow.parts_import_meta_graph_does_not_read".into(),
            unread.join(", "),
        ));
    }
    let version = totals.version.clone();
    out.finish(|status| match status {
        RowStatus::Fail => "TensorFlow MetaGraphDef (.meta) holding what reads or writes files, runs code or reaches the network, or that loaders would read differently: see the findings".into(),
        RowStatus::Lead => format!(
            "TensorFlow MetaGraphDef (.meta, TensorFlow {version}) with parts this reader does not prove: {} nodes in the graph and {} functions judged",
            thousands(totals.nodes),
            thousands(totals.functions)
        ),
        _ => format!(
            "TensorFlow MetaGraphDef (.meta, TensorFlow {version}): {} nodes in the graph and {} functions judged, every op computational; {} checkpoint ops only in the saver's own subgraph over the file name saver.restore feeds; {} collection values parsed as the protos import_meta_graph rebuilds objects from, {} collections of bytes kept as bytes; importing runs nothing (its variables are in the checkpoint its saver restores)",
            thousands(totals.nodes),
            thousands(totals.functions),
            thousands(totals.saver_ops),
            thousands(totals.collection_protos),
            thousands(totals.collections_of_bytes)
        ),
    })
}

/// The wire bytes of a text-format `MetaGraphDef` (the file as UTF-8, then
/// `text_format.Merge`'s reading of it: [`socair_plugin_kit::protobuf::text`]).
fn from_text(file: &[u8]) -> Result<Vec<u8>, TextError> {
    if let Err(e) = std::str::from_utf8(file) {
        return Err(TextError {
            line: 1 + file[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
            column: 1,
            message: format!(
                "byte {} is not UTF-8 (the loader decodes the whole file as UTF-8 first)",
                e.valid_up_to()
            ),
        });
    }
    let enum_value = |name: &str| -> Option<i64> {
        use crate::proto::tensorflow as tf;
        tf::DataType::from_str_name(name)
            .map(|v| v as i64)
            .or_else(|| tf::FullTypeId::from_str_name(name).map(|v| v as i64))
            .or_else(|| tf::VariableSynchronization::from_str_name(name).map(|v| v as i64))
            .or_else(|| tf::VariableAggregation::from_str_name(name).map(|v| v as i64))
            .or_else(|| {
                tf::saver_def::CheckpointFormatVersion::from_str_name(name).map(|v| v as i64)
            })
            .or_else(|| tf::type_spec_proto::TypeSpecClass::from_str_name(name).map(|v| v as i64))
            .or_else(|| tf::function_spec::JitCompile::from_str_name(name).map(|v| v as i64))
    };
    let message = |full: &str| -> Option<usize> {
        let short = full.strip_prefix("tensorflow.").unwrap_or(full);
        MESSAGES.iter().position(|m| m.name == short)
    };
    let names = Names {
        enum_value: &enum_value,
        message: &message,
    };
    to_wire(file, MESSAGES, META_GRAPH_DEF, &names)
}

/// A text `.meta` file that `text_format.Merge` would refuse: `import_meta_graph` raises
/// before anything is imported, so nothing of it runs; what socair cannot read is a LEAD.
fn text_refused(why: &TextError) -> OpenedFile {
    refused_as(
        RowStatus::Lead,
        FORMAT,
        "a text MetaGraphDef socair could not read as text_format.Merge reads it (TensorFlow refuses such a file, or reads what socair does not): see the finding",
        why.to_string(),
        Finding::new(
            Severity::Lead,
            format!("line {} column {}", why.line, why.column),
            format!("text format: {}", why.message),
        ),
    )
}

/// Carries every tensor located by byte ranges of `wire` as its bytes instead.
fn inline_ranges(out: &mut Reading, wire: &[u8]) {
    for t in out.tensors.iter_mut() {
        if t.ranges.is_empty() {
            continue;
        }
        let mut bytes = Vec::new();
        for r in t.ranges.iter() {
            let (start, len) = (r.offset as usize, r.len as usize);
            if let Some(b) = start.checked_add(len).and_then(|end| wire.get(start..end)) {
                bytes.extend_from_slice(b);
            }
        }
        t.ranges = Default::default();
        t.inline = abi_stable::std_types::ROption::RSome(bytes.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collection_defs::FROM_PROTO;
    use crate::proto::tensorflow::collection_def;
    use crate::proto::tensorflow::{
        collection_def::BytesList, CollectionDef, GraphDef, NodeDef, SaverDef,
    };
    use prost::Message;

    fn read_mg(mg: &MetaGraphDef) -> OpenedFile {
        read(Bytes::from(mg.encode_to_vec()))
    }

    fn bytes_collection(values: &[&[u8]]) -> CollectionDef {
        CollectionDef {
            kind: Some(collection_def::Kind::BytesList(BytesList {
                value: values.iter().map(|v| Bytes::copy_from_slice(v)).collect(),
            })),
        }
    }

    fn node(name: &str, op: &str) -> NodeDef {
        NodeDef {
            name: name.into(),
            op: op.into(),
            ..NodeDef::default()
        }
    }

    #[test]
    fn the_table_is_sorted_for_its_search() {
        assert!(FROM_PROTO.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(FROM_PROTO.len(), 11);
    }

    #[test]
    fn collection_values_are_parsed_as_their_proto() {
        let saver = SaverDef {
            filename_tensor_name: "save/Const:0".into(),
            ..SaverDef::default()
        }
        .encode_to_vec();
        let mut mg = MetaGraphDef::default();
        mg.collection_def
            .insert("savers".into(), bytes_collection(&[&saver, b""]));
        mg.collection_def
            .insert("mine".into(), bytes_collection(&[b"\xff\xff\xff"]));
        let o = read_mg(&mg);
        assert_eq!(
            o.rows[0].status,
            RowStatus::Pass,
            "{:?}",
            o.rows[0].findings
        );
        assert!(o.rows[0].summary.contains("2 collection values parsed"));
        assert!(o.rows[0].summary.contains("1 collections of bytes kept"));

        // A truncated field (a string running past its end) is refused by TensorFlow.
        for key in [
            "variables",
            "savers",
            "cond_context",
            "while_context",
            "queue_runners",
        ] {
            let mut mg = MetaGraphDef::default();
            mg.collection_def
                .insert(key.into(), bytes_collection(&[b"\x0a\x05ab"]));
            let o = read_mg(&mg);
            assert_eq!(o.rows[0].status, RowStatus::Fail, "{key}");
            let f = &o.rows[0].findings[0];
            assert!(
                f.place.contains(&format!("collection_def[\"{key}\"]")),
                "{}",
                f.place
            );
            assert!(
                f.reason.contains("import_meta_graph parses it"),
                "{}",
                f.reason
            );
        }
    }

    #[test]
    fn queue_runner_values_are_checked_by_their_fields() {
        // queue_name "q", enqueue_op_name "e", closed exception types packed [1, 2].
        let good: &[u8] = b"\x0a\x01q\x12\x01e\x2a\x02\x01\x02";
        // Field 5 as a string of text: a varint field with a length is packed, but 0xff is a
        // truncated varint.
        let bad: &[u8] = b"\x0a\x01q\x2a\x01\xff";
        for (value, status) in [(good, RowStatus::Pass), (bad, RowStatus::Fail)] {
            let mut mg = MetaGraphDef::default();
            mg.collection_def
                .insert("queue_runners".into(), bytes_collection(&[value]));
            assert_eq!(read_mg(&mg).rows[0].status, status);
        }
    }

    #[test]
    fn import_runs_no_init_op_and_the_restore_op_runs_at_load() {
        let mut read_file = node("reader", "ReadFile");
        read_file.input.push("path".into());
        let mut init = node("init", "NoOp");
        init.input.push("^reader".into());
        let mut mg = MetaGraphDef {
            graph_def: Some(GraphDef {
                node: vec![node("path", "Const"), read_file, init],
                ..GraphDef::default()
            }),
            ..MetaGraphDef::default()
        };
        mg.collection_def.insert(
            "legacy_init_op".into(),
            CollectionDef {
                kind: Some(collection_def::Kind::NodeList(collection_def::NodeList {
                    value: vec!["init".into()],
                })),
            },
        );
        let o = read_mg(&mg);
        assert_eq!(o.rows[0].status, RowStatus::Fail);
        let reason = &o.rows[0].findings[0].reason;
        assert!(reason.contains("when the graph is run"), "{reason}");

        mg.saver_def = Some(SaverDef {
            restore_op_name: "init".into(),
            ..SaverDef::default()
        });
        let o = read_mg(&mg);
        let reason = &o.rows[0].findings[0].reason;
        assert!(reason.contains("saver.restore runs"), "{reason}");
    }
}
