//! The reader on the files fixtures/torch7/make_torch7.py wrote as torch7's writeObject
//! writes them: each file's verdict and word are expected.json's, and the tensors of every
//! file torchfile 0.1.0 read hash, by name, as the generator hashed the arrays torchfile
//! returned (their C-order bytes), so a view is fingerprinted by what it holds.

use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_plugin_api::{RowStatus, TensorDescriptor};
use socair_torch7::read_torch7;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A descriptor's bytes in C order: its ranges, its strided range gathered, or its inline bytes.
fn c_order(file: &[u8], t: &TensorDescriptor) -> Vec<u8> {
    if let Some(b) = t.inline.as_ref().into_option() {
        return b.to_vec();
    }
    let Some(strides) = t.strides.as_ref().into_option() else {
        return t
            .ranges
            .iter()
            .flat_map(|r| file[r.offset as usize..(r.offset + r.len) as usize].to_vec())
            .collect();
    };
    let e: u64 = match t.dtype.as_str() {
        "F64" | "I64" => 8,
        "F32" | "I32" => 4,
        _ => panic!("{t:?}"),
    };
    let base = t.ranges[0].offset;
    let numel: u64 = t.shape.iter().product();
    let mut out = Vec::new();
    for flat in 0..numel {
        let mut rest = flat;
        let mut element = 0;
        for (d, s) in t.shape.iter().zip(strides.iter()).rev() {
            element += (rest % d) * s;
            rest /= d;
        }
        let at = (base + element * e) as usize;
        out.extend_from_slice(&file[at..at + e as usize]);
    }
    out
}

#[test]
fn fixtures_get_their_verdicts_and_tensors() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/torch7");
    let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
    let cases: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(cases.len(), 10);
    for (rel, case) in &cases {
        let bytes = std::fs::read(dir.join(rel)).unwrap();
        let f = read_torch7(&bytes, bytes.len() as u64);
        let row = &f.rows[0];
        let want = match case["verdict"].as_str().unwrap() {
            "PASS" => RowStatus::Pass,
            "LEAD" => RowStatus::Lead,
            _ => RowStatus::Fail,
        };
        let text: String = std::iter::once(row.summary.to_string())
            .chain(f.metadata.iter().map(|m| m.1.to_string()))
            .chain(
                row.findings
                    .iter()
                    .map(|x| format!("{} | {}", x.place, x.reason)),
            )
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(row.status, want, "{rel}: {text}");
        let word = case["keyword"].as_str().unwrap();
        assert!(text.contains(word), "{rel}: no {word:?} in {text}");
        let Some(tensors) = case.get("tensors").and_then(Value::as_object) else {
            continue;
        };
        let got: BTreeMap<String, String> = f
            .tensors
            .iter()
            .map(|t| {
                let hex: String = Sha256::digest(c_order(&bytes, t))
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                (t.name.to_string(), hex)
            })
            .collect();
        let want: BTreeMap<String, String> = tensors
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(got, want, "{rel}");
    }
}

#[test]
fn the_strided_view_is_described_by_its_strides() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/torch7");
    let bytes = std::fs::read(dir.join("double_view.t7")).unwrap();
    let f = read_torch7(&bytes, bytes.len() as u64);
    let t = &f.tensors[0];
    assert_eq!(t.shape.as_slice(), [3, 2]);
    assert_eq!(t.strides.as_ref().unwrap().as_slice(), [5, 2]);
    assert_eq!(t.ranges.len(), 1);
    // Elements 2 ..= 2 + 10 + 2 of the storage, 8 bytes each.
    assert_eq!(t.ranges[0].len, 13 * 8);
}
