//! Checkpoints saved under Python 2: `socair-wo/2` (and `/3`, now the default,
//! which gives every torch checkpoint saved under Python 2 `/2`'s verdict) reads what Python 2.7's
//! pickler wrote for torch 1.0 to 1.4, decoded as torch.load decodes it; `socair-wo/1` keeps
//! the verdicts it gave before `/2` existed; a store's pins choose the version, and the report
//! and attestation name it. Fixtures and their expectations: fixtures/torch/py2/ (written by
//! make_py2_fixtures.py, which reads every pickle back with Python 3's unpickler).

use crate::common::{fixture, json, run, socair, Store};
use serde_json::Value;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("torch/py2/expected.json")).unwrap())
}

fn pickle_row(report: &Value) -> Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "Pickle opcode scan")
        .unwrap_or_else(|| panic!("no pickle row in {report:#}"))
        .clone()
}

fn findings_text(row: &Value) -> String {
    row["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {}\n", f["place"], f["reason"]))
        .collect()
}

#[test]
fn python_2_checkpoints_are_read_unpinned_as_under_2_with_every_tensor_as_written() {
    let all = expected();
    let all = all.as_object().unwrap();
    assert_eq!(all.len(), 6);
    let mut passed = 0;
    for (file, case) in all {
        let path = fixture(&format!("torch/py2/{file}"));
        let r = run(socair().arg("scan").arg(&path));
        let report = json(&r.stdout);
        assert_eq!(report["rules"]["socair-wo"], "3", "{file}");
        let row = pickle_row(&report);
        let want = &case["status"]["2"];
        assert_eq!(&row["status"], want, "{file}: {row:#}");
        if want == "PASS" {
            assert_eq!(r.code, 0, "{file}: {}", r.stderr);
            assert!(
                row["summary"].as_str().unwrap().contains("socair-wo/3"),
                "{row:#}"
            );
            let t = run(socair().arg("tensors").arg(&path));
            assert_eq!(t.code, 0, "{file}: {}", t.stderr);
            let m = json(&t.stdout);
            assert_eq!(m["artifact"]["sha256"], case["file_sha256"], "{file}");
            let got = m["tensors"].as_array().unwrap();
            let want = case["tensors"].as_array().unwrap();
            assert_eq!(got.len(), want.len(), "{file}: {m:#}");
            for w in want {
                let g = got
                    .iter()
                    .find(|g| g["name"] == w["name"])
                    .unwrap_or_else(|| panic!("{file}: {} missing from {m:#}", w["name"]));
                for field in ["dtype", "shape", "sha256"] {
                    assert_eq!(g[field], w[field], "{file}: {} {field}", w["name"]);
                }
            }
            passed += 1;
        } else {
            assert_eq!(r.code, 1, "{file}: {}", r.stderr);
            let text = findings_text(&row);
            let keyword = case["keyword"].as_str().unwrap();
            assert!(text.contains(keyword), "{file}: {keyword:?} not in {text}");
        }
    }
    assert_eq!(passed, 3);
}

/// Scans `file` in a fresh store whose pins are `pin` (or none), returning the scan's exit
/// code, its signed report, and the store.
fn store_scan(file: &str, pin: Option<&str>) -> (i32, Value, Store, String) {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let src = s.dir.path().join(file);
    std::fs::copy(fixture(&format!("torch/py2/{file}")), &src).unwrap();
    if let Some(pin) = pin {
        let r = s.run(&["airlock", "pin", "rules", "socair-wo", pin]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let sha = s.run(&["airlock", "pull", src.to_str().unwrap()]);
    assert_eq!(sha.code, 0, "{}", sha.stderr);
    let sha = sha.stdout.trim().to_owned();
    let scan = s.run(&["airlock", "scan", &sha, "--key", &scanner]);
    let attestation = s
        .path()
        .join("incoming")
        .join(&sha)
        .join("attestation.dsse.json");
    let verified = s.run(&["verify", "--signature-only", attestation.to_str().unwrap()]);
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    let report = json(&verified.stdout)["predicate"].clone();
    (scan.code, report, s, sha)
}

#[test]
fn a_store_pinned_to_1_scans_under_1_and_says_so() {
    let all = expected();
    for (file, case) in all.as_object().unwrap() {
        let (_, report, ..) = store_scan(file, Some("=1"));
        assert_eq!(report["rules"]["socair-wo"], "1", "{file}: {report:#}");
        let row = pickle_row(&report);
        assert_eq!(row["status"], case["status"]["1"], "{file}: {row:#}");
        assert!(
            !findings_text(&row).contains("socair-wo/2")
                && !row.to_string().contains("socair-wo/2"),
            "{file}: {row:#}"
        );
    }
}

#[test]
fn an_unpinned_store_scans_under_3_and_a_later_pin_to_1_refuses_that_attestation() {
    let (code, report, s, sha) = store_scan("state_dict.pt", None);
    assert_eq!(code, 0);
    assert_eq!(report["rules"]["socair-wo"], "3");
    assert_eq!(pickle_row(&report)["status"], "PASS");
    let r = s.run(&["airlock", "pin", "rules", "socair-wo", "=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = s.run(&["airlock", "promote", &sha]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the attestation's scan ran under socair-wo/3 is outside the store's pin =1"),
        "{}",
        r.stderr
    );
    // Pinned to 2, the same file scans under 2.
    let (code, report, ..) = store_scan("state_dict.pt", Some("=2"));
    assert_eq!(code, 0);
    assert_eq!(report["rules"]["socair-wo"], "2");
}

#[test]
fn hostile_python_2_pickles_fail_under_both_versions() {
    for file in [
        "hostile-sys-info.pt",
        "hostile-reconstructor.pt",
        "latin1-str.pt",
    ] {
        for pin in ["=1", "=2"] {
            let (code, report, ..) = store_scan(file, Some(pin));
            assert_eq!(code, 1, "{file} {pin}");
            assert_eq!(pickle_row(&report)["status"], "FAIL", "{file} {pin}");
        }
    }
}

#[test]
fn a_python_2_checkpoint_converts_to_the_tensors_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let case = &expected()["state_dict.pt"];
    let out = dir.path().join("model.safetensors");
    let r = run(socair()
        .arg("convert")
        .arg(fixture("torch/py2/state_dict.pt"))
        .arg(&out)
        .args(["--from", "torch-legacy", "--to", "safetensors"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&run(socair().arg("tensors").arg(&out)).stdout);
    let got = m["tensors"].as_array().unwrap();
    let want = case["tensors"].as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{m:#}");
    for w in want {
        let g = got.iter().find(|g| g["name"] == w["name"]).unwrap();
        for field in ["dtype", "shape", "sha256"] {
            assert_eq!(g[field], w[field], "{} {field}", w["name"]);
        }
    }
}
