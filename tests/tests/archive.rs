//! Pickles in archives that are not torch checkpoints (issue 16, item 6), end to end: the
//! fixtures of fixtures/archive (written by CPython's zipfile: make_fixtures.py) through the
//! built `socair scan`, against expected.json; no committed zip claimed by two plugins, and
//! torch files still read by torch-zip; zip bombs and floods of members within the bounds
//! every reader keeps (64 MiB + 8x the input, 5 s per 30 MB), measured as tests/tests/bounds.rs
//! measures them.

use crate::bounds::measure::{self, check, measure, write_input, TARGET};
use crate::common::{fixture, json, repo, run, socair};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn row<'a>(report: &'a Value, check: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} row: {report:#}"))
}

#[test]
fn every_archive_fixture_gets_its_rows() {
    let expected = json(&std::fs::read_to_string(fixture("archive/expected.json")).unwrap());
    let expected = expected.as_object().unwrap();
    assert!(expected.len() >= 16, "{}", expected.len());
    for (file, want) in expected {
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("archive/{file}"))));
        let report = json(&r.stdout);
        let format = report["artifact"]["format"].as_str().unwrap();
        let want_format = if file.ends_with(".7z") {
            "archive-7z"
        } else {
            "archive-zip"
        };
        assert_eq!(format, want_format, "{file}: {report:#}");
        let mut clean = true;
        for (key, check) in [
            ("structure", "Format and structure"),
            ("pickle", "Pickle opcode scan"),
        ] {
            let got = row(&report, check);
            assert_eq!(
                got["status"], want[key]["status"],
                "{file} {check}: {got:#}"
            );
            clean &= !matches!(got["status"].as_str(), Some("FAIL" | "LEAD"));
            let first = got["findings"]
                .as_array()
                .unwrap()
                .first()
                .map(|f| f["place"].clone())
                .unwrap_or(Value::Null);
            assert_eq!(first, want[key]["first_place"], "{file} {check}: {got:#}");
        }
        // No tensor model: nothing listed as a tensor.
        assert!(
            report
                .get("tensors")
                .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty)),
            "{file}: {report:#}"
        );
        assert_eq!(r.code, if clean { 0 } else { 1 }, "{file}: {}", r.stderr);
    }
}

/// The acceptance case of the issue: `model/payload.pkl` calling os.system in a plain zip is a
/// FAIL naming the member and the opcode, not "no loaded plugin reads this file".
#[test]
fn a_pickle_calling_os_system_in_a_plain_zip_is_a_fail() {
    let r = run(socair()
        .arg("scan")
        .arg(fixture("archive/system-depth1.zip")));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let report = json(&r.stdout);
    let pickle = row(&report, "Pickle opcode scan");
    assert_eq!(pickle["status"], "FAIL");
    let first = &pickle["findings"][0];
    assert_eq!(first["place"], "member model/payload.pkl byte 2 (GLOBAL)");
    assert!(
        first["reason"].as_str().unwrap().contains("posix.system"),
        "{first:#}"
    );
    assert!(!r.stdout.contains("no loaded plugin reads"), "{}", r.stdout);
}

