//! No FAIL on what torch itself writes or loads:
//! `socair-wo/3` reads every class of file torch 2.15's `torch.load(weights_only=True)` loads
//! (sparse, quantized and meta tensors, the data values its unpickler lists, tensors with
//! Python attributes, torch 0.3's `_rebuild_tensor` and torch 0.4's `backward_hooks` of
//! `None`), pathlib paths, torch.distributed.checkpoint's metadata, plain Python 2 pickles with
//! Latin-1 `str`s, and the zips torch's writer options and re-zipping produce; `/1` and `/2`
//! keep the verdicts they gave. Fixtures: fixtures/torch/weights-only/ (make_weights_only_
//! fixtures.py: torch 2.15 wrote them, or they were built as torch 0.3/0.4 wrote them and
//! torch 2.15 loaded them back) and fixtures/safetensors/read-the-same/ (make_header_
//! fixtures.py, with what safetensors 0.8.0 itself reads from each).

use crate::common::{fixture, json, run, socair, tensor_hashes, Store};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected(rel: &str) -> Vec<(String, Value)> {
    let e = json(&std::fs::read_to_string(fixture(rel)).unwrap());
    e.as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "_meta")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn torch_cases() -> Vec<(String, Value)> {
    expected("torch/weights-only/expected.json")
}

fn rows(report: &Value) -> Vec<Value> {
    report["rows"].as_array().unwrap().clone()
}

/// The worst status of a report's rows (the file's verdict).
fn verdict(report: &Value) -> String {
    let order = ["PASS", "NOT_TESTED", "LEAD", "FAIL"];
    rows(report)
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_owned())
        .filter(|s| s != "NOT_TESTED")
        .max_by_key(|s| order.iter().position(|o| o == s))
        .unwrap_or_else(|| "NOT_TESTED".into())
}

fn text(report: &Value) -> String {
    rows(report)
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_class_torch_writes_or_loads_gets_its_socair_wo_3_verdict_and_never_a_fail() {
    let cases = torch_cases();
    assert!(cases.len() >= 23, "{}", cases.len());
    for (file, case) in &cases {
        let path = fixture(&format!("torch/weights-only/{file}"));
        let r = run(socair().arg("scan").arg(&path));
        let report = json(&r.stdout);
        assert_eq!(report["rules"]["socair-wo"], "3", "{file}");
        let got = verdict(&report);
        assert_eq!(got, case["status"]["3"], "{file}: {}", text(&report));
        assert_ne!(got, "FAIL", "{file}");
        assert_eq!(r.code, if got == "PASS" { 0 } else { 1 }, "{file}");
        if let Some(keyword) = case["keyword"].as_str() {
            if got != "PASS" {
                assert!(
                    text(&report).contains(keyword),
                    "{file}: {keyword:?} not in {}",
                    text(&report)
                );
            }
        }
    }
}

#[test]
fn every_tensor_socair_wo_3_reads_is_named_and_hashed_as_torch_loads_it() {
    for (file, case) in torch_cases() {
        let Some(want) = case["tensors"].as_array() else {
            continue;
        };
        let path = fixture(&format!("torch/weights-only/{file}"));
        let r = run(socair().arg("tensors").arg(&path));
        let m = json(&r.stdout);
        let got: BTreeMap<String, (Value, Value, Value)> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    (t["dtype"].clone(), t["shape"].clone(), t["sha256"].clone()),
                )
            })
            .collect();
        let wanted: BTreeMap<String, (Value, Value, Value)> = want
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    (t["dtype"].clone(), t["shape"].clone(), t["sha256"].clone()),
                )
            })
            .collect();
        assert_eq!(got, wanted, "{file}: {m:#}");
        // Everything not fingerprinted is listed with its reason; a deflated storage or a
        // meta tensor is unread, never silently dropped.
        let unread = m["unread"].as_array().unwrap();
        match file.as_str() {
            "meta.pt" => {
                assert_eq!(unread.len(), 1, "{m:#}");
                assert_eq!(unread[0]["tensor"], "m");
                assert!(unread[0]["reason"].as_str().unwrap().contains("meta"));
                assert_eq!(r.code, 1);
            }
            "zip-deflated.pt" => {
                assert_eq!(unread.len(), 2, "{m:#}");
                assert!(unread[0]["reason"].as_str().unwrap().contains("deflated"));
                assert_eq!(r.code, 1);
            }
            _ => {
                assert!(unread.is_empty(), "{file}: {m:#}");
                assert_eq!(r.code, 0, "{file}: {}", r.stderr);
            }
        }
    }
}

