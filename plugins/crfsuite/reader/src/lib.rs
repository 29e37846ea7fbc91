//! socair reader library for CRFsuite models (`.crfsuite`, written by python-crfsuite's and
//! sklearn-crfsuite's `Trainer.train` through CRFsuite's `crf1dmw_*` and read by `crf1dm_new`:
//! chokkan/crfsuite 0.12, lib/crf/src/crf1d_model.c, the copy python-crfsuite 0.9.12 bundles).
//!
//! The file is data only: a 48-byte header (magic `lCRF`, file size, type `FOMC`, version 100,
//! counts, five offsets), two CQDB string databases (labels and attributes: lib/cqdb/src/cqdb.c),
//! two reference chunks (`LFRF`, `AFRF`: per label and per attribute, a list of feature ids)
//! and the feature chunk (`FEAT`: 20-byte records `type, src, dst, weight f64`). Nothing in it
//! names code or another file, so a well-formed file is a PASS.
//!
//! `crf1dm_new_impl` checks nothing but that the file is longer than the header: it reads every
//! offset, count and reference as written, with no bounds check (`crf1dm_get_labelref`,
//! `crf1dm_get_feature`, `cqdb_reader`'s tables and backward links), so a chunk past the end
//! of the file, chunks that overlap, or an index past its table make the library read outside
//! its buffer: each is a FAIL naming the place ([`layout`]). The weights are 8 bytes in each
//! 20-byte record, strided (20 is no multiple of 8), so the tensor `weights` (F64, one per
//! feature, in feature order) is described by its bytes gathered inline, fingerprinted by the
//! host like any other.

#[doc(hidden)]
pub mod fuzzing;
pub mod layout;

use abi_stable::std_types::ROption;
use socair_plugin_api::{
    ByteOrder, ByteSourceRef, OpenedFile, PluginError, ReadOptions, RowStatus,
};
use socair_plugin_kit::export::{read_prefix, Reader};
use socair_plugin_kit::model::Severity;
use socair_plugin_kit::reading::Reading;
use socair_plugin_kit::report::tensor_in_file;

/// The format name.
pub const FORMAT: &str = "crfsuite";

/// The finding kind.
const KIND: &str = "CRFsuite layout";

/// Files larger than this are not read whole (crf1dm_new takes the size as 32 bits).
pub const MAX_INPUT: u64 = u32::MAX as u64;

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct CrfsuiteReader;

impl Reader for CrfsuiteReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        head.starts_with(layout::MAGIC)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let len = source.file_len().min(MAX_INPUT);
        let bytes = read_prefix(source, len)?;
        Ok(read_crfsuite(&bytes, source.file_len()))
    }
}

/// Reads a CRFsuite model whose first bytes are `bytes` (the file is `file_len` long).
pub fn read_crfsuite(bytes: &[u8], file_len: u64) -> OpenedFile {
    let mut reading = Reading::new(FORMAT, file_len);
    reading.fails_first = true;
    if file_len > bytes.len() as u64 {
        reading.note(
            KIND,
            Severity::Lead,
            || "file".into(),
            || format!("a file of {file_len} bytes: crf1dm_new reads its size as 32 bits, and this reader read the first {} only", bytes.len()),
        );
    }
    let model = layout::check(bytes, &mut |severity, place, reason| {
        reading.note(KIND, severity, || place, || reason);
    });
    if let Some(m) = &model {
        let w = layout::weights(bytes, m);
        if (w.len() as u64) <= reading.inline_left {
            reading.inline_left -= w.len() as u64;
            let mut t = tensor_in_file(
                "weights",
                "F64",
                Some("F64"),
                vec![u64::from(m.features)],
                Vec::new(),
                ByteOrder::Little,
            );
            t.inline = ROption::RSome(w.into());
            reading.describe(t);
        }
        reading
            .metadata
            .push(("crfsuite.labels".into(), m.labels.to_string()));
        reading
            .metadata
            .push(("crfsuite.attributes".into(), m.attributes.to_string()));
        reading
            .metadata
            .push(("crfsuite.features".into(), m.features.to_string()));
    }
    reading.finish(|status| match (status, &model) {
        (RowStatus::Pass, Some(m)) => format!(
            "CRFsuite model (FOMC v100): {} labels, {} attributes, {} features of weights, every offset and reference inside the file, data only",
            m.labels, m.attributes, m.features
        ),
        (RowStatus::Fail, _) => "not a sound CRFsuite model: CRFsuite's crf1dm reads it without bounds checks and would read outside the file (see the findings)".to_owned(),
        _ => "CRFsuite model with parts this reader does not prove (see the findings)".to_owned(),
    })
}
