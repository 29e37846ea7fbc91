//! The verdict on every fixture, and on files of each class the reader FAILs or LEADs, built
//! from TensorFlow's own files by changing one thing (decoded and re-encoded with the
//! plugin's prost types).

use crate::common::{fixture, open, tensorflow_files};
use prost::Message;
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_tensorflow::proto::tensorflow::{
    attr_value, AttrValue, NodeDef, SavedModel, TensorProto,
};

fn status(o: &OpenedFile) -> RowStatus {
    o.rows[0].status
}

fn findings(o: &OpenedFile) -> String {
    o.rows[0]
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.place, f.reason))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_fixture_gets_its_verdict() {
    let mut seen = 0;
    for f in tensorflow_files() {
        let rel = f
            .strip_prefix(crate::common::repo().join("fixtures"))
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let o = open(&f);
        let want = match rel.as_str() {
            r if r.starts_with("tensorflow/hostile/") && r.ends_with("saved_model.pb") => {
                RowStatus::Fail
            }
            "tflite/custom-op.tflite" => RowStatus::Lead,
            "tflite/flex-readfile.tflite" => RowStatus::Fail,
            r if r.starts_with("tensorflow/meta/") => crate::metagraph::expected_status(&f),
            _ => RowStatus::Pass,
        };
        assert_eq!(
            status(&o),
            want,
            "{rel}: {}\n{}",
            o.rows[0].summary,
            findings(&o)
        );
        seen += 1;
    }
    assert!(seen >= 40, "{seen} fixtures");
}

#[test]
fn hostile_savedmodels_fail_with_the_node_the_function_and_when_it_runs() {
    for (dir, op, when) in [
        (
            "writefile",
            "op WriteFile touches files",
            "it runs when function",
        ),
        (
            "readfile",
            "op ReadFile touches files",
            "it runs when function",
        ),
        (
            "pyfunc",
            "op EagerPyFunc runs code",
            "it runs when function",
        ),
        (
            "matchingfiles",
            "op MatchingFiles touches files",
            "it runs when function",
        ),
        (
            "printv2-file",
            "op PrintV2 appends to the file \"file:///tmp/socair-fixture-printed\"",
            "it runs when function",
        ),
        (
            "savev2-elsewhere",
            "its path is not the loader's checkpoint file name",
            "it runs when function",
        ),
        (
            "tf1-init-reads-file",
            "op ReadFile touches files",
            "it runs at load time (the init op \"main_op\"",
        ),
    ] {
        let o = open(&fixture(&format!(
            "tensorflow/hostile/{dir}/saved_model.pb"
        )));
        let f = findings(&o);
        assert!(f.contains(op) && f.contains(when), "{dir}:\n{f}");
        assert!(f.contains("node \""), "{dir}: the node is named:\n{f}");
    }
    // The one finding of the SaveV2 model is the SaveV2 outside the saver, not the saver's
    // own SaveV2 and RestoreV2, which pass.
    let o = open(&fixture(
        "tensorflow/hostile/savev2-elsewhere/saved_model.pb",
    ));
    assert_eq!(o.rows[0].findings.len(), 1, "{}", findings(&o));
}

#[test]
fn the_table_model_reads_its_asset_as_data_at_load_time() {
    let o = open(&fixture("tensorflow/savedmodel/table/saved_model.pb"));
    assert_eq!(status(&o), RowStatus::Pass, "{}", findings(&o));
    assert!(
        o.rows[0]
            .summary
            .contains("1 lookup tables filled from the model's assets"),
        "{}",
        o.rows[0].summary
    );
    let load = o
        .metadata
        .iter()
        .find(|kv| kv.0.as_str() == "tensorflow.load_time_functions")
        .unwrap();
    assert!(load.1.contains("__inference__initializer"), "{}", load.1);
    assert!(o
        .metadata
        .iter()
        .any(|kv| kv.0.as_str() == "tensorflow.assets" && kv.1.as_str() == "vocab.txt"));
}

fn saved_model(rel: &str) -> SavedModel {
    SavedModel::decode(std::fs::read(fixture(rel)).unwrap().as_slice()).unwrap()
}

fn reread(sm: &SavedModel) -> OpenedFile {
    socair_tensorflow::savedmodel::read(sm.encode_to_vec().into())
}

#[test]
fn an_asset_named_outside_assets_fails() {
    let mut sm = saved_model("tensorflow/savedmodel/table/saved_model.pb");
    sm.meta_graphs[0].asset_file_def[0].filename = "../../../etc/passwd".into();
    let o = reread(&sm);
    assert_eq!(status(&o), RowStatus::Fail);
    assert!(
        findings(&o).contains("names a file outside the SavedModel"),
        "{}",
        findings(&o)
    );
}

