//! The first-party NumPy plugin (`plugins/numpy`, plugin `numpy`) end to end: the built
//! `socair` with its built plugins on the files NumPy 2.4.6 wrote (fixtures/npy/plugin/ and
//! fixtures/npy/valid/, by fixtures/npy/make_fixtures.py), checked against what
//! NumPy says of them (each array's dtype, shape, size and SHA-256, and the float32 values
//! hash), the verdicts and places of both rows, and the bounds on zip bombs and floods of
//! members (64 MiB + 8x the input, 5 s per 30 MB, as `bounds.rs` measures them).

// The one measure module (and its one-shape-at-a-time lock) that bounds.rs measures with.
use crate::bounds::measure;
use crate::common::{assert_claimed_once, fixture, json, run, scan_many, socair};
use serde_json::Value;
use socair_test_support::npz_shapes;

fn expected(rel: &str) -> Value {
    json(&std::fs::read_to_string(fixture(rel)).unwrap())
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key} in {v}"))
}

fn row<'a>(report: &'a Value, check: &str) -> Option<&'a Value> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
}

#[test]
fn the_plugin_is_listed_reading_npy_and_npz() {
    let r = run(socair().args(["plugins", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listing = json(&r.stdout);
    let numpy = listing["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "numpy")
        .unwrap_or_else(|| panic!("numpy not loaded: {listing:#}"));
    assert_eq!(numpy["reads"], serde_json::json!(["npy", "npz"]));
}

#[test]
fn every_fixture_matches_numpy() {
    let e = expected("npy/plugin/expected.json");
    let cases = e["valid"].as_object().unwrap();
    assert!(cases.len() >= 15);
    let mut arrays = 0;
    for (file, want) in cases {
        let path = fixture(&format!("npy/plugin/valid/{file}"));
        let format = if file.ends_with(".npz") { "npz" } else { "npy" };
        let r = run(socair().arg("tensors").arg(&path));
        let unread_want = want["unread"].as_array().unwrap();
        assert_eq!(
            r.code,
            i32::from(!unread_want.is_empty()),
            "{file}: {}",
            r.stderr
        );
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["format"], format, "{file}");
        assert_eq!(m["artifact"]["sha256"], want["sha256"], "{file}");
        // The rows NumPy computed: dtype.str, shape, nbytes, the SHA-256 of the row-major
        // bytes in their stored byte order, the float32-le-bits/v1 hash of float16/32 values;
        // deflated members (fingerprinted from the bytes the plugin inflated) included.
        let mut got = m["tensors"].as_array().unwrap().clone();
        got.sort_by(|a, b| {
            str_of(a, "name")
                .as_bytes()
                .cmp(str_of(b, "name").as_bytes())
        });
        assert_eq!(Value::Array(got), want["tensors"], "{file}");
        arrays += want["tensors"].as_array().unwrap().len();
        let mut unread: Vec<&str> = m["unread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| str_of(u, "tensor"))
            .collect();
        unread.sort_unstable();
        let unread_want: Vec<&str> = unread_want.iter().map(|u| u.as_str().unwrap()).collect();
        assert_eq!(unread, unread_want, "{file}");

        let r = run(socair().arg("scan").arg(&path));
        let report = json(&r.stdout);
        let structure = row(&report, "Format and structure").unwrap();
        assert_eq!(
            structure["status"], want["structure"],
            "{file}: {structure:#}"
        );
        let pickle = row(&report, "Pickle opcode scan");
        assert_eq!(
            pickle.map(|p| p["status"].clone()),
            want["pickle"].as_str().map(Value::from),
            "{file}: {report:#}"
        );
        let clean = want["structure"] == "PASS" && want["pickle"].is_null();
        assert_eq!(r.code, i32::from(!clean), "{file}: {}", r.stderr);
        if let (Some(p), Some(place)) = (pickle, want["place"].as_str()) {
            let reason = want["reason"].as_str().unwrap_or("");
            let findings = p["findings"].as_array().unwrap();
            if p["status"] == "FAIL" {
                assert!(
                    findings
                        .iter()
                        .any(|f| str_of(f, "place").starts_with(place)
                            && str_of(f, "reason").contains(reason)),
                    "{file}: no finding at {place:?} naming {reason:?}: {findings:#?}"
                );
            }
        }
    }
    assert!(arrays >= 42, "{arrays}");
}

#[test]
fn malformed_fixtures_fail_with_their_reason_and_place() {
    let e = expected("npy/plugin/expected.json");
    for (file, want) in e["malformed"].as_object().unwrap() {
        let path = fixture(&format!("npy/plugin/malformed/{file}"));
        let r = run(socair().arg("scan").arg(&path));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let report = json(&r.stdout);
        let structure = row(&report, "Format and structure").unwrap();
        assert_eq!(structure["status"], "FAIL", "{file}: {structure:#}");
        let why = str_of(want, "reason");
        let place = want["place"].as_str().unwrap_or("");
        assert!(
            structure["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| str_of(f, "reason").contains(why)
                    && str_of(f, "place").starts_with(place)),
            "{file}: {structure:#}"
        );
        let r = run(socair().arg("tensors").arg(&path));
        assert_eq!(r.code, 1, "{file}");
        assert_eq!(json(&r.stdout)["tensors"], serde_json::json!([]), "{file}");
    }
}

/// The fixtures of npy/valid/, read by this plugin: NumPy's hashes of every array; the arrays
/// `np.savez_compressed` deflated fingerprint exactly as the same arrays `np.savez` stored.
#[test]
fn the_valid_fixtures_match_numpy_and_deflated_equals_stored() {
    let e = expected("npy/expected.json");
    for (file, want) in e["valid"].as_object().unwrap() {
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("npy/valid/{file}"))));
        let m = json(&r.stdout);
        if file == "savez-compressed.npz" {
            let stored =
                json(&run(socair().arg("tensors").arg(fixture("npy/valid/savez.npz"))).stdout);
            for t in m["tensors"].as_array().unwrap() {
                let same = stored["tensors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["name"] == t["name"])
                    .unwrap();
                for key in ["dtype", "shape", "bytes", "sha256", "values"] {
                    assert_eq!(t[key], same[key], "{}: {key}", t["name"]);
                }
            }
            assert_eq!(m["tensors"].as_array().unwrap().len(), 2);
            continue;
        }
        assert_eq!(m["tensors"], want["tensors"], "{file}");
    }
}

/// The numpy plugin's readers (`.npy`, `.npz`) never claim a file the torch
/// plugin claims: the host would refuse to choose. Every torch fixture, legit or hostile.
#[test]
fn torch_files_are_not_claimed_twice() {
    let mut files = Vec::new();
    for dir in ["torch/legit", "torch/malicious"] {
        for entry in std::fs::read_dir(fixture(dir)).unwrap() {
            let path = entry.unwrap().path();
            if !path.is_dir() {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 60, "{}", files.len());
    let (scanned, stderr) = scan_many(socair, &files);
    assert_claimed_once(&scanned, &stderr);
    for (path, entry) in &scanned {
        if entry["report"].is_null() {
            continue;
        }
        let format = str_of(&entry["report"]["artifact"], "format");
        assert!(
            !["npy", "npz"].contains(&format),
            "{} read as {format}",
            path.display()
        );
    }
}

fn run_shape(shape: &str, data: Vec<u8>) {
    let _one = measure::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, file, len) = measure::write_input(&format!("{shape}.npz"), data);
    for command in ["scan", "tensors"] {
        let mut cmd = socair();
        cmd.arg(command).arg(&file);
        let c = measure::measure(cmd, dir.path(), command);
        measure::check(shape, command, len, &c, dir.path());
    }
}

#[test]
fn bounds_npz_deflated_members_a_thousand_times_the_archive() {
    run_shape("npz-bomb", npz_shapes::npz_bomb(measure::TARGET));
}

#[test]
fn bounds_npz_members_inflating_past_their_declared_size() {
    run_shape(
        "npz-lying-bomb",
        npz_shapes::npz_lying_bomb(measure::TARGET),
    );
}

#[test]
fn bounds_npz_a_flood_of_tiny_members() {
    run_shape("npz-flood", npz_shapes::npz_flood(measure::TARGET));
}

/// An equinox file (fixtures/equinox, `eqx.tree_serialise_leaves` of equinox 0.13.8 with jax
/// 0.10.2: one `.npy` record a leaf, one after another) PASSes, every record fingerprinted
/// under its index with the bytes `np.load` gives for that leaf as `tree_deserialise_leaves`
/// reads it (expected.json, from the real loader). Cut short, it FAILs.
#[test]
fn an_equinox_file_is_every_record_it_holds() {
    let path = fixture("equinox/model.eqx");
    let expected = expected("equinox/expected.json");
    let records = expected["records"].as_array().unwrap();
    let scan = run(socair().arg("scan").arg(&path));
    assert_eq!(scan.code, 0, "{}", scan.stdout);
    assert!(
        scan.stdout
            .contains(&format!("{} consecutive .npy records", records.len())),
        "{}",
        scan.stdout
    );
    let r = run(socair().arg("tensors").arg(&path));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = crate::common::tensor_hashes(&json(&r.stdout));
    assert_eq!(got.len(), records.len());
    for (i, w) in records.iter().enumerate() {
        assert_eq!(
            got.get(&i.to_string()).map(String::as_str),
            w["sha256"].as_str(),
            "record {i}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let cut = tmp.path().join("model.eqx");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
    let scan = run(socair().arg("scan").arg(&cut));
    assert_eq!(scan.code, 1, "{}", scan.stdout);
}
