//! Every TorchServe fixture read by this crate alone (no other plugin beside it): the verdict,
//! the row that decides it and its keyword, as fixtures/torchserve/expected.json records them.

use serde_json::Value;
use socair_plugin_api::RowStatus;
use socair_torch_zip::checkpoint::AnalyzeOptions;
use socair_torch_zip::Grammar;
use std::path::PathBuf;

fn status(s: RowStatus) -> &'static str {
    match s {
        RowStatus::Pass => "PASS",
        RowStatus::Fail => "FAIL",
        RowStatus::Lead => "LEAD",
        _ => "NOT_TESTED",
    }
}

#[test]
fn every_fixture_gets_its_expected_verdict() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/torchserve");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let options = AnalyzeOptions {
        grammar: Grammar::NEWEST,
        ..AnalyzeOptions::default()
    };
    let mut n = 0;
    for (file, case) in expected.as_object().unwrap() {
        if file.starts_with('_') {
            continue;
        }
        n += 1;
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let head = &bytes[..bytes.len().min(4096)];
        let claimed = socair_torchserve::detect::looks_like_mar(head, bytes.len() as u64)
            || socair_torchserve::detect::manifest_in_central_directory(bytes.as_slice());
        assert!(claimed, "{file}: not claimed");
        let opened = socair_torchserve::read(bytes.as_slice(), &options);
        let worst = opened
            .rows
            .iter()
            .map(|r| status(r.status))
            .max_by_key(|s| {
                ["PASS", "NOT_TESTED", "LEAD", "FAIL"]
                    .iter()
                    .position(|x| x == s)
            })
            .unwrap();
        assert_eq!(worst, case["status"], "{file}: {:#?}", opened.rows);
        let row = opened
            .rows
            .iter()
            .find(|r| r.check.as_str() == case["row"].as_str().unwrap())
            .unwrap_or_else(|| panic!("{file}: no row {}", case["row"]));
        let text = format!(
            "{} {}",
            row.summary,
            row.findings
                .iter()
                .map(|f| format!("{} {}", f.place, f.reason))
                .collect::<Vec<_>>()
                .join(" ")
        )
        .to_lowercase();
        let keyword = case["keyword"].as_str().unwrap().to_lowercase();
        assert!(text.contains(&keyword), "{file}: {keyword} not in {text}");
    }
    assert!(n >= 10, "{n}");
}

#[test]
fn a_zip_without_a_manifest_is_not_claimed() {
    let torch = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/torchscript/scripted-linear.pt");
    let bytes = std::fs::read(torch).unwrap();
    assert!(!socair_torchserve::detect::looks_like_mar(
        &bytes[..4096.min(bytes.len())],
        bytes.len() as u64
    ));
    assert!(!socair_torchserve::detect::manifest_in_central_directory(
        bytes.as_slice()
    ));
}