/// The archives of fixtures/archives (written separately, by another generator, with Python's
/// zipfile: a pickle two zips deep, a `../../` name, an `.npy` beside a pickle, a plain
/// bundle) cross-check the archive plugin: both rows' verdicts and the deciding finding.
#[test]
fn the_independent_archives_get_their_verdicts() {
    let e = json(&std::fs::read_to_string(fixture("archives/expected.json")).unwrap());
    let cases = e.as_object().unwrap();
    assert!(cases.len() >= 4, "{}", cases.len());
    for (file, want) in cases {
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("archives/{file}"))));
        let report = json(&r.stdout);
        assert_eq!(
            report["artifact"]["format"], "archive-zip",
            "{file}: {}",
            r.stderr
        );
        let structure = row(&report, "Format and structure");
        let pickle = row(&report, "Pickle opcode scan");
        assert_eq!(
            structure["status"], want["structure"],
            "{file}: {structure:#}"
        );
        assert_eq!(pickle["status"], want["pickle"], "{file}: {pickle:#}");
        if let Some(place) = want["place"].as_str() {
            let reason = want["reason"].as_str().unwrap();
            let findings: Vec<&Value> = structure["findings"]
                .as_array()
                .unwrap()
                .iter()
                .chain(pickle["findings"].as_array().unwrap())
                .collect();
            assert!(
                findings.iter().any(|f| {
                    f["place"].as_str().unwrap().starts_with(place)
                        && f["reason"].as_str().unwrap().contains(reason)
                }),
                "{file}: no finding at {place:?} naming {reason:?}: {findings:#?}"
            );
        }
        let clean = want["structure"] == "PASS" && want["pickle"] == "PASS";
        assert_eq!(r.code, i32::from(!clean), "{file}: {}", r.stderr);
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every committed file that starts like a zip (torch checkpoints, TorchScript archives,
/// `numpy-savez.npz`, .npz fixtures, the archive fixtures): no "plugins claim it" refusal, and
/// what torch-zip read before this plugin existed it still reads.
#[test]
fn no_committed_zip_is_claimed_by_two_plugins() {
    let mut files = Vec::new();
    files_under(&repo().join("fixtures"), &mut files);
    files.sort();
    let mut zips = 0;
    let mut by_format: std::collections::BTreeMap<String, usize> = Default::default();
    for path in &files {
        let mut head = [0u8; 4];
        let Ok(mut f) = std::fs::File::open(path) else {
            continue;
        };
        if std::io::Read::read_exact(&mut f, &mut head).is_err() || &head[..2] != b"PK" {
            continue;
        }
        zips += 1;
        let r = run(socair().arg("scan").arg("--json").arg(path));
        assert!(
            !r.stdout.contains("plugins claim it") && !r.stderr.contains("plugins claim it"),
            "{}: {}{}",
            path.display(),
            r.stdout,
            r.stderr
        );
        let report: Value = serde_json::from_str(&r.stdout).unwrap_or(Value::Null);
        let format = report["artifact"]["format"]
            .as_str()
            .unwrap_or("(none)")
            .to_owned();
        let rel = path.strip_prefix(repo()).unwrap().to_string_lossy();
        let torch_dir = rel.starts_with("fixtures/torch/")
            && !rel.ends_with(".npz")
            && !rel.ends_with("generic.zip")
            && !rel.ends_with("generic.bin");
        if torch_dir && rel.ends_with(".pt") {
            assert!(
                format.starts_with("torch") || format == "(none)",
                "{rel}: read as {format}"
            );
        }
        if rel.starts_with("fixtures/archive/") {
            assert_eq!(format, "archive-zip", "{rel}");
        }
        if rel.ends_with(".npz") {
            assert!(!format.starts_with("archive"), "{rel}: read as {format}");
        }
        *by_format.entry(format).or_default() += 1;
    }
    eprintln!("{zips} committed zips: {by_format:?}");
    assert!(zips > 40, "{zips}");
}

// ---- bounds -------------------------------------------------------------------------------

/// A zip entry for the shapes: name, method (0 stored, 8 deflated), bytes as stored, CRC-32
/// and the inflated size the headers declare.
struct Entry {
    name: Vec<u8>,
    method: u16,
    stored: Vec<u8>,
    crc: u32,
    size: u32,
}

/// A zip archive as zipfile writes one without data descriptors.
fn zip_of(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let fixed = |sig: &[u8], central: bool| {
            let mut h = sig.to_vec();
            if central {
                h.extend_from_slice(&20u16.to_le_bytes()); // made by
            }
            h.extend_from_slice(&20u16.to_le_bytes()); // needed
            h.extend_from_slice(&0u16.to_le_bytes()); // flags
            h.extend_from_slice(&e.method.to_le_bytes());
            h.extend_from_slice(&[0, 0, 0x21, 0]); // time, date (1980-01-01)
            h.extend_from_slice(&e.crc.to_le_bytes());
            h.extend_from_slice(&(e.stored.len() as u32).to_le_bytes());
            h.extend_from_slice(&e.size.to_le_bytes());
            h.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // extra
            h
        };
        out.extend(fixed(b"PK\x03\x04", false));
        out.extend_from_slice(&e.name);
        out.extend_from_slice(&e.stored);
        central.extend(fixed(b"PK\x01\x02", true));
        central.extend_from_slice(&[0; 8]); // comment, disk, internal, external attributes
        central.extend_from_slice(&[0; 2]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(&e.name);
    }
    let start = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    let n = entries.len().min(0xffff) as u16;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// A raw deflate stream (one fixed-Huffman block) of a zero byte and `matches` copies of
/// length 258 at distance 1: 13 bits per 258 zeros, as a zip bomb compresses.
fn deflate_zeros(matches: usize) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u64, 0u32);
    let mut put = |value: u64, n: u32, out: &mut Vec<u8>| {
        acc |= value << bits;
        bits += n;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    };
    // Huffman codes are sent most significant bit first.
    let code = |c: u64, n: u32| (c.reverse_bits() >> (64 - n), n);
    put(1, 1, &mut out); // BFINAL
    put(1, 2, &mut out); // BTYPE 01: fixed codes
    let (lit0, n) = code(0x30, 8);
    put(lit0, n, &mut out);
    let (len258, n258) = code(0xC5, 8); // length code 285
    let (dist1, nd) = code(0, 5);
    for _ in 0..matches {
        put(len258, n258, &mut out);
        put(dist1, nd, &mut out);
    }
    put(0, 7, &mut out); // end of block (256)
    put(0, 7, &mut out); // flush
    (out, 1 + 258 * matches as u64)
}

/// A first member whose bytes end the first bytes' reading as a protocol-0 pickle (a newline,
/// then no opcode): without it a bomb's head, which holds no newline, runs as a `PERSID` line
/// and torch-zip's legacy reader claims the file (as it claims anything that reads as a pickle).
fn not_a_pickle() -> Entry {
    let data = b"\n\xff".to_vec();
    Entry {
        name: b"README".to_vec(),
        method: 0,
        crc: crc32fast::hash(&data),
        size: data.len() as u32,
        stored: data,
    }
}

