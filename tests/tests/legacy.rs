//! torch's legacy (non-zip) format and `socair-convert/2`, end to end, against what torch
//! itself gave back for the fixtures (fixtures/torch/legacy-expected.json, written by
//! fixtures/torch/make_legacy_fixtures.py; check_conversions.py compares the converted outputs
//! with torch.load tensor by tensor).

use crate::common::{fixture, json, run, socair, Store};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("torch/legacy-expected.json")).unwrap())
}

fn cases(prefix: &str) -> Vec<(String, Value)> {
    expected()
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|f| (f.to_owned(), v.clone())))
        .collect()
}

fn convert(src: &Path, dst: &Path, from: &str, rules: Option<&str>) -> crate::common::Run {
    let mut c = socair();
    c.arg("convert")
        .arg(src)
        .arg(dst)
        .args(["--from", from, "--to", "safetensors"]);
    if let Some(r) = rules {
        c.args(["--rules", r]);
    }
    run(&mut c)
}

fn by_name(manifest: &Value) -> BTreeMap<String, Value> {
    manifest["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn legacy_checkpoints_written_by_torch_pass_and_fingerprint_like_torch_reads_them() {
    let all = cases("legacy/");
    assert_eq!(all.len(), 7);
    for (file, case) in all {
        let path = fixture(&format!("torch/legacy/{file}"));
        let scan = run(socair().arg("scan").arg(&path));
        assert_eq!(scan.code, 0, "{file}: {}", scan.stderr);
        let report = json(&scan.stdout);
        assert_eq!(report["artifact"]["format"], "torch-legacy", "{file}");
        let pickle = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "Pickle opcode scan")
            .unwrap();
        assert_eq!(pickle["status"], "PASS", "{file}: {pickle:#}");
        assert!(
            pickle["summary"]
                .as_str()
                .unwrap()
                .contains("legacy format"),
            "{file}: {pickle:#}"
        );

        let r = run(socair().arg("tensors").arg(&path));
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["sha256"], case["file_sha256"], "{file}");
        let got = by_name(&m);
        let want = case["tensors"].as_array().unwrap();
        // A training checkpoint's optimizer state is fingerprinted too, outside the state
        // dict (tests/tests/training.rs checks those against torch).
        if file.contains("training") {
            assert!(got.len() > want.len(), "{file}: {m:#}");
        } else {
            assert_eq!(got.len(), want.len(), "{file}: {m:#}");
        }
        for w in want {
            let name = w["name"].as_str().unwrap();
            let g = got
                .get(name)
                .unwrap_or_else(|| panic!("{file}: {name} missing"));
            assert_eq!(g["dtype"], w["dtype"], "{file}: {name}");
            assert_eq!(g["shape"], w["shape"], "{file}: {name}");
            // torch's row-major bytes of the tensor, gathered when it is a permuted view.
            assert_eq!(g["sha256"], w["sha256"], "{file}: {name}");
            if !w["values"].is_null() {
                assert_eq!(g["values"], w["values"], "{file}: {name}");
            }
        }
    }
}

#[test]
fn malformed_legacy_files_are_refused_with_their_reason() {
    let all = cases("legacy-malformed/");
    assert!(all.len() >= 13, "{}", all.len());
    for (file, case) in all {
        let path = fixture(&format!("torch/legacy-malformed/{file}"));
        let r = run(socair().arg("scan").arg(&path));
        // A plain pickle of data is PASS under socair-data/1: exit 0.
        let code = if case["status"] == "PASS" { 0 } else { 1 };
        assert_eq!(r.code, code, "{file}: {}", r.stderr);
        let report = json(&r.stdout);
        let pickle = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "Pickle opcode scan")
            .unwrap()
            .clone();
        assert_eq!(pickle["status"], case["status"], "{file}: {pickle:#}");
        let keyword = case["keyword"].as_str().unwrap();
        assert!(
            pickle.to_string().contains(keyword),
            "{file}: {keyword:?} not in {pickle:#}"
        );
        // A finding in a pickle names the pickle and the byte.
        if keyword == "os.system" {
            assert!(
                pickle.to_string().contains("pickle byte"),
                "{file}: {pickle:#}"
            );
        }
        // Nothing converts.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.safetensors");
        let c = convert(&path, &out, "torch-legacy", None);
        assert_ne!(c.code, 0, "{file}: {}", c.stderr);
        assert!(!out.exists(), "{file}");
    }
}

