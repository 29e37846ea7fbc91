//! The Keras plugin (`plugins/keras/plugin`, plugin `keras`, formats `keras` and `hdf5`) end to
//! end: the built `socair` on the files keras 3.15.1, tf-keras 2.21 and h5py wrote
//! (fixtures/keras/ by fixtures/keras/make_fixtures.py, fixtures/hdf5/ by
//! fixtures/hdf5/make_fixtures.py), checked against what those libraries say of them: the
//! verdict and a keyword of its findings, and every dataset h5py reads (name, shape, size and
//! the SHA-256 of its bytes) against the tensors socair fingerprints, and every variable Keras
//! loads against them.

use crate::common::{fixture, json, run, socair, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected(rel: &str) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every file: the verdict the libraries' behaviour calls for, with the keyword in a finding.
fn verdicts(dir: &str) -> usize {
    let e = expected(&format!("{dir}/expected.json"));
    for (rel, want) in &e {
        let path = fixture(&format!("{dir}/{rel}"));
        let r = run(socair().args(["scan", "--json"]).arg(&path));
        let report = json(&r.stdout);
        let got = verdict(&report);
        assert_eq!(got, want["status"], "{rel}: {report:#}");
        let code = match got {
            "PASS" => 0,
            _ => r.code,
        };
        assert_eq!(r.code, code, "{rel}");
        let keyword = want["keyword"].as_str().unwrap().to_lowercase();
        let findings: String = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["status"] != "PASS")
            .flat_map(|r| r["findings"].as_array().unwrap().iter())
            .map(|f| format!("{} {}\n", f["place"], f["reason"]).to_lowercase())
            .collect();
        assert!(
            findings.contains(&keyword),
            "{rel}: no {keyword:?} in\n{findings}"
        );
        if got == "PASS" {
            assert_eq!(r.code, 0, "{rel}");
        } else {
            assert_ne!(r.code, 0, "{rel}");
        }
    }
    e.len()
}

/// Every dataset h5py reads is a tensor socair fingerprints with the same bytes, or one it
/// lists unread; every variable Keras loads is among those tensors.
fn tensors(dir: &str) -> usize {
    let e = expected(&format!("{dir}/expected.json"));
    let mut compared = 0;
    for (rel, want) in &e {
        let path = fixture(&format!("{dir}/{rel}"));
        let r = run(socair().arg("tensors").arg(&path));
        let m = json(&r.stdout);
        let got: BTreeMap<&str, &Value> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t))
            .collect();
        let unread: Vec<&str> = m["unread"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|u| u["tensor"].as_str())
            .collect();
        for d in want["h5py_datasets"].as_array().unwrap() {
            let Some(name) = d["name"].as_str() else {
                continue;
            };
            if d["tensor"] == false {
                // Data of no tensor type (strings, compound records…): listed, not
                // fingerprinted, and no finding.
                assert!(unread.contains(&name), "{rel}: {name} not listed: {m:#}");
                continue;
            }
            match got.get(name) {
                Some(t) => {
                    assert_eq!(t["sha256"], d["sha256"], "{rel} {name}");
                    assert_eq!(t["shape"], d["shape"], "{rel} {name}");
                    assert_eq!(t["bytes"], d["bytes"], "{rel} {name}");
                    compared += 1;
                }
                None => assert!(
                    unread.contains(&name) && want["status"] != "PASS",
                    "{rel}: {name} neither fingerprinted nor listed unread: {m:#}"
                ),
            }
        }
        if let Some(vars) = want.get("keras_weights_sha256").and_then(Value::as_array) {
            let mut have: Vec<&str> = got
                .values()
                .map(|t| t["sha256"].as_str().unwrap())
                .collect();
            for v in vars {
                let v = v.as_str().unwrap();
                let at = have.iter().position(|h| *h == v);
                assert!(
                    at.is_some(),
                    "{rel}: a variable Keras loads ({v}) is no tensor socair fingerprints"
                );
                have.remove(at.unwrap());
            }
        }
    }
    compared
}

