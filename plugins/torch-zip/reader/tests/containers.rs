//! The container fixtures (fixtures/torch/containers, written by
//! fixtures/torch/make_container_fixtures.py) through the plugin's own entry points: whether the
//! torch-zip reader claims each from its first 4 KiB, the worst finding, a keyword of it, and
//! the tensors left unread. The end-to-end test (tests/tests/torch_containers.rs) runs the same
//! files through the `socair` binary.

use socair_torch_zip::checkpoint::{analyze, looks_like_torch_zip, AnalyzeOptions};
use socair_torch_zip::pickle::Severity;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/torch/containers")
}

#[test]
fn every_container_fixture_is_judged_as_expected() {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap())
            .unwrap();
    let cases = expected.as_object().unwrap();
    assert!(cases.len() >= 25, "{}", cases.len());
    for (file, case) in cases {
        let bytes = std::fs::read(dir().join(file)).unwrap();
        let head = &bytes[..bytes.len().min(4096)];
        let claimed = looks_like_torch_zip(head, bytes.len() as u64);
        assert_eq!(claimed, case["claimed"], "{file}: claimed");
        let status = case["status"].as_str().unwrap();
        if status == "unclaimed" {
            continue;
        }
        let a = if bytes.first() == Some(&0x80) {
            socair_torch_zip::legacy::analyze(&bytes[..], &AnalyzeOptions::default())
        } else {
            analyze(&bytes[..], &AnalyzeOptions::default())
        };
        let worst = match a.worst() {
            None => "PASS",
            Some(Severity::Lead) => "LEAD",
            Some(Severity::Fail) => "FAIL",
        };
        let text = format!("{:?}", a.findings).to_lowercase();
        assert_eq!(worst, status, "{file}: {text}");
        let keyword = case["keyword"].as_str().unwrap();
        assert!(text.contains(keyword), "{file}: {keyword:?} not in {text}");
        if let Some(unread) = case.get("unread") {
            let mut got: Vec<&str> = a.unread.iter().filter_map(|(n, _)| n.as_deref()).collect();
            got.sort();
            let mut want: Vec<&str> = unread
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            want.sort();
            assert_eq!(got, want, "{file}: unread");
            for t in &a.tensors {
                assert!(
                    !want.contains(&t.name.as_str()),
                    "{file}: {} is read",
                    t.name
                );
            }
        }
    }
}

/// torch.save's own output is claimed; zips and files that are not torch's are not.
#[test]
fn detection_follows_the_records_torch_reads() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/torch");
    for sub in ["legit", "baseline", "torchscript"] {
        for entry in std::fs::read_dir(fixtures.join(sub)).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let head = &bytes[..bytes.len().min(4096)];
            assert!(
                looks_like_torch_zip(head, bytes.len() as u64),
                "{}",
                path.display()
            );
        }
    }
    let legacy = std::fs::read(fixtures.join("legacy/state-dict.pt")).unwrap();
    assert!(!looks_like_torch_zip(&legacy, legacy.len() as u64));
    assert!(looks_like_torch_zip(b"PYTORCH1", 8));
    // A first local header whose name runs past the first bytes cannot be judged: claimed.
    let mut long = b"PK\x03\x04".to_vec();
    long.extend_from_slice(&[0; 22]);
    long.extend_from_slice(&5000u16.to_le_bytes());
    long.extend_from_slice(&[0, 0]);
    long.resize(4096, b'a');
    assert!(looks_like_torch_zip(&long, 1 << 20));
}
