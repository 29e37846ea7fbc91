//! Every fixture of fixtures/archive (written by CPython's zipfile, py7zr and 7-Zip:
//! make_fixtures.py) read by
//! the plugin's walk, against expected.json: each row's status and the first finding's place.

use serde_json::Value;
use socair_plugin_api::{RowStatus, Severity};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/archive")
}

fn name(s: RowStatus) -> &'static str {
    match s {
        RowStatus::Pass => "PASS",
        RowStatus::Fail => "FAIL",
        RowStatus::Lead => "LEAD",
        RowStatus::NotTested => "NOT_TESTED",
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Fail => "FAIL",
        Severity::Lead => "LEAD",
        Severity::Note => "NOTE",
    }
}

/// What the plugin reports of one fixture, as expected.json writes it.
fn report(file: &str) -> Value {
    let bytes = std::fs::read(dir().join(file)).unwrap();
    let head = &bytes[..bytes.len().min(4096)];
    let opened = match socair_archive::detect::claim(head, bytes.len() as u64) {
        socair_archive::detect::Claim::Zip => socair_archive::opened(
            &socair_archive::scan::scan_bytes(&bytes, socair_archive::scan::Scope::data(&[])),
            socair_archive::ZIP_FORMAT,
        ),
        socair_archive::detect::Claim::SevenZ => socair_archive::opened(
            &socair_archive::scan::scan_7z_bytes(&bytes, socair_archive::scan::Scope::data(&[])),
            socair_archive::SEVEN_Z_FORMAT,
        ),
        socair_archive::detect::Claim::No => panic!("{file} is not claimed"),
    };
    let rows: Vec<Value> = opened
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "status": name(r.status),
                "first_place": r.findings.first().map(|f| f.place.to_string()),
                // As the report writes it: the archive's rows name each finding's severity.
                "first_reason": r.findings.first().map(|f| {
                    assert!(r.names_severities);
                    format!("{}: {}", severity(f.severity), f.reason)
                }),
                "summary": r.summary.to_string(),
            })
        })
        .collect();
    // An archive without pickles has no pickle row (`null` in expected.json).
    let absent = serde_json::json!({"status": null, "first_place": null});
    serde_json::json!({
        "format": opened.format.to_string(),
        "structure": rows[0],
        "pickle": rows.get(1).cloned().unwrap_or(absent),
    })
}

#[test]
fn every_fixture_gets_its_rows() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap())
            .unwrap();
    let expected = expected.as_object().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".zip") || f.ends_with(".7z"))
        // Keras archives are the keras plugin's (tests/tests/archive.rs), not this plugin's.
        .filter(|f| {
            let bytes = std::fs::read(dir().join(f)).unwrap();
            !socair_plugin_kit::zip::claims::keras_claims(&bytes[..bytes.len().min(4096)])
        })
        .collect();
    files.sort();
    assert!(files.len() >= 16, "{files:?}");
    for file in &files {
        let got = report(file);
        if std::env::var_os("ARCHIVE_DUMP").is_some() {
            println!("{file}: {got:#}");
            continue;
        }
        let want = expected
            .get(file)
            .unwrap_or_else(|| panic!("{file} is not in expected.json"));
        for row in ["structure", "pickle"] {
            assert_eq!(
                got[row]["status"], want[row]["status"],
                "{file} {row}: {got:#}"
            );
            assert_eq!(
                got[row]["first_place"], want[row]["first_place"],
                "{file} {row}: {got:#}"
            );
        }
    }
}
