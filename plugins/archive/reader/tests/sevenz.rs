//! The 7z walk over the fixtures py7zr and 7-Zip wrote (fixtures/archive/make_fixtures.py):
//! what was decoded, counted and opened, beyond the rows fixtures.rs compares.

use socair_archive::scan::{budget_for, scan_7z_bytes, Analysis};
use socair_pickle::pickle::Severity;
use std::path::PathBuf;

fn walk(file: &str) -> (Analysis, usize) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/archive")
        .join(file);
    let bytes = std::fs::read(path).unwrap();
    (
        scan_7z_bytes(&bytes, socair_archive::scan::Scope::data(&[])),
        bytes.len(),
    )
}

fn reasons(a: &Analysis) -> String {
    let all: Vec<String> = [&a.structure, &a.unchecked, &a.pickle]
        .iter()
        .flat_map(|l| l.shown.iter())
        .map(|f| format!("{}: {}", f.place, f.reason))
        .collect();
    all.join("\n")
}

#[test]
fn every_member_of_a_clean_archive_is_decoded_and_opened() {
    // 7-Zip's solid LZMA2 folder: a JSON, a benign pickle, a pickle calling os.system.
    let (a, _) = walk("7zip-solid.7z");
    assert_eq!(
        (
            a.sevenz_archives,
            a.members,
            a.pickles,
            a.data,
            a.crc_verified
        ),
        (1, 3, 2, 1, 3),
        "{}",
        reasons(&a)
    );
    assert_eq!(a.structure.worst, None, "{}", reasons(&a));
    assert_eq!(a.pickle.worst, Some(Severity::Fail));
    for (file, pickles) in [
        ("benign-pickle.7z", 1),
        ("7zip-ppmd.7z", 1),
        ("7zip-bzip2.7z", 1),
        ("7zip-bcj.7z", 1),
    ] {
        let (a, _) = walk(file);
        assert_eq!(a.pickles, pickles, "{file}: {}", reasons(&a));
        assert!(
            a.inflated > 0 && a.crc_verified == a.members,
            "{file}: {a:?}"
        );
        assert_eq!(
            (a.structure.worst, a.unchecked.worst, a.pickle.worst),
            (None, None, None),
            "{file}: {}",
            reasons(&a)
        );
    }
}

#[test]
fn nested_archives_share_one_budget_and_one_depth_limit() {
    let (a, _) = walk("system-zip-in-7z.7z");
    assert_eq!((a.sevenz_archives, a.archives), (1, 1));
    let (a, _) = walk("too-deep.7z");
    assert_eq!(a.sevenz_archives, 4, "{}", reasons(&a));
    assert_eq!(a.pickles, 0);
    assert!(reasons(&a).contains("deeper than the 4"), "{}", reasons(&a));
}

#[test]
fn bombs_are_not_decoded_past_the_budget() {
    // 64 MiB declared honestly: more than 32 MiB + 4x a 10 kB input, not decoded at all.
    let (a, len) = walk("bomb.7z");
    assert_eq!(a.budget, budget_for(len as u64));
    assert_eq!(a.inflated, 0);
    assert_eq!(a.unchecked.worst, Some(Severity::Lead));
    assert!(reasons(&a).contains("not decoded"), "{}", reasons(&a));
    // 16 MiB of zeros declaring 1,000 bytes: decoding stops there, a FAIL.
    let (a, _) = walk("bomb-size-lie.7z");
    assert!(a.inflated <= 1000, "{}", a.inflated);
    assert_eq!(a.structure.worst, Some(Severity::Fail));
    assert!(reasons(&a).contains("decodes past"), "{}", reasons(&a));
    // The same lie over a Deflate folder, which this plugin decodes itself.
    let (a, _) = walk("deflate-size-lie.7z");
    assert_eq!(a.inflated, 0);
    assert_eq!(a.structure.worst, Some(Severity::Fail));
    assert!(
        reasons(&a).contains("Deflate stream decodes past the 1000 bytes"),
        "{}",
        reasons(&a)
    );
}

/// Deflate and Zstandard folders: decoded outside sevenz-rust2 (`sevenz/coders.rs`),
/// each member split out of a solid folder by its size and its CRC-32 checked, then opened.
#[test]
fn deflate_and_zstandard_folders_are_decoded() {
    for (file, pickles, data) in [
        ("deflate.7z", 1, 0),
        ("deflate-solid.7z", 1, 3),
        ("zstd.7z", 1, 1),
        ("zstd-solid.7z", 1, 1),
    ] {
        let (a, _) = walk(file);
        assert_eq!(a.structure.worst, None, "{file}: {}", reasons(&a));
        assert_eq!(a.unchecked.worst, None, "{file}: {}", reasons(&a));
        assert_eq!((a.pickles, a.data), (pickles, data), "{file}");
        assert_eq!(a.crc_verified, a.members, "{file}");
    }
    let (a, _) = walk("zstd.7z");
    assert_eq!(a.pickle.worst, Some(Severity::Fail));
    assert!(reasons(&a).contains("member model/payload.pkl byte 2 (GLOBAL)"));
}

#[test]
fn refusals_name_their_reason() {
    for (file, severity, words) in [
        ("encrypted.7z", Severity::Lead, "encrypted"),
        ("encrypted-header.7z", Severity::Lead, "encrypted"),
        ("crc-mismatch.7z", Severity::Fail, "CRC-32"),
        ("zstd-crc-mismatch.7z", Severity::Fail, "CRC-32"),
        ("truncated.7z", Severity::Fail, "not a 7z archive"),
    ] {
        let (a, _) = walk(file);
        assert_eq!(
            a.structure.worst.max(a.unchecked.worst),
            Some(severity),
            "{file}: {}",
            reasons(&a)
        );
        assert!(reasons(&a).contains(words), "{file}: {}", reasons(&a));
        assert_eq!(a.pickles, 0, "{file}");
    }
}
