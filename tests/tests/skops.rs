//! skops files (`fixtures/skops/`, written by skops 0.16.0 with scikit-learn 1.9.1 by
//! `fixtures/skops/make_fixtures.py`, some edited from them as an attacker would, with what
//! `skops.io.get_untrusted_types` lists for each and whether `skops.io.load` loads it): socair
//! judges a skops schema as skops 0.16 loads it (`socair_pickle::skops`). Every fixture gets
//! the verdict and the keyword `expected.json` records, whether the zip holds arrays (read as
//! `np.load` opens it) or not (read as a zip):
//!
//! * PASS: every type skops trusts by default and nothing that runs code (skops.io.load
//!   loads it without `trusted=`): the schema is data, the scan clean;
//! * LEAD: types skops does not trust by default, a schema skops raises on, or one socair does
//!   not read whole; the reason names the untrusted types;
//! * FAIL: a name that runs code or does I/O, trusted or not, or a known vulnerability's
//!   shape (CVE-2025-54412, CVE-2025-54413; CVE-2025-54886's joblib pickle named `.skops` is
//!   a pickle, judged as one).
//!
//! The differential check (socair's untrusted set equals skops's, file by file) is the unit
//! test `skops::tests_fixtures` of the pickle crate, which sees the set itself; here, a LEAD
//! for untrusted types names them all (as many as the reason lists).

use crate::common::{fixture, json, run, socair, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(fixture("skops/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_skops_fixture_gets_its_verdict_and_keyword() {
    let expected = expected();
    assert!(expected.len() >= 30, "{} fixtures", expected.len());
    for status in ["PASS", "LEAD", "FAIL"] {
        assert!(
            expected.values().filter(|w| w["status"] == status).count() >= 5,
            "fewer than five {status} fixtures"
        );
    }
    for (rel, want) in &expected {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("skops/{rel}"))));
        let report = json(&r.stdout);
        let got = verdict(&report);
        assert_eq!(got, want["status"], "{rel}: {report:#}");
        assert_eq!(r.code, i32::from(got != "PASS"), "{rel}: {}", r.stderr);
        let keyword = want["keyword"].as_str().unwrap();
        assert!(
            report.to_string().contains(keyword),
            "{rel}: no {keyword:?} in {report:#}"
        );
        // A LEAD for untrusted types (and no other reason) names every one of them, when
        // skops refuses the file for them alone.
        if let Some(untrusted) = want["untrusted"].as_array() {
            if want["status"] == "LEAD" && !untrusted.is_empty() {
                for t in untrusted {
                    let t = t.as_str().unwrap();
                    assert!(
                        report.to_string().contains(t),
                        "{rel}: {t} not named in {report:#}"
                    );
                }
            }
            // Wherever skops loads the file by default, it lists nothing untrusted.
            if want["loads_by_default"] == true {
                assert!(untrusted.is_empty(), "{rel}");
            }
        }
        // What skops refuses without trusted= is never clean here.
        if want["loads_by_default"] == false {
            assert_ne!(got, "PASS", "{rel}");
        }
    }
}

#[test]
fn a_trusted_skops_schema_is_data_in_both_readers() {
    // With arrays: the NumPy reader, and no LEAD for schema.json.
    let r = run(socair()
        .args(["scan", "--json"])
        .arg(fixture("skops/pipeline.skops")));
    let report = json(&r.stdout);
    assert_eq!(verdict(&report), "PASS", "{report:#}");
    assert!(
        report
            .to_string()
            .contains("skops.io.load loads it without trusted="),
        "{report:#}"
    );
    // Without: the archive reader counts it as data.
    let r = run(socair()
        .args(["scan", "--json"])
        .arg(fixture("skops/function-transformer-noop.skops")));
    let report = json(&r.stdout);
    assert_eq!(verdict(&report), "PASS", "{report:#}");
    assert!(
        report.to_string().contains("1 JSON or text read as data"),
        "{report:#}"
    );
}

#[test]
fn a_schema_json_that_is_a_pickle_is_still_scanned_as_one() {
    // pipeline.skops with its schema.json replaced by a protocol-0 pickle calling os.system
    // on the string "__loader__": not JSON, so no skops schema; np.load returns its bytes,
    // which a caller may unpickle, and the archive reader's pickle scan reads it.
    use std::io::{Read, Write};
    let src = std::fs::File::open(fixture("skops/pipeline.skops")).unwrap();
    let mut zip = zip::ZipArchive::new(src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pickled-schema.skops");
    let mut out = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).unwrap();
        let name = member.name().to_owned();
        let mut bytes = Vec::new();
        member.read_to_end(&mut bytes).unwrap();
        if name == "schema.json" {
            bytes = b"cposix\nsystem\n(S'__loader__'\ntR.".to_vec();
        }
        out.start_file(name, stored).unwrap();
        out.write_all(&bytes).unwrap();
    }
    out.finish().unwrap();
    let r = run(socair().args(["scan", "--json"]).arg(&path));
    let report = json(&r.stdout);
    assert_eq!(verdict(&report), "FAIL", "{report:#}");
    assert!(report.to_string().contains("posix.system"), "{report:#}");
}

/// Types a person reviewed are passed as `skops.io.load`'s `trusted=` (skops 0.16
/// `audit_tree`: the unsafe set minus `trusted`): `--reviewed-classes` naming a custom
/// estimator's class makes its file clean, in both readers (with arrays, `npz`; without,
/// `archive-zip`); a reviewed name that runs code stays a FAIL.
#[test]
fn reviewed_types_are_trusted_as_skops_load_trusts_them() {
    let e = expected();
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (rel, want) in &e {
        // None where get_untrusted_types raises.
        let untrusted: Vec<&str> = want["untrusted"]
            .as_array()
            .map(|ts| ts.iter().map(|t| t.as_str().unwrap()).collect())
            .unwrap_or_default();
        let status = want["status"].as_str().unwrap();
        if untrusted.is_empty() || status == "PASS" {
            continue;
        }
        let reviewed = dir.path().join(format!("{rel}.txt"));
        std::fs::write(&reviewed, untrusted.join("\n") + "\n").unwrap();
        let r = run(socair()
            .args(["scan", "--json", "--reviewed-classes"])
            .arg(&reviewed)
            .arg(fixture(&format!("skops/{rel}"))));
        let report = json(&r.stdout);
        let got = verdict(&report);
        if rel == "custom-estimator.skops" {
            assert_eq!(got, "PASS", "{rel}: {report:#}");
            assert!(
                report.to_string().contains("a person reviewed"),
                "{report:#}"
            );
            checked += 1;
        }
        if status == "FAIL" {
            // Reviewing never clears what runs code.
            assert_eq!(got, "FAIL", "{rel}: {report:#}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "{checked}");
}
