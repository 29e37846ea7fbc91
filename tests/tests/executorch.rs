//! ExecuTorch `.pte` programs end to end, against files ExecuTorch 1.4.1 wrote and what its
//! runtime did with them (fixtures/executorch/expected.json, written by
//! fixtures/executorch/make_executorch.py).

use crate::common::{fixture, has_finding, json, report_row, run, socair, tensor_hashes, verdict};
use serde_json::Value;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("executorch/expected.json")).unwrap())
}

fn scan(file: &std::path::Path) -> Value {
    json(&run(socair().arg("scan").arg(file)).stdout)
}

#[test]
fn every_fixture_gets_the_verdict_the_runtime_justifies() {
    let expected = expected();
    let cases = expected.as_object().unwrap();
    assert!(cases.len() >= 10);
    for (name, case) in cases {
        let report = scan(&fixture(&format!("executorch/{name}")));
        assert_eq!(report["artifact"]["format"], "executorch", "{name}");
        assert_eq!(verdict(&report), case["verdict"], "{name}: {report:#}");
        let row = report_row(&report, "Format and structure");
        if let Some(backend) = case.get("backend") {
            let quoted = format!("{backend}");
            assert!(
                has_finding(row, "method forward delegate 0", &quoted),
                "{name}: {row:#}"
            );
        }
        if let Some(op) = case.get("operator") {
            let quoted = format!("{op}");
            assert!(
                has_finding(row, "method forward operator", &quoted),
                "{name}: {row:#}"
            );
        }
    }
}

#[test]
fn the_constants_fingerprinted_are_the_modules_parameters() {
    let expected = expected();
    let want: Vec<&str> = expected["linear.pte"]["constants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sha256"].as_str().unwrap())
        .collect();
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("executorch/linear.pte")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    let got = tensor_hashes(&m);
    assert_eq!(got.len(), 2);
    assert_eq!(got["forward.values[0]"], want[0]);
    assert_eq!(got["forward.values[1]"], want[1]);
    assert_eq!(m["tensors"][0]["dtype"], "Float");
    assert_eq!(m["tensors"][0]["shape"], serde_json::json!([3, 4]));
    // The XNNPACK program carries the same weights as named data, keyed by their sha256.
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("executorch/xnnpack.pte")));
    let named = tensor_hashes(&json(&r.stdout));
    for sha in want {
        assert_eq!(named[&format!("named_data/{sha}")], sha);
    }
}

#[test]
fn the_claim_is_the_identifier_not_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("weights.bin");
    std::fs::copy(fixture("executorch/linear.pte"), &renamed).unwrap();
    let report = scan(&renamed);
    assert_eq!(report["artifact"]["format"], "executorch");
    assert_eq!(verdict(&report), "PASS");
    // The same bytes without the identifier are not claimed as ExecuTorch...
    let mut bytes = std::fs::read(&renamed).unwrap();
    bytes[4..8].copy_from_slice(b"XX12");
    let other = dir.path().join("other.bin");
    std::fs::write(&other, &bytes).unwrap();
    let report = json(&run(socair().arg("scan").arg(&other)).stdout);
    assert_ne!(report["artifact"]["format"], "executorch");
    // ...but named `.pte`, the ExecuTorch reader opens them and says the runtime refuses them.
    let named = dir.path().join("other.pte");
    std::fs::write(&named, &bytes).unwrap();
    let report = scan(&named);
    assert_eq!(report["artifact"]["format"], "executorch");
    assert_eq!(verdict(&report), "FAIL");
    let reason = report["rows"][0]["findings"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("not \"ET12\""), "{report:#}");
}
