//! What a model directory's files point at: a weight index's `weight_map`
//! (fixtures/indexes/, shards transformers and torch.save wrote, indexes cut down and edited by
//! fixtures/indexes/make_indexes.py), GGUF splits (fixtures/gguf/split/, written by gguf-py's
//! GGUFWriter) and ONNX external data (fixtures/onnx/external/, written by onnx.save_model). A
//! name that leaves the directory or names a file that is not there FAILs, naming the file and
//! the entry; a name of a file no reader read, or of a link inside, is a LEAD; the clean
//! directories PASS. Symbolic links are made here (none is committed).

use crate::common::{fixture, json, report_row, run, socair};
use std::path::{Path, PathBuf};

/// Scans `dir`, returning the exit code and the Format and structure row.
fn structure(dir: &Path) -> (i32, serde_json::Value) {
    let r = run(socair().arg("scan").arg(dir).arg("--json"));
    assert!(
        r.code == 0 || r.code == 1,
        "{}: {}",
        dir.display(),
        r.stderr
    );
    let report = json(&r.stdout);
    (r.code, report_row(&report, "Format and structure").clone())
}

/// The findings of a row as `place: reason` lines.
fn findings(row: &serde_json::Value) -> Vec<String> {
    row["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}: {}",
                f["place"].as_str().unwrap(),
                f["reason"].as_str().unwrap()
            )
        })
        .collect()
}

/// A copy of a fixture directory in a temporary directory, to edit.
fn copy_of(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(fixture(rel)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    (tmp, dir)
}

#[test]
fn weight_indexes_fail_names_that_leave_the_directory_or_are_not_there() {
    let expected = json(&std::fs::read_to_string(fixture("indexes/expected.json")).unwrap());
    let expected = expected.as_object().unwrap();
    assert_eq!(expected.len(), 11);
    for (name, e) in expected {
        let (code, row) = structure(&fixture(&format!("indexes/{name}")));
        let verdict = e["verdict"].as_str().unwrap();
        let index = e["files"]
            .as_object()
            .unwrap()
            .keys()
            .find(|f| f.ends_with(".json"))
            .unwrap();
        // The index's own part of the merged row (a torch shard's structure is NOT_TESTED).
        let part = format!("{index}: {verdict} a weight index");
        assert!(
            row["summary"].as_str().unwrap().contains(&part),
            "{name}: {part:?} not in {row:#}"
        );
        if verdict != "PASS" {
            assert_eq!(row["status"], verdict, "{name}: {row:#}");
        }
        assert_eq!(code, i32::from(verdict != "PASS"), "{name}");
    }
    // The finding names the index and the entry, and says what is wrong.
    let (_, row) = structure(&fixture("indexes/dotdot"));
    let all = findings(&row).join("\n");
    assert!(
        all.contains("model.safetensors.index.json: weight_map[\"encoder.layer.1.output.LayerNorm.bias\"]: \"../../etc/passwd\" leaves the directory"),
        "{all}"
    );
    let (_, row) = structure(&fixture("indexes/absolute"));
    assert!(
        findings(&row)
            .iter()
            .any(|f| f.contains("\"/etc/passwd\" is an absolute path")),
        "{row:#}"
    );
    let (_, row) = structure(&fixture("indexes/missing-shard"));
    assert!(
        findings(&row)
            .iter()
            .any(|f| f
                .contains("\"model-00005-of-00005.safetensors\", which is not in the directory")),
        "{row:#}"
    );
    let (_, row) = structure(&fixture("indexes/unread-shard"));
    assert!(
        findings(&row)
            .iter()
            .any(|f| f.contains("\"flax_model-00002.msgpack\", which no reader read")),
        "{row:#}"
    );
    let (_, row) = structure(&fixture("indexes/bin-absolute"));
    assert!(
        findings(&row).iter().any(|f| f.starts_with(
            "pytorch_model.bin.index.json: weight_map[\"b.weight\"]: \"/tmp/pytorch_model.bin\""
        )),
        "{row:#}"
    );
    let (_, row) = structure(&fixture("indexes/variant"));
    assert!(
        findings(&row)
            .iter()
            .any(|f| f.starts_with("model.safetensors.index.fp16.json: weight_map[")),
        "{row:#}"
    );
    // Clean ones say what was checked.
    let (_, row) = structure(&fixture("indexes/clean"));
    assert!(
        row["summary"]
            .as_str()
            .unwrap()
            .contains("a weight index of 18 tensors in 2 shards"),
        "{row:#}"
    );
    let (_, row) = structure(&fixture("safetensors/tiny-bert"));
    assert_eq!(row["status"], "PASS");
    assert!(
        row["summary"]
            .as_str()
            .unwrap()
            .contains("a weight index of 39 tensors in 4 shards"),
        "{row:#}"
    );
}

#[test]
fn weight_indexes_are_judged_by_what_transformers_loads() {
    // A tensor in two shards the index names: loaders keep different copies.
    let (_, row) = structure(&fixture("indexes/duplicate-tensor"));
    assert_eq!(row["status"], "FAIL");
    assert!(
        findings(&row).iter().any(|f| f.contains("is held by 2 shards the index names (model-00001-of-00002.safetensors, model-00002-of-00002.safetensors)")),
        "{row:#}"
    );
    // An entry naming a shard that does not hold the tensor, which another does.
    let (_, row) = structure(&fixture("indexes/misplaced"));
    assert_eq!(row["status"], "LEAD");
    assert!(
        findings(&row).iter().any(|f| f.contains("names \"model-00003-of-00004.safetensors\", which does not hold it; model-00004-of-00004.safetensors does")),
        "{row:#}"
    );
    // A tensor a shard holds that the index does not list: it loads anyway.
    let (_, row) = structure(&fixture("indexes/unlisted"));
    assert_eq!(row["status"], "LEAD");
    assert!(
        findings(&row)
            .iter()
            .any(|f| f.contains("is not in the index's weight_map")),
        "{row:#}"
    );
    // Scanning one shard alone is unchanged.
    let r = run(socair()
        .arg("scan")
        .arg(fixture("indexes/dotdot/model-00004-of-00004.safetensors")));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn links_an_index_names_fail_when_they_lead_outside_and_are_never_followed() {
    let (_tmp, dir) = copy_of("indexes/clean");
    let shard = dir.join("model-00004-of-00004.safetensors");
    std::fs::remove_file(&shard).unwrap();
    std::os::unix::fs::symlink(
        fixture("safetensors/tiny-bert/model-00004-of-00004.safetensors"),
        &shard,
    )
    .unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("FAIL")), "{row:#}");
    let all = findings(&row).join("\n");
    assert!(
        all.contains("model.safetensors.index.json: weight_map[")
            && all.contains(
                "is (or lies under) the symbolic link \"model-00004-of-00004.safetensors\""
            )
            && all.contains("outside the directory"),
        "{all}"
    );
    assert!(
        all.contains("model-00004-of-00004.safetensors: file: a symbolic link to"),
        "{all}"
    );
    // A link inside the directory is not followed either: a LEAD.
    std::fs::remove_file(&shard).unwrap();
    std::fs::copy(
        fixture("safetensors/tiny-bert/model-00004-of-00004.safetensors"),
        dir.join("real.safetensors"),
    )
    .unwrap();
    std::os::unix::fs::symlink("real.safetensors", &shard).unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("LEAD")), "{row:#}");
    assert!(
        findings(&row)
            .join("\n")
            .contains("inside the directory, not followed"),
        "{row:#}"
    );
    // Commands that read tensors still refuse a directory holding a link.
    let t = run(socair().arg("tensors").arg(&dir));
    assert_eq!(t.code, 2, "{}", t.stderr);
    assert!(t.stderr.contains("symbolic link"), "{}", t.stderr);
}