#[test]
fn the_format_is_named_and_never_guessed() {
    let listing = run(socair().arg("plugins"));
    assert!(
        listing.stdout.contains("torch-zip, torch-legacy"),
        "{}",
        listing.stdout
    );
    assert!(
        listing.stdout.contains("socair-convert/1") && listing.stdout.contains("socair-convert/2"),
        "{}",
        listing.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.safetensors");
    // Each format given as the other is refused, naming the right one.
    for (src, given, right) in [
        ("torch/legacy/state-dict.pt", "torch-zip", "torch-legacy"),
        ("torch/legit/state-dict.pt", "torch-legacy", "torch-zip"),
    ] {
        let r = convert(&fixture(src), &out, given, None);
        assert_eq!(r.code, 1, "{src}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("reads as {right}")),
            "{src}: {}",
            r.stderr
        );
        assert!(!out.exists());
    }
    // A rule set this socair does not implement is a usage error.
    let r = convert(
        &fixture("torch/legit/state-dict.pt"),
        &out,
        "torch-zip",
        Some("socair-convert/4"),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("socair-convert/1, socair-convert/2 and socair-convert/3"),
        "{}",
        r.stderr
    );
}

#[test]
fn convert_v2_carries_legacy_checkpoints_and_v1_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    for (file, case) in cases("legacy/") {
        let src = fixture(&format!("torch/legacy/{file}"));
        // /1 refuses, naming /2.
        let v1 = dir.path().join(format!("{file}.v1.safetensors"));
        let r = convert(&src, &v1, "torch-legacy", Some("socair-convert/1"));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains("socair-convert/2"),
            "{file}: {}",
            r.stderr
        );
        assert!(!v1.exists());
        // /2 converts, byte-stably (/3, the default, writes the same bytes here:
        // tests/tests/convert_v3.rs).
        let out = dir.path().join(format!("{file}.safetensors"));
        let r = convert(&src, &out, "torch-legacy", Some("socair-convert/2"));
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains("under socair-convert/2"),
            "{file}: {}",
            r.stderr
        );
        let again = dir.path().join(format!("{file}.again"));
        assert_eq!(convert(&src, &again, "torch-legacy", Some("2")).code, 0);
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
        // Every tensor is the one torch gives back, under its name or as a named alias.
        let m = json(&run(socair().arg("tensors").arg(&out)).stdout);
        let got = by_name(&m);
        let aliases = case["aliases"].as_object().cloned().unwrap_or_default();
        for w in case["tensors"].as_array().unwrap() {
            let name = w["name"].as_str().unwrap();
            let kept = aliases.get(name).and_then(Value::as_str).unwrap_or(name);
            let g = got
                .get(kept)
                .unwrap_or_else(|| panic!("{file}: {name} lost: {m:#}"));
            assert_eq!(g["sha256"], w["sha256"], "{file}: {name}");
            assert_eq!(g["shape"], w["shape"], "{file}: {name}");
        }
        assert_eq!(
            got.len() + aliases.len(),
            case["tensors"].as_array().unwrap().len(),
            "{file}"
        );
        // `tensors diff` reads the legacy file too: against its conversion, every tensor is
        // identical under its own name, a tied one through the alias the conversion records
        // in `__metadata__`.
        let d = run(socair().args(["tensors", "diff"]).arg(&src).arg(&out));
        let diff = json(&d.stdout);
        // (A training checkpoint's optimizer tensors are unread in the input, outside the
        // state-dict model, so only files without training state match outright.)
        if case["not_carried_keys"].is_null() {
            assert_eq!(d.code, 0, "{file}: {}", d.stdout);
        }
        assert_eq!(
            diff["summary"]["identical"],
            got.len() + aliases.len(),
            "{file}: {diff:#}"
        );
        assert_eq!(diff["summary"]["aliased"], aliases.len(), "{file}");
        if let Some(keys) = case["not_carried_keys"].as_array() {
            for k in keys {
                let k = k.as_str().unwrap();
                assert!(
                    r.stderr.contains(&format!("not carried: {k}")),
                    "{file}: {k} not named: {}",
                    r.stderr
                );
            }
        }
    }
}

