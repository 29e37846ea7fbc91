//! Every fixture NumPy wrote for this plugin (fixtures/npy/plugin/, by
//! fixtures/npy/make_fixtures.py), read by the plugin's own readers and checked against what
//! NumPy says of it in plugin/expected.json: each array's dtype, shape, size and the SHA-256 of
//! its row-major bytes (gathered here from the descriptor's range and strides, or its inline
//! bytes), what is left unread, the verdicts of both rows, and the place of the finding that
//! decides them. The older fixtures (fixtures/npy/valid, malformed, which the first plugin
//! template read) are read too, for the hashes NumPy computed of their arrays.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_numpy::read::{self, Bytes, NumpyRead, Severity, Tensor};
use socair_numpy::span::Span;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/npy")
}

fn expected(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(rel)).unwrap()).unwrap()
}

fn read_file(path: &std::path::Path) -> (Vec<u8>, NumpyRead) {
    let bytes = std::fs::read(path).unwrap();
    let name = path.file_name().unwrap().to_str().unwrap().to_owned();
    let out = if name.ends_with(".npz") {
        read::read_npz(Span::file_bytes(&bytes), false, &[])
    } else {
        read::read_npy(Span::file_bytes(&bytes), &[])
    };
    (bytes, out)
}

fn element_size(element_type: &str) -> u64 {
    match element_type {
        "BOOL" | "I8" | "U8" => 1,
        "I16" | "U16" | "F16" => 2,
        "I32" | "U32" | "F32" => 4,
        "I64" | "U64" | "F64" | "C64" => 8,
        other => panic!("{other}"),
    }
}

