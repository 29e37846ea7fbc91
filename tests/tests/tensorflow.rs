//! TensorFlow end to end: SavedModel directories, a checkpoint, a frozen GraphDef and TFLite
//! models written by TensorFlow 2.21.0 (fixtures/tensorflow, fixtures/tflite, from their
//! make_fixtures.py), scanned and fingerprinted by the built socair with its plugins, against
//! the hashes TensorFlow's own loaders gave (each expected.json).

use crate::common::{fixture, json, run, scan_many, socair, tensor_hashes};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected(dir: &str) -> Value {
    json(&std::fs::read_to_string(fixture(&format!("{dir}/expected.json"))).unwrap())
}

fn numpy_to_element(n: &str) -> &'static str {
    match n {
        "float32" => "DT_FLOAT",
        "float64" => "DT_DOUBLE",
        "float16" => "DT_HALF",
        "bfloat16" => "DT_BFLOAT16",
        "int8" => "DT_INT8",
        "int32" => "DT_INT32",
        "int64" => "DT_INT64",
        other => panic!("{other}"),
    }
}

/// The tensors of a manifest, `(file, name)` → entry.
fn tensors(m: &Value) -> BTreeMap<(String, String), Value> {
    m["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                (
                    t["file"].as_str().unwrap_or("").to_owned(),
                    t["name"].as_str().unwrap().to_owned(),
                ),
                t.clone(),
            )
        })
        .collect()
}

#[test]
fn savedmodel_directories_scan_clean_and_fingerprint_every_variable() {
    let e = expected("tensorflow");
    for (dir, vars) in e["savedmodels"].as_object().unwrap() {
        let path = fixture(&format!("tensorflow/{dir}"));
        let scan = run(socair().arg("scan").arg(&path));
        let report = json(&scan.stdout);
        // tf-keras' keras_metadata.pb is judged by the Keras config grammar: it PASSes.
        assert_eq!(scan.code, 0, "{dir}: {:#}", report["rows"]);
        assert_eq!(report["artifact"]["format"], "model directory");
        let plugins: Vec<&str> = report["tool"]["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(plugins, ["tensorflow"], "{dir}");
        if dir.ends_with("tf-keras") {
            assert!(
                report["rows"][0]["summary"]
                    .as_str()
                    .unwrap()
                    .contains("keras_metadata.pb: PASS"),
                "{:#}",
                report["rows"]
            );
        }
        let r = run(socair().arg("tensors").arg(&path));
        let m = json(&r.stdout);
        // tf-keras' keras_metadata.pb holds no tensors and its configs PASS the grammar: it
        // is read, not listed unread.
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let got = tensors(&m);
        for (name, want) in vars.as_object().unwrap() {
            let t = &got[&("variables/variables.index".to_owned(), name.clone())];
            assert_eq!(t["sha256"], want["sha256"], "{dir}: {name}");
            assert_eq!(t["shape"], want["shape"], "{dir}: {name}");
            assert_eq!(
                t["dtype"],
                numpy_to_element(want["dtype"].as_str().unwrap()),
                "{dir}: {name}"
            );
        }
    }
}

#[test]
fn hostile_savedmodels_fail_naming_the_op() {
    for (dir, op) in [
        ("writefile", "WriteFile"),
        ("readfile", "ReadFile"),
        ("pyfunc", "EagerPyFunc"),
        ("matchingfiles", "MatchingFiles"),
        ("printv2-file", "PrintV2"),
        ("savev2-elsewhere", "SaveV2"),
        ("tf1-init-reads-file", "ReadFile"),
        // I/O through a placeholder bound at the call site, and a kernel that
        // opens a file its stateless OpDef does not show (fixtures/tensorflow/indirect.json).
        ("indirect-printv2", "PrintV2"),
        ("indirect-printv2-nested", "PrintV2"),
        ("indirect-decodeproto", "DecodeProtoV2"),
    ] {
        let scan = run(socair()
            .arg("scan")
            .arg(fixture(&format!("tensorflow/hostile/{dir}"))));
        assert_eq!(scan.code, 1, "{dir}");
        let report = json(&scan.stdout);
        let row = &report["rows"][0];
        assert_eq!(row["status"], "FAIL", "{dir}: {row:#}");
        let f = &row["findings"][0];
        assert!(
            f["place"].as_str().unwrap().starts_with("saved_model.pb: "),
            "{f}"
        );
        assert!(
            f["place"].as_str().unwrap().contains(&format!("({op})")),
            "{dir}: {f}"
        );
    }
}

#[test]
fn a_checkpoint_directory_and_its_index_alone() {
    let e = expected("tensorflow");
    let want = &e["checkpoints"]["checkpoint/ckpt"];
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("tensorflow/checkpoint")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = tensors(&json(&r.stdout));
    for (name, w) in want.as_object().unwrap() {
        assert_eq!(
            got[&("ckpt.index".to_owned(), name.clone())]["sha256"],
            w["sha256"],
            "{name}"
        );
    }
    // The index alone: its bytes lie in the data shard, which a single file's digest does
    // not cover.
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("tensorflow/checkpoint/ckpt.index")));
    assert_eq!(r.code, 1);
    let m = json(&r.stdout);
    assert!(m["tensors"].as_array().unwrap().is_empty());
    assert!(
        m["unread"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("ckpt.data-00000-of-00001"),
        "{m:#}"
    );
}

