//! The out-of-tree plugin template, `examples/plugin-template/` (llama2.c checkpoints), built
//! the way a third party builds it: its own Cargo project outside this workspace, its own
//! committed Cargo.lock, against `socair-plugin-api` alone. The built library is put in a
//! directory of its own and given to the host with `--plugin-dir`; what the host then reports
//! is checked against what Python says about the same files (fixtures/llama2c/expected.json,
//! written by fixtures/llama2c/make_fixtures.py from the arrays it exported, following
//! llama2.c's export.py).

use crate::common::{
    fixture, fixture_cargo, fixture_target_dir, json, repo, run, scan_many, socair,
    target_profile_dir,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn template() -> PathBuf {
    repo().join("examples/plugin-template")
}

/// Runs cargo on the template, offline and with its lock file as committed, in the target
/// directory every plugin project of the tests shares.
fn cargo(subcommand: &str) {
    let out = fixture_cargo(subcommand, &template().join("Cargo.toml"))
        .arg("--locked")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {subcommand} on the template failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn lib_name() -> String {
    format!(
        "{}socair_plugin_llama2c{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Builds the template once and puts its library, alone, in a plugin directory.
fn plugin_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        cargo("build");
        let dir = target_profile_dir()
            .join("plugin-fixtures")
            .join("template-plugins");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            fixture_target_dir().join("debug").join(lib_name()),
            dir.join(lib_name()),
        )
        .unwrap();
        dir
    })
}

/// `socair --plugin-dir <the template's directory>`: the template is searched first. No
/// `--reader`: no first-party plugin claims a llama2.c checkpoint by its content.
fn with_template() -> Command {
    let mut cmd = socair();
    cmd.arg("--plugin-dir").arg(plugin_dir());
    cmd
}

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("llama2c/expected.json")).unwrap())
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key} in {v}"))
}

/// The plugins a report says it used.
fn used(report: &Value) -> Vec<&str> {
    report["tool"]["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| str_of(p, "name"))
        .collect()
}

#[test]
fn the_template_unit_tests_pass() {
    cargo("test");
}

#[test]
fn the_host_lists_the_template_with_its_version_and_plugin_api() {
    let r = run(with_template().args(["plugins", "--json"]));
    assert_eq!(r.code, 0, "nothing refused: {}{}", r.stdout, r.stderr);
    let listing = json(&r.stdout);
    let plugins = listing["plugins"].as_array().unwrap();
    let l2c = plugins
        .iter()
        .find(|p| p["name"] == "llama2c")
        .unwrap_or_else(|| panic!("llama2c not loaded: {listing:#}"));
    assert_eq!(l2c["version"], "0.1.0");
    assert_eq!(l2c["plugin_api"], listing["plugin_api"]);
    assert_eq!(l2c["plugin_api"], "0.5.1");
    assert_eq!(l2c["reads"], serde_json::json!(["llama2c"]));
    assert_eq!(l2c["writes"], serde_json::json!([]));
    assert_eq!(
        Path::new(str_of(l2c, "file")),
        plugin_dir().join(lib_name())
    );
    // Searched first, so it is listed first; the in-tree plugins still load after it.
    assert_eq!(plugins[0]["name"], "llama2c");
    let in_tree = json(&run(socair().args(["plugins", "--json"])).stdout)["plugins"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(plugins.len(), in_tree + 1, "{listing:#}");

    let r = run(with_template().arg("plugins"));
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("  llama2c 0.1.0 (plugin-api 0.5.1)\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("    reads:     llama2c\n"),
        "{}",
        r.stdout
    );
}

/// Every tensor of every valid checkpoint, as the host fingerprints it, against the arrays the
/// generator exported: name, shape, size and SHA-256 of the float32 little-endian bytes. For F32
/// stored little-endian, float32-le-bits/v1 is the identity (host/reports/src/fingerprint/hashing.rs),
/// so the values hash is that same SHA-256.
#[test]
fn every_valid_checkpoint_matches_what_was_exported() {
    let e = expected();
    let cases = e["valid"].as_object().unwrap();
    assert_eq!(cases.len(), 4);
    for (file, want) in cases {
        let path = fixture(&format!("llama2c/valid/{file}"));
        let r = run(with_template().arg("tensors").arg(&path));
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["format"], "llama2c", "{file}");
        assert_eq!(m["artifact"]["sha256"], want["sha256"], "{file}");
        assert_eq!(m["unread"], serde_json::json!([]), "{file}");
        let mut rows: Vec<Value> = want["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                serde_json::json!({
                    "file": file, "name": t["name"], "dtype": "F32", "shape": t["shape"],
                    "bytes": t["bytes"], "sha256": t["sha256"], "values": t["sha256"],
                })
            })
            .collect();
        // The host lists tensors sorted by name; the generator lists them in file order.
        rows.sort_by(|a, b| str_of(a, "name").cmp(str_of(b, "name")));
        assert_eq!(m["tensors"], Value::Array(rows), "{file}");
        let shared = want["shared_classifier"] == true;
        let names: Vec<&str> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| str_of(t, "name"))
            .collect();
        assert_eq!(!names.contains(&"output.weight"), shared, "{file}");
        assert_eq!(names.contains(&"freqs_cos"), want["version"] == 0, "{file}");

        let r = run(with_template().arg("scan").arg(&path));
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        let report = json(&r.stdout);
        assert_eq!(report["artifact"]["format"], "llama2c", "{file}");
        assert_eq!(used(&report), ["llama2c"], "{file}");
        let rows = report["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{file}: {rows:?}");
        assert_eq!(rows[0]["check"], "Format and structure");
        assert_eq!(rows[0]["status"], "PASS", "{file}: {:#}", rows[0]);
        assert_eq!(rows[0]["findings"], serde_json::json!([]), "{file}");
        let summary = str_of(&rows[0], "summary");
        let version = want["version"].as_i64().unwrap();
        let head = format!(
            "llama2.c version {version} checkpoint ({}): dim 8, hidden_dim 16, n_layers 2, \
             n_heads 2, n_kv_heads 1, vocab_size 32, seq_len 4; ",
            if version == 0 {
                "legacy_export"
            } else {
                "version1_export"
            }
        );
        assert!(summary.starts_with(&head), "{file}: {summary}");
        assert_eq!(
            summary.contains("classifier shared with tok_embeddings.weight"),
            shared,
            "{file}: {summary}"
        );
    }
}

