//! A model directory's files that are not a format's: an empty `__init__.py` is
//! no code and no LEAD, anything in it stays one; a file with a second name (a hard link,
//! whose other name may lie outside the directory: CVE-2026-34446) is a LEAD even when its
//! bytes are read. Links are made here in temporary directories (none is committed).

use crate::common::{fixture, json, report_row, run, socair};
use std::path::{Path, PathBuf};

/// Scans `dir`: the exit code and the Format and structure row.
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

/// A copy of the ONNX model with external data (written by onnx.save_model) to edit.
fn onnx_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(fixture("onnx/external/model-dir")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    (tmp, dir)
}

#[test]
fn an_empty_init_py_is_no_lead_and_code_in_one_is() {
    let (_tmp, dir) = onnx_dir();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (0, Some("PASS")), "{row:#}");
    std::fs::write(dir.join("__init__.py"), b"").unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/__init__.py"), b"\n  \n").unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (0, Some("PASS")), "{row:#}");
    std::fs::write(dir.join("sub/__init__.py"), b"import os\n").unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("LEAD")), "{row:#}");
    assert!(row.to_string().contains("sub/__init__.py"), "{row:#}");
}

#[test]
#[cfg(unix)]
fn a_hard_linked_file_is_a_lead() {
    let (tmp, dir) = onnx_dir();
    // The external data file is also a name of a file outside the directory.
    let outside = tmp.path().join("outside.bin");
    std::fs::rename(dir.join("weights.bin"), &outside).unwrap();
    std::fs::hard_link(&outside, dir.join("weights.bin")).unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (1, Some("LEAD")), "{row:#}");
    let text = row.to_string();
    assert!(
        text.contains("weights.bin") && text.contains("a hard link: the file has 2 names"),
        "{row:#}"
    );
    // One name again: PASS.
    std::fs::remove_file(&outside).unwrap();
    let (code, row) = structure(&dir);
    assert_eq!((code, row["status"].as_str()), (0, Some("PASS")), "{row:#}");
}
