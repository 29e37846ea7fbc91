//! Pickles in archives that are not torch checkpoints, end to end: the
//! fixtures of fixtures/archive (written by CPython's zipfile, py7zr and 7-Zip:
//! make_fixtures.py) through the built `socair scan`, against expected.json; no committed zip
//! claimed by two plugins, and torch files still read by torch-zip; zip and 7z bombs, a 7z
//! declaring a 4 GiB dictionary, and floods of members within the bounds every reader keeps
//! (64 MiB + 8x the input, 5 s per 30 MB), measured as tests/tests/bounds.rs measures them.

use crate::bounds::measure::{self, check, measure, write_input, TARGET};
use crate::common::{assert_claimed_once, fixture, json, repo, run, scan_many, socair};
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
            // An archive without pickles has no pickle row (`null` in expected.json).
            if want[key]["status"].is_null() {
                assert!(
                    report["rows"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|r| r["check"] != check),
                    "{file}: {report:#}"
                );
                continue;
            }
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

/// The same through a 7z archive (whatever wraps the pickle): a FAIL naming
/// the member and the opcode, where socair used to report a LEAD "does not open 7z".
#[test]
fn a_pickle_calling_os_system_in_a_7z_is_a_fail() {
    for (file, place) in [
        ("system.7z", "member model/payload.pkl byte 2 (GLOBAL)"),
        ("7zip-solid.7z", "member model/payload.pkl byte 2 (GLOBAL)"),
        (
            "system-zip-in-7z.7z",
            "member bundle/inner.zip!/model/payload.pkl byte 2 (GLOBAL)",
        ),
        (
            "system-7z-in-zip.zip",
            "member outer/inner.7z!/model/payload.pkl byte 2 (GLOBAL)",
        ),
    ] {
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("archive/{file}"))));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let report = json(&r.stdout);
        let pickle = row(&report, "Pickle opcode scan");
        assert_eq!(pickle["status"], "FAIL", "{file}: {pickle:#}");
        let first = &pickle["findings"][0];
        assert_eq!(first["place"], place, "{file}");
        assert!(
            first["reason"].as_str().unwrap().contains("posix.system"),
            "{file}: {first:#}"
        );
    }
}

/// The pickles of a torch checkpoint inside a zip go through the
/// machine, placed in the checkpoint's own records. Keras archives (keras 3.15.1) are the
/// keras plugin's: one Keras writes is clean and its weights fingerprinted; one
/// without weights, or with its weights as `.npz`, is never clean, and `socair tensors` lists
/// it unread rather than exiting 0.
#[test]
fn nested_checkpoints_are_scanned_and_keras_archives_are_named() {
    for (file, place) in [
        (
            "torch-in-zip.zip",
            "member ckpt/model.pt!/pickle-os-system/data.pkl byte 167 (GLOBAL)",
        ),
        (
            "torch-in-zip-depth2.zip",
            "member outer/inner.zip!/weights/model.pt!/pickle-os-system/data.pkl byte 167 (GLOBAL)",
        ),
    ] {
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("archive/{file}"))));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let pickle = row(&json(&r.stdout), "Pickle opcode scan").clone();
        assert_eq!(pickle["status"], "FAIL", "{file}: {pickle:#}");
        assert_eq!(pickle["findings"][0]["place"], place, "{file}");
        assert!(pickle["findings"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("os.system"));
    }
    let path = fixture("archive/keras-model.keras");
    let r = run(socair().arg("scan").arg(&path));
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(json(&r.stdout)["artifact"]["format"], "keras");
    let r = run(socair().arg("tensors").arg(&path));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json(&r.stdout)["tensors"].as_array().unwrap().len(), 2);
    for (file, check, place, reason) in [
        (
            "keras-json-only.zip",
            "Format and structure",
            "archive",
            "no model.weights.h5 member: Keras refuses an archive without weights",
        ),
        (
            "keras-weights-npz.keras",
            "Archive members",
            "member model.weights.npz",
            "weights in NumPy .npz form",
        ),
    ] {
        let path = fixture(&format!("archive/{file}"));
        let r = run(socair().arg("scan").arg(&path));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let report = json(&r.stdout);
        assert_eq!(report["artifact"]["format"], "keras", "{file}");
        let found = row(&report, check).clone();
        assert_eq!(found["status"], "LEAD", "{file}: {found:#}");
        assert_eq!(found["findings"][0]["place"], place, "{file}: {found:#}");
        assert!(
            found["findings"][0]["reason"]
                .as_str()
                .unwrap()
                .starts_with(reason),
            "{file}: {found:#}"
        );
        let r = run(socair().arg("tensors").arg(&path));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let m = json(&r.stdout);
        assert_eq!(m["unread"][0]["file"], file, "{file}: {m:#}");
    }
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
    files.retain(|path| {
        let mut head = [0u8; 4];
        std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
            && &head[..2] == b"PK"
    });
    let zips = files.len();
    let mut by_format: std::collections::BTreeMap<String, usize> = Default::default();
    let (scanned, stderr) = scan_many(socair, &files);
    assert_claimed_once(&scanned, &stderr);
    for (path, entry) in &scanned {
        let format = entry["report"]["artifact"]["format"]
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
        if rel.starts_with("fixtures/archive/keras-") {
            assert_eq!(format, "keras", "{rel}");
        } else if rel.starts_with("fixtures/archive/") {
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
    scan_shape_as(shape, &format!("{shape}.zip"), data)
}

fn scan_shape_as(shape: &str, name: &str, data: Vec<u8>) -> Value {
    let _one = measure::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, file, len) = write_input(name, data);
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
    // Two lists (the structure's, the unchecked members'), each its listed findings and one
    // that counts the rest.
    let most = 2 * (socair_plugin_kit::bounded::FINDINGS_PER_ROW + 1);
    assert!(s["findings"].as_array().unwrap().len() <= most, "{s:#}");
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
    let most = socair_plugin_kit::bounded::FINDINGS_PER_ROW + 1;
    assert!(p["findings"].as_array().unwrap().len() <= most, "{p:#}");
}

