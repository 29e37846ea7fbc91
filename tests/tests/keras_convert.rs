//! `socair convert --from keras` and `--from hdf5` to safetensors: every dataset h5py reads in
//! the committed fixtures (written by keras 3.15.1, tf-keras 2.21 and h5py 3.14.0, recorded in
//! `fixtures/keras/expected.json` and `fixtures/keras/convert/expected.json`) is carried under
//! its HDF5 path, its bytes hashing as h5py gave them; what cannot be carried as bytes of the
//! file (filtered or split chunks, a deflated weights member) and what a grammar or structure
//! row FAILs are refused, naming why, with nothing left behind.

use crate::common::{fixture, json, run, socair, tensor_hashes};
use std::collections::BTreeMap;
use std::path::Path;

fn expected(rel: &str) -> serde_json::Value {
    json(&std::fs::read_to_string(fixture(rel)).unwrap())
}

fn from_format(file: &str) -> &'static str {
    if file.ends_with(".keras") {
        "keras"
    } else {
        "hdf5"
    }
}

/// Converts `src` into `dir/out.safetensors`; returns the run.
fn convert(src: &Path, dir: &Path, from: &str) -> crate::common::Run {
    run(socair()
        .arg("convert")
        .arg(src)
        .arg(dir.join("out.safetensors"))
        .args(["--from", from, "--to", "safetensors"]))
}

/// The output's tensors, read back by the safetensors reader: name to sha256.
fn output_hashes(dir: &Path) -> BTreeMap<String, String> {
    let r = run(socair()
        .args(["--reader", "safetensors", "tensors", "--json"])
        .arg(dir.join("out.safetensors")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    tensor_hashes(&json(&r.stdout))
}

/// What h5py read: name to sha256.
fn h5py_hashes(entry: &serde_json::Value) -> BTreeMap<String, String> {
    entry["h5py_datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_owned(),
                d["sha256"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn left_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn keras_fixtures_convert_with_every_hash_h5py_gave_or_are_refused() {
    let e = expected("keras/expected.json");
    let mut converted = 0;
    let mut refused = 0;
    for (rel, entry) in e.as_object().unwrap() {
        let tmp = tempfile::tempdir().unwrap();
        let r = convert(
            &fixture(&format!("keras/{rel}")),
            tmp.path(),
            from_format(rel),
        );
        if entry["status"] == "FAIL" {
            assert_eq!(r.code, 1, "{rel}: {}", r.stderr);
            assert!(
                r.stderr.contains("refused:") && r.stderr.contains("row is FAIL"),
                "{rel}: {}",
                r.stderr
            );
            assert!(
                left_in(tmp.path()).is_empty(),
                "{rel}: {:?}",
                left_in(tmp.path())
            );
            refused += 1;
            continue;
        }
        // PASS and LEAD files (a registered custom layer) carry their weights.
        assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        assert_eq!(
            output_hashes(tmp.path()),
            h5py_hashes(entry),
            "{rel}: every dataset h5py reads, under its HDF5 path, with h5py's bytes"
        );
        assert_eq!(left_in(tmp.path()), ["out.safetensors"], "{rel}");
        converted += 1;
    }
    assert_eq!((converted, refused), (13, 12));
}

#[test]
fn chunks_and_deflated_weights_are_carried_only_as_bytes_of_the_file() {
    let e = expected("keras/convert/expected.json");
    for (rel, entry) in e.as_object().unwrap() {
        let tmp = tempfile::tempdir().unwrap();
        let r = convert(
            &fixture(&format!("keras/convert/{rel}")),
            tmp.path(),
            entry["from"].as_str().unwrap(),
        );
        if entry["converts"] == true {
            assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
            assert_eq!(output_hashes(tmp.path()), h5py_hashes(entry), "{rel}");
        } else {
            assert_eq!(r.code, 1, "{rel}: {}", r.stderr);
            let why = entry["refusal"].as_str().unwrap();
            assert!(r.stderr.contains(why), "{rel}: {why:?} in {}", r.stderr);
            assert!(
                left_in(tmp.path()).is_empty(),
                "{rel}: {:?}",
                left_in(tmp.path())
            );
        }
    }
}

#[test]
fn a_keras_archive_is_not_converted_as_hdf5_nor_an_h5_file_as_keras() {
    let tmp = tempfile::tempdir().unwrap();
    let r = convert(
        &fixture("keras/legit/sequential-dense.keras"),
        tmp.path(),
        "hdf5",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("reads as keras, not hdf5"),
        "{}",
        r.stderr
    );
    let r = convert(
        &fixture("keras/legit/tf-keras-sequential.h5"),
        tmp.path(),
        "keras",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("reads as hdf5, not keras"),
        "{}",
        r.stderr
    );
    assert!(left_in(tmp.path()).is_empty());
}
