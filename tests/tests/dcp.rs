//! `torch.distributed.checkpoint` directories: `.metadata` + `.distcp`, written by
//! `dcp.save` of torch 2.15.0 (fixtures/dcp/make_fixtures.py), read as `FileSystemReader`
//! reads them: every item located by the metadata and read as `torch.load` reads its slice.
//! The tiny checkpoint PASSes with every tensor the bytes `dcp.load` gives back (expected.json,
//! from the real loader); the hostile one, whose bytes item `dcp.load` unpickles into a call
//! of `os.system` (proven by the generator with the call recorded, never run), FAILs naming
//! it; edited copies check the layout rules.

use crate::common::{fixture, has_finding, json, report_row, run, socair, tensor_hashes};
use std::path::{Path, PathBuf};

fn scan(path: &Path) -> (i32, serde_json::Value) {
    let r = run(socair().arg("scan").arg(path).arg("--json"));
    assert!(
        r.code == 0 || r.code == 1,
        "{}: {}",
        path.display(),
        r.stderr
    );
    (r.code, json(&r.stdout))
}

/// A copy of the tiny checkpoint to edit.
fn tiny_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ckpt");
    std::fs::create_dir(&dir).unwrap();
    for name in [".metadata", "__0_0.distcp"] {
        std::fs::copy(fixture("dcp/tiny").join(name), dir.join(name)).unwrap();
    }
    (tmp, dir)
}

#[test]
fn a_dcp_checkpoint_passes_and_every_tensor_is_what_dcp_load_gives() {
    let (code, report) = scan(&fixture("dcp/tiny"));
    assert_eq!(code, 0, "{:#}", report["rows"]);
    for row in report["rows"].as_array().unwrap() {
        assert_ne!(row["status"], "FAIL", "{row:#}");
        assert_ne!(row["status"], "LEAD", "{row:#}");
    }
    let r = run(socair().arg("tensors").arg(fixture("dcp/tiny")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = tensor_hashes(&json(&r.stdout));
    let expected = json(&std::fs::read_to_string(fixture("dcp/expected.json")).unwrap());
    let want = expected["tiny"].as_object().unwrap();
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (name, w) in want {
        assert_eq!(
            got.get(name).map(String::as_str),
            w["sha256"].as_str(),
            "{name}"
        );
    }
}

#[test]
fn a_bytes_item_that_calls_os_system_fails() {
    let expected = json(&std::fs::read_to_string(fixture("dcp/expected.json")).unwrap());
    // What the generator recorded while dcp.load read it: the call happened.
    assert_eq!(
        expected["hostile"]["os.system calls while dcp.load ran"][0],
        "echo socair-dcp-hostile"
    );
    let (code, report) = scan(&fixture("dcp/hostile"));
    assert_eq!(code, 1);
    let row = report_row(&report, "Pickle opcode scan");
    assert_eq!(row["status"], "FAIL", "{row:#}");
    assert!(
        has_finding(row, "__0_0.distcp: bytes item \"epoch\"", "os.system"),
        "{row:#}"
    );
}

#[test]
fn the_metadata_alone_is_a_lead() {
    let (code, report) = scan(&fixture("dcp/tiny/.metadata"));
    assert_eq!(code, 1);
    let row = report_row(&report, "Format and structure");
    assert_eq!(row["status"], "LEAD", "{row:#}");
    assert!(
        row.to_string().contains("scan the checkpoint's directory"),
        "{row:#}"
    );
    // Its tensors are not in it: `tensors` says they were not read.
    let r = run(socair().arg("tensors").arg(fixture("dcp/tiny/.metadata")));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("scan the checkpoint's directory"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_layout_is_judged() {
    // Bytes after the last item: no loader reads them, nothing checked them.
    let (_tmp, dir) = tiny_copy();
    let data = dir.join("__0_0.distcp");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes.extend_from_slice(b"junk");
    std::fs::write(&data, &bytes).unwrap();
    let (code, report) = scan(&dir);
    assert_eq!(code, 1);
    let row = report_row(&report, "Format and structure");
    assert_eq!(row["status"], "LEAD", "{row:#}");
    assert!(
        has_finding(row, "__0_0.distcp: bytes", "no item"),
        "{row:#}"
    );

    // Cut short: the last item runs past the end.
    bytes.truncate(bytes.len() - 4 - 100);
    std::fs::write(&data, &bytes).unwrap();
    let (code, report) = scan(&dir);
    assert_eq!(code, 1);
    let row = report_row(&report, "Format and structure");
    assert!(
        has_finding(row, "__0_0.distcp: tensor item", "past the end"),
        "{row:#}"
    );

    // The data file missing: dcp.load would read bytes the scan never saw.
    std::fs::remove_file(&data).unwrap();
    let (code, report) = scan(&dir);
    assert_eq!(code, 1);
    let row = report_row(&report, "Format and structure");
    assert_eq!(row["status"], "FAIL", "{row:#}");
    assert!(
        has_finding(row, ".metadata: storage_data", "not a regular file"),
        "{row:#}"
    );
}

#[test]
fn items_that_share_bytes_fail() {
    // The `layer.bias` item moved onto `layer.weight`'s bytes: its `_StorageInfo.offset`
    // (2838, a BININT2 in the pickle: `M` and two bytes little-endian) made 1261.
    let (_tmp, dir) = tiny_copy();
    let meta = dir.join(".metadata");
    let mut bytes = std::fs::read(&meta).unwrap();
    let from = [b'M', (2838u16 & 0xff) as u8, (2838u16 >> 8) as u8];
    let to = [b'M', (1261u16 & 0xff) as u8, (1261u16 >> 8) as u8];
    let at = bytes
        .windows(3)
        .position(|w| w == from)
        .expect("layer.bias's offset in the pickle");
    bytes[at..at + 3].copy_from_slice(&to);
    std::fs::write(&meta, &bytes).unwrap();
    let (code, report) = scan(&dir);
    assert_eq!(code, 1);
    let row = report_row(&report, "Format and structure");
    assert_eq!(row["status"], "FAIL", "{row:#}");
    assert!(
        has_finding(
            row,
            "__0_0.distcp: tensor item \"layer.bias\"",
            "shares bytes"
        ),
        "{row:#}"
    );
}