/// The tensor's bytes in row-major order, as the host gathers them.
fn row_major(file: &[u8], t: &Tensor) -> Vec<u8> {
    let (offset, len) = match &t.bytes {
        Bytes::Inline(b) => {
            assert!(t.strides.is_none());
            return b.clone();
        }
        Bytes::Range { offset, len } => (*offset as usize, *len as usize),
    };
    let data = &file[offset..offset + len];
    let Some(strides) = &t.strides else {
        return data.to_vec();
    };
    let size = element_size(t.element_type.unwrap()) as usize;
    assert_eq!(size as u64, t.itemsize);
    let numel: u64 = t.shape.iter().product();
    let mut index = vec![0u64; t.shape.len()];
    let mut out = Vec::with_capacity(len);
    for _ in 0..numel {
        let at: u64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        let at = at as usize * size;
        out.extend_from_slice(&data[at..at + size]);
        for k in (0..index.len()).rev() {
            index[k] += 1;
            if index[k] < t.shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn status(s: Option<Severity>) -> &'static str {
    match s {
        None => "PASS",
        Some(Severity::Lead) => "LEAD",
        Some(Severity::Fail) => "FAIL",
    }
}

/// The arrays as NumPy computed them, against what the plugin located.
fn check_tensors(file: &str, bytes: &[u8], out: &NumpyRead, want: &Value) -> usize {
    let want = want.as_array().unwrap();
    let mut got: Vec<&Tensor> = out.tensors.iter().collect();
    got.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    assert_eq!(
        got.iter().map(|t| &t.name).collect::<Vec<_>>(),
        want.iter()
            .map(|w| w["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        "{file}"
    );
    for (t, w) in got.iter().zip(want) {
        assert_eq!(t.dtype, w["dtype"].as_str().unwrap(), "{file} {}", t.name);
        let shape: Vec<u64> = w["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(t.shape, shape, "{file} {}", t.name);
        let data = row_major(bytes, t);
        assert_eq!(data.len() as u64, w["bytes"].as_u64().unwrap(), "{file}");
        assert_eq!(
            hex(&data),
            w["sha256"].as_str().unwrap(),
            "{file} {}",
            t.name
        );
    }
    want.len()
}

#[test]
fn the_plugins_fixtures_match_numpy() {
    let e = expected("plugin/expected.json");
    let cases = e["valid"].as_object().unwrap();
    assert!(cases.len() >= 15, "{}", cases.len());
    let mut arrays = 0;
    for (file, want) in cases {
        let (bytes, out) = read_file(&fixtures().join("plugin/valid").join(file));
        assert_eq!(hex(&bytes), want["sha256"].as_str().unwrap(), "{file}");
        assert_eq!(
            status(out.worst()),
            want["structure"].as_str().unwrap(),
            "{file}: {:?}",
            out.findings
        );
        let pickle = out.pickle_status().map(status);
        assert_eq!(
            pickle,
            want["pickle"].as_str(),
            "{file}: {:?}",
            out.pickle_findings
        );
        arrays += check_tensors(file, &bytes, &out, &want["tensors"]);
        let mut unread: Vec<&str> = out
            .unread
            .iter()
            .map(|(t, _)| t.as_deref().unwrap())
            .collect();
        unread.sort_unstable();
        let want_unread: Vec<&str> = want["unread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u.as_str().unwrap())
            .collect();
        assert_eq!(unread, want_unread, "{file}: {:?}", out.unread);
        if let Some(place) = want["place"].as_str() {
            let decisive: Vec<_> = out
                .pickle_findings
                .iter()
                .filter(|f| Some(status(Some(f.severity))) == pickle)
                .collect();
            let reason = want["reason"].as_str().unwrap_or("");
            assert!(
                decisive
                    .iter()
                    .any(|f| f.place.starts_with(place) && f.reason.contains(reason))
                    || (pickle == Some("LEAD") && out.pickles.iter().any(|p| p == place)),
                "{file}: no finding at {place} with {reason:?}: {:?} {:?}",
                out.pickle_findings,
                out.pickles
            );
        }
    }
    assert!(arrays >= 42, "{arrays}");
}

#[test]
fn the_plugins_malformed_fixtures_are_refused_with_their_place() {
    let e = expected("plugin/expected.json");
    let cases = e["malformed"].as_object().unwrap();
    assert!(cases.len() >= 4);
    for (file, want) in cases {
        let (_, out) = read_file(&fixtures().join("plugin/malformed").join(file));
        assert_eq!(out.worst(), Some(Severity::Fail), "{file}: {out:?}");
        assert!(out.tensors.is_empty(), "{file}");
        let reason = want["reason"].as_str().unwrap();
        let place = want["place"].as_str().unwrap_or("");
        assert!(
            out.findings
                .iter()
                .any(|f| f.reason.contains(reason) && f.place.starts_with(place)),
            "{file}: no finding at {place:?} with {reason:?}: {:?}",
            out.findings
        );
    }
}

/// The older fixtures: the same arrays, as NumPy hashed them; this plugin reads the deflated
/// ones too, and reports object arrays in their own row.
#[test]
fn the_older_fixtures_match_numpy() {
    let e = expected("expected.json");
    let mut arrays = 0;
    for (file, want) in e["valid"].as_object().unwrap() {
        let (bytes, out) = read_file(&fixtures().join("valid").join(file));
        let object = file.contains("object");
        assert_eq!(out.worst(), None, "{file}: {:?}", out.findings);
        assert_eq!(
            out.pickle_status(),
            object.then_some(Some(Severity::Lead)),
            "{file}: {:?}",
            out.pickle_findings
        );
        if file == "savez-compressed.npz" {
            // Deflated, so inline bytes here; NumPy's own hashes of them come from the stored
            // archive holding the same arrays.
            assert_eq!(out.tensors.len(), 2);
            assert!(out
                .tensors
                .iter()
                .all(|t| matches!(t.bytes, Bytes::Inline(_))));
            continue;
        }
        arrays += check_tensors(file, &bytes, &out, &want["tensors"]);
    }
    assert!(arrays >= 25, "{arrays}");
    for (file, want) in e["malformed"].as_object().unwrap() {
        let (_, out) = read_file(&fixtures().join("malformed").join(file));
        if file == "bad-magic.npy" {
            continue;
        }
        // Python's zipfile reads these two, and so does this plugin (the first template
        // refused them): a comment after the end record, and sizes in data descriptors.
        if file == "comment.npz" || file == "data-descriptor.npz" {
            assert_eq!(
                want["numpy_load"], "accepted",
                "{file}: NumPy reads it as this plugin does"
            );
            assert_eq!(out.worst(), None, "{file}: {:?}", out.findings);
            continue;
        }
        assert_eq!(out.worst(), Some(Severity::Fail), "{file}: {out:?}");
    }
}