#[test]
fn a_table_filled_from_a_path_the_graph_names_fails() {
    // The TF1 model's graph gains a table initialized from a string constant.
    let mut sm = saved_model("tensorflow/savedmodel/tf1/saved_model.pb");
    let g = sm.meta_graphs[0].graph_def.as_mut().unwrap();
    let mut path = TensorProto {
        dtype: 7,
        ..Default::default()
    };
    path.string_val
        .push(bytes::Bytes::from_static(b"/etc/passwd"));
    let mut c = NodeDef {
        name: "path".into(),
        op: "Const".into(),
        ..Default::default()
    };
    c.attr.insert(
        "value".into(),
        AttrValue {
            value: Some(attr_value::Value::Tensor(Box::new(path))),
        },
    );
    g.node.push(c);
    g.node.push(NodeDef {
        name: "table".into(),
        op: "HashTableV2".into(),
        ..Default::default()
    });
    g.node.push(NodeDef {
        name: "init_table".into(),
        op: "InitializeTableFromTextFileV2".into(),
        input: vec!["table".into(), "path".into()],
        ..Default::default()
    });
    let o = reread(&sm);
    assert_eq!(status(&o), RowStatus::Fail);
    assert!(
        findings(&o).contains("fills a lookup table from \"/etc/passwd\""),
        "{}",
        findings(&o)
    );
    // Named by the init op instead, it runs at load time, and the finding says so.
    let g = sm.meta_graphs[0].graph_def.as_mut().unwrap();
    let main_op = g.node.iter_mut().find(|n| n.name == "main_op").unwrap();
    main_op.input.push("^init_table".into());
    let o = reread(&sm);
    assert!(
        findings(&o).contains("it runs at load time"),
        "{}",
        findings(&o)
    );
}

#[test]
fn the_saver_joined_with_a_path_that_leaves_its_directory_fails() {
    let mut sm = saved_model("tensorflow/savedmodel/module/saved_model.pb");
    let lib = sm.meta_graphs[0]
        .graph_def
        .as_mut()
        .unwrap()
        .library
        .as_mut()
        .unwrap();
    let save = lib
        .function
        .iter_mut()
        .find(|f| {
            f.signature
                .as_ref()
                .unwrap()
                .name
                .starts_with("__inference__traced_save")
        })
        .unwrap();
    let mut suffix = TensorProto {
        dtype: 7,
        ..Default::default()
    };
    suffix
        .string_val
        .push(bytes::Bytes::from_static(b"/../../../../tmp/x"));
    let c = save
        .node_def
        .iter_mut()
        .find(|n| n.name == "Const")
        .unwrap();
    c.attr.insert(
        "value".into(),
        AttrValue {
            value: Some(attr_value::Value::Tensor(Box::new(suffix))),
        },
    );
    let o = reread(&sm);
    assert_eq!(status(&o), RowStatus::Fail, "{}", findings(&o));
    let f = findings(&o);
    assert!(
        f.contains("SaveV2") && f.contains("__inference__traced_save"),
        "{f}"
    );
}

#[test]
fn a_saver_function_called_from_a_signature_is_not_the_saver_s() {
    let mut sm = saved_model("tensorflow/savedmodel/module/saved_model.pb");
    let mg = &mut sm.meta_graphs[0];
    let restore = mg
        .graph_def
        .as_ref()
        .unwrap()
        .library
        .as_ref()
        .unwrap()
        .function
        .iter()
        .map(|f| f.signature.as_ref().unwrap().name.clone())
        .find(|n| n.starts_with("__inference__traced_restore"))
        .unwrap();
    let mut call = NodeDef {
        name: "elsewhere".into(),
        op: "StatefulPartitionedCall".into(),
        input: vec!["saver_filename".into()],
        ..Default::default()
    };
    call.attr.insert(
        "f".into(),
        AttrValue {
            value: Some(attr_value::Value::Func(Box::new(
                socair_tensorflow::proto::tensorflow::NameAttrList {
                    name: restore,
                    attr: Default::default(),
                },
            ))),
        },
    );
    mg.graph_def.as_mut().unwrap().node.push(call);
    let o = reread(&sm);
    assert_eq!(status(&o), RowStatus::Fail, "{}", findings(&o));
    assert!(findings(&o).contains("RestoreV2"), "{}", findings(&o));
}

