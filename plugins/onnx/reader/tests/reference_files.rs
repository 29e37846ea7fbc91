//! The reader against files the `onnx` Python package wrote (fixtures/onnx, expected.json
//! computed in Python from the numpy arrays, from `onnx.numpy_helper.to_array` of the tensors
//! loaded back, and from what `onnx.reference` outputs for each Constant node: never from the
//! files' bytes).

use socair_onnx::model::{parse, Model};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/onnx")
}

fn expected() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("expected.json")).unwrap())
        .unwrap()
}

fn open(rel: &str) -> (Vec<u8>, Model) {
    let data = std::fs::read(fixtures().join(rel)).unwrap();
    let m = parse(bytes::Bytes::from(data.clone())).unwrap_or_else(|e| panic!("{rel}: {e}"));
    (data, m)
}

fn sha(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn valid_files_locate_every_tensor_python_wrote() {
    let e = expected();
    let mut checked = 0;
    for (rel, case) in e.as_object().unwrap() {
        if !rel.starts_with("valid/") {
            continue;
        }
        let (data, m) = open(rel);
        assert!(m.findings.is_empty(), "{rel}: {:?}", m.findings);
        let want = case["tensors"].as_array().unwrap();
        assert_eq!(m.tensors.len(), want.len(), "{rel}");
        for w in want {
            let t = m
                .tensors
                .iter()
                .find(|t| t.name == w["name"].as_str().unwrap())
                .unwrap_or_else(|| panic!("{rel}: {} missing", w["name"]));
            assert_eq!(t.dtype, w["dtype"].as_str().unwrap(), "{rel} {}", t.name);
            let shape: Vec<u64> = w["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .collect();
            assert_eq!(t.shape, shape, "{rel} {}", t.name);
            // Decoded bytes (varint-coded values, a Constant's value_int(s)), or the bytes
            // of the file's ranges: never both.
            let mut bytes = t.inline.clone().unwrap_or_default();
            assert!(
                t.inline.is_none() || t.ranges.is_empty(),
                "{rel} {}",
                t.name
            );
            for &(o, l) in &t.ranges {
                bytes.extend_from_slice(&data[o as usize..(o + l) as usize]);
            }
            assert_eq!(bytes.len() as u64, w["bytes"].as_u64().unwrap());
            assert_eq!(
                sha(&bytes),
                w["sha256"].as_str().unwrap(),
                "{rel} {}",
                t.name
            );
            checked += 1;
        }
        let mut unread: Vec<&str> = m
            .unread
            .iter()
            .map(|u| u.name.as_deref().unwrap())
            .collect();
        unread.sort();
        let want_unread: Vec<&str> = case["unread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["tensor"].as_str().unwrap())
            .collect();
        assert_eq!(unread, want_unread, "{rel}");
        for u in case["unread"].as_array().unwrap() {
            let got = m
                .unread
                .iter()
                .find(|g| g.name.as_deref() == u["tensor"].as_str())
                .unwrap();
            assert!(
                got.reason.contains(u["keyword"].as_str().unwrap()),
                "{rel}: {}",
                got.reason
            );
        }
    }
    assert!(checked >= 65, "{checked}");
}

#[test]
fn external_data_is_described_with_its_file() {
    let e = expected();
    let case = &e["external/model-dir"];
    let (_, m) = open("external/model-dir/model.onnx");
    assert!(m.findings.is_empty(), "{:?}", m.findings);
    let weights = std::fs::read(fixtures().join("external/model-dir/weights.bin")).unwrap();
    for w in case["tensors"].as_array().unwrap() {
        let name = w["name"].as_str().unwrap();
        let t = m.tensors.iter().find(|t| t.name == name).unwrap();
        let ext = &case["external"][name];
        if ext.is_null() {
            assert_eq!(t.file, None);
            continue;
        }
        assert_eq!(t.file.as_deref(), ext["location"].as_str());
        let (o, l) = t.ranges[0];
        assert_eq!(o.to_string(), ext["offset"].as_str().unwrap());
        assert_eq!(l.to_string(), ext["length"].as_str().unwrap());
        assert_eq!(
            sha(&weights[o as usize..(o + l) as usize]),
            w["sha256"].as_str().unwrap()
        );
    }
}

#[test]
fn malformed_files_are_refused_with_their_reason() {
    let e = expected();
    let mut n = 0;
    for (rel, case) in e.as_object().unwrap() {
        if !rel.starts_with("malformed/") {
            continue;
        }
        n += 1;
        let data = std::fs::read(fixtures().join(rel)).unwrap();
        let keyword = case["keyword"].as_str().unwrap();
        match parse(bytes::Bytes::from(data)) {
            Err(err) => assert!(err.to_string().contains(keyword), "{rel}: {err}"),
            Ok(m) => {
                let f = m
                    .findings
                    .iter()
                    .find(|f| f.reason.contains(keyword))
                    .unwrap_or_else(|| panic!("{rel}: {keyword:?} not in {:?}", m.findings));
                assert_eq!(f.severity, socair_onnx::wire::Severity::Fail, "{rel}");
                let place = case["place"].as_str().unwrap_or("initializer");
                assert!(f.place.contains(place), "{rel}: {}", f.place);
                assert!(m.tensors.is_empty(), "{rel}: {:?}", m.tensors);
            }
        }
    }
    assert!(n >= 16, "{n}");
}

#[test]
fn detection_claims_onnx_and_nothing_else_in_the_fixtures() {
    let repo = fixtures().join("../..");
    let mut files = Vec::new();
    let mut stack = vec![
        repo.join("fixtures"),
        repo.join("fuzz/corpus/safetensors_header"),
        repo.join("fuzz/corpus/gguf_reader"),
        repo.join("fuzz/corpus/torch_zip"),
    ];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    let mut claimed = 0;
    let mut others = 0;
    for p in &files {
        let data = std::fs::read(p).unwrap();
        let head = &data[..data.len().min(4096)];
        let is = socair_onnx::looks_like_onnx(head, data.len() as u64);
        let rel = p
            .strip_prefix(&repo)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.starts_with("fixtures/onnx/")
            && rel.ends_with(".onnx")
            && !rel.contains("bad-wire-type")
            && !rel.contains("deep-nesting")
            && !rel.contains("truncated")
        {
            // (Those three are opened by their `.onnx` extension: detection stays conservative.)
            assert!(is, "{rel} not claimed");
            claimed += 1;
        } else if !rel.starts_with("fixtures/onnx/") || rel.starts_with("fixtures/onnx/tensorflow/")
        {
            // A TensorFlow SavedModel (TensorFlow 2.21.0 wrote it) starts with field 1 a varint,
            // as a ModelProto does: its field 2 is a MetaGraphDef, not `producer_name`.
            assert!(!is, "{rel} claimed as ONNX");
            others += 1;
        }
    }
    assert!(claimed >= 15 && others > 500, "{claimed} {others}");
}
