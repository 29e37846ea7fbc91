//! Hostile pickles end to end (fixtures/torch/make_hostile.py, no torch needed):
//! pickles of every protocol, Python 2 and dotted names, names moved through the memo, frames
//! that disagree with their opcodes, pickles appended after STOP, a flood, and torch's tensor
//! metadata judged as torch applies it; each scanned with the status and a finding
//! hostile-expected.json gives, and the tensors of the metadata and float4 cases read as
//! torch and safetensors would have them.

use crate::common::{fixture, json, run, socair};
use serde_json::Value;

fn expected_in(path: &str) -> Vec<(String, Value)> {
    let all = json(&std::fs::read_to_string(fixture(path)).unwrap());
    all.as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn expected() -> Vec<(String, Value)> {
    expected_in("torch/hostile-expected.json")
}

#[test]
fn every_hostile_pickle_gets_its_status_and_finding() {
    let cases = expected();
    assert!(cases.len() >= 20);
    check_cases("torch/hostile", &cases);
}

/// From fixtures/torch/callables/make_callables.py: a global of each class the
/// analysis of scripts/dangerous-callables finds (file writers and readers, torch.from_file,
/// ML libraries' save functions, an evaluator, string-to-object resolvers, a nested
/// unpickler, a network client, a native loader through an alias) is FAIL naming it, and a
/// legacy checkpoint whose `'module'` persistent id makes torch.load write a file is FAIL,
/// while torch.save's own legacy whole-module file stays a LEAD.
#[test]
fn every_callable_the_analysis_finds_is_fail_naming_the_global() {
    let cases = expected_in("torch/callables/expected.json");
    assert!(cases.len() >= 12);
    check_cases("torch/callables", &cases);
    // A reviewer can never clear one.
    let dir = tempfile::tempdir().unwrap();
    let reviewed = dir.path().join("reviewed.txt");
    let globals: Vec<&str> = cases
        .iter()
        .filter_map(|(_, c)| c.get("global").and_then(Value::as_str))
        .collect();
    assert!(globals.len() >= 10);
    std::fs::write(&reviewed, globals.join("\n")).unwrap();
    for (file, case) in &cases {
        if case.get("global").is_none() {
            continue;
        }
        let r = run(socair()
            .arg("scan")
            .arg("--reviewed-classes")
            .arg(&reviewed)
            .arg(fixture(&format!("torch/callables/{file}"))));
        let report = json(&r.stdout);
        let row = pickle_row(&report, file);
        assert_eq!(
            row["status"], "FAIL",
            "{file}: reviewed, still FAIL: {row:#}"
        );
        assert_eq!(r.code, 1, "{file}");
    }
}

/// The report's "Pickle opcode scan" row.
fn pickle_row<'a>(report: &'a Value, file: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "Pickle opcode scan")
        .unwrap_or_else(|| panic!("{file}: no pickle row in {report:#}"))
}

fn check_cases(dir: &str, cases: &[(String, Value)]) {
    for (file, case) in cases {
        let r = run(socair().arg("scan").arg(fixture(&format!("{dir}/{file}"))));
        let report = json(&r.stdout);
        let row = pickle_row(&report, file);
        assert_eq!(row["status"], case["status"], "{file}: {row:#}");
        let keyword = case["keyword"].as_str().unwrap();
        if !keyword.is_empty() {
            let found = row["findings"].as_array().unwrap().iter().any(|f| {
                f["reason"]
                    .as_str()
                    .unwrap()
                    .to_lowercase()
                    .contains(keyword)
            });
            assert!(found, "{file}: no finding with {keyword:?}: {row:#}");
        }
        let code = if case["status"] == "PASS" { 0 } else { 1 };
        assert_eq!(r.code, code, "{file}: {}", r.stderr);
    }
}

#[test]
fn tensors_are_read_as_torch_loads_them() {
    for (file, case) in expected() {
        let wants_unread = case.get("unread").and_then(Value::as_str);
        let wants_tensor = case.get("tensor");
        if wants_unread.is_none() && wants_tensor.is_none() {
            continue;
        }
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("torch/hostile/{file}"))));
        let m = json(&r.stdout);
        if let Some(name) = wants_unread {
            // torch loads it negated: its bytes are not its values, so it is neither
            // fingerprinted nor converted.
            let unread = m["unread"].as_array().unwrap();
            assert!(
                unread
                    .iter()
                    .any(|u| u["tensor"] == name && u["reason"].as_str().unwrap().contains("neg")),
                "{file}: {m:#}"
            );
            assert!(
                m["tensors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|t| t["name"] != name),
                "{file}: {m:#}"
            );
        }
        if let Some(want) = wants_tensor {
            let t = m["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == want["name"])
                .unwrap_or_else(|| panic!("{file}: {m:#}"));
            assert_eq!(t["dtype"], want["dtype"], "{file}");
            assert_eq!(t["shape"], want["shape"], "{file}");
        }
    }
}