#[test]
fn unknown_ops_and_ops_off_the_allow_list_are_leads() {
    for (op, says) in [
        ("MyCustomOp", "is not one of TensorFlow 2.21.0's"),
        ("TPUCompile", "not on the allow-list"),
        ("CollectiveReduceV2", "cluster"),
    ] {
        let mut sm = saved_model("tensorflow/savedmodel/tf1/saved_model.pb");
        sm.meta_graphs[0]
            .graph_def
            .as_mut()
            .unwrap()
            .node
            .push(NodeDef {
                name: "n".into(),
                op: op.into(),
                ..Default::default()
            });
        let o = reread(&sm);
        assert_eq!(status(&o), RowStatus::Lead, "{op}: {}", findings(&o));
        assert!(findings(&o).contains(says), "{op}: {}", findings(&o));
    }
}

#[test]
fn what_tensorflow_refuses_fails() {
    // Two nodes of one name.
    let mut sm = saved_model("tensorflow/savedmodel/tf1/saved_model.pb");
    let g = sm.meta_graphs[0].graph_def.as_mut().unwrap();
    let dup = g.node[0].clone();
    g.node.push(dup);
    assert_eq!(status(&reread(&sm)), RowStatus::Fail);
    // No meta graph.
    let o = reread(&SavedModel {
        saved_model_schema_version: 1,
        meta_graphs: vec![],
    });
    assert_eq!(status(&o), RowStatus::Fail);
    // A singular field given twice at wire level: the schema version.
    let mut bytes = std::fs::read(fixture("tensorflow/savedmodel/tf1/saved_model.pb")).unwrap();
    bytes.extend([0x08, 0x01]);
    let o = socair_tensorflow::savedmodel::read(bytes.into());
    assert_eq!(status(&o), RowStatus::Fail);
    assert!(
        findings(&o).contains("occurs more than once"),
        "{}",
        findings(&o)
    );
    // Truncated: refused with the byte.
    let bytes = std::fs::read(fixture("tensorflow/savedmodel/tf1/saved_model.pb")).unwrap();
    let o = socair_tensorflow::savedmodel::read(bytes[..bytes.len() - 7].to_vec().into());
    assert_eq!(status(&o), RowStatus::Fail);
    assert!(
        o.rows[0].findings[0].place.contains("byte"),
        "{}",
        findings(&o)
    );
}

#[test]
fn a_checkpoint_index_with_any_byte_changed_is_refused() {
    let data = std::fs::read(fixture("tensorflow/checkpoint/ckpt.index")).unwrap();
    let footer = data.len() - 48;
    // The meta-index block is never read (by TensorFlow's Table::Open either): its handle is
    // the footer's first.
    let mut at = footer;
    let meta =
        socair_plugin_kit::protobuf::read_varint(&data, &mut at, data.len()).unwrap() as usize;
    let meta_len =
        socair_plugin_kit::protobuf::read_varint(&data, &mut at, data.len()).unwrap() as usize;
    for i in (0..footer).filter(|i| !(meta..meta + meta_len + 5).contains(i)) {
        let mut bad = data.clone();
        bad[i] ^= 0x10;
        let o = socair_tensorflow::bundle::read(bad.into());
        assert_eq!(status(&o), RowStatus::Fail, "byte {i}");
        assert!(o.tensors.is_empty(), "byte {i}");
    }
}

#[test]
fn tflite_custom_and_flex_ops_are_named() {
    let o = open(&fixture("tflite/custom-op.tflite"));
    assert!(
        findings(&o).contains("custom \"MatrixInverse\""),
        "{}",
        findings(&o)
    );
    let o = open(&fixture("tflite/flex-readfile.tflite"));
    let f = findings(&o);
    assert!(
        f.contains("(FlexReadFile)") && f.contains("op ReadFile touches files"),
        "{f}"
    );
    let o = open(&fixture("tflite/flex-op.tflite"));
    assert_eq!(status(&o), RowStatus::Pass, "{}", findings(&o));
    assert!(o.rows[0].summary.contains("1 Flex (TensorFlow) ops"));
}