/// Scans every file of `cases` in one store pinned to `pin`, returning each report.
fn pinned_reports(cases: &[(String, Value)], pin: &str) -> Vec<(String, Value)> {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let r = s.run(&["airlock", "pin", "rules", "socair-wo", pin]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut out = Vec::new();
    for (i, (file, _)) in cases.iter().enumerate() {
        // dcp/.metadata keeps its name's last part; every pulled file needs its own name.
        let name = format!("{i}-{}", file.replace('/', "-"));
        let src = s.dir.path().join(&name);
        std::fs::copy(fixture(&format!("torch/weights-only/{file}")), &src).unwrap();
        out.push((file.clone(), s.pull_and_scan(&src, &scanner)));
    }
    out
}

#[test]
fn stores_pinned_to_1_and_2_keep_the_verdicts_they_pinned() {
    let cases = torch_cases();
    for version in ["1", "2"] {
        for (file, report) in pinned_reports(&cases, &format!("={version}")) {
            assert_eq!(report["rules"]["socair-wo"], version, "{file}");
            let case = &cases.iter().find(|(f, _)| *f == file).unwrap().1;
            assert_eq!(
                verdict(&report),
                case["status"][version],
                "{file} under socair-wo/{version}: {}",
                text(&report)
            );
            assert!(
                !text(&report).contains("socair-wo/3"),
                "{file} under /{version}"
            );
        }
    }
}

fn convert(src: &std::path::Path, out: &std::path::Path, from: &str) -> crate::common::Run {
    run(socair()
        .arg("convert")
        .arg(src)
        .arg(out)
        .args(["--from", from, "--to", "safetensors"]))
}

#[test]
fn a_bare_tuple_or_list_converts_under_the_names_tensors_gives_and_leads_do_not_convert() {
    let dir = tempfile::tempdir().unwrap();
    let cases: BTreeMap<String, Value> = torch_cases().into_iter().collect();
    for (file, from) in [
        ("bare-tuple.pt", "torch-zip"),
        ("bare-list.pt", "torch-zip"),
        ("attributes.pt", "torch-zip"),
        ("torch03-rebuild-tensor.pt", "torch-legacy"),
        ("torch04-hooks-none.pt", "torch-legacy"),
    ] {
        let out = dir.path().join(format!("{file}.safetensors"));
        let r = convert(&fixture(&format!("torch/weights-only/{file}")), &out, from);
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        let got = tensor_hashes(&json(&run(socair().arg("tensors").arg(&out)).stdout));
        let want: BTreeMap<String, String> = cases[file]["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["outside"] == false)
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["sha256"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(got, want, "{file}");
    }
    // A tensor's Python attributes are named as not carried.
    let out = dir.path().join("attrs-again.safetensors");
    let r = convert(
        &fixture("torch/weights-only/attributes.pt"),
        &out,
        "torch-zip",
    );
    assert!(
        r.stderr
            .contains("not carried: t (Python attributes on the tensor: note)"),
        "{}",
        r.stderr
    );
    // Conversion keeps refusing what its rules refuse: a LEAD, or nothing in the model.
    for (file, why) in [
        ("zip-no-crc32.pt", "not PASS"),
        ("zip-deflated.pt", "not PASS"),
        ("zip-comment.pt", "not PASS"),
        ("sparse-coo.pt", "not PASS"),
        ("quantized-per-tensor.pt", "no tensor to carry"),
    ] {
        let out = dir.path().join(format!("{file}.refused.safetensors"));
        let r = convert(
            &fixture(&format!("torch/weights-only/{file}")),
            &out,
            "torch-zip",
        );
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains(why),
            "{file}: {why:?} not in {}",
            r.stderr
        );
        assert!(!out.exists(), "{file}");
    }
}

#[test]
fn safetensors_headers_the_library_reads_the_same_are_read_the_same() {
    let cases = expected("safetensors/read-the-same/expected.json");
    assert!(cases.len() >= 9);
    for (file, case) in cases {
        let path = fixture(&format!("safetensors/read-the-same/{file}"));
        let r = run(socair().arg("scan").arg(&path));
        let report = json(&r.stdout);
        assert_eq!(
            verdict(&report),
            case["status"],
            "{file}: {}",
            text(&report)
        );
        if let Some(keyword) = case["keyword"].as_str() {
            assert!(
                text(&report).contains(keyword),
                "{file}: {keyword:?} not in {}",
                text(&report)
            );
        }
        // The tensors are the library's, byte for byte.
        let t = run(socair().arg("tensors").arg(&path));
        assert_eq!(t.code, 0, "{file}: {}", t.stderr);
        let got = tensor_hashes(&json(&t.stdout));
        let want: BTreeMap<String, String> = case["safetensors_0_8"]["tensors"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(got, want, "{file}");
    }
}
