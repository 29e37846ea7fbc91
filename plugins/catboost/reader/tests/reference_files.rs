//! The fixtures catboost 1.2.10 wrote, and the hand-made variants of them
//! (fixtures/catboost/make_catboost.py), against what catboost's Python API read from them
//! (fixtures/catboost/expected.json): each file's verdict and reason, each array's sha256, and
//! every CTR hash table entry the JSON export lists.

use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_catboost::checks::{Arr, BUCKET_LEN};
use socair_catboost::{container, looks_like_cbm, read};
use socair_plugin_api::RowStatus;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/catboost")
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap()).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn every_fixture_gets_its_verdict_and_reason() {
    let e = expected();
    let files = e["files"].as_object().unwrap();
    assert!(files.len() >= 29, "{}", files.len());
    let (mut pass, mut lead, mut fail) = (0, 0, 0);
    for (name, case) in files {
        let data = std::fs::read(dir().join(name)).unwrap();
        let verdict = case["verdict"].as_str().unwrap();
        let claimed = looks_like_cbm(&data[..data.len().min(4096)], data.len() as u64);
        if verdict == "UNCLAIMED" {
            assert!(!claimed, "{name}");
            continue;
        }
        assert!(claimed, "{name} is not claimed");
        let m = read(&data);
        let (status, text) = match &m.refused {
            Some(fault) => (RowStatus::Fail, fault.reason.clone()),
            None => (
                m.findings.status(),
                m.findings
                    .shown
                    .iter()
                    .map(|f| f.reason.clone())
                    .collect::<Vec<_>>()
                    .join(" | "),
            ),
        };
        let want = match verdict {
            "PASS" => {
                pass += 1;
                RowStatus::Pass
            }
            "LEAD" => {
                lead += 1;
                RowStatus::Lead
            }
            _ => {
                fail += 1;
                RowStatus::Fail
            }
        };
        assert_eq!(status, want, "{name}: {text}");
        let keyword = case["keyword"].as_str().unwrap().to_lowercase();
        assert!(
            text.to_lowercase().contains(&keyword),
            "{name}: {keyword:?} not in {text}"
        );
        if m.refused.is_some() {
            assert!(m.tensors.is_empty(), "{name}");
        }
    }
    assert!(pass >= 9 && lead >= 4 && fail >= 14, "{pass} {lead} {fail}");
}

#[test]
fn tensors_hash_as_catboost_reads_them() {
    let e = expected();
    let mut checked = 0;
    for (name, case) in e["files"].as_object().unwrap() {
        let Some(want) = case.get("tensors").and_then(Value::as_object) else {
            continue;
        };
        let data = std::fs::read(dir().join(name)).unwrap();
        let m = read(&data);
        for (tensor, sha) in want {
            let t = m
                .tensors
                .iter()
                .find(|t| &t.name == tensor)
                .unwrap_or_else(|| panic!("{name}: {tensor} not described"));
            let bytes = &data[t.offset as usize..(t.offset + t.len) as usize];
            assert_eq!(hex(bytes), sha.as_str().unwrap(), "{name}: {tensor}");
            checked += 1;
        }
        // Every described tensor lies in the file, each once.
        let mut names: Vec<&str> = m.tensors.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), m.tensors.len(), "{name}");
    }
    assert!(checked >= 80, "{checked}");
}

/// Each CTR table's buckets and blob, read through socair's view of the file, hold the values
/// catboost's JSON export lists for each hash.
#[test]
fn ctr_tables_hold_what_catboost_exports() {
    let e = expected();
    let tables = e["ctr_tables"].as_object().unwrap();
    let mut checked = 0;
    for (name, want) in tables {
        let data = std::fs::read(dir().join(name)).unwrap();
        let (c, _) = container::read(&data).unwrap();
        for w in want.as_array().unwrap() {
            let kind = match w["type"].as_str().unwrap() {
                "Borders" => 0,
                "Buckets" => 1,
                "Counter" => 4,
                "FeatureFreq" => 5,
                other => panic!("{other}"),
            };
            let cats: Vec<i32> = w["cat_features"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap() as i32)
                .collect();
            let found: Vec<_> = c
                .ctr_tables
                .iter()
                .filter(|t| {
                    let b = &t.table.base;
                    let mut mine = b.combination.cat_features.clone();
                    mine.sort_unstable();
                    b.ctr_type == kind
                        && mine == cats
                        && b.combination.float_splits.is_empty()
                        && b.combination.one_hot_splits.is_empty()
                })
                .collect();
            assert_eq!(found.len(), 1, "{name}: {w}");
            let t = found[0];
            if kind == 4 {
                assert_eq!(
                    i64::from(t.table.counter_denominator),
                    w["counter_denominator"].as_i64().unwrap()
                );
            }
            let hashes = Arr::new(&data, t.base, Some(t.table.index_hash));
            let blob = Arr::new(&data, t.base, Some(t.table.blob));
            let buckets = t.table.index_hash.byte_len() / BUCKET_LEN;
            let bucket_of = |h: u64| {
                (0..buckets).find(|&b| {
                    let p = t.base as usize + t.table.index_hash.data() + b * BUCKET_LEN;
                    u64::from_le_bytes(data[p..p + 8].try_into().unwrap()) == h
                })
            };
            let entries = w["entries"].as_object().unwrap();
            assert!(!entries.is_empty());
            for (hash, values) in entries {
                let b = bucket_of(hash.parse().unwrap()).unwrap_or_else(|| panic!("{hash}"));
                let index = hashes.u32_in(0, b * BUCKET_LEN + 8) as usize;
                let values = values.as_array().unwrap();
                for (k, v) in values.iter().enumerate() {
                    let got = blob.u32_in(0, 4 * (index * values.len() + k)) as i32;
                    assert_eq!(i64::from(got), v.as_i64().unwrap(), "{name} {hash}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}