#[test]
fn frozen_graphs_and_tflite_models_fingerprint_their_constants() {
    let e = expected("tensorflow");
    for (file, consts) in e["graphdefs"].as_object().unwrap() {
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("tensorflow/{file}"))));
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["format"], "tf-graphdef");
        let got = tensors(&m);
        for (name, w) in consts.as_object().unwrap() {
            assert_eq!(
                got[&("frozen.pb".to_owned(), name.clone())]["sha256"],
                w["sha256"],
                "{name}"
            );
        }
        assert_eq!(
            run(socair()
                .arg("scan")
                .arg(fixture(&format!("tensorflow/{file}"))))
            .code,
            0
        );
    }
    let e = expected("tflite");
    for (file, list) in e["models"].as_object().unwrap() {
        let Some(list) = list.as_array() else {
            continue;
        };
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("tflite/{file}"))));
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["format"], "tflite", "{file}");
        let got = tensors(&m);
        for w in list {
            let name = w["name"].as_str().unwrap().to_owned();
            assert_eq!(
                got[&(file.clone(), name.clone())]["sha256"],
                w["sha256"],
                "{file}: {name}"
            );
        }
    }
    for (file, code) in [
        ("float.tflite", 0),
        ("int8.tflite", 0),
        ("custom-op.tflite", 1),
        ("flex-readfile.tflite", 1),
    ] {
        let r = run(socair().arg("scan").arg(fixture(&format!("tflite/{file}"))));
        assert_eq!(r.code, code, "{file}: {}", r.stdout);
    }
}

#[test]
fn the_benign_indirect_savedmodels_scan_clean() {
    // What TensorFlow 2.21.0's TF1 loader ran without touching a file (indirect.json): a
    // placeholder bound to stderr, to log(info) two calls up, a descriptor pool `local://`.
    for dir in [
        "indirect-stderr",
        "indirect-log-nested",
        "indirect-decodeproto-local",
    ] {
        let scan = run(socair()
            .arg("scan")
            .arg(fixture(&format!("tensorflow/savedmodel/{dir}"))));
        let report = json(&scan.stdout);
        assert_eq!(scan.code, 0, "{dir}: {:#}", report["rows"]);
        assert_eq!(report["rows"][0]["status"], "PASS", "{dir}");
    }
    // And a hostile one's finding names the attribute and the call path, end to end.
    let scan = run(socair()
        .arg("scan")
        .arg(fixture("tensorflow/hostile/indirect-printv2-nested")));
    let report = json(&scan.stdout);
    let reason = report["rows"][0]["findings"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("output_stream")
            && reason.contains("socair_forward")
            && reason.contains("it runs at load time"),
        "{reason}"
    );
}

#[test]
fn no_fixture_is_claimed_twice() {
    // Every TensorFlow file, alone, is read by one reader: no "plugins claim it" refusal.
    let mut files = socair_plugin_kit_files(&fixture("tensorflow"));
    files.extend(socair_plugin_kit_files(&fixture("tflite")));
    files.retain(|f| {
        let name = f.file_name().unwrap().to_string_lossy();
        !(name.ends_with(".py")
            || name.ends_with(".json")
            || name.contains(".data-")
            || name.ends_with(".txt")
            || name.ends_with(".md"))
    });
    assert!(files.len() >= 40, "{}", files.len());
    let (scanned, _) = scan_many(socair, &files);
    for (f, entry) in &scanned {
        assert_ne!(entry["verdict"], "unreadable", "{}: {entry}", f.display());
        assert_eq!(
            entry["report"]["tool"]["plugins"][0]["name"],
            "tensorflow",
            "{}",
            f.display()
        );
    }
}

fn socair_plugin_kit_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_damaged_saved_model_pb_is_read_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("tensorflow/savedmodel/tf1");
    std::fs::create_dir_all(dir.path().join("variables")).unwrap();
    for f in [
        "variables/variables.index",
        "variables/variables.data-00000-of-00001",
    ] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    // The first bytes no longer parse as a SavedModel: the name decides the reader.
    let mut pb = std::fs::read(src.join("saved_model.pb")).unwrap();
    pb[2] = 0xff;
    std::fs::write(dir.path().join("saved_model.pb"), &pb).unwrap();
    let r = run(socair().arg("scan").arg(dir.path()));
    let report = json(&r.stdout);
    assert_eq!(r.code, 1);
    let row = &report["rows"][0];
    assert_eq!(row["status"], "FAIL", "{row:#}");
    assert!(
        row["summary"]
            .as_str()
            .unwrap()
            .contains("saved_model.pb: FAIL not a sound SavedModel"),
        "{row:#}"
    );
}