// ---- Pickle and joblib verdicts ----

/// Flax state dicts of 2, 3 and 4 top-level keys begin with msgpack fixmap `0x82`..`0x84`,
/// pickle's EXT1/EXT2/EXT4, an opcode `pickle.load` raises on first (copyreg's registry is
/// empty; fixtures/pickle-data/make_flax.py checks both unpicklers raise). msgpack-python wrote
/// them as flax.serialization.to_bytes does: the Flax reader alone reads them, and they pass.
/// (`pickle::tests::a_large_flax_state_dict_ran_as_a_pickle_cut_short_…` shows the pickle
/// machine took the large one for a pickle.)
#[test]
fn a_flax_state_dict_starting_with_an_ext_opcode_is_the_flax_readers_alone() {
    // `-large`: longer than the 4096 bytes a claim sees, which ran as a pickle cut short.
    for (keys, name) in [
        (2, "2-keys"),
        (3, "3-keys"),
        (4, "4-keys"),
        (2, "2-keys-large"),
    ] {
        let file = fixture(&format!("pickle-data/flax-{name}.msgpack"));
        assert_eq!(std::fs::read(&file).unwrap()[0], 0x80 + keys);
        let r = run(socair().args(["scan", "--json"]).arg(&file));
        assert_eq!(r.code, 0, "{keys}: {}", r.stderr);
        let report = json(&r.stdout);
        assert_eq!(report["artifact"]["format"], "flax-msgpack", "{keys}");
        assert_eq!(
            crate::common::report_plugins(&report),
            vec!["native"],
            "{keys}: {report:#}"
        );
        let structure = crate::common::report_row(&report, "Format and structure");
        assert_eq!(structure["status"], "PASS", "{keys}: {structure:#}");
    }
}

/// From fixtures/torch/code-capable/make_code_capable.py: each code-capable callable
/// that was only a LEAD (the import system's bytecode writer under its frozen name, a
/// storage's inherited C `from_file`, `onnx.save_model`, `h5py.File`, `yaml.unsafe_load` and
/// an unsafe yaml Loader, `click.edit`, `xml.etree.ElementTree.parse`, py7zr's archive
/// writer, and the same class elsewhere: `xml.sax.parse`) is FAIL, one finding naming both
/// the global and the sink it reaches; the real `pickle.loads` of each (but torch's) created
/// or read a file, as expected.json records. The safe counterparts (`yaml.safe_load`,
/// `ElementTree.fromstring`) stay LEADs: loading them created nothing, and no finding says
/// they reach a sink.
#[test]
fn every_code_capable_callable_is_fail_naming_its_sink() {
    let cases = expected_in("torch/code-capable/expected.json");
    let fails = cases.iter().filter(|(_, c)| c["status"] == "FAIL").count();
    assert!(fails >= 10, "{fails} FAIL cases");
    assert!(cases.len() > fails, "no control");
    for (file, case) in &cases {
        let fail = case["status"] == "FAIL";
        // The generator's proof of what the real loader does (torch's are not run).
        if let Some(real) = case["real_loader"].as_object() {
            let created = real["files_created"].as_array().unwrap();
            // A reader leaves nothing behind: the generator records the file it read.
            let read = real.get("read").and_then(Value::as_array);
            assert_eq!(
                !created.is_empty() || read.is_some_and(|r| !r.is_empty()),
                fail,
                "{file}: {real:?}"
            );
        }
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("torch/code-capable/{file}"))));
        let report = json(&r.stdout);
        let row = pickle_row(&report, file);
        assert_eq!(row["status"], case["status"], "{file}: {row:#}");
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let reasons: Vec<String> = row["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["reason"].as_str().map(str::to_lowercase))
            .collect();
        let keywords: Vec<&str> = case["keywords"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        assert!(
            keywords.len() >= if fail { 2 } else { 1 },
            "{file}: the global (and the sink)"
        );
        let named = reasons
            .iter()
            .any(|why| keywords.iter().all(|k| why.contains(k)));
        assert!(
            named,
            "{file}: no finding with all of {keywords:?}: {reasons:#?}"
        );
        if !fail {
            assert!(
                reasons.iter().all(|why| !why.contains("reaches")),
                "{file}: {reasons:#?}"
            );
        }
    }
}
