//! The properties the fuzz targets (`fuzz/fuzz_targets/hdf5_reader.rs`, `keras_config.rs`,
//! `keras_archive.rs`) check, kept here so that tests replay inputs through them.

use crate::{opened, HDF5_FORMAT, KERAS_FORMAT};
use socair_keras::grammar::{self, Dialect};
use socair_keras::{archive, h5model, Bytes};
use socair_plugin_api::RowStatus;

fn bounded(a: &socair_keras::Analysis, input: usize) {
    let inline: usize = a
        .tensors
        .iter()
        .map(|t| match &t.bytes {
            Bytes::Inline(b) => b.len(),
            Bytes::Ranges(_) => 0,
        })
        .sum();
    assert!(
        inline as u64 <= 8 * input as u64 + (64 << 20),
        "inline bytes past the bound"
    );
    for t in &a.tensors {
        if let Bytes::Ranges(r) = &t.bytes {
            assert!(r
                .iter()
                .all(|&(at, len)| at.checked_add(len).is_some_and(|e| e <= input as u64)));
        }
    }
    assert!(a.structure.shown.len() <= grammar::MAX_LISTED);
}

/// `data` as an HDF5 file: no panic, ranges inside the file, inline bytes bounded, and a PASS
/// only when nothing was found.
pub fn check_hdf5(data: &[u8]) {
    let _ = socair_hdf5::detect(data);
    for read_data in [false, true] {
        let a = h5model::read(data, read_data, &[]);
        bounded(&a, data.len());
        let f = opened(a, HDF5_FORMAT, data.len() as u64);
        if f.rows[0].status == RowStatus::Pass {
            assert!(f.unread.is_empty());
        }
    }
}

/// `data` as a config in both dialects: no panic, findings bounded.
pub fn check_config(data: &[u8]) {
    for d in [Dialect::Keras3, Dialect::Legacy] {
        let o = grammar::judge(data, "config.json", d, &[]);
        assert!(o.found.shown.len() <= grammar::MAX_LISTED);
        if o.found.worst.is_none() {
            assert!(o.found.shown.is_empty());
        }
        let _ = grammar::judge_document(data, "training_config", d, &[]);
    }
}

/// `data` as a `.keras` archive: no panic, ranges inside the file, bounds kept.
pub fn check_archive(data: &[u8]) {
    let head = &data[..data.len().min(4096)];
    let _ = crate::keras_claims(head, data.len() as u64);
    for read_data in [false, true] {
        let a = archive::read(data, read_data, &[]);
        bounded(&a, data.len());
        let f = opened(a, KERAS_FORMAT, data.len() as u64);
        assert!(f.rows.len() >= 2 || f.rows[0].status == RowStatus::Fail);
    }
}
