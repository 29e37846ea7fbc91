//! The readers on the files coremltools 9.0 wrote (fixtures/coreml, from make_coreml.py): the
//! verdicts expected.json records, and every tensor's bytes hashed from the ranges and
//! decoded bytes the reader gives, against the SHA-256 coremltools' own values have; then the
//! same files edited as an attacker would, and the claims on every other fixture of the
//! repository.

use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_coreml::{blob, claim, manifest, model};
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_test_support::saved::files_under;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures")
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("coreml/expected.json")).unwrap())
        .unwrap()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// The tensors of `opened` (read from `file`, in the directory `dir`): name → (dtype, shape,
/// sha256 of its bytes).
fn hashed(opened: &OpenedFile, file: &[u8], dir: &Path) -> Vec<(String, String, Vec<u64>, String)> {
    opened
        .tensors
        .iter()
        .map(|t| {
            let source = match t.file.as_ref().into_option() {
                Some(f) => std::fs::read(dir.join(f.as_str())).unwrap(),
                None => file.to_vec(),
            };
            let mut h = Sha256::new();
            match t.inline.as_ref().into_option() {
                Some(b) => h.update(b.as_slice()),
                None => {
                    for r in t.ranges.iter() {
                        h.update(&source[r.offset as usize..(r.offset + r.len) as usize]);
                    }
                }
            }
            (
                t.name.to_string(),
                t.dtype.to_string(),
                t.shape.to_vec(),
                hex(&h.finalize()),
            )
        })
        .collect()
}

fn model_file(rel: &str) -> PathBuf {
    let p = fixtures().join("coreml").join(rel);
    if p.is_dir() {
        p.join("Data/com.apple.CoreML/model.mlmodel")
    } else {
        p
    }
}

#[test]
fn tensors_and_verdicts_match_what_coremltools_holds() {
    let e = expected();
    let mut checked = 0;
    for (rel, case) in e.as_object().unwrap() {
        let path = model_file(rel);
        if !path.is_file() {
            continue; // a directory of models (links/linked-dir): end to end only
        }
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            claim::looks_like_mlmodel(&bytes[..bytes.len().min(4096)], bytes.len() as u64),
            "{rel}"
        );
        let opened = model::read(&bytes);
        let got = hashed(&opened, &bytes, path.parent().unwrap());
        for want in case["tensors"].as_array().unwrap() {
            let name = want["name"].as_str().unwrap();
            let g = got
                .iter()
                .find(|g| g.0 == name)
                .unwrap_or_else(|| panic!("{rel}: {name} missing: {got:?}"));
            assert_eq!(g.1, want["dtype"].as_str().unwrap(), "{rel} {name}");
            let shape: Vec<u64> = want["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .collect();
            assert_eq!(g.2, shape, "{rel} {name}");
            assert_eq!(g.3, want["sha256"].as_str().unwrap(), "{rel} {name}");
            checked += 1;
        }
        let verdict = case["verdict"].as_str().unwrap();
        // A package's verdict may come from its weights file: the model file alone is read here.
        if !rel.ends_with(".mlpackage") {
            let status = opened.rows[0].status;
            let want = match verdict {
                "PASS" => RowStatus::Pass,
                "LEAD" => RowStatus::Lead,
                _ => RowStatus::Fail,
            };
            assert_eq!(status, want, "{rel}: {:?}", opened.rows[0]);
        }
    }
    assert!(checked >= 30, "{checked} tensors checked");
}

