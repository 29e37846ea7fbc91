//! The differential test: for every file of `fixtures/skops/` (written by skops 0.16.0 itself,
//! `fixtures/skops/make_fixtures.py`), what this module computes from its `schema.json` equals
//! what skops computed: `get_untrusted_types` (`untrusted` in `expected.json`, null where skops
//! raises) and whether `skops.io.load` loads it without `trusted=` (`loads_by_default`); and
//! the expected verdict's family agrees (a FAIL names something dangerous, a PASS is data).
//!
//! The fixtures are stored zips (skops writes `ZIP_STORED`); a few lines of central-directory
//! reading find their members, so the crate needs no zip dependency.

use super::{judge_in_zip, Judged};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/skops")
}

fn u16_at(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at + 2)
        .map(|s| usize::from(u16::from_le_bytes([s[0], s[1]])))
}

fn u32_at(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
}

/// The members of a stored zip, by name, or `None` when `bytes` is not one.
fn stored_members(bytes: &[u8]) -> Option<BTreeMap<String, Vec<u8>>> {
    let eocd = bytes.windows(4).rposition(|w| w == b"PK\x05\x06")?;
    let count = u16_at(bytes, eocd + 10)?;
    let mut at = u32_at(bytes, eocd + 16)?;
    let mut out = BTreeMap::new();
    for _ in 0..count {
        if bytes.get(at..at + 4)? != b"PK\x01\x02" {
            return None;
        }
        let method = u16_at(bytes, at + 10)?;
        let size = u32_at(bytes, at + 20)?;
        let (name_len, extra_len, comment_len) = (
            u16_at(bytes, at + 28)?,
            u16_at(bytes, at + 30)?,
            u16_at(bytes, at + 32)?,
        );
        let local = u32_at(bytes, at + 42)?;
        let name = String::from_utf8(bytes.get(at + 46..at + 46 + name_len)?.to_vec()).ok()?;
        assert_eq!(method, 0, "{name}: the fixtures are stored zips");
        let data_at = local + 30 + u16_at(bytes, local + 26)? + u16_at(bytes, local + 28)?;
        out.insert(name, bytes.get(data_at..data_at + size)?.to_vec());
        at += 46 + name_len + extra_len + comment_len;
    }
    Some(out)
}

/// Each fixture's judgement, with what skops said of it.
fn judged_fixtures() -> Vec<(String, Value, Option<Judged>)> {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).unwrap();
    let expected: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    assert!(expected.len() >= 30, "{} fixtures", expected.len());
    expected
        .into_iter()
        .map(|(name, want)| {
            let bytes = std::fs::read(fixtures().join(&name)).unwrap();
            let judged = stored_members(&bytes).map(|members| {
                let schema = members
                    .get("schema.json")
                    .expect("a skops zip has schema.json");
                let has = |n: &str| members.contains_key(n);
                judge_in_zip(schema, &has)
                    .unwrap_or_else(|| panic!("{name}: not judged a skops schema"))
            });
            (name, want, judged)
        })
        .collect()
}

#[test]
fn socair_computes_what_skops_computes_for_every_fixture() {
    for (name, want, judged) in judged_fixtures() {
        let Some(j) = judged else {
            // Not a zip (CVE-2025-54886's joblib pickle): skops raises, socair's pickle
            // readers judge it.
            assert!(want["untrusted"].is_null(), "{name}");
            assert_eq!(want["loads_by_default"], false, "{name}");
            continue;
        };
        let untrusted: Option<Vec<String>> =
            serde_json::from_value(want["untrusted"].clone()).unwrap();
        assert_eq!(
            j.untrusted, untrusted,
            "{name}: untrusted types differ from skops's: {j:#?}"
        );
        assert_eq!(
            Value::Bool(j.loads_by_default()),
            want["loads_by_default"],
            "{name}: skops.io.load's outcome differs: {j:#?}"
        );
        // Wherever skops loads by default, the untrusted set is empty (and conversely a
        // non-empty set means skops refuses).
        if j.loads_by_default() {
            assert_eq!(j.untrusted.as_deref(), Some(&[][..]), "{name}");
        }
        match want["status"].as_str().unwrap() {
            "FAIL" => assert!(
                !j.dangerous.is_empty(),
                "{name}: nothing dangerous found: {j:#?}"
            ),
            "PASS" => assert!(j.is_data(), "{name}: not data: {j:#?}"),
            _ => assert!(
                j.dangerous.is_empty() && !j.is_data() || name == "bytes.skops",
                "{name}: {j:#?}"
            ),
        }
        let keyword = want["keyword"].as_str().unwrap();
        if want["status"] != "PASS" && name != "bytes.skops" && name != "joblib-pickle.skops" {
            let said = format!("{:?} {:?}", j.dangerous, j.lead());
            assert!(said.contains(keyword), "{name}: no {keyword:?} in {said}");
        }
    }
}