#[test]
fn v2_writes_what_v1_writes_wherever_v1_converts_and_gathers_what_v1_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let expected = json(&std::fs::read_to_string(fixture("torch/expected.json")).unwrap());
    for (key, case) in expected.as_object().unwrap() {
        let Some(file) = key.strip_prefix("legit/") else {
            continue;
        };
        let src = fixture(&format!("torch/{key}"));
        let v1 = dir.path().join(format!("{file}.v1"));
        let v2 = dir.path().join(format!("{file}.v2"));
        let r1 = convert(&src, &v1, "torch-zip", Some("socair-convert/1"));
        let r2 = convert(&src, &v2, "torch-zip", Some("socair-convert/2"));
        if r1.code == 0 {
            assert_eq!(r2.code, 0, "{file}: {}", r2.stderr);
            assert_eq!(
                std::fs::read(&v1).unwrap(),
                std::fs::read(&v2).unwrap(),
                "{file}: /2 must write /1's bytes"
            );
            continue;
        }
        let noncontiguous = case["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["contiguous"] == false);
        if !noncontiguous {
            // Refused by both for another reason (C128).
            assert_eq!(r2.code, 1, "{file}");
            continue;
        }
        assert!(r1.stderr.contains("not contiguous"), "{}", r1.stderr);
        assert_eq!(r2.code, 0, "{file}: {}", r2.stderr);
        // The gathered tensor equals the input's fingerprint (socair tensors gathers too) and
        // an independent gather of the zip record (tests/tests/torch.rs checks that one).
        let out = by_name(&json(&run(socair().arg("tensors").arg(&v2)).stdout));
        let input = by_name(&json(&run(socair().arg("tensors").arg(&src)).stdout));
        assert_eq!(out.len(), input.len());
        for (name, t) in &input {
            assert_eq!(out[name]["sha256"], t["sha256"], "{file}: {name}");
        }
    }
}