#[test]
fn the_package_files_pass_and_a_moved_blob_fails() {
    let dir = fixtures().join("coreml/valid/mil.mlpackage");
    let weights = std::fs::read(dir.join("Data/com.apple.CoreML/weights/weight.bin")).unwrap();
    assert!(blob::looks_like_weights(&weights, weights.len() as u64));
    assert_eq!(
        blob::read(weights.as_slice(), true).rows[0].status,
        RowStatus::Pass
    );
    let manifest_bytes = std::fs::read(dir.join("Manifest.json")).unwrap();
    assert!(manifest::looks_like_manifest(
        &manifest_bytes,
        manifest_bytes.len() as u64
    ));
    let m = manifest::read(&manifest_bytes);
    assert_eq!(
        m.rows[0].findings[0]
            .file
            .as_ref()
            .map(|f| f.to_string())
            .into_option()
            .as_deref(),
        Some("Data/com.apple.CoreML/model.mlmodel")
    );
    let moved = fixtures()
        .join("coreml/hostile/weights-moved.mlpackage/Data/com.apple.CoreML/weights/weight.bin");
    let moved = std::fs::read(moved).unwrap();
    assert_eq!(
        blob::read(moved.as_slice(), true).rows[0].status,
        RowStatus::Fail
    );
}

#[test]
fn edited_model_files_are_refused_or_judged() {
    let nn = std::fs::read(model_file("valid/nn.mlmodel")).unwrap();
    // Cut short: the last field runs past the end.
    let cut = model::read(&nn[..nn.len() - 3]);
    assert_eq!(cut.rows[0].status, RowStatus::Fail);
    assert!(cut.tensors.is_empty());
    // A layer name that is not UTF-8.
    let at = nn.windows(4).position(|w| w == b"conv").unwrap();
    let mut bad = nn.clone();
    bad[at] = 0xff;
    let o = model::read(&bad);
    assert_eq!(o.rows[0].status, RowStatus::Fail);
    assert!(
        o.rows[0].findings[0].reason.as_str().contains("not UTF-8"),
        "{:?}",
        o.rows[0]
    );
    // A field coremltools 9.0 does not define, appended to the model: a LEAD.
    let mut extra = nn.clone();
    extra.extend([0xf8, 0x07, 0x01]); // field 127, varint
    let o = model::read(&extra);
    assert_eq!(o.rows[0].status, RowStatus::Lead, "{:?}", o.rows[0]);
    // Nesting past prost's limit of 100.
    let mut deep = vec![0x08, 0x04];
    let mut inner = Vec::new();
    for _ in 0..120 {
        // pipeline { models { pipeline { ... } } }: Model.pipeline (202) → Pipeline.models (1).
        let mut m = vec![0x0a];
        push_len(&mut m, inner.len());
        m.extend(&inner);
        let mut p = vec![0xd2, 0x0c];
        push_len(&mut p, m.len());
        p.extend(m);
        inner = p;
    }
    deep.extend(inner);
    assert_eq!(model::read(&deep).rows[0].status, RowStatus::Fail);
}

fn push_len(out: &mut Vec<u8>, n: usize) {
    socair_plugin_kit::protobuf::write_varint(n as u64, out);
}

#[test]
fn no_other_fixture_is_claimed_and_each_coreml_file_by_its_reader() {
    let mut other = 0;
    for path in files_under(&fixtures()) {
        let bytes = std::fs::read(&path).unwrap();
        let head = &bytes[..bytes.len().min(4096)];
        let len = bytes.len() as u64;
        let claims = [
            claim::looks_like_mlmodel(head, len),
            blob::looks_like_weights(head, len),
            manifest::looks_like_manifest(head, len),
        ];
        let name = path.file_name().unwrap().to_string_lossy();
        let rel = path.strip_prefix(fixtures()).unwrap();
        if rel.starts_with("coreml") {
            let want = [
                name.ends_with(".mlmodel"),
                name == "weight.bin",
                name == "Manifest.json",
            ];
            if name.ends_with(".py") || name.ends_with(".json") && name != "Manifest.json" {
                assert_eq!(claims, [false; 3], "{}", path.display());
            } else {
                assert_eq!(claims, want, "{}", path.display());
            }
        } else {
            other += 1;
            assert_eq!(claims, [false; 3], "{} is claimed", path.display());
        }
    }
    assert!(other > 500, "{other} other fixtures");
}