#[test]
fn what_a_pass_schema_reads_is_listed() {
    for (name, _, judged) in judged_fixtures() {
        if name == "pipeline.skops" {
            let j = judged.unwrap();
            assert!(
                j.reads
                    .iter()
                    .all(|(member, what)| member.ends_with(".npy") && what.contains("np.load")),
                "{:?}",
                j.reads
            );
            assert!(!j.reads.is_empty());
            assert!(j.lead().is_none() && j.is_data(), "{j:#?}");
        }
    }
}

/// `fixtures/skops/cases.json` (`make_cases.py`): hand-written schemas with what skops 0.16
/// does with each. socair's untrusted set is skops's, and so is whether it loads by default,
/// but where a case says construction fails for a reason socair does not model (then socair
/// says skops loads it, an over-statement that never hides code: the audit passed) or that it
/// lies past socair's bounds (then socair does not say: a LEAD).
///
/// The file is read with this module's own JSON reader: Python writes a lone surrogate as a
/// `\ud800` escape, which serde_json refuses.
#[test]
fn socair_computes_what_skops_computes_for_every_hand_written_case() {
    use super::json::{loads, Json};
    let text = std::fs::read(fixtures().join("cases.json")).unwrap();
    let Json::Object(cases) = loads(&text).unwrap() else {
        panic!("cases.json is an object");
    };
    assert!(cases.len() >= 90, "{} cases", cases.len());
    let strings = |v: Option<&Json>| -> Option<Vec<String>> {
        match v? {
            Json::Array(items) => Some(
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect(),
            ),
            _ => None,
        }
    };
    for (name, want) in &cases {
        let bytes = match (want.get("schema"), want.get("schema_hex")) {
            (Some(Json::Str(s)), _) => s.as_bytes().to_vec(),
            (_, Some(Json::Str(h))) => (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect(),
            _ => panic!("{name}: no schema"),
        };
        let members = strings(want.get("members")).unwrap_or_default();
        let has = |n: &str| members.iter().any(|m| m == n);
        let untrusted = strings(want.get("untrusted"));
        let Some(j) = judge_in_zip(&bytes, &has) else {
            // Not a skops schema to socair: skops raises on it too.
            assert!(
                untrusted.is_none(),
                "{name}: skops reads it, socair does not"
            );
            continue;
        };
        if want.get("bound") == Some(&Json::Bool(true)) {
            assert!(
                j.untrusted.is_none() && !j.unchecked.is_empty() && !j.is_data(),
                "{name}: {j:#?}"
            );
            continue;
        }
        assert_eq!(j.untrusted, untrusted, "{name}: {j:#?}");
        let loads_by_default = want.get("loads_by_default") == Some(&Json::Bool(true));
        if want.get("construction").is_some() {
            assert!(j.loads_by_default() && !loads_by_default, "{name}: {j:#?}");
        } else {
            assert_eq!(j.loads_by_default(), loads_by_default, "{name}: {j:#?}");
        }
        // What skops refuses with an error is a problem socair names.
        if untrusted.is_none() {
            assert!(!j.problems.is_empty(), "{name}: {j:#?}");
        }
    }
}
