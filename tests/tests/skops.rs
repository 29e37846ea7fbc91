//! skops files (`fixtures/skops/`, written by skops 0.16.0 with scikit-learn 1.9.1 by
//! `fixtures/skops/make_fixtures.py`, with what `skops.io.get_untrusted_types` lists for each):
//! socair does not model skops's node types yet, so none is clean; one whose schema names a
//! callable that runs code (`os.system`, `eval`) FAILs, whether the zip holds arrays (read as
//! `np.load` opens it) or not (read as a zip).

use crate::common::{fixture, json, run, socair, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn skops_files_are_never_clean_and_code_in_their_schema_fails() {
    let text = std::fs::read_to_string(fixture("skops/expected.json")).unwrap();
    let expected: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    assert!(expected.len() >= 5);
    for (rel, want) in &expected {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("skops/{rel}"))));
        let report = json(&r.stdout);
        let got = verdict(&report);
        assert_eq!(got, want["status"], "{rel}: {report:#}");
        assert_eq!(r.code, 1, "{rel}");
        let keyword = want["keyword"].as_str().unwrap();
        assert!(
            report.to_string().contains(keyword),
            "{rel}: no {keyword:?} in {report:#}"
        );
        // What skops itself would refuse to load without `trusted=`: a callable among them
        // that runs code is a FAIL here.
        let untrusted = want["untrusted"].as_array().unwrap();
        if untrusted.iter().any(|t| {
            let t = t.as_str().unwrap();
            t.ends_with(".system") || t.ends_with(".eval")
        }) {
            assert_eq!(got, "FAIL", "{rel}");
        }
    }
}
