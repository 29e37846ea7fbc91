//! The properties the fuzz targets check, shared with the test that replays every saved
//! corpus entry and crash (`tests/fuzz_regressions.rs`).

use crate::checkpoint::{analyze, AnalyzeOptions};
use crate::pickle;
use crate::zip;

/// The zip layer on arbitrary bytes: returns (never panics), and an accepted archive's records
/// lie inside the file, in order, without overlapping.
pub fn check_zip(data: &[u8]) {
    if let Ok(archive) = zip::read_archive(data) {
        let mut end = 0u64;
        for r in &archive.records {
            assert!(r.header_offset >= end, "records overlap");
            assert!(r.data_offset > r.header_offset);
            end = r.data_offset + r.len;
            assert!(end <= data.len() as u64, "record past the end");
            assert!(r.name.starts_with(&format!("{}/", archive.prefix)));
            let _ = zip::verify_crc(data, r);
        }
    }
}

/// The pickle machine on arbitrary bytes: returns, and the state-dict walk terminates; every
/// tensor it models lies inside its storage.
pub fn check_pickle(data: &[u8]) {
    let outcome = pickle::run(data, &pickle::Options::default());
    for t in &outcome.tensors {
        assert_eq!(
            pickle::check_bounds(t),
            Ok(()),
            "a modeled tensor escapes its storage"
        );
    }
    if let Some(result) = &outcome.result {
        let _ = crate::checkpoint::read_state_dict(&outcome, result);
    }
}

/// A whole checkpoint on arbitrary bytes: returns, and what it locates lies inside the file.
pub fn check_checkpoint(data: &[u8]) {
    let analysis = analyze(data, &AnalyzeOptions::default());
    for t in &analysis.tensors {
        let start = t.record_offset + t.model.storage_offset * t.model.dtype.size;
        let len = t.model.numel().expect("bounded") * t.model.dtype.size;
        assert!(
            start + len <= data.len() as u64,
            "tensor past the end of the file"
        );
    }
}

/// A legacy checkpoint on arbitrary bytes: returns, and every tensor it locates (a storage
/// view's too) lies inside the file, as does its strided span.
pub fn check_legacy(data: &[u8]) {
    let analysis = crate::legacy::analyze(data, &AnalyzeOptions::default());
    for t in &analysis.tensors {
        let m = &t.model;
        let size = m.dtype.size;
        let furthest: u64 = m
            .shape
            .iter()
            .zip(&m.stride)
            .map(|(&d, &s)| d.saturating_sub(1) * s)
            .sum();
        let start = t.record_offset + m.storage_offset * size;
        let len = if m.numel() == Some(0) {
            0
        } else {
            (furthest + 1) * size
        };
        assert!(
            start + len <= data.len() as u64,
            "legacy tensor past the end of the file"
        );
    }
    // The descriptors the plugin hands the host are built from the same analysis.
    let _ = crate::opened_file(&analysis, false);
}
