//! What a validated header holds (its tensor entries and metadata), with the checks an entry
//! passes once its fields are read (offsets in order, a size its dtype and shape give) and the
//! layout all entries must have over the data section. Apart from the parse that reads them.

use super::error::SafetensorsError;
use super::limits::LEN_PREFIX;
use crate::dtype::Dtype;

/// One validated tensor entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorEntry {
    /// Its name.
    pub name: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Start of its bytes, relative to the data section.
    pub begin: u64,
    /// End (exclusive) of its bytes, relative to the data section.
    pub end: u64,
}

/// A validated header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The header's length in bytes (the value of bytes 0..8).
    pub header_len: u64,
    /// `__metadata__`, in file order, if present: its first [`MAX_METADATA_LISTED`] entries.
    pub metadata: Option<Vec<(String, String)>>,
    /// How many entries `__metadata__` has.
    pub metadata_total: u64,
    /// The tensors, in the order the header lists them.
    pub tensors: Vec<TensorEntry>,
    /// What the header holds beyond what safetensors' writer writes, that the library reads
    /// the same (safetensors 0.8.0 `src/tensor.rs`): each is said in the report.
    pub deviations: Deviations,
}

/// What a header holds beyond what safetensors' writer writes and the library reads as if it
/// were not there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deviations {
    /// `"__metadata__": null` (`HashMetadata.metadata` is an `Option`).
    pub metadata_null: bool,
    /// Fields of tensor entries the format does not define, `(tensor, field)`: the first few
    /// listed, all counted in `extra_fields_total` (the library ignores them).
    pub extra_fields: Vec<(String, String)>,
    /// How many such fields.
    pub extra_fields_total: u64,
    /// Whitespace before the object (the library skips JSON whitespace, as serde_json does).
    pub leading_whitespace: bool,
    /// Tabs, newlines or carriage returns after the object (safetensors' writer pads with
    /// spaces; the library skips any JSON whitespace).
    pub trailing_whitespace: bool,
}

impl Header {
    /// File offset where the data section starts.
    pub fn data_start(&self) -> u64 {
        LEN_PREFIX + self.header_len
    }
}

/// Most dimensions a tensor may have: numpy's `NPY_MAXDIMS` (64 since numpy 2.0). The
/// safetensors crate reads any rank; numpy, and so the safetensors numpy and torch loaders
/// that go through it, refuse a file with more: readers disagree on such a file.
pub const MAX_RANK: usize = 64;

/// `__metadata__` entries kept in [`Header::metadata`]; the rest are checked and counted.
/// A real file has a handful.
pub const MAX_METADATA_LISTED: usize = 65_536;

/// The checks on one entry once its fields are read: offsets in order, and a size that its
/// dtype and shape give exactly.
pub(super) fn finish_entry(
    name: String,
    dtype: Dtype,
    shape: Vec<u64>,
    begin: u64,
    end: u64,
) -> Result<TensorEntry, SafetensorsError> {
    let bad = |detail: String| SafetensorsError::BadEntry {
        name: name.clone(),
        detail,
    };
    if end < begin {
        return Err(bad(format!(
            "data_offsets [{begin}, {end}] end before they begin"
        )));
    }
    let elements = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad(format!("shape {shape:?} has more elements than 2^64")))?;
    let expected = match elements.checked_mul(dtype.bits()) {
        None => {
            return Err(bad(format!(
                "shape {shape:?} of {} takes more than 2^64 bits",
                dtype.name()
            )))
        }
        Some(bits) if bits % 8 != 0 => {
            return Err(bad(format!(
                "shape {shape:?} of {} is not a whole number of bytes",
                dtype.name()
            )))
        }
        Some(bits) => bits / 8,
    };
    if end - begin != expected {
        return Err(bad(format!(
            "data_offsets [{begin}, {end}] span {} bytes but {} {shape:?} takes {expected}",
            end - begin,
            dtype.name()
        )));
    }
    Ok(TensorEntry {
        name,
        dtype,
        shape,
        begin,
        end,
    })
}

/// The data section must be owned exactly: tensors in offset order start at 0, each begins
/// where the previous ended, and the last ends at the end of the file.
pub(super) fn check_layout(tensors: &[TensorEntry], data_len: u64) -> Result<(), SafetensorsError> {
    let mut order: Vec<&TensorEntry> = tensors.iter().collect();
    order.sort_by(|a, b| (a.begin, a.end, &a.name).cmp(&(b.begin, b.end, &b.name)));
    let mut covered = 0u64;
    let mut previous: Option<&TensorEntry> = None;
    for t in order {
        if t.begin != covered {
            let detail = match (t.begin > covered, previous) {
                (true, None) => format!("leave bytes [0, {}) owned by no tensor", t.begin),
                (true, Some(p)) => format!(
                    "leave a hole of {} bytes after {:?}, which ends at {covered}",
                    t.begin - covered,
                    p.name
                ),
                (false, Some(p)) => {
                    format!("overlap {:?}, which spans [{}, {}]", p.name, p.begin, p.end)
                }
                (false, None) => unreachable!("begin < 0 is impossible"),
            };
            return Err(SafetensorsError::Layout {
                name: t.name.clone(),
                begin: t.begin,
                end: t.end,
                detail,
            });
        }
        covered = t.end;
        previous = Some(t);
    }
    if covered != data_len {
        let detail = if covered < data_len {
            "bytes after the last tensor belong to no tensor (a polyglot file can hide there)"
        } else {
            "the file is truncated"
        };
        return Err(SafetensorsError::Coverage {
            data_len,
            covered,
            detail,
        });
    }
    Ok(())
}
