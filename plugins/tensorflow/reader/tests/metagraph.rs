//! TF1 `.meta` files written by TensorFlow 2.21.0 (`fixtures/tensorflow/meta/make_meta.py`),
//! each judged as `expected.json` records what `tf.compat.v1.train.import_meta_graph` did with
//! it; the checkpoint beside the benign one still read by the checkpoint reader.

use crate::common::{claimant, fixture, open};
use serde_json::Value;
use socair_plugin_api::{OpenedFile, RowStatus};
use std::path::Path;

fn expected() -> Value {
    let text = std::fs::read_to_string(fixture("tensorflow/meta/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The verdict `expected.json` gives the fixture at `path`.
pub fn expected_status(path: &Path) -> RowStatus {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    if name.ends_with(".index") {
        return RowStatus::Pass;
    }
    // In the text format: text/expected.json (make_meta_text.py).
    let in_text = path.parent().is_some_and(|d| d.ends_with("text"));
    let truth = if in_text {
        let text = std::fs::read_to_string(fixture("tensorflow/meta/text/expected.json")).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()[&name].clone()
    } else {
        expected()["files"][&name].clone()
    };
    match truth["verdict"].as_str() {
        Some("PASS") => RowStatus::Pass,
        Some("FAIL") => RowStatus::Fail,
        Some("LEAD") => RowStatus::Lead,
        v => panic!("{name}: no verdict in expected.json ({v:?})"),
    }
}

fn meta(name: &str) -> OpenedFile {
    open(&fixture(&format!("tensorflow/meta/{name}")))
}

fn findings(o: &OpenedFile) -> String {
    o.rows[0]
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.place, f.reason))
        .collect::<Vec<_>>()
        .join("\n")
}

fn metadata<'a>(o: &'a OpenedFile, key: &str) -> Option<&'a str> {
    o.metadata
        .iter()
        .find(|m| m.0.as_str() == key)
        .map(|m| m.1.as_str())
}

#[test]
fn every_meta_fixture_gets_the_verdict_import_meta_graph_implies() {
    let want = expected();
    let files = want["files"].as_object().unwrap();
    assert_eq!(want["tensorflow"], "2.21.0");
    assert_eq!(files.len(), 6);
    for (name, truth) in files {
        let path = fixture(&format!("tensorflow/meta/{name}"));
        let data = std::fs::read(&path).unwrap();
        assert_eq!(claimant(&data), Some("tf-metagraph"), "{name}");
        let o = meta(name);
        assert_eq!(o.format.as_str(), "tf-metagraph");
        assert_eq!(
            o.rows[0].status,
            expected_status(&path),
            "{name}: {}\n{}",
            o.rows[0].summary,
            findings(&o)
        );
        // Every file TensorFlow imported is one this reader passes, and the reverse.
        if let Some(imports) = truth.get("imports").and_then(Value::as_bool) {
            assert_eq!(imports, o.rows[0].status == RowStatus::Pass, "{name}");
        }
        // The collections import_meta_graph restored are those the file holds.
        if let Some(keys) = truth.get("collections").and_then(Value::as_array) {
            let keys: Vec<&str> = keys.iter().filter_map(Value::as_str).collect();
            assert_eq!(
                metadata(&o, "tensorflow.collections"),
                Some(keys.join(", ").as_str()),
                "{name}"
            );
        }
    }
}

