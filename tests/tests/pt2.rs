//! `torch.export` PT2 archives end to end: the archives torch 2.15 wrote
//! (fixtures/torch/pt2/, by make_pt2.py) through the built `socair`: read by torch-zip's
//! `torch-export` reader, every pickle torch.export.load reads (sample inputs, weights saved
//! with torch.save, opaque constants) through the machine, the graph's symbolic expressions
//! that sympy.sympify evaluates checked, an AOTInductor package's native code a FAIL; the raw
//! weights fingerprinted with the hashes torch computed of them.

use crate::common::{fixture, has_finding, json, report_row as row, run, socair};

#[test]
fn every_pt2_fixture_gets_its_verdict() {
    let e = json(&std::fs::read_to_string(fixture("torch/pt2/expected.json")).unwrap());
    let mut seen = 0;
    for (file, want) in e.as_object().unwrap() {
        if file == "generator" {
            continue;
        }
        seen += 1;
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("torch/pt2/{file}"))));
        let report = json(&r.stdout);
        assert_eq!(
            report["artifact"]["format"], "torch-export",
            "{file}: {}",
            r.stderr
        );
        let structure = row(&report, "Format and structure");
        let pickle = row(&report, "Pickle opcode scan");
        assert_eq!(
            structure["status"], want["structure"],
            "{file}: {structure:#}"
        );
        let want_pickle = want["pickle"].as_str().unwrap_or("NOT_TESTED");
        assert_eq!(pickle["status"], want_pickle, "{file}: {pickle:#}");
        let clean = want["structure"] == "PASS" && want_pickle == "PASS";
        assert_eq!(r.code, i32::from(!clean), "{file}: {}", r.stderr);
        if let (Some(place), Some(reason)) = (want["place"].as_str(), want["reason"].as_str()) {
            let deciding = if want["structure"] == "FAIL" {
                structure
            } else {
                pickle
            };
            assert!(
                has_finding(deciding, place, reason),
                "{file}: no finding at {place:?} naming {reason:?}: {deciding:#}"
            );
        }
    }
    assert!(seen >= 7, "{seen}");
}

/// The weights and constants are fingerprinted as torch holds them, raw in their records or
/// saved with torch.save (use_pickle) inside one.
#[test]
fn pt2_weights_are_fingerprinted_as_torch_holds_them() {
    let e = json(&std::fs::read_to_string(fixture("torch/pt2/expected.json")).unwrap());
    for file in ["tiny.pt2", "pickled-weight.pt2"] {
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("torch/pt2/{file}"))));
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        let m = json(&r.stdout);
        for (name, want) in e[file]["tensors"].as_object().unwrap() {
            let got = m["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name.as_str())
                .unwrap_or_else(|| panic!("{file}: no tensor {name}: {m:#}"));
            assert_eq!(got["sha256"], want["sha256"], "{file} {name}");
            assert_eq!(got["shape"], want["shape"], "{file} {name}");
            assert_eq!(got["dtype"], want["dtype"], "{file} {name}");
        }
    }
}