// ---- 7z bounds -----------------------------------------------------------------------------

/// A 7z NUMBER in its longest form (0xFF, then 8 bytes): 7-Zip's `ReadNumber` reads it.
fn number(v: u64) -> Vec<u8> {
    let mut out = vec![0xFF];
    out.extend_from_slice(&v.to_le_bytes());
    out
}

/// A 7z archive as 7-Zip lays one out with its header plain: the signature header, one packed
/// stream (`packed`), and a header of one folder of one LZMA2 coder whose dictionary property
/// byte is `dict_byte` and whose output size is declared as `declared`, holding one file.
fn seven_z_of(name: &str, dict_byte: u8, packed: &[u8], declared: u64) -> Vec<u8> {
    let mut h = vec![0x01, 0x04]; // kHeader, kMainStreamsInfo
    h.push(0x06); // kPackInfo: position 0, one stream, its size
    h.extend(number(0));
    h.extend(number(1));
    h.push(0x09);
    h.extend(number(packed.len() as u64));
    h.push(0x00);
    h.extend([0x07, 0x0B]); // kUnpackInfo, kFolder
    h.extend(number(1));
    h.push(0x00); // not external
    h.extend(number(1)); // one coder: LZMA2 (id 0x21), one property byte
    h.extend([0x21, 0x21]);
    h.extend(number(1));
    h.push(dict_byte);
    h.push(0x0C); // kCodersUnpackSize
    h.extend(number(declared));
    h.push(0x00); // end of unpack info
                  // kSubStreamsInfo, empty: one stream per folder, no CRC (7-Zip defaults to that without
                  // it; sevenz-rust2 wants the property present).
    h.extend([0x08, 0x00]);
    h.push(0x00); // end of streams info
    h.push(0x05); // kFilesInfo: one file, its name
    h.extend(number(1));
    let utf16: Vec<u8> = name
        .encode_utf16()
        .chain([0])
        .flat_map(u16::to_le_bytes)
        .collect();
    h.push(0x11);
    h.extend(number(utf16.len() as u64 + 1));
    h.push(0x00);
    h.extend(utf16);
    h.extend([0x00, 0x00]); // end of files info, of header
    let mut start = Vec::new();
    start.extend_from_slice(&(packed.len() as u64).to_le_bytes());
    start.extend_from_slice(&(h.len() as u64).to_le_bytes());
    start.extend_from_slice(&crc32fast::hash(&h).to_le_bytes());
    let mut out = b"7z\xBC\xAF\x27\x1C\x00\x04".to_vec();
    out.extend_from_slice(&crc32fast::hash(&start).to_le_bytes());
    out.extend(start);
    out.extend_from_slice(packed);
    out.extend(h);
    out
}

/// An LZMA2 stream of `chunks` copies of the chunk liblzma writes for 2 MiB of zeros
/// (fixtures/archive/shapes/lzma2-zeros.chunk, from make_fixtures.py), each after the first
/// resetting the state but not the dictionary, and the end marker; and the bytes it decodes to.
fn lzma2_zeros(chunks: usize) -> (Vec<u8>, u64) {
    let chunk = std::fs::read(fixture("archive/shapes/lzma2-zeros.chunk")).unwrap();
    assert_eq!(chunk[0] & 0xE0, 0xE0, "a chunk that resets the dictionary");
    let unpacked =
        ((u64::from(chunk[0] & 0x1F) << 16) | (u64::from(chunk[1]) << 8) | u64::from(chunk[2])) + 1;
    let mut out = Vec::with_capacity(chunk.len() * chunks + 1);
    for i in 0..chunks {
        out.extend_from_slice(&chunk);
        if i > 0 {
            let at = out.len() - chunk.len();
            out[at] = 0xC0 | (chunk[0] & 0x1F);
        }
    }
    out.push(0x00);
    (out, unpacked * chunks as u64)
}