#[test]
fn tflite_buffers_after_the_flatbuffer_are_ranges_of_the_file() {
    let plain = open(&fixture("tflite/float.tflite"));
    let offset = open(&fixture("tflite/buffer-offset.tflite"));
    assert_eq!(plain.tensors.len(), offset.tensors.len());
    let len = std::fs::metadata(fixture("tflite/buffer-offset.tflite"))
        .unwrap()
        .len();
    for t in offset.tensors.iter() {
        assert!(t.ranges[0].offset + t.ranges[0].len <= len);
    }
    // A buffer whose size is not its tensor's: the interpreter refuses it.
    let mut data = std::fs::read(fixture("tflite/float.tflite")).unwrap();
    let t = &plain.tensors[0];
    let at = t.ranges[0].offset as usize - 4;
    let n = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
    data[at..at + 4].copy_from_slice(&(n - 4).to_le_bytes());
    let o = socair_tensorflow::tflite::read(data.clone().into(), data.len() as u64);
    assert_eq!(status(&o), RowStatus::Fail, "{}", findings(&o));
}

/// The tf-keras SavedModel's keras_metadata.pb with node `node`'s metadata JSON changed by
/// `edit`, re-encoded with the plugin's prost types and read again.
fn keras_metadata_with(node: usize, edit: impl FnOnce(&mut serde_json::Value)) -> OpenedFile {
    use socair_tensorflow::proto::keras::SavedMetadata;
    let bytes = std::fs::read(fixture("tensorflow/savedmodel/tf-keras/keras_metadata.pb")).unwrap();
    let mut md = SavedMetadata::decode(bytes.as_slice()).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&md.nodes[node].metadata).unwrap();
    edit(&mut v);
    md.nodes[node].metadata = v.to_string();
    socair_tensorflow::parts::keras_metadata(md.encode_to_vec().into())
}

/// A tf-keras `Lambda` layer's config as tf-keras 2.21 serializes it (`Lambda.get_config`:
/// `function`, `function_type`, `module`), in place of the Dense layer's.
fn lambda(function: serde_json::Value, function_type: &str, module: &str) -> serde_json::Value {
    serde_json::json!({
        "name": "lambda", "trainable": true, "dtype": "float32",
        "function": function, "function_type": function_type, "module": module,
        "output_shape": null, "output_shape_type": "raw", "output_shape_module": null,
        "arguments": {}
    })
}

#[test]
fn keras_metadata_is_judged_by_the_keras_grammar() {
    // As tf-keras 2.21 wrote it: every node inside the grammar.
    let o = keras_metadata_with(0, |_| {});
    assert_eq!(status(&o), RowStatus::Pass, "{}", findings(&o));
    // A Lambda whose function is marshalled bytecode: tf-keras' Lambda._parse_function_from_config
    // (tf_keras/src/layers/core/lambda_layer.py, 2.21) runs generic_utils.func_load on it.
    let o = keras_metadata_with(1, |v| {
        v["class_name"] = "Lambda".into();
        v["config"] = lambda(
            serde_json::json!([
                "4wEAAAAAAAAAAAAAAAEAAAACAAAAQwAAAHMIAAAAfABkARQAUwA=",
                null,
                null
            ]),
            "lambda",
            "__main__",
        );
    });
    assert_eq!(status(&o), RowStatus::Fail, "{}", findings(&o));
    assert!(
        o.rows[0].findings.iter().any(|f| f
            .place
            .as_str()
            .starts_with("nodes[1] \"root.layer_with_weights-0\" metadata config")),
        "{}",
        findings(&o)
    );
    // A Lambda of function_type "function" naming os.system: the same function resolves it by
    // serialization_lib.deserialize_keras_object("system", custom_objects), from the custom
    // objects only (the module's globals serve bytecode alone): a LEAD, as in a legacy .h5.
    let o = keras_metadata_with(1, |v| {
        v["class_name"] = "Lambda".into();
        v["config"] = lambda(serde_json::json!("system"), "function", "os");
    });
    assert_eq!(status(&o), RowStatus::Lead, "{}", findings(&o));
    assert!(
        findings(&o).contains("custom objects only"),
        "{}",
        findings(&o)
    );
    // An activation naming os.system inside the root's model_config.
    let o = keras_metadata_with(0, |v| {
        v["model_config"]["config"]["layers"][1]["config"]["activation"] = serde_json::json!({"module": "os", "class_name": "function", "config": "system", "registered_name": null});
    });
    assert_eq!(status(&o), RowStatus::Fail, "{}", findings(&o));
    assert!(
        findings(&o)
            .contains("nodes[0] \"root\" metadata model_config.config.layers[1].config.activation"),
        "{}",
        findings(&o)
    );
    // A key tf-keras does not write: a LEAD, not judged.
    let o = keras_metadata_with(2, |v| v["loader_hint"] = "x".into());
    assert_eq!(status(&o), RowStatus::Lead, "{}", findings(&o));
    assert!(
        findings(&o).contains("metadata loader_hint"),
        "{}",
        findings(&o)
    );
}
