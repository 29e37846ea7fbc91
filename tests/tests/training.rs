//! Training checkpoints are fingerprinted whole, against checkpoints torch
//! itself wrote (fixtures/torch/make_training_fixtures.py) and the names and hashes it computed
//! from the torch objects (fixtures/torch/training/expected.json): every tensor gets a name
//! (integer keys and list or tuple positions as decimal path segments, a bare tensor `tensor`),
//! `tensors` exits 0 when every tensor's bytes were read, one wrapper rule (`state_dict`)
//! decides the model in `tensors` and `convert` alike, and a conversion that would carry no
//! tensor is refused.

use crate::common::{fixture, json, run, socair, tensor_hashes};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("torch/training/expected.json")).unwrap())
}

#[test]
fn every_tensor_of_a_training_checkpoint_is_named_and_fingerprinted() {
    let expected = expected();
    for (file, want) in expected.as_object().unwrap() {
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("torch/training/{file}"))));
        assert_eq!(r.code, 0, "{file}: every tensor read: {}", r.stderr);
        let m = json(&r.stdout);
        assert_eq!(m["unread"], serde_json::json!([]), "{file}");
        let got: BTreeMap<String, String> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let name = t["name"].as_str().unwrap().to_owned();
                assert!(!name.is_empty(), "{file}: a tensor without a name");
                (name, t["sha256"].as_str().unwrap().to_owned())
            })
            .collect();
        let wanted: BTreeMap<String, String> = want["tensors"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(n, t)| (n.clone(), t["sha256"].as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(got, wanted, "{file}: names and bytes as torch loads them");
    }
}

#[test]
fn conversion_carries_the_model_by_the_same_rule_and_never_writes_an_empty_file() {
    let expected = expected();
    let dir = tempfile::tempdir().unwrap();
    for (file, want) in expected.as_object().unwrap() {
        let src = fixture(&format!("torch/training/{file}"));
        let out = dir.path().join(format!("{file}.safetensors"));
        let r = run(socair().arg("convert").arg(&src).arg(&out).args([
            "--from",
            "torch-zip",
            "--to",
            "safetensors",
        ]));
        let carried: BTreeMap<String, String> = want["tensors"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, t)| t["converted"] == true)
            .map(|(n, t)| (n.clone(), t["sha256"].as_str().unwrap().to_owned()))
            .collect();
        if carried.is_empty() {
            assert_eq!(r.code, 1, "{file}: {}", r.stderr);
            assert!(
                r.stderr.contains("no tensor to carry"),
                "{file}: {}",
                r.stderr
            );
            assert!(!out.exists(), "{file}: no file is written");
            continue;
        }
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        // The output holds exactly the model's tensors, under the names `tensors` gives them.
        let got = tensor_hashes(&json(&run(socair().arg("tensors").arg(&out)).stdout));
        assert_eq!(got, carried, "{file}");
        // The checkpoint against its conversion: the model matches under its own names; the
        // optimizer's state is only in the checkpoint.
        let d = run(socair().args(["tensors", "diff"]).arg(&src).arg(&out));
        let c = json(&d.stdout);
        assert_eq!(c["summary"]["only_in_reference"], 0, "{file}: {}", d.stderr);
        assert_eq!(
            c["summary"]["only_in_artifact"].as_u64().unwrap() as usize,
            want["tensors"].as_object().unwrap().len() - carried.len(),
            "{file}: {}",
            d.stderr
        );
    }
}