#[test]
fn the_plugin_is_listed_reading_keras_configs_and_hdf5() {
    let r = run(socair().args(["plugins", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listing = json(&r.stdout);
    let keras = listing["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "keras")
        .unwrap_or_else(|| panic!("keras not loaded: {listing:#}"));
    assert_eq!(
        keras["reads"],
        serde_json::json!(["keras", "keras-config", "hdf5"])
    );
}

#[test]
fn keras_files_get_the_verdicts_their_loaders_call_for() {
    assert!(verdicts("keras") >= 20);
}

#[test]
fn hdf5_files_get_the_verdicts_their_loaders_call_for() {
    assert!(verdicts("hdf5") >= 10);
}

#[test]
fn keras_weights_are_the_bytes_h5py_and_keras_load() {
    assert!(tensors("keras") >= 150);
}

#[test]
fn hdf5_datasets_are_the_bytes_h5py_reads() {
    assert!(tensors("hdf5") >= 15);
}

/// Chunked datasets as h5py 3.16 (HDF5 2.0) writes them under every chunk index and the
/// filters the library ships (fixtures/hdf5/chunked/, by fixtures/hdf5/make_chunked.py): clean,
/// and every dataset the bytes h5py reads; a wrong Fletcher-32 checksum a FAIL.
#[test]
fn chunked_hdf5_under_every_index_and_filter_reads_as_h5py_reads_it() {
    assert!(verdicts("hdf5/chunked") >= 11);
    assert!(tensors("hdf5/chunked") >= 50);
}

/// Files with the format's features beyond Keras' use of it, as h5py 3.16 (HDF5 2.0) writes
/// them (fixtures/hdf5/features/, by fixtures/hdf5/make_features.py): dense attributes and
/// links, creation order, deep nesting, aliases, a superblock extension, every element kind,
/// user blocks past the first 4096 bytes, szip chunks, n-bit packed integers and an
/// extensible array index with paged data blocks.
#[test]
fn hdf5_features_h5py_writes_read_as_h5py_reads_them() {
    assert!(verdicts("hdf5/features") >= 19);
    assert!(tensors("hdf5/features") >= 60);
}

/// Files as PyTables and AnnData write them (fixtures/hdf5/libraries/, by
/// fixtures/hdf5/make_libraries.py): clean, their arrays the bytes h5py reads; a Blosc filter
/// (a plugin library the HDF5 library loads) a FAIL.
#[test]
fn pytables_and_anndata_files_read_as_h5py_reads_them() {
    assert!(verdicts("hdf5/libraries") >= 4);
    assert!(tensors("hdf5/libraries") >= 18);
}

/// A user-defined filter (Blosc, 32001, in a PyTables file) FAILs: the HDF5 library would load
/// a plugin library to read it. A deployment that reviewed that library accepts it by naming
/// `hdf5.filter.32001` among its reviewed classes: then a LEAD, the dataset still unread.
#[test]
fn a_plugin_filter_the_deployment_reviewed_is_a_lead() {
    let file = fixture("hdf5/libraries/pytables-blosc.h5");
    let r = run(socair().args(["scan", "--json"]).arg(&file));
    assert_eq!(verdict(&json(&r.stdout)), "FAIL");
    assert!(r.stdout.contains("hdf5.filter.32001"), "{}", r.stdout);
    let dir = tempfile::tempdir().unwrap();
    let reviewed = dir.path().join("reviewed.txt");
    std::fs::write(&reviewed, "hdf5.filter.32001\n").unwrap();
    let r = run(socair()
        .args(["scan", "--json", "--reviewed-classes"])
        .arg(&reviewed)
        .arg(&file));
    let report = json(&r.stdout);
    assert_eq!(verdict(&report), "LEAD", "{report:#}");
    assert!(r.stdout.contains("the deployment accepts"), "{report:#}");
}

/// The property-based differential: files whose features were drawn at random from a fixed
/// seed and written by h5py 3.16 (fixtures/hdf5/random/, by fixtures/hdf5/make_random.py:
/// libver bounds, dtypes, shapes, layouts, chunk indexes, filters, fill values, partial writes,
/// nested groups, attributes) all read clean, every dataset the bytes h5py reads.
#[test]
fn random_hdf5_files_read_as_h5py_reads_them() {
    assert!(verdicts("hdf5/random") >= 40);
    assert!(tensors("hdf5/random") >= 300);
}

/// The same differential with the library's other codecs drawn too (fixtures/hdf5/random-codecs/,
/// by `make_random.py --codecs`): szip (libaec's EC and NN coding, 8 to 32 pixels per block),
/// n-bit over full-precision types, integer scale-offset of any bit count.
#[test]
fn random_hdf5_files_with_szip_nbit_and_scaleoffset_read_as_h5py_reads_them() {
    assert!(verdicts("hdf5/random-codecs") >= 24);
    assert!(tensors("hdf5/random-codecs") >= 300);
}

/// An external link is judged by where its file lies (fixtures/hdf5/siblings/, by
/// make_features.py): h5py looks for a relative name in the linking file's directory first
/// (`H5F_prefix_open_file`, HDF5 2.0), so a target the scanned directory ships and socair reads
/// is data, a note; a target it lacks (h5py would look in the working directory), one above
/// it, or any target of a file scanned alone FAILs.
#[test]
fn an_external_link_is_judged_by_where_its_file_lies() {
    for (case, want) in [
        ("linked", "PASS"),
        ("dangling", "FAIL"),
        ("outside", "FAIL"),
        ("linked/weights.h5", "FAIL"),
    ] {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("hdf5/siblings/{case}"))));
        let report = json(&r.stdout);
        assert_eq!(verdict(&report), want, "{case}: {report:#}");
        let text = report.to_string();
        assert!(
            text.contains(r#"an external link to \"/emb\""#),
            "{case}: {report:#}"
        );
        assert_eq!(
            text.contains("is a file of this directory, which socair reads"),
            want == "PASS",
            "{case}: {report:#}"
        );
    }
}

/// Files with a shared-message table (list and version 2 B-tree indexes), nested compound
/// records, opaque elements and array elements (fixtures/hdf5/shared/, by
/// fixtures/hdf5/make_shared.py): clean, every numeric dataset (an array type's with its
/// dimensions appended) the bytes h5py reads, the rest listed as data.
#[test]
fn shared_messages_and_every_element_kind_read_as_h5py_reads_them() {
    assert!(verdicts("hdf5/shared") >= 6);
    assert!(tensors("hdf5/shared") >= 41);
}

/// External raw storage is judged by where its file lies (fixtures/hdf5/raw-storage/, by
/// make_shared.py): the HDF5 library opens the named file when the dataset is read
/// (`H5D__efl_read`), so in a scanned directory that ships it the bytes are data socair
/// fingerprints there (the SHA-256 of what h5py reads, `[[0,1,2,3],[8,9,10,11]]` in `<f4`);
/// one above the directory, one it lacks, or the HDF5 file scanned alone FAILs.
#[test]
fn external_raw_storage_is_judged_by_where_its_file_lies() {
    for (case, want) in [
        ("inside", "PASS"),
        ("outside", "FAIL"),
        ("missing", "FAIL"),
        ("inside/model.h5", "FAIL"),
    ] {
        let path = fixture(&format!("hdf5/raw-storage/{case}"));
        let r = run(socair().args(["scan", "--json"]).arg(&path));
        let report = json(&r.stdout);
        assert_eq!(verdict(&report), want, "{case}: {report:#}");
        assert!(
            report.to_string().contains("External Data Files message"),
            "{case}: {report:#}"
        );
        let m = json(&run(socair().arg("tensors").arg(&path)).stdout);
        let kernel = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "dense/kernel");
        if want == "PASS" {
            let kernel = kernel.unwrap_or_else(|| panic!("{case}: {m:#}"));
            assert_eq!(
                kernel["sha256"],
                "8250892877bb64bf08a4482699f9ec7f8b581e0ef2176ad88038f0b0259f6418"
            );
            assert_eq!(kernel["shape"], serde_json::json!([2, 4]));
        } else {
            assert!(kernel.is_none(), "{case}: {m:#}");
        }
    }
}

/// A virtual dataset is judged by the files its mappings name (fixtures/hdf5/virtual/, by
/// make_shared.py): the library opens each source file (`H5F_prefix_open_file`: as named, then
/// in the virtual dataset's directory), so a source the scanned directory ships is data (a
/// note), one above it or the file scanned alone FAILs; a source in the file itself (`.`)
/// opens nothing (fixtures/hdf5/features/virtual-compound.h5 is clean).
#[test]
fn a_virtual_dataset_is_judged_by_the_files_it_maps() {
    for (case, want) in [
        ("inside", "PASS"),
        ("outside", "FAIL"),
        ("inside/model.h5", "FAIL"),
    ] {
        let path = fixture(&format!("hdf5/virtual/{case}"));
        let report = json(&run(socair().args(["scan", "--json"]).arg(&path)).stdout);
        assert_eq!(verdict(&report), want, "{case}: {report:#}");
        let text = report.to_string();
        assert!(
            text.contains("a virtual dataset mapping the dataset"),
            "{case}: {report:#}"
        );
        assert_eq!(
            text.contains("is a file of this directory, which socair reads"),
            want == "PASS",
            "{case}: {report:#}"
        );
    }
}

#[test]
fn places_name_the_json_path_and_the_object() {
    let r = run(socair()
        .args(["scan", "--json"])
        .arg(fixture("keras/hostile/lambda-bytecode.keras")));
    let report = json(&r.stdout);
    let text = report.to_string();
    assert!(
        text.contains("config.json config.layers[1].config.function"),
        "{report:#}"
    );
    let r = run(socair()
        .args(["scan", "--json"])
        .arg(fixture("keras/hostile/tf-keras-lambda.h5")));
    assert!(
        r.stdout
            .contains("attribute model_config config.layers[1].config.function"),
        "{}",
        r.stdout
    );
    let r = run(socair()
        .args(["scan", "--json"])
        .arg(fixture("hdf5/hostile/external-link.h5")));
    assert!(r.stdout.contains("\"/x\""), "{}", r.stdout);
}

#[test]
fn header_only_reads_name_the_same_weights() {
    // A header-only read locates filtered and tiled chunks without assembling them: as
    // clean as the full read, the data said unread, no finding.
    for rel in [
        "keras/legit/functional-conv.keras",
        "keras/legit/tf-keras-sequential.h5",
        "hdf5/chunked/small-v200.h5",
        "hdf5/valid/layouts.h5",
    ] {
        let full = json(&run(socair().args(["scan", "--json"]).arg(fixture(rel))).stdout);
        let head = json(
            &run(socair()
                .args(["scan", "--json", "--header-only"])
                .arg(fixture(rel)))
            .stdout,
        );
        assert_eq!(verdict(&full), "PASS", "{rel}");
        assert_eq!(verdict(&head), "PASS", "{rel}");
    }
}

#[test]
fn keras_files_in_zips_and_model_directories_are_judged_alike() {
    let e = expected("keras/containers/expected.json");
    for (rel, want) in &e {
        let path = fixture(&format!("keras/containers/{rel}"));
        let r = run(socair().args(["scan", "--json"]).arg(&path));
        let report = json(&r.stdout);
        assert_eq!(verdict(&report), want, "{rel}: {report:#}");
        if rel.starts_with("mixed") {
            let text = report.to_string();
            assert!(
                text.contains(
                    "member lambda-bytecode.keras config.json config.layers[1].config.function"
                ),
                "{rel}: {report:#}"
            );
            assert!(
                text.contains("member tf-keras-lambda.h5 attribute model_config"),
                "{rel}: {report:#}"
            );
        }
    }
    // In a model directory each file goes to its reader: both formats, every weight located.
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("keras/containers/model-dir")));
    let m = json(&r.stdout);
    let files: Vec<&str> = m["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["file"].as_str().unwrap())
        .collect();
    assert!(
        files.contains(&"model.h5") && files.contains(&"model.keras"),
        "{m:#}"
    );
}