#[test]
fn gguf_splits_must_all_be_here_and_read() {
    let (code, row) = structure(&fixture("gguf/split"));
    assert_eq!(code, 0, "{row:#}");
    assert!(
        row["summary"].as_str().unwrap().contains(
            "the first of 3 GGUF splits: every split llama.cpp would open beside it is here"
        ),
        "{row:#}"
    );
    // The last split missing: llama.cpp would open a file the scan never saw.
    let (_tmp, dir) = copy_of("gguf/split");
    std::fs::remove_file(dir.join("tiny-00003-of-00003.gguf")).unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("FAIL")), "{row:#}");
    assert!(
        findings(&row).iter().any(|f| f.starts_with("tiny-00001-of-00003.gguf: split 3 of 3: names \"tiny-00003-of-00003.gguf\", which is not in the directory")),
        "{row:#}"
    );
    // A later split without its first: a LEAD.
    std::fs::remove_file(dir.join("tiny-00001-of-00003.gguf")).unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("LEAD")), "{row:#}");
    assert!(
        findings(&row).join("\n").contains("whose first split"),
        "{row:#}"
    );
    // A split whose bytes no GGUF reader read (replaced by text): a LEAD naming it.
    let (_tmp2, dir) = copy_of("gguf/split");
    std::fs::write(dir.join("tiny-00002-of-00003.gguf"), "not gguf\n").unwrap();
    let (_, row) = structure(&dir);
    assert_ne!(row["status"], "PASS", "{row:#}");
}

#[test]
fn onnx_external_data_must_be_a_file_of_the_directory() {
    let (code, _) = structure(&fixture("onnx/external/model-dir"));
    assert_eq!(code, 0);
    // The data file missing: onnx would read a file the scan never saw.
    let (_tmp, dir) = copy_of("onnx/external/model-dir");
    std::fs::remove_file(dir.join("weights.bin")).unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("FAIL")), "{row:#}");
    assert!(
        findings(&row).iter().any(|f| f.starts_with("model.onnx: tensor \"ext.a\" (and 1 more): its external data location names \"weights.bin\", which is not in the directory")),
        "{row:#}"
    );
    // A link leading out of the directory.
    std::os::unix::fs::symlink(
        fixture("onnx/external/model-dir/weights.bin"),
        dir.join("weights.bin"),
    )
    .unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("FAIL")), "{row:#}");
    assert!(
        findings(&row)
            .join("\n")
            .contains("symbolic link \"weights.bin\""),
        "{row:#}"
    );
    // The model file alone: its external bytes were never read.
    let (code, row) = structure(&fixture("onnx/external/model-dir/model.onnx"));
    assert_eq!((code, row["status"].as_str()), (1, Some("LEAD")), "{row:#}");
    assert!(
        findings(&row)
            .join("\n")
            .contains("scan the model's directory"),
        "{row:#}"
    );
    // A range past the end of the data file.
    let (code, row) = structure(&fixture("onnx/external/offset-past-end"));
    assert_eq!((code, row["status"].as_str()), (1, Some("LEAD")), "{row:#}");
    assert!(
        findings(&row)
            .join("\n")
            .contains("lie past the end of that 512-byte file"),
        "{row:#}"
    );
}
