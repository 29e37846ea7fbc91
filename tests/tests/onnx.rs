//! ONNX end to end, against files the `onnx` Python package wrote and the hashes Python
//! computed from the numpy arrays, `onnx.numpy_helper.to_array` and `onnx.reference`
//! (fixtures/onnx/expected.json, from make_fixtures.py).

use crate::common::{fixture, json, run, socair};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("onnx/expected.json")).unwrap())
}

fn by_name(manifest: &Value) -> BTreeMap<String, Value> {
    manifest["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect()
}

fn assert_tensors(manifest: &Value, want: &Value, what: &str) {
    let got = by_name(manifest);
    let want = want.as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: {manifest:#}");
    for w in want {
        let name = w["name"].as_str().unwrap();
        let t = got
            .get(name)
            .unwrap_or_else(|| panic!("{what}: {name} missing"));
        for key in ["dtype", "shape", "bytes", "sha256"] {
            assert_eq!(t[key], w[key], "{what}: {name} {key}");
        }
        assert_eq!(t.get("values"), w.get("values"), "{what}: {name} values");
    }
}

#[test]
fn manifests_match_python() {
    let e = expected();
    let mut files = 0;
    for (rel, case) in e.as_object().unwrap() {
        if !rel.starts_with("valid/") {
            continue;
        }
        files += 1;
        let r = run(socair().arg("tensors").arg(fixture(&format!("onnx/{rel}"))));
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["format"], "onnx", "{rel}");
        assert_eq!(m["artifact"]["sha256"], case["file_sha256"], "{rel}");
        assert_tensors(&m, &case["tensors"], rel);
        let unread = case["unread"].as_array().unwrap();
        assert_eq!(
            r.code,
            if unread.is_empty() { 0 } else { 1 },
            "{rel}: {}",
            r.stderr
        );
        let got_unread = m["unread"].as_array().unwrap();
        assert_eq!(got_unread.len(), unread.len(), "{rel}: {got_unread:#?}");
        for u in unread {
            let g = got_unread
                .iter()
                .find(|g| g["tensor"] == u["tensor"])
                .unwrap_or_else(|| panic!("{rel}: {} not unread", u["tensor"]));
            assert!(
                g["reason"]
                    .as_str()
                    .unwrap()
                    .contains(u["keyword"].as_str().unwrap()),
                "{rel}: {g}"
            );
        }
        let scan = run(socair().arg("scan").arg(fixture(&format!("onnx/{rel}"))));
        assert_eq!(scan.code, 0, "{rel}: {}", scan.stdout);
        let row = &json(&scan.stdout)["rows"][0];
        assert_eq!(row["check"], "Format and structure");
        assert_eq!(row["status"], "PASS", "{rel}");
    }
    assert_eq!(files, 6);
}

#[test]
fn scan_names_the_models_metadata_free_rows() {
    let r = run(socair()
        .arg("scan")
        .arg(fixture("onnx/valid/int32-data.onnx")));
    let row = &json(&r.stdout)["rows"][0];
    // 13 initializers, 12 of them varint-coded and decoded: sound, so PASS, and the summary
    // says how many were decoded.
    let summary = row["summary"].as_str().unwrap();
    assert_eq!(row["status"], "PASS");
    assert!(
        summary.contains("13 tensors of 13 initializers and 0 Constant nodes"),
        "{summary}"
    );
    assert!(summary.contains("12 decoded from numbers"), "{summary}");
}

#[test]
fn constant_weights_are_named_by_their_outputs_and_diff_with_safetensors() {
    let e = expected();
    let model = fixture("onnx/valid/paddle-constants.onnx");
    let r = run(socair().arg("tensors").arg(&model));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    let names: Vec<String> = by_name(&m).into_keys().collect();
    assert_eq!(
        names,
        [
            "axis",
            "conv.w",
            "fc.b",
            "fc.w",
            "ids",
            "mean",
            "perm",
            "reshape.shape",
            "scale"
        ]
    );
    assert_tensors(
        &m,
        &e["valid/paddle-constants.onnx"]["tensors"],
        "paddle-constants",
    );
    let scan = json(&run(socair().arg("scan").arg(&model)).stdout);
    let summary = scan["rows"][0]["summary"].as_str().unwrap();
    assert!(
        summary.contains("9 tensors of 0 initializers and 9 Constant nodes"),
        "{summary}"
    );
    // The same weights as safetensors (written by the generator from what onnx's reference
    // runtime outputs for each Constant): every tensor pairs, none differs.
    let d = run(socair()
        .args(["tensors", "diff"])
        .arg(&model)
        .arg(fixture("onnx/valid/paddle-constants.safetensors")));
    assert_eq!(d.code, 0, "{}", d.stderr);
    let c = json(&d.stdout);
    assert_eq!(c["summary"]["identical"], 9, "{c:#}");
    assert_eq!(c["matches"], true, "{c:#}");
    // Its decoded tensors (INT64 and INT32 in varints, value_int(s)) are refused by a
    // conversion with the host's reason; nothing is written.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("paddle.safetensors");
    let r = run(socair().arg("convert").arg(&model).arg(&out).args([
        "--from",
        "onnx",
        "--to",
        "safetensors",
    ]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("decoded them from varints"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
}

#[test]
fn diff_against_the_safetensors_it_was_built_from() {
    let r = run(socair()
        .args(["tensors", "diff"])
        .arg(fixture("onnx/valid/reference.onnx"))
        .arg(fixture("diff/reference")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = json(&r.stdout);
    assert_eq!(c["summary"]["identical"], 21, "{c:#}");
    assert_eq!(c["matches"], true);
}

#[test]
fn convert_to_safetensors_keeps_every_hash() {
    let e = expected();
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "valid/dtypes.onnx",
        "valid/float-data.onnx",
        "valid/reference.onnx",
    ] {
        let out = dir.path().join(rel.replace('/', "-") + ".safetensors");
        let r = run(socair()
            .arg("convert")
            .arg(fixture(&format!("onnx/{rel}")))
            .arg(&out)
            .args(["--from", "onnx", "--to", "safetensors"]));
        assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        let m = json(&run(socair().arg("tensors").arg(&out)).stdout);
        assert_eq!(m["artifact"]["format"], "safetensors");
        assert_tensors(&m, &e[rel]["tensors"], rel);
    }
    // Tensors outside the main graph are named as not carried; the rest converts.
    let out = dir.path().join("outside.safetensors");
    let r = run(socair()
        .arg("convert")
        .arg(fixture("onnx/valid/outside.onnx"))
        .arg(&out)
        .args(["--from", "onnx", "--to", "safetensors"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("not carried: then.w"), "{}", r.stderr);
    assert!(r.stderr.contains("not carried: then.c"), "{}", r.stderr);
    // The main graph's Constant (raw_data) is carried under its output's name.
    let converted = json(&run(socair().arg("tensors").arg(&out)).stdout);
    assert_tensors(
        &converted,
        &e["valid/outside.onnx"]["tensors"],
        "outside converted",
    );
    // Varint-coded values are fingerprinted from decoded bytes, which a conversion does not
    // carry: refused with the host's reason, nothing written.
    let out = dir.path().join("int32.safetensors");
    let r = run(socair()
        .arg("convert")
        .arg(fixture("onnx/valid/int32-data.onnx"))
        .arg(&out)
        .args(["--from", "onnx", "--to", "safetensors"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("decoded them from varints"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
}

#[test]
fn external_data_is_read_from_the_model_directory() {
    let e = expected();
    let case = &e["external/model-dir"];
    let dir = fixture("onnx/external/model-dir");
    let r = run(socair().arg("tensors").arg(&dir));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    assert_eq!(m["artifact"]["format"], "model directory");
    assert_tensors(&m, &case["tensors"], "model-dir");
    // weights.bin is data, not a torch checkpoint its extension suggests.
    assert_eq!(m["unread"], Value::Array(vec![]));
    let scan = json(&run(socair().arg("scan").arg(&dir)).stdout);
    assert_eq!(scan["rows"].as_array().unwrap().len(), 1, "{scan:#}");
    assert_eq!(scan["rows"][0]["status"], "PASS");
    assert_eq!(scan["artifact"]["sha256"], m["artifact"]["sha256"]);

    // Converted from the directory: the output holds the same bytes.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ext.safetensors");
    let r = run(socair().arg("convert").arg(&dir).arg(&out).args([
        "--from",
        "model-dir",
        "--to",
        "safetensors",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let converted = json(&run(socair().arg("tensors").arg(&out)).stdout);
    assert_tensors(&converted, &case["tensors"], "converted");
    let d = run(socair().args(["tensors", "diff"]).arg(&out).arg(&dir));
    assert_eq!(d.code, 0, "{}", d.stderr);

    // The model file alone: its external tensors stay unread, with what to do instead.
    let r = run(socair().arg("tensors").arg(dir.join("model.onnx")));
    assert_eq!(r.code, 1);
    let m = json(&r.stdout);
    let unread = m["unread"].as_array().unwrap();
    let names: Vec<&str> = unread
        .iter()
        .map(|u| u["tensor"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ext.a", "ext.b"]);
    for u in unread {
        let reason = u["reason"].as_str().unwrap();
        assert!(
            reason.contains("weights.bin") && reason.contains("directory"),
            "{reason}"
        );
    }
    assert_eq!(by_name(&m).len(), 1);
    let r = run(socair()
        .arg("convert")
        .arg(dir.join("model.onnx"))
        .arg(tmp.path().join("single.safetensors"))
        .args(["--from", "onnx", "--to", "safetensors"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
}

#[test]
fn external_ranges_past_the_data_file_are_unread() {
    let e = expected();
    let case = &e["external/offset-past-end"];
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("onnx/external/offset-past-end")));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let m = json(&r.stdout);
    let u = &m["unread"][0];
    assert_eq!(u["tensor"], case["tensor"]);
    assert!(
        u["reason"]
            .as_str()
            .unwrap()
            .contains(case["keyword"].as_str().unwrap()),
        "{u}"
    );
}

#[test]
fn external_data_outside_the_directory_is_never_read() {
    // A model directory whose model.onnx points at ../x: FAIL, and the file beside the
    // directory is not read even though it exists.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(
        fixture("onnx/malformed/external-dotdot.onnx"),
        dir.join("model.onnx"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("x"), [0u8; 8]).unwrap();
    let scan = run(socair().arg("scan").arg(&dir));
    assert_eq!(scan.code, 1);
    let row = &json(&scan.stdout)["rows"][0];
    assert_eq!(row["status"], "FAIL");
    assert!(row["findings"][0]["place"]
        .as_str()
        .unwrap()
        .contains("graph.initializer[0] \"w\""));
    let m = json(&run(socair().arg("tensors").arg(&dir)).stdout);
    assert_eq!(m["tensors"], Value::Array(vec![]));
}

#[test]
fn malformed_files_are_refused_with_reasons() {
    let e = expected();
    let mut n = 0;
    for (rel, case) in e.as_object().unwrap() {
        if !rel.starts_with("malformed/") {
            continue;
        }
        n += 1;
        let path = fixture(&format!("onnx/{rel}"));
        let r = run(socair().arg("scan").arg(&path));
        assert_eq!(r.code, 1, "{rel}: {}", r.stderr);
        let report = json(&r.stdout);
        assert_eq!(report["artifact"]["format"], "onnx", "{rel}");
        let row = &report["rows"][0];
        assert_eq!(row["status"], case["status"], "{rel}: {row:#}");
        let keyword = case["keyword"].as_str().unwrap();
        assert!(
            row["findings"].to_string().contains(keyword),
            "{rel}: {keyword:?} not in {row:#}"
        );
        let t = run(socair().arg("tensors").arg(&path));
        assert_eq!(t.code, 1, "{rel}");
        assert_eq!(json(&t.stdout)["tensors"], Value::Array(vec![]), "{rel}");
        let out = tempfile::tempdir().unwrap();
        let c = run(socair()
            .arg("convert")
            .arg(&path)
            .arg(out.path().join("o.safetensors"))
            .args(["--from", "onnx", "--to", "safetensors"]));
        assert_eq!(c.code, 1, "{rel}: {}", c.stderr);
        assert!(!out.path().join("o.safetensors").exists());
    }
    assert!(n >= 17, "{n}");
}

fn attributes() -> Value {
    json(&std::fs::read_to_string(fixture("onnx/attributes.json")).unwrap())
}

/// ConstantOfShape's `value` and the other tensors main-graph node attributes hold are
/// fingerprinted as Constants are, with the hashes of `onnx.numpy_helper.to_array`
/// (fixtures/onnx/make_attributes.py, onnx 1.23.2); a subgraph's stay outside the model.
#[test]
fn node_attribute_tensors_are_fingerprinted() {
    let e = attributes();
    let rel = "attributes/constant-of-shape.onnx";
    let case = &e[rel];
    let r = run(socair().arg("tensors").arg(fixture(&format!("onnx/{rel}"))));
    let m = json(&r.stdout);
    assert_eq!(m["artifact"]["sha256"], case["file_sha256"]);
    assert_tensors(&m, &case["tensors"], rel);
    let unread = m["unread"].as_array().unwrap();
    assert_eq!(unread.len(), 2, "{unread:#?}");
    for u in case["unread"].as_array().unwrap() {
        let g = unread
            .iter()
            .find(|g| g["tensor"] == u["tensor"])
            .unwrap_or_else(|| panic!("{} not unread", u["tensor"]));
        assert!(g["reason"]
            .as_str()
            .unwrap()
            .contains(u["keyword"].as_str().unwrap()));
    }
    assert_eq!(r.code, 1);
    let scan = run(socair().arg("scan").arg(fixture(&format!("onnx/{rel}"))));
    assert_eq!(scan.code, 0, "{}", scan.stdout);
    let row = &json(&scan.stdout)["rows"][0];
    assert!(row["summary"]
        .as_str()
        .unwrap()
        .contains("and 5 node attribute tensors"));
}

/// A TensorFlow SavedModel (written by TensorFlow 2.21.0) starts as ONNX does, with field 1 a
/// varint, but is no ModelProto: the ONNX reader does not claim it, by content or name; the
/// TensorFlow reader does, alone.
#[test]
fn a_tensorflow_saved_model_is_not_claimed_as_onnx() {
    let dir = fixture("onnx/tensorflow/saved_model");
    let pb = dir.join("saved_model.pb");
    let head = std::fs::read(&pb).unwrap();
    assert_eq!(head[0], 0x08, "field 1 varint, as ONNX's ir_version");
    let r = run(socair().arg("scan").arg(&pb));
    let report = json(&r.stdout);
    assert_eq!(report["artifact"]["format"], "savedmodel", "{report:#}");
    assert!(!r.stdout.contains("ModelProto"), "{}", r.stdout);
    let readers: Vec<&str> = report["tool"]["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(readers, ["tensorflow"], "{report:#}");
    // The directory: read by the TensorFlow reader alone, and clean.
    let r = run(socair().arg("scan").arg(&dir));
    assert_eq!(r.code, 0, "{}", r.stdout);
    let report = json(&r.stdout);
    assert_eq!(report["tool"]["plugins"][0]["name"], "tensorflow");
    assert!(!r.stdout.contains("ONNX"), "{}", r.stdout);
}

/// Nodes whose runtime runs Python (fixtures/onnx/python-ops/, written with
/// `onnx.helper.make_node`; its expected.json records what onnxruntime 1.32 with
/// onnxruntime-extensions 0.15.2 did with each): onnxruntime's `PyOp`, which imports and calls
/// the module and class the node names, is a FAIL wherever it lies; `PythonOp` and an
/// `ai.onnx.contrib` operator without a C++ kernel (which runs a Python function the process
/// registered with `@onnx_op`, as the generator proved) are LEADs naming it; a C++ kernel of
/// the extensions is data.
#[test]
fn nodes_that_run_python_are_named() {
    let e = json(&std::fs::read_to_string(fixture("onnx/python-ops/expected.json")).unwrap());
    let cases = e.as_object().unwrap();
    assert!(cases.len() >= 5);
    for (file, want) in cases {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("onnx/python-ops/{file}"))));
        let report = json(&r.stdout);
        let rows = report["rows"].as_array().unwrap();
        let got = crate::common::verdict(&report);
        assert_eq!(got, want["status"], "{file}: {report:#}");
        assert_eq!(r.code != 0, got != "PASS", "{file}: {}", r.stderr);
        let keyword = want["keyword"].as_str().unwrap();
        if got != "PASS" {
            assert!(
                rows.iter()
                    .flat_map(|r| r["findings"].as_array().unwrap())
                    .any(|f| f["reason"].as_str().unwrap().contains(keyword)
                        && f["reason"].as_str().unwrap().contains("Python")),
                "{file}: no finding naming {keyword:?}: {report:#}"
            );
        }
    }
}
