//! Differential tests: every tensor the readers locate in the fixtures TensorFlow wrote holds
//! the bytes TensorFlow's own loaders give (`tf.train.load_checkpoint`, `tf.make_ndarray` of
//! a frozen graph's constants, the TFLite interpreter's `get_tensor`), by the SHA-256 that
//! `fixtures/tensorflow/make_fixtures.py` and `fixtures/tflite/make_fixtures.py` recorded in
//! their `expected.json`; and each checkpoint entry's `crc32c` is the masked CRC-32C of those
//! bytes, as `BundleReader` checks it.

use crate::common::{fixture, open};
use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_plugin_api::TensorDescriptor;
use socair_tensorflow::crc32c::{crc32c, mask};
use socair_tensorflow::proto::schema::BUNDLE_ENTRY;
use socair_tensorflow::proto::tensorflow::BundleEntryProto;
use std::collections::BTreeMap;
use std::path::Path;

fn hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn element(numpy: &str) -> &'static str {
    match numpy {
        "float32" => "F32",
        "float64" => "F64",
        "float16" => "F16",
        "bfloat16" => "BF16",
        "int8" => "I8",
        "uint8" => "U8",
        "int16" => "I16",
        "int32" => "I32",
        "int64" => "I64",
        "bool" => "BOOL",
        other => panic!("dtype {other}"),
    }
}

/// The bytes of `t`, read from the file it names (relative to `opened`'s directory, its
/// `{stem}` the opened file's name without its extension) or from `opened` itself.
fn bytes_of(opened: &Path, t: &TensorDescriptor) -> Vec<u8> {
    if let Some(b) = t.inline.as_ref().into_option() {
        return b.to_vec();
    }
    let path = match t.file.as_ref().into_option() {
        Some(f) => {
            let stem = opened.file_stem().unwrap().to_string_lossy();
            opened.with_file_name(f.replace("{stem}", &stem))
        }
        None => opened.to_owned(),
    };
    let data = std::fs::read(&path).unwrap();
    let mut out = Vec::new();
    for r in t.ranges.iter() {
        out.extend_from_slice(&data[r.offset as usize..(r.offset + r.len) as usize]);
    }
    out
}

/// Checks the tensors of `file` against `expected` (name → dtype, shape, sha256): the same
/// names, and for each the same element type, shape and bytes.
fn check(file: &Path, expected: &serde_json::Map<String, Value>) -> BTreeMap<String, Vec<u8>> {
    let opened = open(file);
    let ours: BTreeMap<String, &TensorDescriptor> = opened
        .tensors
        .iter()
        .filter(|t| !t.outside_model)
        .map(|t| (t.name.to_string(), t))
        .collect();
    let names: Vec<&String> = ours.keys().collect();
    let want: Vec<&String> = expected.keys().collect();
    assert_eq!(names, want, "{}: tensor names", file.display());
    let mut all = BTreeMap::new();
    for (name, e) in expected {
        let t = ours[name];
        assert_eq!(
            t.element_type.as_ref().into_option().map(|s| s.as_str()),
            Some(element(e["dtype"].as_str().unwrap())),
            "{name}"
        );
        let shape: Vec<u64> = e["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(t.shape.as_slice(), shape.as_slice(), "{name}");
        let b = bytes_of(file, t);
        assert_eq!(
            hex(&b),
            e["sha256"].as_str().unwrap(),
            "{}: {name}",
            file.display()
        );
        all.insert(name.clone(), b);
    }
    all
}

/// Each entry's crc32c, read from the index.
fn crcs(index: &Path) -> BTreeMap<String, u32> {
    let data = std::fs::read(index).unwrap();
    let entries = socair_tensorflow::sstable::entries(&data, 1 << 20).unwrap();
    let mut out = BTreeMap::new();
    for e in &entries[1..] {
        let value = bytes::Bytes::copy_from_slice(&data[e.value.0..e.value.0 + e.value.1]);
        let (entry, _): (BundleEntryProto, _) =
            socair_tensorflow::decode::decode(&value, BUNDLE_ENTRY, "entry").unwrap();
        out.insert(String::from_utf8_lossy(&e.key).into_owned(), entry.crc32c);
    }
    out
}

fn expected(dir: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture(dir).join("expected.json")).unwrap()).unwrap()
}

#[test]
fn checkpoint_variables_are_the_bytes_tensorflow_restores() {
    let e = expected("tensorflow");
    let mut checked = 0;
    let mut sources: Vec<(String, &Value)> = Vec::new();
    for (dir, vars) in e["savedmodels"].as_object().unwrap() {
        sources.push((format!("tensorflow/{dir}/variables/variables.index"), vars));
    }
    for (prefix, vars) in e["checkpoints"].as_object().unwrap() {
        sources.push((format!("tensorflow/{prefix}.index"), vars));
    }
    for (index, vars) in sources {
        let path = fixture(&index);
        let bytes = check(&path, vars.as_object().unwrap());
        let crcs = crcs(&path);
        for (name, b) in &bytes {
            assert_eq!(mask(crc32c(b)), crcs[name], "{index}: {name}: crc32c");
            checked += 1;
        }
    }
    assert!(checked >= 19, "{checked} variables checked");
}

#[test]
fn frozen_graph_constants_are_what_make_ndarray_gives() {
    let e = expected("tensorflow");
    for (file, consts) in e["graphdefs"].as_object().unwrap() {
        let got = check(
            &fixture(&format!("tensorflow/{file}")),
            consts.as_object().unwrap(),
        );
        assert!(!got.is_empty());
    }
}

#[test]
fn tflite_constants_are_what_the_interpreter_holds() {
    let e = expected("tflite");
    let mut checked = 0;
    for (file, tensors) in e["models"].as_object().unwrap() {
        let Some(list) = tensors.as_array() else {
            continue;
        };
        let mut want = serde_json::Map::new();
        for t in list {
            want.insert(t["name"].as_str().unwrap().to_owned(), t.clone());
        }
        check(&fixture(&format!("tflite/{file}")), &want);
        checked += want.len();
    }
    assert!(checked >= 7, "{checked}");
    // The quantization parameters are kept: the int8 model's per-channel scales.
    let int8 = open(&fixture("tflite/int8.tflite"));
    let q: Vec<String> = int8
        .metadata
        .iter()
        .filter(|kv| kv.0.starts_with("tflite.quantization.MatMul"))
        .map(|kv| kv.1.to_string())
        .collect();
    let want = e["models"]["int8.tflite"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "MatMul")
        .unwrap()["scales"][0]
        .as_f64()
        .unwrap() as f32;
    assert!(
        q.len() == 1 && q[0].contains(&format!("{want:?}")),
        "{q:?} {want}"
    );
}
