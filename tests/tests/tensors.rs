//! `socair tensors` end to end, checked against what the safetensors Python package, numpy,
//! torch and hashlib say about the same files (fixtures/safetensors/expected.json, written by
//! fixtures/safetensors/make_fixtures.py).

use crate::common::{fixture, json, run, socair};
use serde_json::Value;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("safetensors/expected.json")).unwrap())
}

/// Compares every tensor row of a manifest with the independently computed rows.
fn assert_rows_match(manifest: &Value, expected_rows: &Value) {
    let rows = manifest["tensors"].as_array().unwrap();
    let want = expected_rows.as_array().unwrap();
    assert_eq!(rows.len(), want.len());
    for (got, want) in rows.iter().zip(want) {
        for key in ["file", "name", "dtype", "shape", "bytes", "sha256"] {
            assert_eq!(got[key], want[key], "{key} of {}", want["name"]);
        }
        assert_eq!(
            got.get("values"),
            want.get("values"),
            "values of {}",
            want["name"]
        );
    }
}

#[test]
fn sharded_transformers_model_matches_python() {
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("safetensors/tiny-bert")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    let e = &expected()["tiny-bert"];
    assert_eq!(m["schema"], "socair.tensors/v1");
    assert_eq!(m["value_encoding"], "float32-le-bits/v1");
    assert_eq!(m["artifact"]["name"], "tiny-bert");
    assert_eq!(m["artifact"]["format"], "model directory");
    // The socair.modeldir/v1 digest, computed in Python from the definition.
    assert_eq!(m["artifact"]["sha256"], e["sha256"]);
    assert_rows_match(&m, &e["tensors"]);
    assert_eq!(m["unread"], Value::Array(vec![]));
    assert!(
        r.stderr
            .contains("39 tensors fingerprinted in 4 files of model directory \"tiny-bert\""),
        "{}",
        r.stderr
    );
    // Key order is the seed's (checked on the text: the parsed map does not keep order).
    let at = |key: &str| r.stdout.find(&format!("\n  \"{key}\":")).unwrap();
    let order = ["schema", "artifact", "value_encoding", "tensors", "unread"].map(at);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
}

#[test]
fn every_dtype_and_independent_values_hashes() {
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("safetensors/all-dtypes.safetensors")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    let e = &expected()["all-dtypes.safetensors"];
    assert_eq!(m["artifact"]["format"], "safetensors");
    assert_eq!(m["artifact"]["sha256"], e["sha256"]);
    assert_rows_match(&m, &e["tensors"]);
    // Values hashes exist for exactly the F32, F16 and BF16 tensors.
    for t in m["tensors"].as_array().unwrap() {
        let float = matches!(t["dtype"].as_str(), Some("F32" | "F16" | "BF16"));
        assert_eq!(t.get("values").is_some(), float, "{}", t["name"]);
    }
}

#[test]
fn output_is_deterministic_and_out_matches_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let a = run(socair()
        .arg("tensors")
        .arg(fixture("safetensors/tiny-bert"))
        .arg("--out")
        .arg(&out));
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert!(a.stdout.is_empty());
    let b = run(socair()
        .arg("tensors")
        .arg(fixture("safetensors/tiny-bert"))
        .env("SOCAIR_NO_MMAP", "1")
        .env("RAYON_NUM_THREADS", "1"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), b.stdout);
    assert!(b.stdout.ends_with("}\n"));
    // Nothing but the output is left in the directory (no temporary files).
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn malformed_files_are_refused_each_with_its_reason() {
    let e = expected();
    let cases = e["malformed"].as_object().unwrap();
    assert!(cases.len() >= 24);
    for (file, case) in cases {
        let why = case["reason"].as_str().unwrap();
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("safetensors/malformed/{file}"))));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let m = json(&r.stdout);
        assert_eq!(m["tensors"], Value::Array(vec![]), "{file}");
        let unread = m["unread"].as_array().unwrap();
        assert_eq!(unread.len(), 1, "{file}");
        assert_eq!(unread[0]["file"], file.as_str());
        let reason = unread[0]["reason"].as_str().unwrap();
        assert!(reason.contains(why), "{file}: {reason:?} lacks {why:?}");
        assert!(r.stderr.contains(why), "{file}: stderr {:?}", r.stderr);
    }
}

#[test]
fn a_directory_reads_what_it_can_and_lists_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    std::fs::copy(
        fixture("safetensors/tiny-bert/model-00001-of-00004.safetensors"),
        model.join("good.safetensors"),
    )
    .unwrap();
    std::fs::copy(
        fixture("safetensors/malformed/aliased-tensors.safetensors"),
        model.join("bad.safetensors"),
    )
    .unwrap();
    std::fs::write(model.join("notes.txt"), "not a model file").unwrap();
    let r = run(socair().arg("tensors").arg(&model));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let m = json(&r.stdout);
    assert!(m["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["file"] == "good.safetensors"));
    assert!(!m["tensors"].as_array().unwrap().is_empty());
    let unread = m["unread"].as_array().unwrap();
    assert_eq!(unread.len(), 1);
    assert_eq!(unread[0]["file"], "bad.safetensors");
    assert!(unread[0]["reason"].as_str().unwrap().contains("overlap"));
}

#[test]
fn unreadable_paths_exit_2_naming_the_path() {
    let r = run(socair()
        .arg("tensors")
        .arg("/nonexistent/model.safetensors"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("/nonexistent/model.safetensors"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());

    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/etc/hostname", dir.path().join("escape")).unwrap();
    let r = run(socair().arg("tensors").arg(dir.path()));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);

    let file = dir.path().join("config.json");
    std::fs::write(&file, "{\"hidden_size\": 16}").unwrap();
    let r = run(socair().arg("tensors").arg(&file));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("no loaded plugin recognises"),
        "{}",
        r.stderr
    );

    let r = run(socair().arg("tensors"));
    assert_eq!(r.code, 2, "a missing argument is a usage error");
}