/// Redoes a gathered tensor as the derivation record's procedure says, with the zip crate and
/// index arithmetic only.
fn reviewer_gathers(input: &Path, t: &Value) -> String {
    use std::io::Read;
    let g = &t["gathered"];
    let mut archive = zip::ZipArchive::new(std::fs::File::open(input).unwrap()).unwrap();
    let mut record = Vec::new();
    archive
        .by_name(t["source"]["record"].as_str().unwrap())
        .unwrap()
        .read_to_end(&mut record)
        .unwrap();
    let elem = g["element_size"].as_u64().unwrap() as usize;
    let offset = t["source"]["offset_bytes"].as_u64().unwrap() as usize;
    let dims: Vec<usize> = g["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let strides: Vec<usize> = g["strides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let mut h = Sha256::new();
    for flat in 0..dims.iter().product::<usize>() {
        let (mut rest, mut at) = (flat, 0usize);
        for (d, s) in dims.iter().zip(&strides).rev() {
            at += (rest % d) * s;
            rest /= d;
        }
        let start = offset + at * elem;
        h.update(&record[start..start + elem]);
    }
    hex(&h.finalize())
}

#[test]
fn the_store_pin_decides_the_rules_and_the_record_names_them() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let deriver = s.key("deriver.key", "derive");
    let nc = s.dir.path().join("nc.pt");
    std::fs::copy(fixture("torch/legit/noncontiguous.pt"), &nc).unwrap();
    let legacy = s.dir.path().join("old.pt");
    std::fs::copy(fixture("torch/legacy/permuted.pt"), &legacy).unwrap();
    let att_nc = s.attest(&nc, &scanner);
    let att_legacy = s.attest(&legacy, &scanner);
    let airlock = |file: &Path, att: &str, rules: Option<&str>| {
        let mut args = vec![
            "airlock".to_owned(),
            "convert".into(),
            file.display().to_string(),
            "--attestation".into(),
            att.into(),
            "--key".into(),
            deriver.clone(),
        ];
        if let Some(r) = rules {
            args.extend(["--rules".into(), r.into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        s.run(&args)
    };

    // Unpinned: the newest rules (/3, which gathers as /2 does). The record names them and says
    // how each tensor was gathered.
    let r = airlock(&nc, &att_nc, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("under socair-convert/3"), "{}", r.stderr);
    let v = s.verify_derivation(r.stdout.trim(), &nc, "nc.safetensors");
    assert_eq!(v.code, 0, "{}", v.stderr);
    let p = &json(&v.stdout)["predicate"];
    assert_eq!(p["rules"]["socair-convert"], "3");
    let gathered: Vec<&Value> = p["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["gathered"].is_null())
        .collect();
    assert_eq!(gathered.len(), 2, "{p:#}");
    for t in gathered {
        assert!(t["gathered"]["procedure"]
            .as_str()
            .unwrap()
            .contains("row-major"));
        assert_eq!(
            reviewer_gathers(&nc, t),
            t["sha256"].as_str().unwrap(),
            "{t:#}"
        );
    }
    // A legacy checkpoint: /2 carries it; its record says where the storage lies in the file.
    let r = airlock(&legacy, &att_legacy, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = s.verify_derivation(r.stdout.trim(), &legacy, "old.safetensors");
    assert_eq!(v.code, 0, "{}", v.stderr);
    let p = &json(&v.stdout)["predicate"];
    assert!(p["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["source"]["file_offset_bytes"].is_u64()));

    // Pinned to =1: the default becomes /1, which refuses both; asking for /2 is refused too.
    let policy_path = s.path().join("policy.json");
    let mut policy = json(&std::fs::read_to_string(&policy_path).unwrap());
    policy["pins"]["rules"]["socair-convert"] = Value::from("=1");
    std::fs::write(&policy_path, serde_json::to_vec_pretty(&policy).unwrap()).unwrap();
    let r = airlock(&nc, &att_nc, None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("not contiguous"), "{}", r.stderr);
    let r = airlock(&legacy, &att_legacy, None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("socair-convert/2 or later"),
        "{}",
        r.stderr
    );
    let r = airlock(&nc, &att_nc, Some("socair-convert/2"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("pins socair-convert to =1"),
        "{}",
        r.stderr
    );
    // Under the pin, /1 still converts what it always did, and its record says 1.
    let plain = s.dir.path().join("plain.pt");
    std::fs::copy(fixture("torch/legit/state-dict.pt"), &plain).unwrap();
    let r = airlock(&plain, &s.attest(&plain, &scanner), None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("under socair-convert/1"), "{}", r.stderr);
    // A pin no version satisfies refuses every conversion, saying so.
    policy["pins"]["rules"]["socair-convert"] = Value::from(">=4");
    std::fs::write(&policy_path, serde_json::to_vec_pretty(&policy).unwrap()).unwrap();
    let r = airlock(&plain, &s.attest(&plain, &scanner), None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no built-in version"), "{}", r.stderr);
}

#[test]
fn a_torchscript_archive_is_judged_by_its_code_and_never_converted() {
    // socair-wo/3 reads a TorchScript archive's code as torch.jit.load compiles it (the
    // torchserve tests and fixtures/torchscript hold the hostile ones); /1 and /2, as pinned,
    // refuse the archive whole.
    let case = &expected()["torchscript/scripted-linear.pt"];
    let path = fixture("torch/torchscript/scripted-linear.pt");
    let r = run(socair().arg("scan").arg(&path));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = json(&r.stdout);
    assert_eq!(report["artifact"]["sha256"], case["file_sha256"]);
    let row = |check: &str| {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == check)
            .unwrap_or_else(|| panic!("no {check} row: {report:#}"))
            .clone()
    };
    assert_eq!(row("TorchScript code")["status"], "PASS");
    assert_eq!(row("Pickle opcode scan")["status"], case["status"]);
    // Its tensors sit inside TorchScript objects: no conversion carries them, under any rules.
    let dir = tempfile::tempdir().unwrap();
    for rules in [Some("socair-convert/1"), Some("socair-convert/2"), None] {
        let out = dir.path().join("ts.safetensors");
        let c = convert(&path, &out, "torch-zip", rules);
        assert_eq!(c.code, 1, "{rules:?}: {}", c.stderr);
        assert!(c.stderr.contains("refused"), "{rules:?}: {}", c.stderr);
        assert!(!out.exists());
    }
}
