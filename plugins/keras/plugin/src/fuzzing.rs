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
            Bytes::Ranges(_) | Bytes::Elsewhere { .. } => 0,
        })
        .sum();
    assert!(
        inline as u64 <= socair_plugin_kit::model::memory_bound(input as u64),
        "inline bytes past the bound"
    );
    for t in &a.tensors {
        if let Bytes::Ranges(r) = &t.bytes {
            assert!(r
                .iter()
                .all(|&(at, len)| at.checked_add(len).is_some_and(|e| e <= input as u64)));
        }
    }
    assert!(a.structure.shown.len() <= socair_plugin_kit::bounded::FINDINGS_PER_ROW);
}

/// Bytes served as a host serving an object in object storage would: it takes hints.
struct HintsTaken<'a>(&'a [u8]);

impl socair_plugin_api::ReadAt for HintsTaken<'_> {
    fn size(&self) -> u64 {
        self.0.size()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        self.0.read_exact_at(offset, buf)
    }
    fn prefetch(&self, _ranges: &[(u64, u64)]) -> bool {
        true
    }
}

/// `data` as an HDF5 file: no panic, ranges inside the file, inline bytes bounded, a PASS
/// only when nothing was found and every tensor was located, and the same reading whether the source takes hints (an
/// object in object storage, read ahead: `socair_hdf5::ahead`) or not (also as a Keras
/// model, `h5model`).
pub fn check_hdf5(data: &[u8]) {
    let _ = socair_hdf5::detect(data);
    let options = socair_hdf5::Options {
        read_data: true,
        ..Default::default()
    };
    assert_eq!(
        format!("{:?}", socair_hdf5::read(data, options.clone())),
        format!("{:?}", socair_hdf5::read(&HintsTaken(data), options)),
        "hints changed what the reader found"
    );
    for read_data in [false, true] {
        let a = h5model::read(data, read_data, &[]);
        if read_data {
            assert_eq!(
                format!("{a:?}"),
                format!("{:?}", h5model::read(&HintsTaken(data), true, &[])),
                "hints changed what the Keras reader found"
            );
        }
        bounded(&a, data.len());
        let f = opened(a, HDF5_FORMAT, data.len() as u64);
        if read_data && f.rows[0].status == RowStatus::Pass {
            // Only data of no tensor type (listed, outside the tensor model) is unread.
            assert!(f.unread.iter().all(|u| u.outside_model));
        }
    }
}

/// `data` as a config in both dialects and as a model directory's `config.json`: no panic,
/// findings bounded.
pub fn check_config(data: &[u8]) {
    for d in [Dialect::Keras3, Dialect::Legacy] {
        let o = grammar::judge(data, "config.json", d, &[]);
        assert!(o.found.shown.len() <= socair_plugin_kit::bounded::FINDINGS_PER_ROW);
        if o.found.worst.is_none() {
            assert!(o.found.shown.is_empty());
        }
        let _ = grammar::judge_document(data, "training_config", d, &[]);
    }
    // As a model directory's config.json, claimed or not (the keras-config reader).
    let _ = socair_keras::config::claims(&data[..data.len().min(4096)]);
    let a = socair_keras::config::read(data, &[]);
    assert!(a.tensors.is_empty() && (a.config.is_some() != a.refused.is_some()));
}

/// `data` as a `.keras` archive: no panic, ranges inside the file, bounds kept, and the same
/// reading whether the source takes hints (passed through to its HDF5 member) or not.
pub fn check_archive(data: &[u8]) {
    let head = &data[..data.len().min(4096)];
    let _ = crate::keras_claims(head, data.len() as u64);
    for read_data in [false, true] {
        let a = archive::read(data, read_data, &[]);
        if read_data {
            assert_eq!(
                format!("{a:?}"),
                format!("{:?}", archive::read(&HintsTaken(data), true, &[])),
                "hints changed what the reader found"
            );
        }
        bounded(&a, data.len());
        let f = opened(a, KERAS_FORMAT, data.len() as u64);
        assert!(f.rows.len() >= 2 || f.rows[0].status == RowStatus::Fail);
    }
}

