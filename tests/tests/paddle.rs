//! PaddlePaddle end to end: programs and parameters PaddlePaddle 3.3.1 wrote
//! (fixtures/paddle, from make_fixtures.py), scanned and fingerprinted by the built socair with
//! its plugins, against what Paddle's own loaders gave (expected.json): every op of a program
//! judged, every tensor of a `.pdiparams` fingerprinted, the hostile programs FAIL or LEAD
//! naming the op.

use crate::common::{fixture, json, report_plugins, run, socair};
use serde_json::Value;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("paddle/expected.json")).unwrap())
}

/// The tensors of a `socair tensors` manifest: (file, name) → entry.
fn tensors(m: &Value) -> Vec<(String, String, Value)> {
    m["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["file"].as_str().unwrap_or("").to_owned(),
                t["name"].as_str().unwrap().to_owned(),
                t.clone(),
            )
        })
        .collect()
}

fn paddle_dtype(numpy: &str) -> &'static str {
    match numpy {
        "float32" => "FP32",
        "float64" => "FP64",
        "int64" => "INT64",
        other => panic!("{other}"),
    }
}

#[test]
fn inference_models_scan_clean_and_every_parameter_is_the_array_paddle_loads() {
    let e = expected();
    for dir in ["static", "pir", "static-control-flow", "pir-cnn-lstm"] {
        let path = fixture(&format!("paddle/{dir}"));
        let scan = run(socair().arg("scan").arg(&path));
        let report = json(&scan.stdout);
        assert_eq!(scan.code, 0, "{dir}: {:#}", report["rows"]);
        assert_eq!(report_plugins(&report), ["paddle"], "{dir}");
        let r = run(socair().arg("tensors").arg(&path));
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let got = tensors(&json(&r.stdout));
        let want = e[&format!("{dir}/model.pdiparams")]["tensors"]
            .as_object()
            .unwrap();
        // save_combine writes the persistable tensors sorted by name; the file names none:
        // beside its program (the same stem) they are named by the program's parameters.
        let mut names: Vec<&String> = want.keys().collect();
        names.sort();
        assert_eq!(got.len(), names.len(), "{dir}");
        for (i, name) in names.iter().enumerate() {
            let (file, got_name, t) = &got[i];
            assert_eq!(
                (file.as_str(), got_name.as_str()),
                ("model.pdiparams", name.as_str()),
                "{dir} {i}"
            );
            let w = &want[name.as_str()];
            assert_eq!(t["sha256"], w["sha256"], "{dir} {name}");
            assert_eq!(t["shape"], w["shape"], "{dir} {name}");
            assert_eq!(
                t["dtype"],
                paddle_dtype(w["dtype"].as_str().unwrap()),
                "{dir} {name}"
            );
        }
        // Given alone beside its program (README: named by the program of the same stem
        // beside it), the same names and bytes as in the directory.
        let r = run(socair().arg("tensors").arg(path.join("model.pdiparams")));
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let beside = tensors(&json(&r.stdout));
        assert_eq!(beside.len(), names.len(), "{dir}");
        for ((_, got_name, t), (_, dir_name, dir_t)) in beside.iter().zip(&got) {
            assert_eq!(got_name, dir_name, "{dir}");
            assert_eq!(t["sha256"], dir_t["sha256"], "{dir} {got_name}");
        }
        // Alone with no program beside it, they are named by their index in the file, with
        // the same bytes.
        let alone = tempfile::tempdir().unwrap();
        let lone = alone.path().join("model.pdiparams");
        std::fs::copy(path.join("model.pdiparams"), &lone).unwrap();
        let r = run(socair().arg("tensors").arg(&lone));
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let got = tensors(&json(&r.stdout));
        assert_eq!(got.len(), names.len(), "{dir}");
        // (The manifest sorts them by name: `10` before `2`.)
        let mut indices: Vec<usize> = got.iter().map(|(_, n, _)| n.parse().unwrap()).collect();
        indices.sort();
        assert_eq!(indices, (0..names.len()).collect::<Vec<_>>(), "{dir}");
        for (_, got_name, t) in &got {
            let i: usize = got_name.parse().unwrap();
            assert_eq!(t["sha256"], want[names[i].as_str()]["sha256"], "{dir} {i}");
        }
        // The program lists its parameters (the first eight), in that order.
        let program = if dir.starts_with("static") {
            "model.pdmodel"
        } else {
            "model.json"
        };
        let scan = run(socair().arg("scan").arg(path.join(program)));
        assert_eq!(scan.code, 0);
        let report = json(&scan.stdout);
        let listed = names
            .iter()
            .take(8)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        assert!(
            scan.stdout.contains(&listed),
            "{dir}: {listed} in {report:#}"
        );
    }
}

