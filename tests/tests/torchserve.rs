//! TorchScript archives judged by their code (torch-zip's `TorchScript code` row), and
//! TorchServe model archives (the torchserve plugin), end to end over files torch 2.15.0,
//! torch-model-archiver 0.12.0 and the hand edits of their generators wrote
//! (fixtures/torchscript/make_torchscript.py, fixtures/torchserve/make_torchserve.py, each
//! with an expected.json).

use crate::common::{fixture, json, report_plugins, report_row, run, socair, verdict, Store};
use serde_json::Value;

fn cases(dir: &str) -> Vec<(String, Value)> {
    let e = json(&std::fs::read_to_string(fixture(&format!("{dir}/expected.json"))).unwrap());
    e.as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn scan(path: &std::path::Path) -> (i32, Value) {
    let r = run(socair().arg("scan").arg(path));
    (r.code, json(&r.stdout))
}

fn row_text(row: &Value) -> String {
    row.to_string().to_lowercase()
}

#[test]
fn torchscript_archives_are_judged_by_their_code() {
    let cases = cases("torchscript");
    assert!(cases.len() >= 15, "{}", cases.len());
    let mut seen = std::collections::BTreeSet::new();
    for (file, case) in cases {
        let path = fixture(&format!("torchscript/{file}"));
        let (code, report) = scan(&path);
        let want = case["status"].as_str().unwrap();
        seen.insert(want.to_owned());
        assert_eq!(report["artifact"]["format"], "torch-zip", "{file}");
        assert_eq!(report["artifact"]["sha256"], case["file_sha256"], "{file}");
        assert_eq!(report_plugins(&report), vec!["torch-zip"], "{file}");
        let row = report_row(&report, "TorchScript code");
        assert_eq!(row["status"], want, "{file}: {row:#}");
        assert_eq!(verdict(&report), want, "{file}: {report:#}");
        assert_eq!(code, if want == "PASS" { 0 } else { 1 }, "{file}");
        let keyword = case["keyword"].as_str().unwrap().to_lowercase();
        assert!(
            row_text(row).contains(&keyword),
            "{file}: {keyword} not in {row:#}"
        );
        // What torch.jit.load did with the file agrees: everything it raises on is a LEAD (it
        // cannot run), and every FAIL and PASS is a file it loads.
        let loads = case["torch_jit_load"].as_str().unwrap();
        if loads.starts_with("raises") {
            assert_eq!(want, "LEAD", "{file}: torch.jit.load {loads}");
        } else {
            assert_eq!(loads, "loads", "{file}");
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
}

#[test]
fn a_torchscript_archive_keeps_its_blanket_fail_under_pinned_older_rules() {
    // socair-wo/1 and /2 were pinned with every TorchScript archive a FAIL; /3 reads the code.
    for version in ["1", "2"] {
        let s = Store::new();
        let scanner = s.key("scanner.key", "scan");
        let r = s.run(&[
            "airlock",
            "pin",
            "rules",
            "socair-wo",
            &format!("={version}"),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let src = s.dir.path().join("scripted-linear.pt");
        std::fs::copy(fixture("torchscript/scripted-linear.pt"), &src).unwrap();
        let report = s.pull_and_scan(&src, &scanner);
        assert_eq!(report["rules"]["socair-wo"], version);
        assert_eq!(verdict(&report), "FAIL", "socair-wo/{version}: {report:#}");
        assert!(report
            .to_string()
            .contains("TorchScript archive (torch.jit.save)"));
    }
}

#[test]
fn torchserve_archives_are_judged_by_what_loading_them_runs() {
    let cases = cases("torchserve");
    assert!(cases.len() >= 10, "{}", cases.len());
    for (file, case) in cases {
        let path = fixture(&format!("torchserve/{file}"));
        let (code, report) = scan(&path);
        let want = case["status"].as_str().unwrap();
        assert_eq!(report["artifact"]["sha256"], case["file_sha256"], "{file}");
        let plugins = report_plugins(&report);
        assert!(plugins.contains(&"torchserve"), "{file}: {plugins:?}");
        let row = report_row(&report, case["row"].as_str().unwrap());
        let keyword = case["keyword"].as_str().unwrap().to_lowercase();
        assert!(
            row_text(row).contains(&keyword),
            "{file}: {keyword} not in {row:#}"
        );
        // This plugin's own rows carry the verdict; another plugin reading the same zip (the
        // archive plugin claims every zip it does not exclude) can only make it worse.
        let ours = report_row(&report, "TorchServe archive");
        match want {
            "FAIL" => {
                assert_eq!(verdict(&report), "FAIL", "{file}");
                assert_eq!(code, 1, "{file}");
                assert!(
                    row["status"] == "FAIL" || ours["status"] == "FAIL",
                    "{file}: {report:#}"
                );
            }
            "LEAD" => {
                assert_ne!(verdict(&report), "PASS", "{file}");
                assert_ne!(ours["status"], "PASS", "{file}: {ours:#}");
            }
            _ => {
                assert_eq!(ours["status"], "PASS", "{file}: {ours:#}");
                let code_row = report_row(&report, "TorchScript code");
                assert_eq!(code_row["status"], "PASS", "{file}: {code_row:#}");
                if plugins == vec!["torchserve"] {
                    assert_eq!(verdict(&report), "PASS", "{file}: {report:#}");
                    assert_eq!(code, 0, "{file}");
                }
            }
        }
    }
}
