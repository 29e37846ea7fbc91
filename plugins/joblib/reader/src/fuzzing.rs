//! The properties the fuzz target (`fuzz/fuzz_targets/joblib_reader.rs`) checks, kept here so
//! that tests replay inputs through them: a claim is never an error, a read never panics, and
//! what it hands the host stays within bounds (ranges inside the file, inline bytes within
//! 64 MiB + 8x the input).

use crate::read::{read, ReadOptions};
use socair_plugin_api::RowStatus;

/// Claims and reads `data` as a joblib file, checking the bounds.
pub fn joblib_reader(data: &[u8]) {
    let _ = crate::claim::claims(data.get(..4096).unwrap_or(data), data.len() as u64);
    let opened = read(data, &ReadOptions::default());
    let inline: u64 = opened
        .tensors
        .iter()
        .filter_map(|t| t.inline.as_ref().into_option().map(|b| b.len() as u64))
        .sum();
    assert!(inline <= crate::inflate::bound(data.len() as u64));
    for t in opened.tensors.iter() {
        for r in t.ranges.iter() {
            assert!(r
                .offset
                .checked_add(r.len)
                .is_some_and(|e| e <= data.len() as u64));
        }
    }
    assert!(!opened.rows.is_empty());
    assert!(opened
        .rows
        .iter()
        .all(|r| r.status != RowStatus::NotTested || !r.summary.is_empty()));
}