/// `dir` zipped (stored), its files under `prefix/`.
fn zipped(dir: &std::path::Path, prefix: &str) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for f in socair_plugin_kit_files(dir) {
        let rel = f
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        w.start_file(format!("{prefix}/{rel}"), opts).unwrap();
        w.write_all(&std::fs::read(&f).unwrap()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn a_zipped_savedmodel_is_read_as_its_directory_is() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("module.zip");
    std::fs::write(
        &clean,
        zipped(&fixture("tensorflow/savedmodel/module"), "module"),
    )
    .unwrap();
    let r = run(socair().arg("scan").arg(&clean));
    let report = json(&r.stdout);
    assert_eq!(r.code, 0, "{:#}", report["rows"]);
    // Its members handed back and read as the directory's files are: the variables' bytes,
    // which the index places in the data shard beside it, fingerprinted as the directory's.
    let listed = |path: &std::path::Path| {
        tensor_hashes(&json(
            &run(socair().args(["tensors", "--json"]).arg(path)).stdout,
        ))
    };
    let zipped_tensors = listed(&clean);
    assert!(!zipped_tensors.is_empty());
    assert_eq!(
        zipped_tensors,
        listed(&fixture("tensorflow/savedmodel/module"))
    );
    let hostile = tmp.path().join("readfile.zip");
    std::fs::write(
        &hostile,
        zipped(&fixture("tensorflow/hostile/tf1-init-reads-file"), "m"),
    )
    .unwrap();
    let r = run(socair().arg("scan").arg(&hostile));
    let report = json(&r.stdout);
    assert_eq!(r.code, 1);
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "FAIL")
        .unwrap_or_else(|| panic!("{:#}", report["rows"]));
    let places: Vec<&str> = row["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["place"].as_str().unwrap())
        .collect();
    assert!(
        places
            .iter()
            .any(|p| p.starts_with("m/saved_model.pb: ") && p.contains("(ReadFile)")),
        "{places:#?}"
    );
}

#[test]
fn savedmodels_and_tflite_models_convert_to_safetensors_with_every_hash() {
    let e = expected("tensorflow");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("module.safetensors");
    let r = run(socair()
        .arg("convert")
        .arg(fixture("tensorflow/savedmodel/module"))
        .arg(&out)
        .args(["--from", "savedmodel", "--to", "safetensors"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = json(
        &run(socair()
            .args(["--reader", "safetensors", "tensors"])
            .arg(&out))
        .stdout,
    );
    let got = tensors(&m);
    let vars = e["savedmodels"]["savedmodel/module"].as_object().unwrap();
    assert_eq!(
        got.len(),
        vars.len(),
        "only the variables are carried: {got:#?}"
    );
    for (name, w) in vars {
        assert_eq!(
            got[&("module.safetensors".to_owned(), name.clone())]["sha256"],
            w["sha256"],
            "{name}"
        );
    }
    // A directory that is not a SavedModel is refused as one.
    let r = run(socair()
        .arg("convert")
        .arg(fixture("tensorflow/checkpoint"))
        .arg(tmp.path().join("ckpt.safetensors"))
        .args(["--from", "savedmodel", "--to", "safetensors"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no saved_model.pb"), "{}", r.stderr);
    // TFLite: the constants, the quantized ones by their stored int8 bytes.
    let e = expected("tflite");
    let out = tmp.path().join("int8.safetensors");
    let r = run(socair()
        .arg("convert")
        .arg(fixture("tflite/int8.tflite"))
        .arg(&out)
        .args(["--from", "tflite", "--to", "safetensors"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("not carried: metadata \"tflite.quantization.MatMul\""),
        "{}",
        r.stderr
    );
    // (--reader: a safetensors header 0x180 to 0x1ff bytes long starts with 0x80, which the
    // torch-legacy reader also claims as a pickle's PROTO today.)
    let got = tensors(&json(
        &run(socair()
            .args(["--reader", "safetensors", "tensors"])
            .arg(&out))
        .stdout,
    ));
    for w in e["models"]["int8.tflite"].as_array().unwrap() {
        let name = w["name"].as_str().unwrap().to_owned();
        assert_eq!(
            got[&("int8.safetensors".to_owned(), name.clone())]["sha256"],
            w["sha256"],
            "{name}"
        );
    }
}
