//! TF1 `.meta` files end to end: MetaGraphDefs TensorFlow 2.21.0 wrote with
//! `tf.compat.v1.train.Saver().save` and `export_meta_graph`
//! (fixtures/tensorflow/meta/make_meta.py; in the text format, make_meta_text.py), scanned by
//! the built socair with its plugins, each against what `tf.compat.v1.train.import_meta_graph`
//! did with it (expected.json); and the benign one beside its checkpoint, whose variables are
//! the bytes TensorFlow restores.

use crate::common::{fixture, has_finding, json, report_row, run, socair, verdict};
use serde_json::Value;

const CHECK: &str = "Format and structure";

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("tensorflow/meta/expected.json")).unwrap())
}

#[test]
fn each_meta_file_alone_gets_the_verdict_import_meta_graph_implies() {
    let e = expected();
    let files = e["files"].as_object().unwrap();
    assert_eq!(files.len(), 6);
    for (name, truth) in files {
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("tensorflow/meta/{name}"))));
        let report = json(&r.stdout);
        assert_eq!(report["artifact"]["format"], "tf-metagraph", "{name}");
        let want = truth["verdict"].as_str().unwrap();
        assert_eq!(verdict(&report), want, "{name}: {:#}", report["rows"]);
        assert_eq!(r.code, if want == "PASS" { 0 } else { 1 }, "{name}");
        // What TensorFlow imported, socair passes; what it refused, socair fails.
        if let Some(imports) = truth["imports"].as_bool() {
            assert_eq!(imports, want == "PASS", "{name}");
        }
        let row = report_row(&report, CHECK);
        for op in truth["ops"].as_array().into_iter().flatten() {
            let op = op.as_str().unwrap();
            assert!(
                has_finding(row, "graph node", op),
                "{name}: no finding names {op}: {row:#}"
            );
        }
    }
}

#[test]
fn hostile_meta_files_name_the_node_and_when_it_runs() {
    let r = run(socair()
        .arg("scan")
        .arg(fixture("tensorflow/meta/read_write_file.meta")));
    let row = report_row(&json(&r.stdout), CHECK).clone();
    for (node, op) in [("read_hostname", "ReadFile"), ("write_copy", "WriteFile")] {
        assert!(
            has_finding(
                &row,
                &format!("graph node \"{node}\" ({op})"),
                "it runs when the graph is run"
            ),
            "{row:#}"
        );
    }
    let r = run(socair()
        .arg("scan")
        .arg(fixture("tensorflow/meta/bad_variable_proto.meta")));
    let row = report_row(&json(&r.stdout), CHECK).clone();
    assert!(
        has_finding(
            &row,
            "collection_def[\"variables\"].bytes_list.value[2] (byte ",
            "import_meta_graph parses it as a VariableDef"
        ),
        "{row:#}"
    );
}

#[test]
fn the_meta_file_beside_its_checkpoint_passes_and_the_variables_are_tensorflow_s() {
    let e = expected();
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "benign.ckpt.meta",
        "benign.ckpt.index",
        "benign.ckpt.data-00000-of-00001",
    ] {
        std::fs::copy(fixture(&format!("tensorflow/meta/{f}")), dir.path().join(f)).unwrap();
    }
    let r = run(socair().arg("scan").arg(dir.path()));
    let report = json(&r.stdout);
    assert_eq!(r.code, 0, "{:#}", report["rows"]);
    assert_eq!(verdict(&report), "PASS");
    let summary = report_row(&report, CHECK)["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        summary.contains("benign.ckpt.meta: PASS TensorFlow MetaGraphDef"),
        "{summary}"
    );
    assert!(
        summary.contains("benign.ckpt.index: PASS TensorFlow checkpoint index"),
        "{summary}"
    );

    // The checkpoint reader still locates every variable in the shard: the bytes
    // tf.train.load_checkpoint reads.
    let r = run(socair().arg("tensors").arg(dir.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    let tensors = m["tensors"].as_array().unwrap();
    for (name, want) in e["checkpoint"].as_object().unwrap() {
        let t = tensors
            .iter()
            .find(|t| t["file"] == "benign.ckpt.index" && t["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} missing: {m:#}"));
        assert_eq!(t["sha256"], want["sha256"], "{name}");
        assert_eq!(t["shape"], want["shape"], "{name}");
    }
}

#[test]
fn the_terminal_says_what_the_meta_file_is() {
    let r = run(socair()
        .arg("scan")
        .arg(fixture("tensorflow/meta/py_func.meta")));
    assert!(
        r.stderr.contains("FAIL") && r.stderr.contains("double_in_python"),
        "{}",
        r.stderr
    );
}

/// `.meta` files in protobuf's text format (fixtures/tensorflow/meta/make_meta_text.py:
/// `export_meta_graph(as_text=True)`'s text of the files above, one with comments, `<…>`, `;`
/// and a split string, one with a field MetaGraphDef does not have), each against what
/// `import_meta_graph` did with it (text/expected.json): read as `read_meta_graph_file` reads
/// them (the wire format fails, `text_format.Merge` reads them), judged by the same rules, and
/// the benign one read exactly as its wire-format original: the same row and the same tensors.
#[test]
fn text_meta_files_are_read_as_text_format_merge_reads_them() {
    let e = json(&std::fs::read_to_string(fixture("tensorflow/meta/text/expected.json")).unwrap());
    let files = e.as_object().unwrap();
    assert_eq!(files.len(), 5);
    for (name, truth) in files {
        let path = fixture(&format!("tensorflow/meta/text/{name}"));
        let report = json(&run(socair().arg("scan").arg(&path)).stdout);
        assert_eq!(report["artifact"]["format"], "tf-metagraph", "{name}");
        let want = truth["verdict"].as_str().unwrap();
        assert_eq!(verdict(&report), want, "{name}: {:#}", report["rows"]);
        assert_eq!(
            truth["imports"].as_bool().unwrap(),
            want != "LEAD",
            "{name}"
        );
        let row = report_row(&report, CHECK);
        for op in truth["ops"].as_array().into_iter().flatten() {
            let op = op.as_str().unwrap();
            assert!(has_finding(row, "graph node", op), "{name}: {row:#}");
        }
    }
    let unknown = json(
        &run(socair()
            .arg("scan")
            .arg(fixture("tensorflow/meta/text/unknown_field.meta")))
        .stdout,
    );
    assert!(
        has_finding(
            report_row(&unknown, CHECK),
            "line ",
            "no field named \"graph_defs\""
        ),
        "{unknown:#}"
    );
    let scan = |p: &str| json(&run(socair().arg("scan").arg(fixture(p))).stdout);
    let (text, wire) = (
        scan("tensorflow/meta/text/benign.meta"),
        scan("tensorflow/meta/benign.ckpt.meta"),
    );
    assert_eq!(text["rows"], wire["rows"]);
    for name in ["text/commented.meta", "benign.ckpt.meta"] {
        let hashes = |p: &str| {
            let r = run(socair().args(["tensors", "--json"]).arg(fixture(p)));
            assert_eq!(r.code, 0, "{p}: {}", r.stderr);
            let mut t: Vec<(String, String)> = json(&r.stdout)["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    assert!(t["sha256"].is_string(), "{t}");
                    (t["name"].to_string(), t["sha256"].to_string())
                })
                .collect();
            t.sort();
            t
        };
        let text_tensors = hashes("tensorflow/meta/text/benign.meta");
        assert_eq!(text_tensors.len(), 9);
        assert_eq!(
            text_tensors,
            hashes(&format!("tensorflow/meta/{name}")),
            "{name}"
        );
    }
}