#[test]
fn hostile_programs_and_parameters_get_their_verdict_naming_the_place() {
    let e = expected();
    for (name, want) in e["hostile"].as_object().unwrap() {
        let path = fixture(&format!("paddle/hostile/{name}"));
        let scan = run(socair().arg("scan").arg(&path));
        let report = json(&scan.stdout);
        let row = &report["rows"][0];
        let status = want["status"].as_str().unwrap();
        assert_eq!(row["status"], status, "{name}: {row:#}");
        assert_eq!(scan.code, if status == "PASS" { 0 } else { 1 }, "{name}");
        let text = row.to_string();
        assert!(
            text.contains(want["keyword"].as_str().unwrap()),
            "{name}: {row:#}"
        );
        if let Some(i) = want.get("op_index").and_then(Value::as_u64) {
            let place = format!("block 0 op {i} (");
            assert!(
                row["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["place"].as_str().unwrap().contains(&place)),
                "{name}: {row:#}"
            );
        }
    }
    // The .pdiparams whose first TensorDesc length runs past the end, beside its program: the
    // directory FAILs, naming the file and the byte.
    let scan = run(socair().arg("scan").arg(fixture("paddle/hostile/pastend")));
    assert_eq!(scan.code, 1);
    let report = json(&scan.stdout);
    assert_eq!(report["rows"][0]["status"], "FAIL", "{:#}", report["rows"]);
    assert!(report["rows"][0].to_string().contains("model.pdiparams"));
}

#[test]
fn a_pir_program_is_claimed_by_content_and_other_json_stays_a_companion() {
    // The PIR reader claims a document whose first key is base_code with magic "pir"; an
    // ordinary config.json beside a model is not claimed by it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("paddle/pir/model.json"),
        dir.path().join("inference.json"),
    )
    .unwrap();
    std::fs::copy(
        fixture("paddle/pir/model.pdiparams"),
        dir.path().join("inference.pdiparams"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        br#"{"base_code": 1, "magic": "pir"}"#,
    )
    .unwrap();
    let scan = run(socair().arg("scan").arg(dir.path()));
    let report = json(&scan.stdout);
    assert_eq!(scan.code, 0, "{:#}", report["rows"]);
    let summary = report["rows"][0]["summary"].as_str().unwrap();
    assert!(
        summary.contains("inference.json: PASS PaddlePaddle PIR program"),
        "{summary}"
    );
    assert!(
        !summary.contains("config.json: PASS PaddlePaddle"),
        "{summary}"
    );
}

/// `paddle.save`'s pickles (`.pdparams` of a Layer's state_dict, `.pdopt` of an Adam
/// optimizer's) are read as any other pickle by the torch-zip plugin's legacy reader; under
/// the data-only profile (`socair-data/1`) they PASS and every NumPy
/// array is fingerprinted by its path, with the bytes `paddle.load` gives.
#[test]
fn paddle_save_pickles_pass_as_data_and_every_array_is_fingerprinted() {
    let e = expected();
    for file in ["model.pdparams", "model.pdopt"] {
        let path = fixture(&format!("paddle/dygraph/{file}"));
        let scan = run(socair().arg("scan").arg(&path));
        assert_eq!(scan.code, 0, "{file}: {}", scan.stdout);
        let r = run(socair().arg("tensors").arg(&path));
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        let got = tensors(&json(&r.stdout));
        let want = e[&format!("dygraph/{file}")]["tensors"]
            .as_object()
            .unwrap();
        assert_eq!(got.len(), want.len(), "{file}");
        for (_, name, t) in &got {
            let w = &want[name.as_str()];
            assert_eq!(t["sha256"], w["sha256"], "{file} {name}");
            assert_eq!(t["shape"], w["shape"], "{file} {name}");
        }
    }
}

#[test]
fn parameters_keep_their_index_when_the_program_beside_them_names_another_count() {
    // The static program names four parameters; a .pdiparams of its first tensor alone (the
    // first 36 bytes: 20 of header, a 4-byte TensorDesc, 3 float32s) holds one.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("paddle/static/model.pdmodel"),
        dir.path().join("model.pdmodel"),
    )
    .unwrap();
    let params = std::fs::read(fixture("paddle/static/model.pdiparams")).unwrap();
    std::fs::write(dir.path().join("model.pdiparams"), &params[..36]).unwrap();
    let r = run(socair().arg("tensors").arg(dir.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = tensors(&json(&r.stdout));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, "0");
}