fn bomb_entry(name: &str, matches: usize, declared: Option<u32>) -> Entry {
    let (stored, size) = deflate_zeros(matches);
    let mut crc = crc32fast::Hasher::new();
    let chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        crc.update(&chunk[..n]);
        left -= n as u64;
    }
    let crc = crc.finalize();
    Entry {
        name: name.as_bytes().to_vec(),
        method: 8,
        stored,
        crc,
        size: declared.unwrap_or(size.min(u64::from(u32::MAX)) as u32),
    }
}

fn scan_shape(shape: &str, data: Vec<u8>) -> Value {
    let _one = measure::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, file, len) = write_input(&format!("{shape}.zip"), data);
    let mut cmd = socair();
    cmd.arg("scan").arg(&file);
    let c = measure(cmd, dir.path(), "scan");
    check(shape, "scan", len, &c, dir.path());
    json(&std::fs::read_to_string(dir.path().join("scan.out")).unwrap())
}

/// One member of ~30 MB deflating to ~4 GB of zeros, declared honestly: not inflated.
#[test]
fn archive_zip_bomb_declared() {
    let matches = (TARGET * 8 / 13).min((u32::MAX as usize - 1) / 258);
    let report = scan_shape(
        "archive-bomb",
        zip_of(&[not_a_pickle(), bomb_entry("zeros.bin", matches, None)]),
    );
    let s = row(&report, "Format and structure");
    assert_eq!(s["status"], "LEAD", "{s:#}");
    assert!(s.to_string().contains("not inflated"), "{s:#}");
}

/// The same bomb declaring 1,000 bytes: inflated one byte past that, a FAIL.
#[test]
fn archive_zip_bomb_lying_about_its_size() {
    let matches = (TARGET * 8 / 13).min((u32::MAX as usize - 1) / 258);
    let report = scan_shape(
        "archive-bomb-lie",
        zip_of(&[not_a_pickle(), bomb_entry("zeros.bin", matches, Some(1000))]),
    );
    let s = row(&report, "Format and structure");
    assert_eq!(s["status"], "FAIL", "{s:#}");
    assert!(s.to_string().contains("inflates past"), "{s:#}");
}

/// A thousand members of ~30 KB, each inflating to ~4.8 MB (4.8 GB in all, declared
/// honestly): inflated until the budget is spent, the rest named as not inflated.
#[test]
fn archive_many_bombs() {
    let each = TARGET / 1000 * 8 / 13;
    let entries: Vec<Entry> = std::iter::once(not_a_pickle())
        .chain((0..1000).map(|i| bomb_entry(&format!("z/{i:04}.bin"), each, None)))
        .collect();
    let report = scan_shape("archive-many-bombs", zip_of(&entries));
    let s = row(&report, "Format and structure");
    assert_eq!(s["status"], "LEAD", "{s:#}");
    assert!(s.to_string().contains("not listed"), "{s:#}");
}

/// Members a zip without zip64 records can hold (65,000), with names long enough to make
/// the archive the shapes' size.
const FLOOD: usize = 65_000;

fn long_name(prefix: &str, i: usize, fixed: usize) -> Vec<u8> {
    let mut name = format!("{prefix}/{i:06}/").into_bytes();
    let len = (TARGET / FLOOD).saturating_sub(fixed) / 2;
    name.resize(len.max(name.len()), b'x');
    name
}

/// Tens of thousands of empty members: every one listed by the central directory, each one a
/// LEAD (nothing checks an empty file), the findings bounded with a count of the rest.
#[test]
fn archive_flood_of_empty_members() {
    let n = FLOOD;
    let entries: Vec<Entry> = (0..n)
        .map(|i| Entry {
            name: long_name("m", i, 76),
            method: 0,
            stored: Vec::new(),
            crc: 0,
            size: 0,
        })
        .collect();
    let report = scan_shape("archive-empty-flood", zip_of(&entries));
    let s = row(&report, "Format and structure");
    assert!(s["findings"].as_array().unwrap().len() <= 130, "{s:#}");
    assert!(
        s["summary"]
            .as_str()
            .unwrap()
            .contains(&format!("{n} members")),
        "{s:#}"
    );
}

/// Tens of thousands of pickles calling os.system: each one run, the findings bounded.
#[test]
fn archive_flood_of_hostile_pickles() {
    let pickle = b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00id\x85R.";
    let n = FLOOD;
    let entries: Vec<Entry> = (0..n)
        .map(|i| Entry {
            name: long_name("p", i, 76 + pickle.len()),
            method: 0,
            stored: pickle.to_vec(),
            crc: crc32fast::hash(pickle),
            size: pickle.len() as u32,
        })
        .collect();
    let report = scan_shape("archive-pickle-flood", zip_of(&entries));
    let p = row(&report, "Pickle opcode scan");
    assert_eq!(p["status"], "FAIL", "{p:#}");
    assert!(p["findings"].as_array().unwrap().len() <= 65, "{p:#}");
}