/// The hostile files: version 1 ones FAIL (version 2 is a LEAD) with the place; version 0 ones
/// are not claimed at all. Exit codes: 1 for a FAIL or LEAD, 2 for what nobody can read.
#[test]
fn malformed_checkpoints_fail_with_their_place_or_are_not_claimed() {
    let e = expected();
    let cases = e["malformed"].as_object().unwrap();
    assert_eq!(cases.len(), 10);
    let tmp = tempfile::tempdir().unwrap();
    for (file, case) in cases {
        let path = fixture(&format!("llama2c/malformed/{file}"));
        let r = run(with_template().arg("scan").arg(&path));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let report = json(&r.stdout);
        if case["claimed"] == false {
            // Not exactly what a version 0 header says: the template leaves it, and the host
            // falls back on the extension: torch's reader says it is no torch checkpoint.
            assert!(!used(&report).contains(&"llama2c"), "{file}: {report:#}");
            assert_eq!(report["artifact"]["format"], "torch-zip", "{file}");
            assert!(r.stderr.contains("not a torch checkpoint"), "{}", r.stderr);
            // Without the extension no reader opens it: a scan says nothing in it was checked
            // (a LEAD), and there are no tensors to list (2).
            let bare = tmp.path().join(file.trim_end_matches(".bin"));
            std::fs::copy(&path, &bare).unwrap();
            let r = run(with_template().arg("scan").arg(&bare));
            assert_eq!(r.code, 1, "{file}: {}", r.stderr);
            assert_eq!(json(&r.stdout)["artifact"]["format"], "unknown", "{file}");
            let r = run(with_template().arg("tensors").arg(&bare));
            assert_eq!(r.code, 2, "{file}: {}", r.stderr);
            assert!(
                r.stderr.contains("no loaded plugin recognises its format"),
                "{}",
                r.stderr
            );
            continue;
        }
        let (place, why) = (str_of(case, "place"), str_of(case, "why"));
        assert_eq!(report["artifact"]["format"], "llama2c", "{file}");
        let row = &report["rows"][0];
        assert_eq!(row["status"], case["status"], "{file}: {row:#}");
        let findings = row["findings"].as_array().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| str_of(f, "place") == place && str_of(f, "reason").contains(why)),
            "{file}: no finding at {place:?} saying {why:?}: {findings:#?}"
        );
        assert!(
            r.stderr.contains(&format!(
                "{} Format and structure: {place}: ",
                str_of(case, "status")
            )),
            "{}",
            r.stderr
        );

        let r = run(with_template().arg("tensors").arg(&path));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let m = json(&r.stdout);
        assert_eq!(m["tensors"], serde_json::json!([]), "{file}");
        let unread = m["unread"].as_array().unwrap();
        assert_eq!(unread.len(), 1, "{file}: {unread:?}");
        assert!(
            str_of(&unread[0], "reason").starts_with(&format!("{place}: ")),
            "{file}: {unread:?}"
        );
    }
    // A path that does not exist, and a usage error: 2.
    let r = run(with_template()
        .arg("scan")
        .arg(fixture("llama2c/valid/nonesuch.bin")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = run(with_template().args(["scan", "--no-such-flag"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// The host gives a file to the first reader whose `detect` claims it, and the template is
/// searched first here: it must claim no committed fixture of any other format.
#[test]
fn the_template_claims_no_other_fixture() {
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else if !["py", "md", "json"]
                .iter()
                .any(|ext| path.extension().is_some_and(|e| e == *ext))
            {
                out.push(path);
            }
        }
    }
    let mut all = Vec::new();
    files(&fixture(""), &mut all);
    all.retain(|p| !p.starts_with(fixture("llama2c")));
    assert!(all.len() >= 390, "{}", all.len());
    let (scanned, stderr) = scan_many(with_template, &all);
    assert!(!stderr.contains("llama2c"), "{stderr}");
    for (path, entry) in &scanned {
        let report = &entry["report"];
        if report.is_null() {
            assert!(
                !entry.to_string().contains("llama2c"),
                "{}: {entry}",
                path.display()
            );
            continue;
        }
        assert!(
            report["artifact"]["format"] != "llama2c" && !used(report).contains(&"llama2c"),
            "{} claimed: {report:#}",
            path.display()
        );
    }
}

/// A model directory as llama2.c users keep one (the checkpoint beside other files) is read
/// file by file like any other.
#[test]
fn a_checkpoint_in_a_model_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("llama2c/valid/v1-unshared.bin"),
        tmp.path().join("model.bin"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("config.json"), b"{}").unwrap();
    let r = run(with_template().arg("tensors").arg(tmp.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    let want = &expected()["valid"]["v1-unshared.bin"]["tensors"];
    let tensors = m["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), want.as_array().unwrap().len());
    for got in tensors {
        assert_eq!(got["file"], "model.bin");
        let same = want
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == got["name"])
            .unwrap();
        for key in ["shape", "bytes", "sha256"] {
            assert_eq!(got[key], same[key], "{key}");
        }
    }
}