fn seven_z_shape(shape: &str, data: Vec<u8>) -> Value {
    scan_shape_as(shape, &format!("{shape}.7z"), data)
}

/// ~30 MB of LZMA2 chunks decoding to ~170 GB of zeros, declared honestly: not decoded.
#[test]
fn archive_7z_bomb_declared() {
    let chunk = std::fs::metadata(fixture("archive/shapes/lzma2-zeros.chunk"))
        .unwrap()
        .len();
    let (packed, size) = lzma2_zeros(TARGET / chunk as usize);
    let report = seven_z_shape(
        "archive-7z-bomb",
        seven_z_of("zeros.bin", 20, &packed, size),
    );
    assert_eq!(report["artifact"]["format"], "archive-7z");
    let s = row(&report, "Format and structure");
    assert_eq!(s["status"], "LEAD", "{s:#}");
    assert!(s.to_string().contains("not decoded"), "{s:#}");
    assert_eq!(s["findings"][0]["place"], "member zeros.bin", "{s:#}");
}

/// The same bomb declaring 1,000 bytes: decoded one byte past that, a FAIL.
#[test]
fn archive_7z_bomb_lying_about_its_size() {
    let chunk = std::fs::metadata(fixture("archive/shapes/lzma2-zeros.chunk"))
        .unwrap()
        .len();
    let (packed, _) = lzma2_zeros(TARGET / chunk as usize);
    let report = seven_z_shape(
        "archive-7z-bomb-lie",
        seven_z_of("zeros.bin", 20, &packed, 1000),
    );
    let s = row(&report, "Format and structure");
    assert_eq!(s["status"], "FAIL", "{s:#}");
    assert!(s.to_string().contains("decodes past"), "{s:#}");
}

/// A 7z of a few hundred bytes whose folder declares a 4 GiB dictionary (property byte 40)
/// and 4 GiB of output: refused before anything is decoded or allocated.
#[test]
fn archive_7z_declaring_4_gib() {
    let (packed, _) = lzma2_zeros(1);
    let report = seven_z_shape(
        "archive-7z-dict-4gib-size",
        seven_z_of("zeros.bin", 40, &packed, 4 << 30),
    );
    let s = row(&report, "Format and structure");
    assert_eq!(s["status"], "LEAD", "{s:#}");
    assert!(s.to_string().contains("not decoded"), "{s:#}");
}

/// A small 7z whose folder declares a 4 GiB dictionary over ~10 MB of zeros, declared
/// honestly: decoded, as lzma-rust2 grows the window with what it decodes rather than to the
/// declared size; the peak resident memory measured within 64 MiB + 8x the input.
#[test]
fn archive_7z_dictionary_of_4_gib_decoded_lazily() {
    let (packed, size) = lzma2_zeros(5);
    let report = seven_z_shape(
        "archive-7z-dict-4gib",
        seven_z_of("zeros.bin", 40, &packed, size),
    );
    let s = row(&report, "Format and structure");
    assert!(!s.to_string().contains("not decoded"), "{s:#}");
    assert!(
        s["summary"]
            .as_str()
            .unwrap()
            .contains(&format!("{size} bytes inflated or decoded")),
        "{s:#}"
    );
}

/// Zip members that are symbolic links (fixtures/archives/symlinks/, written with
/// Python's zipfile; its expected.json records that `unzip` extracts each as a link and
/// `zipfile` as a regular file): a link whose target leaves the archive is a FAIL naming the
/// member and its target, one inside a LEAD, whichever plugin claims the zip.
#[test]
fn symbolic_link_members_are_named_with_their_targets() {
    let e = json(&std::fs::read_to_string(fixture("archives/symlinks/expected.json")).unwrap());
    let cases = e.as_object().unwrap();
    assert!(cases.len() >= 5);
    for (file, want) in cases {
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("archives/symlinks/{file}"))));
        let report = json(&r.stdout);
        let rows = report["rows"].as_array().unwrap();
        let got = crate::common::verdict(&report);
        assert_eq!(got, want["status"], "{file}: {report:#}");
        assert_eq!(r.code, i32::from(got != "PASS"), "{file}: {}", r.stderr);
        if let (Some(place), Some(keyword)) = (want["place"].as_str(), want["keyword"].as_str()) {
            assert!(
                rows.iter()
                    .filter(|r| r["status"] == want["status"])
                    .flat_map(|r| r["findings"].as_array().unwrap())
                    .any(|f| f["place"] == place
                        && f["reason"].as_str().unwrap().contains("symbolic link")
                        && f["reason"].as_str().unwrap().contains(keyword)),
                "{file}: no link finding at {place}: {report:#}"
            );
        }
    }
}
