//! The readers on the fixtures written by the real libraries: OpenVINO IRs saved by
//! `ov.save_model` (fixtures/openvino/make_openvino.py) and PMML documents written by hand from
//! the spec and by nyoka (fixtures/pmml/make_pmml.py). Each file's verdict is expected.json's
//! (for the reader alone: the host adds what depends on the directory), and each constant's
//! located bytes hash to the sha256 of the bytes OpenVINO holds for it.

use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_xml::{looks_like_openvino, looks_like_pmml, read_openvino, read_pmml};
use std::path::PathBuf;

fn fixtures(format: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures")
        .join(format)
}

fn expected(format: &str) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(fixtures(format).join("expected.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Object(m) => m,
        _ => panic!("expected.json is no object"),
    }
}

fn status(name: &str) -> RowStatus {
    match name {
        "PASS" => RowStatus::Pass,
        "LEAD" => RowStatus::Lead,
        "FAIL" => RowStatus::Fail,
        other => panic!("verdict {other}"),
    }
}

fn all_text(f: &OpenedFile) -> String {
    f.rows[0]
        .findings
        .iter()
        .map(|x| format!("{} | {}\n", x.place, x.reason))
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn openvino_fixtures_read_as_openvino_holds_them() {
    let cases = expected("openvino");
    let mut tensors = 0;
    for (rel, case) in &cases {
        let dir = fixtures("openvino").join(rel);
        let xml = if rel.ends_with(".xml") {
            dir.clone()
        } else {
            dir.join("model.xml")
        };
        let bytes = std::fs::read(&xml).unwrap();
        let f = read_openvino(&bytes);
        // The reader sees the XML alone: a range past the end of model.bin is the host's to
        // judge (it checks each range against the file the descriptor names).
        let want = match rel.as_str() {
            "past-end" => RowStatus::Pass,
            _ => status(case["verdict"].as_str().unwrap()),
        };
        assert_eq!(f.rows[0].status, want, "{rel}: {}", all_text(&f));
        if let Some(word) = case.get("keyword").and_then(Value::as_str) {
            if rel != "past-end" {
                assert!(
                    all_text(&f).contains(word),
                    "{rel}: {word} not in {}",
                    all_text(&f)
                );
            }
        }
        if rel.starts_with("malformed/") {
            continue;
        }
        assert!(
            looks_like_openvino(&bytes[..bytes.len().min(4096)]),
            "{rel}"
        );
        assert!(!looks_like_pmml(&bytes[..bytes.len().min(4096)]), "{rel}");
        let weights = std::fs::read(dir.join("model.bin")).unwrap();
        if rel == "past-end" {
            let b = f.tensors.iter().find(|t| t.name.as_str() == "b").unwrap();
            let r = b.ranges[0];
            assert!(r.offset + r.len > weights.len() as u64, "{r:?}");
            continue;
        }
        let Some(want) = case.get("tensors").and_then(Value::as_array) else {
            continue;
        };
        assert_eq!(f.tensors.len(), want.len(), "{rel}");
        assert!(f.unread.is_empty(), "{rel}: {:?}", f.unread);
        for w in want {
            let name = w["name"].as_str().unwrap();
            let t = f
                .tensors
                .iter()
                .find(|t| t.name.as_str() == name)
                .unwrap_or_else(|| panic!("{rel}: {name} not located"));
            assert_eq!(
                t.dtype.as_str(),
                w["dtype"].as_str().unwrap(),
                "{rel}: {name}"
            );
            let shape: Vec<u64> = w["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .collect();
            assert_eq!(t.shape.to_vec(), shape, "{rel}: {name}");
            assert_eq!(
                t.file.as_ref().map(|f| f.as_str()).into_option(),
                Some("{stem}.bin")
            );
            let r = t.ranges[0];
            assert_eq!(r.len, w["bytes"].as_u64().unwrap(), "{rel}: {name}");
            let bytes = &weights[r.offset as usize..(r.offset + r.len) as usize];
            assert_eq!(
                sha256(bytes),
                w["sha256"].as_str().unwrap(),
                "{rel}: {name}"
            );
            tensors += 1;
        }
    }
    assert!(tensors >= 20, "{tensors}");
}

#[test]
fn openvino_verdicts_say_why() {
    let read = |rel: &str| {
        read_openvino(&std::fs::read(fixtures("openvino").join(rel).join("model.xml")).unwrap())
    };
    let f = read("xxe");
    let text = all_text(&f);
    assert!(
        text.contains("DOCTYPE") && text.contains("XXE") && text.contains("&xxe;"),
        "{text}"
    );
    // pugixml kept the reference as text, and so does this reader: the model still located.
    assert_eq!(f.tensors.len(), 2);
    let text = all_text(&read("weights-path"));
    assert!(
        text.contains("/srv/other/weights.bin") && text.contains("WEIGHTS_PATH"),
        "{text}"
    );
    let f = read("custom-op");
    assert!(
        all_text(&f).contains("\"MyCustomOp\" (version \"extension\")"),
        "{}",
        all_text(&f)
    );
    let meta: Vec<String> = read("valid/tokenizer-like")
        .metadata
        .iter()
        .map(|t| format!("{}={}", t.0, t.1))
        .collect();
    assert!(
        meta.iter()
            .any(|m| m.starts_with("openvino.chat_template=parsed as Jinja")),
        "{meta:?}"
    );
    assert!(
        meta.contains(&"openvino.runtime_options=KV_CACHE_PRECISION=u8".to_owned()),
        "{meta:?}"
    );
}

#[test]
fn pmml_fixtures_get_their_verdicts() {
    let cases = expected("pmml");
    assert!(cases.len() >= 17);
    for (rel, case) in &cases {
        let bytes = std::fs::read(fixtures("pmml").join(rel)).unwrap();
        assert!(looks_like_pmml(&bytes[..bytes.len().min(4096)]), "{rel}");
        assert!(
            !looks_like_openvino(&bytes[..bytes.len().min(4096)]),
            "{rel}"
        );
        let f = read_pmml(&bytes);
        assert_eq!(
            f.rows[0].status,
            status(case["verdict"].as_str().unwrap()),
            "{rel}: {}",
            all_text(&f)
        );
        if let Some(word) = case.get("keyword").and_then(Value::as_str) {
            assert!(
                all_text(&f).contains(word),
                "{rel}: {word} not in {}",
                all_text(&f)
            );
        }
        assert!(f.tensors.is_empty());
    }
}

#[test]
fn opencv_fixtures_get_their_verdicts() {
    let cases = expected("opencv");
    for (rel, case) in &cases {
        let bytes = std::fs::read(fixtures("opencv").join(rel)).unwrap();
        assert!(
            socair_xml::looks_like_opencv_storage(&bytes[..bytes.len().min(4096)]),
            "{rel}"
        );
        assert!(
            !looks_like_pmml(&bytes) && !looks_like_openvino(&bytes),
            "{rel}"
        );
        let f = socair_xml::read_opencv_storage(&bytes);
        let want = status(case["verdict"].as_str().unwrap());
        assert_eq!(f.rows[0].status, want, "{rel}: {}", all_text(&f));
        let text = format!("{}\n{}", f.rows[0].summary, all_text(&f));
        let word = case["keyword"].as_str().unwrap();
        assert!(text.contains(word), "{rel}: no {word:?} in {text}");
        assert!(f.tensors.is_empty(), "{rel}");
    }
    assert_eq!(cases.len(), 7);
}
