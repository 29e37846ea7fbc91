//! The out-of-tree plugin template, `examples/plugin-template/` (NumPy `.npy` and `.npz`),
//! built the way a third party builds it: its own Cargo project outside this workspace, its
//! own committed Cargo.lock, against `socair-plugin-api` alone. The built library is put in a
//! directory of its own and given to the host with `--plugin-dir`; what the host then reports
//! is checked against what NumPy says about the same files (fixtures/npy/expected.json,
//! written by fixtures/npy/make_fixtures.py).

use crate::common::{
    fixture, fixture_cargo, fixture_target_dir, json, repo, run, socair, target_profile_dir,
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
        "{}socair_plugin_npy{}",
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

/// `socair --plugin-dir <the template's directory> --reader npy`: the template is searched
/// first, and reads the files that it and the first-party `numpy` plugin both claim (socair
/// refuses to choose between two plugins by itself).
fn with_template() -> Command {
    let mut cmd = socair();
    cmd.arg("--plugin-dir")
        .arg(plugin_dir())
        .args(["--reader", "npy"]);
    cmd
}

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("npy/expected.json")).unwrap())
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key} in {v}"))
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
    let npy = plugins
        .iter()
        .find(|p| p["name"] == "npy")
        .unwrap_or_else(|| panic!("npy not loaded: {listing:#}"));
    assert_eq!(npy["version"], "0.1.0");
    assert_eq!(npy["plugin_api"], listing["plugin_api"]);
    assert_eq!(npy["plugin_api"], "0.3.0");
    assert_eq!(npy["reads"], serde_json::json!(["npy", "npz"]));
    assert_eq!(npy["writes"], serde_json::json!([]));
    assert_eq!(
        Path::new(str_of(npy, "file")),
        plugin_dir().join(lib_name())
    );
    // Searched first, so it is listed first; the in-tree plugins still load after it.
    assert_eq!(plugins[0]["name"], "npy");
    let in_tree = json(&run(socair().args(["plugins", "--json"])).stdout)["plugins"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(plugins.len(), in_tree + 1, "{listing:#}");

    let r = run(with_template().arg("plugins"));
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("  npy 0.1.0 (plugin-api 0.3.0)\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("    reads:     npy, npz\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn every_valid_file_matches_numpy() {
    let e = expected();
    let cases = e["valid"].as_object().unwrap();
    assert!(cases.len() >= 23, "{}", cases.len());
    for (file, want) in cases {
        let path = fixture(&format!("npy/valid/{file}"));
        let r = run(with_template().arg("tensors").arg(&path));
        let unread_want = want["unread"].as_array().unwrap();
        assert_eq!(
            r.code,
            if unread_want.is_empty() { 0 } else { 1 },
            "{file}: {}",
            r.stderr
        );
        let m = json(&r.stdout);
        let format = if file.ends_with(".npz") { "npz" } else { "npy" };
        assert_eq!(m["artifact"]["format"], format, "{file}");
        assert_eq!(m["artifact"]["sha256"], want["sha256"], "{file}");
        // Every row as NumPy computed it: dtype.str, shape, nbytes, sha256 of the bytes in the
        // file's byte order, and for float16/float32 the float32-le-bits/v1 values hash.
        assert_eq!(m["tensors"], want["tensors"], "{file}");
        let unread = m["unread"].as_array().unwrap();
        assert_eq!(unread.len(), unread_want.len(), "{file}: {unread:?}");
        for (got, want) in unread.iter().zip(unread_want) {
            assert_eq!(got["file"], file.as_str());
            assert_eq!(got["tensor"], want["tensor"], "{file}");
            let reason = str_of(got, "reason");
            assert!(
                reason.contains(str_of(want, "reason")),
                "{file}: {reason:?} lacks {:?}",
                want["reason"]
            );
        }

        let r = run(with_template().arg("scan").arg(&path));
        let status = str_of(want, "status");
        assert_eq!(
            r.code,
            if status == "PASS" { 0 } else { 1 },
            "{file}: {}",
            r.stderr
        );
        let report = json(&r.stdout);
        assert_eq!(report["artifact"]["format"], format, "{file}");
        let rows = report["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{file}: {rows:?}");
        assert_eq!(rows[0]["check"], "Format and structure");
        assert_eq!(rows[0]["status"], status, "{file}: {:#}", rows[0]);
        assert_eq!(
            rows[0]["findings"].as_array().unwrap().is_empty(),
            status == "PASS",
            "{file}"
        );
    }
}

#[test]
fn an_object_dtype_array_is_a_fail_with_its_place() {
    for (file, summary) in [
        ("object.npy", ".npy file holds an object-dtype array"),
        (
            "savez-object.npz",
            ".npz archive holds an object-dtype array",
        ),
    ] {
        let r = run(with_template()
            .arg("scan")
            .arg(fixture(&format!("npy/valid/{file}"))));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let row = &json(&r.stdout)["rows"][0];
        assert_eq!(row["status"], "FAIL");
        assert!(str_of(row, "summary").starts_with(summary), "{row:#}");
        let findings = row["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{row:#}");
        let want = &expected()["valid"][file];
        assert!(
            str_of(&findings[0], "place").starts_with(str_of(want, "place")),
            "{file}: {:#}",
            findings[0]
        );
        assert!(str_of(&findings[0], "reason")
            .contains("the data is a pickle, which np.load(allow_pickle=True) runs"));
        assert!(
            r.stderr.contains("FAIL Format and structure"),
            "{}",
            r.stderr
        );
    }
    // The stored weight beside the pickle is still fingerprinted.
    let r = run(with_template()
        .arg("tensors")
        .arg(fixture("npy/valid/savez-object.npz")));
    let m = json(&r.stdout);
    assert_eq!(m["tensors"].as_array().unwrap().len(), 1);
    assert_eq!(m["tensors"][0]["name"], "weight");
}

#[test]
fn malformed_files_are_refused_each_with_its_reason() {
    let e = expected();
    let cases = e["malformed"].as_object().unwrap();
    assert!(cases.len() >= 23, "{}", cases.len());
    for (file, case) in cases {
        let path = fixture(&format!("npy/malformed/{file}"));
        let why = str_of(case, "reason");
        let r = run(with_template().arg("tensors").arg(&path));
        if case["claimed"] == false {
            // Not NumPy's magic: no reader claims it, and the host says so.
            assert_eq!(r.code, 2, "{file}: {}", r.stderr);
            assert!(r.stderr.contains(why), "{file}: {}", r.stderr);
            continue;
        }
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let m = json(&r.stdout);
        let unread = m["unread"].as_array().unwrap();
        assert!(
            unread.iter().any(|u| str_of(u, "reason").contains(why)),
            "{file}: {unread:?} lacks {why:?}"
        );
        if file != "ambiguous-names.npz" {
            assert_eq!(m["tensors"], Value::Array(vec![]), "{file}");
        }

        let r = run(with_template().arg("scan").arg(&path));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let row = &json(&r.stdout)["rows"][0];
        assert_eq!(row["status"], "FAIL", "{file}: {row:#}");
        let findings = row["findings"].as_array().unwrap();
        assert!(
            findings.iter().any(|f| str_of(f, "reason").contains(why)
                || format!("{}: {}", str_of(f, "place"), str_of(f, "reason")).contains(why)),
            "{file}: {findings:?}"
        );
        if let Some(place) = case.get("place").and_then(Value::as_str) {
            assert!(
                findings
                    .iter()
                    .any(|f| str_of(f, "place").starts_with(place)),
                "{file}: no finding at {place:?}: {findings:?}"
            );
        }
    }
}

#[test]
fn header_only_skips_the_crc_and_says_so() {
    let path = fixture("npy/malformed/crc-mismatch.npz");
    let r = run(with_template().arg("scan").arg("--header-only").arg(&path));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let row = &json(&r.stdout)["rows"][0];
    assert_eq!(row["status"], "PASS");
    assert!(
        str_of(row, "summary").contains("CRC-32 not checked (header only)"),
        "{row:#}"
    );
    let r = run(with_template()
        .arg("scan")
        .arg(fixture("npy/valid/savez.npz")));
    let row = &json(&r.stdout)["rows"][0];
    assert!(
        str_of(row, "summary").contains("CRC-32 of every stored member verified"),
        "{row:#}"
    );
}

/// The host gives a file to the first reader whose `detect` claims it, and the template is
/// searched first here: it must not claim torch's zip checkpoints (nor any other fixture).
#[test]
fn torch_checkpoints_are_left_to_the_torch_reader() {
    let mut seen = 0;
    for dir in ["torch/legit", "torch/malicious"] {
        for entry in std::fs::read_dir(fixture(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                continue;
            }
            seen += 1;
            let r = run(with_template().arg("scan").arg(&path));
            assert!(!r.stderr.contains("plugin `npy`"), "{}", r.stderr);
            if r.stdout.is_empty() {
                continue;
            }
            let report = json(&r.stdout);
            let format = str_of(&report["artifact"], "format");
            assert!(
                format != "npy" && format != "npz",
                "{} claimed as {format}",
                path.display()
            );
            let used = report["tool"]["plugins"].as_array().unwrap();
            assert!(used.iter().all(|p| p["name"] != "npy"), "{report:#}");
            if dir == "torch/legit" {
                assert_eq!(r.code, 0, "{}: {}", path.display(), r.stderr);
                assert_eq!(format, "torch-zip");
            }
        }
    }
    assert!(seen >= 60, "{seen}");
    for (file, format) in [
        ("safetensors/all-dtypes.safetensors", "safetensors"),
        ("gguf/valid/all-types.gguf", "gguf"),
    ] {
        let r = run(with_template().arg("tensors").arg(fixture(file)));
        assert_eq!(json(&r.stdout)["artifact"]["format"], format, "{file}");
    }
}

/// A model directory holding an archive is read file by file like any other.
#[test]
fn an_archive_in_a_model_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("npy/valid/savez.npz"),
        tmp.path().join("weights.npz"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("config.json"), b"{}").unwrap();
    let r = run(with_template().arg("tensors").arg(tmp.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(&r.stdout);
    let want = &expected()["valid"]["savez.npz"]["tensors"];
    let tensors = m["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), want.as_array().unwrap().len());
    for (got, want) in tensors.iter().zip(want.as_array().unwrap()) {
        assert_eq!(got["file"], "weights.npz");
        for key in ["name", "dtype", "shape", "bytes", "sha256", "values"] {
            assert_eq!(got.get(key), want.get(key), "{key}");
        }
    }
}
