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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    /// The fallback for a machine without cargo-fuzz: the fuzz target's property over every
    /// committed fixture (under 100 kB) and 300 deterministic mutations of each (bytes changed,
    /// cut, inserted), compressed or not.
    #[test]
    fn mutated_fixtures_keep_the_properties() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/joblib");
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "joblib") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            if data.len() > 100_000 {
                continue;
            }
            files += 1;
            super::joblib_reader(&data);
            for _ in 0..300 {
                let mut m = data.clone();
                let at = (next() as usize) % m.len().max(1);
                match next() % 4 {
                    0 => m.truncate(at),
                    1 => m.insert(at, next() as u8),
                    _ => {
                        if let Some(b) = m.get_mut(at) {
                            *b = next() as u8;
                        }
                    }
                }
                super::joblib_reader(&m);
            }
        }
        assert!(files > 30, "{files}");
    }
}