#[test]
fn the_registry_of_from_proto_functions_is_tensorflow_s() {
    let want = expected();
    let registry: Vec<&str> = want["from_proto_registry"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let ours: Vec<&str> = socair_tensorflow::collection_defs::FROM_PROTO
        .iter()
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(ours, registry);
}

#[test]
fn the_benign_graph_passes_with_its_saver_and_collections() {
    let o = meta("benign.ckpt.meta");
    let row = &o.rows[0];
    assert_eq!(row.status, RowStatus::Pass, "{}", findings(&o));
    // SaveV2 and RestoreV2, in the saver's subgraph; the four collections' values parsed.
    assert!(
        row.summary.contains("2 checkpoint ops only in the saver"),
        "{}",
        row.summary
    );
    assert!(
        row.summary.contains("0 collections of bytes"),
        "{}",
        row.summary
    );
    assert_eq!(metadata(&o, "tensorflow.version"), Some("2.21.0"));
    assert_eq!(
        metadata(&o, "tensorflow.saver_restore_op"),
        Some("save/restore_all")
    );
    // The restore op's subgraph is what runs when the model is loaded.
    let ops = metadata(&o, "tensorflow.ops").unwrap();
    for op in [
        "RestoreV2",
        "SaveV2",
        "VariableV2",
        "Switch",
        "Enter",
        "LoopCond",
    ] {
        assert!(ops.contains(op), "{op} not in {ops}");
    }
    // The graph's constants are fingerprinted outside the model (the weights are in the
    // checkpoint).
    assert!(o.tensors.iter().all(|t| t.outside_model));
}

#[test]
fn unknown_bytes_collections_are_data() {
    let o = meta("unknown_bytes_collection.meta");
    assert_eq!(o.rows[0].status, RowStatus::Pass, "{}", findings(&o));
    assert_eq!(
        metadata(&o, "tensorflow.collections_kept_as_bytes"),
        Some("my_blobs")
    );
    assert!(o.rows[0].summary.contains("1 collections of bytes kept"));
}

#[test]
fn hostile_graphs_fail_naming_the_node() {
    for (name, nodes) in [
        ("py_func.meta", &["double_in_python"][..]),
        ("read_write_file.meta", &["read_hostname", "write_copy"][..]),
    ] {
        let o = meta(name);
        assert_eq!(o.rows[0].status, RowStatus::Fail, "{name}");
        let all = findings(&o);
        for n in nodes {
            assert!(all.contains(n), "{name}: {n} not named in\n{all}");
        }
        assert!(all.contains("when the graph is run"), "{name}: {all}");
        let ops = expected()["files"][name]["ops"].clone();
        for op in ops.as_array().unwrap() {
            assert!(all.contains(op.as_str().unwrap()), "{name}: {op}\n{all}");
        }
    }
}

#[test]
fn a_collection_value_tensorflow_cannot_parse_fails() {
    let o = meta("bad_variable_proto.meta");
    assert_eq!(o.rows[0].status, RowStatus::Fail);
    let f = o.rows[0]
        .findings
        .iter()
        .find(|f| f.place.contains("collection_def[\"variables\"]"))
        .unwrap_or_else(|| panic!("{}", findings(&o)));
    assert!(f.reason.contains("VariableDef"), "{}", f.reason);
    assert_eq!(
        expected()["files"]["bad_variable_proto.meta"]["error"],
        "DecodeError"
    );
}

#[test]
fn cleared_devices_are_cleared_and_the_checkpoint_beside_is_read() {
    let truth = expected();
    assert_eq!(
        truth["files"]["cleared_devices.meta"]["devices_in_file"],
        serde_json::json!([""])
    );
    assert_eq!(meta("cleared_devices.meta").rows[0].status, RowStatus::Pass);
    // The checkpoint beside benign.ckpt.meta: its reader claims the index, not the .meta.
    let index = fixture("tensorflow/meta/benign.ckpt.index");
    assert_eq!(
        claimant(&std::fs::read(&index).unwrap()),
        Some("tf-checkpoint")
    );
    let o = open(&index);
    assert_eq!(o.rows[0].status, RowStatus::Pass, "{}", findings(&o));
    let mut names: Vec<&str> = o.tensors.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    let want: Vec<&str> = truth["checkpoint"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, want);
}

/// A collection of many values: each parsed on its own, the file read in bounded time and
/// memory (or refused by the wire pre-pass's decode estimate, a LEAD), never a panic.
#[test]
fn many_collection_values_are_bounded() {
    use prost::Message;
    use socair_tensorflow::proto::tensorflow::{collection_def, CollectionDef, MetaGraphDef};
    // A variable named "v"; a name running past its value's end.
    let cases = [
        (&b"\x0a\x01v"[..], RowStatus::Pass),
        (&b"\x0a\x05v"[..], RowStatus::Fail),
    ];
    for (value, status) in cases {
        let n = 200_000;
        let mut mg = MetaGraphDef::default();
        mg.collection_def.insert(
            "variables".into(),
            CollectionDef {
                kind: Some(collection_def::Kind::BytesList(collection_def::BytesList {
                    value: vec![bytes::Bytes::from_static(value); n],
                })),
            },
        );
        let start = std::time::Instant::now();
        let o = socair_tensorflow::metagraph::read(bytes::Bytes::from(mg.encode_to_vec()));
        assert!(start.elapsed().as_secs() < 20);
        // The first of the kind, then one finding saying how many more.
        let most = socair_plugin_kit::bounded::FINDINGS_PER_KIND + 1;
        let kept = o.rows[0].findings.len();
        assert!(kept <= most, "{kept}");
        assert_eq!(o.rows[0].status, status, "{}", o.rows[0].summary);
    }
}
