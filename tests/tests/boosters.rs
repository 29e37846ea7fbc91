//! Pickled XGBoost and LightGBM models end to end (`fixtures/boosters/`, written by xgboost
//! 3.2.0, lightgbm 4.7.0, scikit-learn 1.9.1 and joblib 1.6.0 with `make_fixtures.py`): under
//! `socair-sklearn/1` every sklearn wrapper, bare Booster and Pipeline the libraries pickled is
//! PASS with the model its Booster holds read as the library loads it (its tree count as the
//! library counts them), and a LEAD without the profile; each hostile variant gets the verdict
//! `expected.json` gives for it beside what the real loader did with it (a crash, an exception,
//! a load).

use crate::common::{fixture, json, report_row, run, socair};
use serde_json::Value;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("boosters/expected.json")).unwrap())
}

fn scan(name: &str, profile: Option<&str>) -> (i32, Value) {
    let mut cmd = socair();
    cmd.args(["scan", "--json"]);
    if let Some(p) = profile {
        cmd.args(["--profile", p]);
    }
    let r = run(cmd.arg(fixture(&format!("boosters/{name}"))));
    assert!(r.code == 0 || r.code == 1, "{name}: {}", r.stderr);
    (r.code, json(&r.stdout))
}

fn pickle_row(report: &Value) -> &Value {
    report_row(report, "Pickle opcode scan")
}

#[test]
fn every_model_the_libraries_pickled_passes_under_sklearn_and_is_a_lead_without() {
    let want = expected();
    let mut counted = (0, 0);
    for (name, entry) in want.as_object().unwrap() {
        if entry["verdict"] != "PASS" || entry["trees"].is_null() {
            continue;
        }
        // The generator loaded every one of them and got the original's predictions back.
        let loader = entry["loader"].as_str().unwrap();
        assert!(loader.starts_with("loads "), "{name}: {loader}");
        let (code, report) = scan(name, Some("sklearn"));
        let row = pickle_row(&report);
        assert_eq!(code, 0, "{name}: {row:#}");
        assert_eq!(row["status"], "PASS", "{name}: {row:#}");
        let summary = row["summary"].as_str().unwrap();
        let trees = entry["trees"].as_u64().unwrap();
        let library = if name.starts_with("xgb") {
            "an XGBoost memory snapshot of an XGBoost"
        } else {
            "a LightGBM model"
        };
        assert!(summary.contains(library), "{name}: {summary}");
        assert!(
            summary.contains(&format!("of {trees} trees")),
            "{name}: the library counts {trees} trees: {summary}"
        );
        assert_eq!(report["rules"]["socair-sklearn"], "1", "{name}");
        counted.0 += 1;
        let (code, report) = scan(name, None);
        let row = pickle_row(&report);
        assert_eq!(code, 1, "{name}: {row:#}");
        assert_eq!(row["status"], "LEAD", "{name} under socair-data/1: {row:#}");
        counted.1 += 1;
    }
    assert_eq!(counted, (15, 15), "every benign model fixture was checked");
}

#[test]
fn each_hostile_booster_gets_the_verdict_its_loaders_behaviour_calls_for() {
    let want = expected();
    let mut checked = 0;
    for (name, entry) in want.as_object().unwrap() {
        if !name.starts_with("hostile-") {
            continue;
        }
        let (code, report) = scan(name, Some("sklearn"));
        let row = pickle_row(&report);
        assert_eq!(
            row["status"], entry["verdict"],
            "{name} ({}): {row:#}",
            entry["why"]
        );
        assert_eq!(code, 1, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 10);
}

#[test]
fn hostile_models_name_the_place_in_the_model() {
    // XGBoost 3.2.0 crashed (SIGSEGV) on this one when the generator loaded it.
    let want = expected();
    assert_eq!(
        want["hostile-xgb-child-index.pkl"]["loader"],
        "crash signal 11"
    );
    let (_, report) = scan("hostile-xgb-child-index.pkl", Some("sklearn"));
    let row = pickle_row(&report);
    let text = row["findings"].to_string();
    assert!(
        text.contains("xgboost.core.Booster's handle holds (xgboost-snapshot), Model.learner.gradient_booster.model.trees.0"),
        "{row:#}"
    );
    assert_eq!(
        want["hostile-lgb-tree-sizes.pkl"]["loader"],
        "crash signal 11"
    );
    let (_, report) = scan("hostile-lgb-tree-sizes.pkl", Some("sklearn"));
    let text = pickle_row(&report)["findings"].to_string();
    assert!(
        text.contains("lightgbm.basic.Booster's _handle holds (lightgbm-text)"),
        "{text}"
    );
    assert!(text.contains("tree_sizes"), "{text}");
}

#[test]
fn a_defaultdict_of_data_is_data_and_an_unknown_factory_is_a_lead() {
    let (code, report) = scan("data-defaultdict-p4.pkl", None);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(pickle_row(&report)["status"], "PASS");
    let (_, report) = scan("hostile-defaultdict-factory.pkl", None);
    let row = pickle_row(&report);
    assert_eq!(row["status"], "LEAD", "{row:#}");
    assert!(
        row["findings"].to_string().contains("somewher.list"),
        "{row:#}"
    );
}
