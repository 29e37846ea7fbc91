//! Core ML end to end, against the files coremltools 9.0 wrote and the SHA-256 of the values
//! coremltools holds (fixtures/coreml/expected.json, from make_coreml.py): model files, model
//! packages scanned as directories (the model file, its weights file and its manifest, each
//! read by the reader that claims it), custom code, links, and coremltools' files edited as an
//! attacker would.

use crate::common::{fixture, has_finding, json, report_plugins, report_row, run, socair, verdict};
use serde_json::Value;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("coreml/expected.json")).unwrap())
}

fn scan(rel: &str) -> Value {
    let r = run(socair().arg("scan").arg(fixture(&format!("coreml/{rel}"))));
    json(&r.stdout)
}

#[test]
fn every_fixture_has_its_verdict() {
    let e = expected();
    for (rel, case) in e.as_object().unwrap() {
        let r = run(socair().arg("scan").arg(fixture(&format!("coreml/{rel}"))));
        let report = json(&r.stdout);
        let want = case["verdict"].as_str().unwrap();
        assert_eq!(verdict(&report), want, "{rel}: {report:#}");
        if want == "PASS" {
            assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        }
        assert_eq!(report_plugins(&report), ["coreml"], "{rel}");
    }
    assert!(e.as_object().unwrap().len() >= 15);
}

#[test]
fn tensors_match_the_values_coremltools_holds() {
    let e = expected();
    let mut compared = 0;
    for (rel, case) in e.as_object().unwrap() {
        let want = case["tensors"].as_array().unwrap();
        if want.is_empty() {
            continue;
        }
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("coreml/{rel}"))));
        let m = json(&r.stdout);
        let got = m["tensors"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{rel}: {m:#}");
        for w in want {
            let g = got
                .iter()
                .find(|g| g["name"] == w["name"])
                .unwrap_or_else(|| panic!("{rel}: {} missing from {m:#}", w["name"]));
            for key in ["dtype", "shape", "bytes", "sha256"] {
                assert_eq!(g[key], w[key], "{rel}: {} {key}", w["name"]);
            }
            compared += 1;
        }
    }
    assert!(compared >= 30, "{compared}");
}

#[test]
fn a_package_is_read_file_by_file_and_its_weights_lie_in_its_weights_file() {
    let report = scan("valid/mil.mlpackage");
    assert_eq!(report["artifact"]["format"], "model directory");
    let row = report_row(&report, "Format and structure");
    assert_eq!(row["status"], "PASS", "{row:#}");
    let summary = row["summary"].as_str().unwrap();
    for part in [
        "Data/com.apple.CoreML/model.mlmodel: PASS Core ML model (specification version 6; mlProgram)",
        "Data/com.apple.CoreML/weights/weight.bin: PASS Core ML weights",
        "Manifest.json: PASS",
    ] {
        assert!(summary.contains(part), "{part}: {summary}");
    }
    // The root model the manifest names is a file socair read: a note.
    assert!(
        has_finding(
            row,
            "Manifest.json: rootModelIdentifier",
            "which socair reads"
        ),
        "{row:#}"
    );
    // The model file alone: its blobs lie in a file it cannot reach.
    let alone = run(socair().arg("tensors").arg(fixture(
        "coreml/valid/mil.mlpackage/Data/com.apple.CoreML/model.mlmodel",
    )));
    let m = json(&alone.stdout);
    assert_eq!(m["tensors"].as_array().unwrap().len(), 1, "{m:#}");
    assert_eq!(m["unread"].as_array().unwrap().len(), 3, "{m:#}");
}

#[test]
fn custom_code_is_a_lead_naming_its_class() {
    for (rel, class, place) in [
        (
            "custom/custom-layer.mlmodel",
            "AAPLCustomSwish",
            "neuralNetwork.layers[0].custom",
        ),
        (
            "custom/custom-model.mlmodel",
            "AAPLRecommender",
            "customModel",
        ),
    ] {
        let report = scan(rel);
        let row = report_row(&report, "Format and structure");
        assert_eq!(row["status"], "LEAD");
        assert!(has_finding(row, place, class), "{rel}: {row:#}");
    }
}

#[test]
fn links_are_judged_as_links() {
    let lead = scan("links/linked.mlmodel");
    let row = report_row(&lead, "Format and structure");
    assert_eq!(row["status"], "LEAD");
    assert!(
        has_finding(
            row,
            "pipeline.models[0].linkedModel.linkedModelFile",
            "\"Features.mlmodelc\" beside this one"
        ),
        "{row:#}"
    );
    let absolute = scan("links/linked-absolute.mlmodel");
    assert!(has_finding(
        report_row(&absolute, "Format and structure"),
        "pipeline.models[0]",
        "\"/Library/Models\""
    ));
    let escaping = scan("links/linked-escaping.mlmodel");
    assert!(has_finding(
        report_row(&escaping, "Format and structure"),
        "pipeline.models[0]",
        "leaving the model's directory"
    ));
    // The linked file is a file of the scanned directory that socair reads: a note.
    let dir = scan("links/linked-dir");
    let row = report_row(&dir, "Format and structure");
    assert_eq!(row["status"], "PASS", "{row:#}");
    assert!(
        has_finding(
            row,
            "pipeline.mlmodel: pipeline.models[0]",
            "\"features.mlmodel\" is a file of this directory"
        ),
        "{row:#}"
    );
}

#[test]
fn edited_files_fail_with_their_reason() {
    let two = scan("hostile/two-types.mlmodel");
    assert!(has_finding(
        report_row(&two, "Format and structure"),
        "model (byte",
        "`neuralNetwork` and `customModel`"
    ));
    let outside = scan("hostile/mil-blob-outside.mlmodel");
    assert!(has_finding(
        report_row(&outside, "Format and structure"),
        "mlProgram.functions[0].value.block_specializations[0].value.operations[0]",
        "\"/var/mobile/weights.bin\" lies outside the model package"
    ));
    let moved = scan("hostile/weights-moved.mlpackage");
    let row = report_row(&moved, "Format and structure");
    assert_eq!(row["status"], "FAIL");
    assert!(
        has_finding(
            row,
            "Data/com.apple.CoreML/weights/weight.bin: blob 0 (byte 64)",
            "not right after its metadata"
        ),
        "{row:#}"
    );
}

#[test]
fn each_mlpackage_is_one_artifact_of_a_walk() {
    // `Manifest.json` makes a directory one model, as Core ML opens a `.mlpackage` whole.
    let r = run(socair()
        .args(["scan", "--each"])
        .arg(fixture("coreml/valid")));
    let listing = json(&r.stdout);
    let artifacts: Vec<(String, String)> = listing["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_owned(),
                a["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(artifacts.len(), 8, "{artifacts:?}");
    for pkg in ["mil.mlpackage", "mil-fp16.mlpackage"] {
        assert!(
            artifacts
                .iter()
                .any(|(p, v)| p.ends_with(pkg) && v == "clean"),
            "{pkg}: {artifacts:?}"
        );
    }
}
