//! `socair tensors diff` and the Tensor reference row on real-shaped cases
//! (fixtures/diff/make_fixtures.py; the expected counts are computed there, in Python, from
//! the written files).

use crate::common::{fixture, json, run, socair};
use serde_json::Value;

fn comparisons() -> Vec<Value> {
    json(&std::fs::read_to_string(fixture("diff/expected.json")).unwrap())["comparisons"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn every_comparison_gives_the_expected_counts_and_pairs() {
    let cases = comparisons();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let (a, r) = (
            case["artifact"].as_str().unwrap(),
            case["reference"].as_str().unwrap(),
        );
        let out = run(socair()
            .args(["tensors", "diff"])
            .arg(fixture(&format!("diff/{a}")))
            .arg(fixture(&format!("diff/{r}"))));
        let c = json(&out.stdout);
        assert_eq!(c["schema"], "socair.tensors.diff/v1");
        for (k, v) in case["counts"].as_object().unwrap() {
            assert_eq!(&c["summary"][k], v, "{a} vs {r}: {k}: {}", out.stderr);
        }
        let own_name_match = case["counts"]["identical"].as_u64().unwrap()
            + case["counts"]["same_values"].as_u64().unwrap();
        let all_match = case["pairs"].as_array().unwrap().len() as u64 == own_name_match
            && case["counts"]["only_in_artifact"] == 0
            && case["counts"]["only_in_reference"] == 0;
        assert_eq!(out.code, if all_match { 0 } else { 1 }, "{a} vs {r}");
        assert_eq!(c["matches"], all_match);
        // Every expected pair is there with its outcome.
        for p in case["pairs"].as_array().unwrap() {
            let got = c["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["artifact"]["name"] == p["artifact"])
                .unwrap_or_else(|| panic!("{a} vs {r}: no pair for {}", p["artifact"]));
            assert_eq!(got["reference"]["name"], p["reference"], "{a} vs {r}");
            let outcome = p["outcome"].as_str().unwrap();
            let want = match outcome {
                "renamed" | "renamed_identical" | "renamed_same_values" => None,
                other => Some(other),
            };
            if let Some(w) = want {
                assert_eq!(got["outcome"], w, "{a} vs {r}: {}", p["artifact"]);
            }
        }
    }
}

#[test]
fn a_manifest_stands_in_for_its_model_on_either_side() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("reference.tensors.json");
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("diff/reference"))
        .arg("--out")
        .arg(&manifest));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let a = run(socair()
        .args(["tensors", "diff"])
        .arg(fixture("diff/rome-edit"))
        .arg(&manifest));
    let c = json(&a.stdout);
    assert_eq!(c["summary"]["differs"], 1);
    let differs: Vec<&Value> = c["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["outcome"] == "differs")
        .collect();
    assert_eq!(
        differs[0]["artifact"]["name"],
        "model.layers.1.mlp.down_proj.weight"
    );
    assert_eq!(a.code, 1);
    // The same, manifest on the artifact side.
    let b = run(socair()
        .args(["tensors", "diff"])
        .arg(&manifest)
        .arg(fixture("diff/resharded")));
    assert_eq!(b.code, 0, "{}", b.stderr);
    // Something that is JSON but not a manifest is refused, naming it.
    std::fs::write(
        dir.path().join("other.json"),
        "{\"schema\":\"socair.report/v1\"}",
    )
    .unwrap();
    let e = run(socair()
        .args(["tensors", "diff"])
        .arg(dir.path().join("other.json"))
        .arg(&manifest));
    assert_eq!(e.code, 2);
    assert!(e.stderr.contains("other.json"), "{}", e.stderr);
}

#[test]
fn the_reference_row_passes_leads_and_stays_out_of_other_formats() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("reviewed.tensors.json");
    run(socair()
        .arg("tensors")
        .arg(fixture("diff/reference"))
        .arg("--out")
        .arg(&manifest));
    let scan = |target: &str, header_only: bool| {
        let mut cmd = socair();
        cmd.arg("scan");
        if header_only {
            cmd.arg("--header-only");
        }
        let r = run(cmd
            .arg(fixture(&format!("diff/{target}")))
            .env("SOCAIR_TENSOR_REFERENCE", &manifest));
        let report = json(&r.stdout);
        let row = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "Tensor reference")
            .cloned()
            .unwrap_or_else(|| panic!("no reference row: {report:#}"));
        (r.code, row, report)
    };
    let (code, row, report) = scan("resharded", false);
    assert_eq!(row["status"], "PASS", "{row:#}");
    assert_eq!(code, 0);
    assert_eq!(
        report["scope"]["reference_data"]["name"],
        "reviewed.tensors.json"
    );
    assert_eq!(
        report["scope"]["reference_data"]["sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    assert!(
        !report.to_string().contains(dir.path().to_str().unwrap()),
        "no path in the report"
    );

    let (code, row, _) = scan("rome-edit", false);
    assert_eq!(row["status"], "LEAD");
    assert_eq!(code, 1);
    assert!(row["findings"][0]["place"]
        .as_str()
        .unwrap()
        .contains("model.layers.1.mlp.down_proj.weight"));

    let (_, row, _) = scan("renamed", false);
    assert_eq!(
        row["status"], "LEAD",
        "renamed tensors are a difference within one format"
    );

    let (code, row, _) = scan("llama.gguf", false);
    assert_eq!(row["status"], "NOT_TESTED");
    assert!(row["summary"]
        .as_str()
        .unwrap()
        .contains("across file formats"));
    assert_eq!(code, 0, "NOT_TESTED is not a negative verdict");

    let (_, row, report) = scan("rome-edit", true);
    assert_eq!(row["status"], "NOT_TESTED");
    assert_eq!(report["scope"]["mode"], "header-only");

    // Without the variable there is no row.
    let r = run(socair().arg("scan").arg(fixture("diff/resharded")));
    assert!(!r.stdout.contains("Tensor reference"));
}