/// Legacy `.h5` models Keras 3.15.1 writes (fixtures/keras/legacy3/make_fixtures.py): their
/// training_config names optimizers only Keras 3's registries hold (AdamW with a schedule,
/// mixed precision's LossScaleOptimizer), which Keras 3's legacy loader resolves: clean, and
/// every weight read.
#[test]
fn legacy_h5_models_keras_3_writes_are_clean() {
    for file in ["adamw-schedule.h5", "mixed-float16.h5"] {
        let path = fixture(&format!("keras/legacy3/{file}"));
        let r = run(socair().arg("scan").arg(&path));
        assert_eq!(r.code, 0, "{file}: {}", r.stdout);
        let r = run(socair().arg("tensors").arg(&path));
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        assert!(!json(&r.stdout)["tensors"].as_array().unwrap().is_empty());
    }
}

/// Keras 3's sharded weights (fixtures/keras/sharded, keras 3.15.1 `save_weights(...,
/// max_shard_size=...)`): an index whose values are shard names or lists of them, each read;
/// one naming a file outside the directory is a FAIL.
#[test]
fn keras_sharded_weights_are_read_and_their_index_checked() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "model.weights.json",
        "model_00000.weights.h5",
        "model_00001.weights.h5",
    ] {
        std::fs::copy(fixture(&format!("keras/sharded/{f}")), dir.path().join(f)).unwrap();
    }
    let r = run(socair().arg("scan").arg(dir.path()));
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = run(socair().arg("tensors").arg(dir.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = dir.path().join("model.weights.json");
    let text = std::fs::read_to_string(&index).unwrap();
    std::fs::write(
        &index,
        text.replacen("model_00001.weights.h5", "../model_00001.weights.h5", 1),
    )
    .unwrap();
    let r = run(socair().arg("scan").arg(dir.path()));
    assert_eq!(r.code, 1, "{}", r.stdout);
    let report = json(&r.stdout);
    assert_eq!(report["rows"][0]["status"], "FAIL", "{report:#}");
    assert!(
        r.stdout.contains("Keras opens each shard beside the index"),
        "{}",
        r.stdout
    );
}

/// Zips keras 3.15.1 loads as models whatever their first members (a `config.json`
/// alone, after the weights or after another member), layers without a `module` key (Keras 3's
/// legacy loader builds them), a model class without one, and a `TFSMLayer` (CVE-2026-1462),
/// each judged as Keras reads it (fixtures/keras/half-claimed/, written from models Keras saved;
/// its expected.json records what `keras.saving.load_model` did with each).
#[test]
fn half_claimed_keras_zips_are_judged_as_keras_reads_them() {
    assert!(verdicts("keras/half-claimed") >= 11);
}

/// External links among a group's links in dense storage (a fractal heap: more
/// than 8 links, a root group, `track_order`, a heap whose root is an indirect block), written
/// by h5py (fixtures/hdf5/dense-links/; its expected.json records that h5py opens the other
/// file when the name is read): each a FAIL naming the link; a dense group without one stays
/// the LEAD it was (its other links are not walked).
#[test]
fn external_links_in_dense_storage_are_fails() {
    assert!(verdicts("hdf5/dense-links") >= 5);
}

/// A Keras 3 model directory (`config.json`, `metadata.json`, `model.weights.h5`,
/// the members of a `.keras` archive Keras saved, extracted), which `keras.saving.load_model`
/// loads from the directory's `config.json` (fixtures/keras/model-dirs/; its expected.json
/// records what keras 3.15.1 did): the Lambda FAILs as in the archive, the Dense model
/// passes, and a config.json that hides its Keras objects behind another first key is a LEAD.
#[test]
fn keras_model_directories_are_judged_by_their_config() {
    assert!(verdicts("keras/model-dirs") >= 3);
}