/// The pipeline [`check_filters`] draws from `pick`: a bit each for shuffle (of `size`-byte
/// elements), deflate, h5py's LZF and Fletcher-32, in the order h5py writes them.
pub fn filter_pipeline(pick: u8, size: u8) -> Vec<socair_hdf5::messages::Filter> {
    use socair_hdf5::filters::H5PY_LZF;
    let filter = |id: u16, values: Vec<u32>| socair_hdf5::messages::Filter {
        id,
        name: String::new(),
        optional: false,
        values,
    };
    let mut pipeline = Vec::new();
    if pick & 1 != 0 {
        pipeline.push(filter(2, vec![u32::from(size)]));
    }
    if pick & 2 != 0 {
        pipeline.push(filter(1, vec![6]));
    }
    if pick & 4 != 0 {
        pipeline.push(filter(H5PY_LZF, vec![]));
    }
    if pick & 8 != 0 {
        pipeline.push(filter(3, vec![]));
    }
    pipeline
}

/// `data` as a chunk through an HDF5 filter pipeline its first byte draws
/// ([`filter_pipeline`]; the second byte the shuffle's element size, the third the filter
/// mask, the first's high half the output limit in 4 KiB): no panic, every output within the
/// limit, and undoing the same chunk twice gives the same answer.
pub fn check_filters(data: &[u8]) {
    let [pick, size, mask, chunk @ ..] = data else {
        return;
    };
    let pipeline = filter_pipeline(*pick, *size);
    let limit = u64::from(pick >> 4) * 4096;
    let undo =
        |c: &[u8]| socair_hdf5::filters::undo(&pipeline, u32::from(*mask), c.to_vec(), limit);
    let once = undo(chunk);
    if let Ok(out) = &once {
        assert!(
            out.len() as u64 <= limit.max(chunk.len() as u64),
            "an output past the limit"
        );
    }
    assert_eq!(once, undo(chunk));
}

/// `data` as one chunk through szip or n-bit with filter values its head draws: the first
/// byte's low bit the filter (szip, n-bit) and its high bits the output limit in KiB; then for
/// szip four one-byte values (options, pixels per block, bits per pixel, pixels per scanline),
/// for n-bit a count and that many one-byte values. No panic, every output within the limit,
/// and the same answer twice.
pub fn check_codecs(data: &[u8]) {
    let Some((chunk, filter, limit)) = codec_case(data) else {
        return;
    };
    let undo =
        || socair_hdf5::filters::undo(std::slice::from_ref(&filter), 0, chunk.to_vec(), limit);
    let once = undo();
    if let Ok(out) = &once {
        assert!(
            out.len() as u64 <= limit.max(chunk.len() as u64),
            "an output past the limit"
        );
    }
    assert_eq!(once, undo());
}

/// The chunk, filter and limit [`check_codecs`] draws from `data`.
pub fn codec_case(data: &[u8]) -> Option<(&[u8], socair_hdf5::messages::Filter, u64)> {
    let (&pick, rest) = data.split_first()?;
    let limit = u64::from(pick >> 1) * 1024;
    let (id, values, chunk) = if pick & 1 == 0 {
        let (head, chunk) = rest.split_first_chunk::<4>()?;
        (4, head.to_vec(), chunk)
    } else {
        let (&n, rest) = rest.split_first()?;
        let n = usize::from(n % 32);
        let (values, chunk) = rest.split_at_checked(n)?;
        (5, values.to_vec(), chunk)
    };
    let filter = socair_hdf5::messages::Filter {
        id,
        name: String::new(),
        optional: false,
        values: values.into_iter().map(u32::from).collect(),
    };
    Some((chunk, filter, limit))
}
