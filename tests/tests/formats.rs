//! SARIF 2.1.0 and CycloneDX 1.6: each valid against its schema
//! (`fixtures/schemas/`, through `scripts/validate-json-schema.py`), and saying what the
//! reports say: one SARIF result per FAIL and LEAD finding, in its file, with the rule's
//! security-severity, `startLine` and (for a byte of the file) `byteOffset`, and fingerprints
//! that stay the same from run to run; one ML-BOM component per artifact with its hash,
//! format, tensors and verdict, and one per file of a model directory.

use crate::common::{fixture, json, repo, run, socair};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The Python that checks documents: the interpreter SOCAIR_TEST_JSONSCHEMA_PYTHON names (CI's
/// virtualenv, which must have every module: `true`), else `python3` when it imports `modules`
/// (`false`); `None` when there is none, and the caller skips the check, saying so.
pub fn checking_python(modules: &[&str]) -> Option<(std::ffi::OsString, bool)> {
    if let Some(p) = std::env::var_os("SOCAIR_TEST_JSONSCHEMA_PYTHON") {
        return Some((p, true));
    }
    let import = format!("import {}", modules.join(", "));
    let ok = Command::new("python3")
        .args(["-c", &import])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| ("python3".into(), false))
}

/// Validates `doc` against the `kind` schema (sarif, cyclonedx, github-action,
/// pre-commit-hooks) with scripts/validate-json-schema.py (Python's jsonschema, and PyYAML for
/// the YAML ones); skipped, saying so, where no Python has them.
pub fn validate(kind: &str, doc: &Path) {
    let script = repo().join("scripts/validate-json-schema.py");
    let modules: &[&str] = if kind.starts_with("github") || kind.starts_with("pre-commit") {
        &["jsonschema", "yaml"]
    } else {
        &["jsonschema"]
    };
    let Some((python, required)) = checking_python(modules) else {
        eprintln!("skipped: no Python with {modules:?} to validate {kind} (set SOCAIR_TEST_JSONSCHEMA_PYTHON)");
        return;
    };
    match Command::new(&python)
        .arg(&script)
        .arg(kind)
        .arg(doc)
        .output()
    {
        Ok(o) if o.status.code() == Some(0) => {}
        Ok(o) if o.status.code() == Some(1) || required => panic!(
            "{} is not valid {kind} ({:?}):\n{}{}",
            doc.display(),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) if required => panic!("{python:?} did not run: {e}"),
        other => eprintln!("skipped: {python:?} could not validate {kind}: {other:?}"),
    }
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

/// A plain pickle that calls os.system: its findings are at file offsets (`pickle byte N`).
fn evil_pickle(dir: &Path) -> String {
    let p = dir.join("evil.pkl");
    std::fs::write(
        &p,
        b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.",
    )
    .unwrap();
    s(&p)
}

fn scan_as(format: &str, paths: &[&str], out: &Path) -> i32 {
    let r = run(socair()
        .args(["scan", "--format", format, "--out"])
        .arg(out)
        .args(paths));
    assert!(out.exists(), "{}", r.stderr);
    r.code
}

#[test]
fn sarif_has_a_result_for_every_fail_and_lead_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let pkl = evil_pickle(tmp.path());
    let pt = s(&fixture("torch/malicious/pickle-os-system.pt"));
    let dir = s(&fixture("onnx/external/offset-past-end"));
    let clean = s(&fixture("safetensors/tiny-bert"));
    let missing = "hf://socair-fixtures/not-in-any-cache";
    let paths = [pkl.as_str(), &pt, &dir, &clean, missing];
    let sarif_path = tmp.path().join("out.sarif");
    assert_eq!(scan_as("sarif", &paths, &sarif_path), 1);
    validate("sarif", &sarif_path);
    let sarif = json(&std::fs::read_to_string(&sarif_path).unwrap());
    assert_eq!(sarif["version"], "2.1.0");
    let run0 = &sarif["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "socair");
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids.iter().collect::<BTreeSet<_>>().len(),
        ids.len(),
        "one rule per id"
    );
    for r in rules {
        let sev: f64 = r["properties"]["security-severity"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let id = r["id"].as_str().unwrap();
        let expected = if id.ends_with("/fail") { 9.5 } else { 5.0 };
        assert_eq!(sev, expected, "{id}");
        assert!(r["help"]["text"].as_str().is_some_and(|t| !t.is_empty()));
    }
    assert!(ids.contains(&"socair/pickle-opcode-scan/fail"));
    assert!(ids.contains(&"socair/format-and-structure/lead"));
    assert!(ids.contains(&"socair/unreadable"));
    // What the reports hold: every finding of a FAIL or LEAD row, by file.
    let doc = json(&run(socair().arg("scan").args(paths).arg("--json")).stdout);
    let mut expected = BTreeMap::new();
    for e in doc["artifacts"].as_array().unwrap() {
        let Some(report) = e.get("report") else {
            continue;
        };
        let in_dir = report["artifact"]["format"] == "model directory";
        for row in report["rows"].as_array().unwrap() {
            if row["status"] != "FAIL" && row["status"] != "LEAD" {
                continue;
            }
            for f in row["findings"].as_array().unwrap() {
                let place = f["place"].as_str().unwrap();
                // In a directory a place is `file: place`; SARIF puts the file in the URI.
                let (uri, place) = match place.split_once(": ").filter(|_| in_dir) {
                    Some((file, rest)) => (format!("{}/{file}", e["path"].as_str().unwrap()), rest),
                    None => (e["path"].as_str().unwrap().to_owned(), place),
                };
                *expected.entry((uri, place.to_owned())).or_insert(0) += 1;
            }
        }
    }
    let results = run0["results"].as_array().unwrap();
    let mut got = BTreeMap::new();
    for r in results
        .iter()
        .filter(|r| r["ruleId"] != "socair/unreadable")
    {
        let loc = &r["locations"][0];
        // Absolute paths are file:// URIs (the fixtures' paths need no percent-encoding).
        let uri = loc["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        let uri = uri.strip_prefix("file://").unwrap_or(uri).to_owned();
        let place = loc["logicalLocations"][0]["fullyQualifiedName"]
            .as_str()
            .unwrap()
            .to_owned();
        *got.entry((uri, place)).or_insert(0) += 1;
    }
    assert_eq!(got, expected);
    // Every result: its rule, line 1 (GitHub requires it), a fingerprint; unreadable ones too.
    let mut fingerprints = BTreeSet::new();
    for r in results {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region["startLine"], 1);
        let fp = r["partialFingerprints"]["primaryLocationLineHash"]
            .as_str()
            .unwrap();
        assert!(fingerprints.insert(fp.to_owned()), "{fp} twice");
    }
    assert_eq!(
        results
            .iter()
            .filter(|r| r["ruleId"] == "socair/unreadable")
            .count(),
        1
    );
    // The plain pickle's findings are at bytes of the file: byteOffset says which.
    let global = results
        .iter()
        .find(|r| {
            r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
                == "pickle byte 2 (GLOBAL)"
        })
        .expect("the GLOBAL finding");
    let region = &global["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (region["byteOffset"].as_u64(), region["byteLength"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        &std::fs::read(&pkl).unwrap()[2..4],
        b"co",
        "byte 2 is the GLOBAL opcode"
    );
    // A byte inside a zip record is not one of the file's: no byteOffset.
    let in_record = results
        .iter()
        .find(|r| {
            r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
                .as_str()
                .is_some_and(|p| p.starts_with("data.pkl byte"))
        })
        .unwrap();
    assert!(in_record["locations"][0]["physicalLocation"]["region"]
        .get("byteOffset")
        .is_none());
    // The same scan, the same log: fingerprints are stable.
    let again = tmp.path().join("again.sarif");
    scan_as("sarif", &paths, &again);
    assert_eq!(
        std::fs::read(&sarif_path).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn a_clean_scan_is_an_empty_sarif_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("clean.sarif");
    assert_eq!(
        scan_as("sarif", &[&s(&fixture("safetensors/tiny-bert"))], &out),
        0
    );
    validate("sarif", &out);
    let sarif = json(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
}

fn props(c: &serde_json::Value) -> BTreeMap<String, String> {
    c["properties"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        p["name"].as_str().unwrap().to_owned(),
                        p["value"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_ml_bom_lists_each_model_its_files_tensors_and_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture("safetensors/tiny-bert");
    let pt = s(&fixture("torch/legit/state-dict.pt"));
    let evil = s(&fixture("torch/malicious/pickle-os-system.pt"));
    let paths = [s(&dir), pt.clone(), evil.clone()];
    let bom_path = tmp.path().join("bom.cdx.json");
    let r = run(socair().arg("bom").args(&paths).arg("--out").arg(&bom_path));
    assert_eq!(r.code, 1, "the evil checkpoint is blocked: {}", r.stderr);
    validate("cyclonedx", &bom_path);
    // `scan --format cyclonedx` writes the same document.
    let via_scan = tmp.path().join("scan.cdx.json");
    scan_as(
        "cyclonedx",
        &paths.iter().map(String::as_str).collect::<Vec<_>>(),
        &via_scan,
    );
    assert_eq!(
        std::fs::read(&bom_path).unwrap(),
        std::fs::read(&via_scan).unwrap()
    );
    let bom = json(&std::fs::read_to_string(&bom_path).unwrap());
    assert_eq!(
        (bom["bomFormat"].as_str(), bom["specVersion"].as_str()),
        (Some("CycloneDX"), Some("1.6"))
    );
    let components = bom["components"].as_array().unwrap();
    assert_eq!(components.len(), 3);
    let reports = json(&run(socair().arg("scan").args(&paths).arg("--json")).stdout);
    for (c, e) in components
        .iter()
        .zip(reports["artifacts"].as_array().unwrap())
    {
        assert_eq!(c["type"], "machine-learning-model");
        assert_eq!(c["hashes"][0]["alg"], "SHA-256");
        assert_eq!(c["hashes"][0]["content"], e["report"]["artifact"]["sha256"]);
        let p = props(c);
        assert_eq!(p["socair:verdict"], e["verdict"].as_str().unwrap());
        assert_eq!(
            p["socair:format"],
            e["report"]["artifact"]["format"].as_str().unwrap()
        );
        // The tensors socair tensors fingerprints, and their dtypes.
        let manifest =
            json(&run(socair().args(["tensors", e["path"].as_str().unwrap(), "--json"])).stdout);
        let tensors = manifest["tensors"].as_array().unwrap();
        assert_eq!(
            p["socair:tensors:count"],
            tensors.len().to_string(),
            "{}",
            e["path"]
        );
        let mut dtypes = BTreeMap::new();
        for t in tensors {
            *dtypes
                .entry(t["dtype"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
        }
        let listed: BTreeMap<String, usize> = p
            .get("socair:tensors:dtypes")
            .map(|d| {
                d.split(',')
                    .map(|kv| {
                        let (k, v) = kv.split_once('=').unwrap();
                        (k.to_owned(), v.parse().unwrap())
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(listed, dtypes, "{}", e["path"]);
    }
    assert_eq!(props(&components[2])["socair:verdict"], "blocked");
    // The directory's files, each with the SHA-256 of its bytes.
    let files = components[0]["components"].as_array().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed: Vec<&str> = files.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(listed, names);
    for f in files {
        assert_eq!(f["type"], "file");
        let bytes = std::fs::read(dir.join(f["name"].as_str().unwrap())).unwrap();
        let sha = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        assert_eq!(f["hashes"][0]["content"], sha);
    }
    assert_eq!(
        props(&files[0])["socair:format"],
        "companion (no reader claims it)",
        "config.json"
    );
    assert_eq!(props(&files[1])["socair:format"], "safetensors");
    assert_eq!(props(&files[1])["socair:tensors:count"], "7");
}
