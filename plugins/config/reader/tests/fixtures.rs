//! The fixtures fixtures/config/make_config.py wrote, against what the real libraries said of
//! them (fixtures/config/expected.json): every YAML file's verdict, and every Python tag
//! PyYAML 6.0.3's composer saw found at the same line and column; every native file
//! identified as file(1) 5.44 identifies it, and every look-alike left unclaimed.

use serde_json::Value;
use socair_config::{executable_opened, native, yaml};
use socair_plugin_api::RowStatus;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/config")
}

fn expected() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir().join("expected.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

fn status(verdict: &str) -> RowStatus {
    match verdict {
        "PASS" => RowStatus::Pass,
        "LEAD" => RowStatus::Lead,
        "FAIL" => RowStatus::Fail,
        other => panic!("verdict {other}"),
    }
}

#[test]
fn yaml_verdicts_and_python_tags_match_pyyaml() {
    let mut seen = 0;
    let mut tags_checked = 0;
    for (rel, case) in expected() {
        if !rel.starts_with("yaml/") {
            continue;
        }
        seen += 1;
        let bytes = std::fs::read(dir().join(&rel)).unwrap();
        let judged = yaml::judge(&bytes);
        let opened = yaml::opened_file(&judged);
        let row = &opened.rows[0];
        assert_eq!(
            row.status,
            status(case["verdict"].as_str().unwrap()),
            "{rel} ({}): {:#?}",
            case["why"],
            row.findings
        );
        for tag in case["pyyaml"]["python_tags"].as_array().unwrap() {
            let at = format!("line {} column {}", tag["line"], tag["column"]);
            let name = tag["tag"].as_str().unwrap();
            assert!(
                row.findings
                    .iter()
                    .any(|f| f.place.as_str().starts_with(&at) && f.reason.contains(name)),
                "{rel}: PyYAML sees {name} at {at}; the reader says {:#?}",
                row.findings
            );
            tags_checked += 1;
        }
        // What yaml.safe_load refuses for a Python tag, the reader found a Python tag for.
        let safe = case["pyyaml"]["safe_load"].as_str().unwrap();
        if safe.contains("tag:yaml.org,2002:python/") {
            assert!(
                row.findings
                    .iter()
                    .any(|f| f.reason.contains("tag:yaml.org,2002:python/")),
                "{rel}"
            );
        }
    }
    assert!(seen >= 30, "{seen} YAML fixtures");
    assert!(tags_checked >= 18, "{tags_checked} Python tags compared");
}

#[test]
fn native_files_are_identified_as_file_identifies_them() {
    let mut claimed = 0;
    for (rel, case) in expected() {
        if !rel.starts_with("exe/") {
            continue;
        }
        let bytes = std::fs::read(dir().join(&rel)).unwrap();
        let found = native::identify(&bytes[..]);
        let said = case["file"].as_str().unwrap_or("");
        match case["native"].as_str() {
            Some(kind) => {
                claimed += 1;
                let n = found
                    .clone()
                    .unwrap_or_else(|| panic!("{rel} not identified"));
                assert_eq!(n.kind, kind, "{rel}");
                assert!(
                    native::identify_head(&bytes, bytes.len() as u64).is_some(),
                    "{rel}: the host's detect would not claim it"
                );
                // file(1)'s family: ELF, PE32/PE32+, Mach-O.
                let family = kind.split(' ').next().unwrap().trim_end_matches("-O");
                let family = if family == "PE" { "PE32" } else { family };
                assert!(
                    said.is_empty() || said.starts_with(family),
                    "{rel}: file says {said}"
                );
                let opened = executable_opened(found);
                assert_eq!(
                    opened.rows[0].status,
                    status(case["verdict"].as_str().unwrap()),
                    "{rel}"
                );
            }
            None => assert_eq!(found, None, "{rel}: {said}"),
        }
    }
    assert!(claimed >= 8, "{claimed}");
}
