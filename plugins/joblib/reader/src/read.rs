//! A joblib file read as `joblib.load` reads it (joblib 1.5.3 `numpy_pickle.py` `load`): the
//! container opened ([`crate::container`], [`crate::inflate`]), then the stream it gives run
//! through socair's pickle machine in joblib mode (`socair_pickle::pickle::Options::joblib`:
//! `NumpyUnpickler.load_build` reads each `NumpyArrayWrapper`'s array bytes after its BUILD and
//! the pickle goes on to its STOP), judged by the profile the host asked for, and every
//! numeric array described: by its place in the file when the file is not compressed, by its
//! inflated bytes (the descriptor's `inline` bytes, in row-major order) when it is.

use crate::container::{self, Compressor};
use crate::inflate::{self, End, InflateError};
use abi_stable::std_types::{ROption, RString, RVec};
use socair_pickle::pickle::{self, Grammar, Profile};
use socair_plugin_api::{
    Finding, OpenedFile, ReportRow, RowStatus, Severity, TensorDescriptor, TensorOrigin, Unread,
};
use socair_plugin_kit::bounded::{described_limit, short, thousands};
use socair_plugin_kit::ndarray;
use socair_plugin_kit::report::{refused, refused_as, PAST_BOUNDS, PICKLE_CHECK, STRUCTURE_CHECK};

/// The format name.
pub const FORMAT: &str = "joblib";

/// How one read runs ([`Default`]: as the plugin reads when the host asks for nothing: the
/// newest grammar, `socair-data/1`).
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Globals the operator reviewed.
    pub reviewed: Vec<String>,
    /// The socair-wo grammar.
    pub grammar: Grammar,
    /// The library profile (`socair-data/1` unless `socair-sklearn/1` was asked for).
    pub profile: Profile,
    /// Describe no tensor (header-only reads).
    pub header_only: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            reviewed: Vec::new(),
            grammar: Grammar::NEWEST,
            profile: Profile::Data,
            header_only: false,
        }
    }
}

/// Reads `file` as `joblib.load` does.
pub fn read(file: &[u8], options: &ReadOptions) -> OpenedFile {
    let compressor = container::detect(file);
    let bound = inflate::bound(file.len() as u64);
    let (start, declared) = match compressor {
        Compressor::Compat => match container::compat_header(file) {
            Ok(h) => (h.data_offset, Some(h.length)),
            Err(why) => {
                return refuse(
                    &format!("joblib < 0.10 ZF file: {why}; joblib.load raises"),
                    "byte 2",
                )
            }
        },
        _ => (0, None),
    };
    let inflated = match compressor {
        Compressor::None => None,
        c => match inflate::inflate(c, file, start, bound) {
            Ok(i) => Some(i),
            Err(e @ InflateError::PastBound { .. }) => {
                return refused_as(
                    RowStatus::Lead,
                    FORMAT,
                    PAST_BOUNDS,
                    format!("the {} stream is not read: {e}", c.name()),
                    Finding::new(
                        Severity::Lead,
                        format!("byte {start}"),
                        format!("{} stream: {e}", c.name()),
                    ),
                )
            }
            Err(e) => return refuse(&format!("{} stream: {e}", c.name()), &place_of(&e, start)),
        },
    };
    if let (Some(length), Some(i)) = (declared, &inflated) {
        if i.data.len() as u64 != length {
            return refuse(
                &format!(
                    "joblib < 0.10 ZF file: its header declares {length} inflated bytes and its zlib stream inflates to {}: read_zfile's assert fails, so joblib.load raises",
                    i.data.len()
                ),
                "byte 2",
            );
        }
    }
    let data: &[u8] = inflated.as_ref().map_or(file, |i| i.data.as_slice());
    let mut structure = Vec::new();
    if let Some(End::Ignored(at, len)) = inflated.as_ref().map(|i| i.end) {
        structure.push(Finding::new(
            Severity::Lead,
            format!("byte {at}"),
            format!(
                "{len} bytes after the last {} stream that joblib.load never reads (Python's reader ignores bytes that do not start another stream): not checked",
                compressor.name()
            ),
        ));
    }
    let run = pickle::run(
        data,
        &pickle::Options {
            reviewed: options.reviewed.clone(),
            legacy: false,
            input_len: data.len() as u64,
            grammar: options.grammar,
            python2_str: pickle::Python2Str::CallerChooses,
            profile: options.profile,
            joblib: true,
        },
    );
    let compressed = inflated.is_some();
    let at = |offset: u64| {
        if compressed {
            format!("inflated byte {offset}")
        } else {
            format!("byte {offset}")
        }
    };
    let pickle_row = pickle_row(&run, &at, options.profile);
    let (tensors, unread) = if options.header_only {
        (Vec::new(), Vec::new())
    } else {
        tensors(&run, compressor, file.len() as u64, data)
    };
    let how = match &inflated {
        None => "not compressed".to_owned(),
        Some(i) => format!(
            "{}-compressed, {} stream{} inflated to {} bytes of at most {}",
            compressor.name(),
            i.streams,
            if i.streams == 1 { "" } else { "s" },
            thousands(i.data.len() as u64),
            thousands(bound)
        ),
    };
    let structure_row = ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: if structure.is_empty() {
            RowStatus::Pass
        } else {
            RowStatus::Lead
        },
        summary: format!(
            "joblib file ({how}), opened as joblib.load opens it; its pickle read in joblib mode: {} array{} after their wrappers",
            run.arrays.len(),
            if run.arrays.len() == 1 { "" } else { "s" }
        )
        .into(),
        findings: structure.into(),
        names_severities: false,
    };
    OpenedFile {
        format: FORMAT.into(),
        tensors: tensors.into(),
        unread: unread.into(),
        rows: vec![structure_row, pickle_row].into(),
        metadata: vec![abi_stable::std_types::Tuple2(
            RString::from("compressor"),
            RString::from(compressor.name()),
        )]
        .into(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

fn place_of(e: &InflateError, start: usize) -> String {
    match e {
        InflateError::After { at, .. } => format!("byte {at}"),
        InflateError::Truncated { start, .. } | InflateError::Corrupt { start, .. } => {
            format!("byte {start}")
        }
        InflateError::PastBound { .. } => format!("byte {start}"),
    }
}

fn refuse(reason: &str, place: &str) -> OpenedFile {
    refused(
        FORMAT,
        "a joblib file joblib.load does not read (see the finding); nothing in it was checked",
        format!("not read: {reason}"),
        Finding::new(Severity::Fail, place, reason),
    )
}

/// The pickle row: the machine's findings, under the profile that judged it.
fn pickle_row(run: &pickle::Unpickled, at: &dyn Fn(u64) -> String, profile: Profile) -> ReportRow {
    let worst = run.worst();
    let mut findings: Vec<Finding> = run
        .findings
        .iter()
        .map(|f| {
            Finding::new(
                f.severity.into(),
                at(f.offset),
                format!("{} ({})", f.reason, f.opcode),
            )
        })
        .collect();
    if !run.reviewed_used.is_empty() {
        findings.push(Finding::new(
            Severity::Lead,
            "file",
            format!("uses reviewed globals {}", run.reviewed_used.join(", ")),
        ));
    }
    let profile_name = profile.name().unwrap_or("socair-wo");
    let (status, summary) = match worst {
        Some(pickle::Severity::Fail) => (
            RowStatus::Fail,
            format!("the pickle does what no model file needs (judged in joblib mode, profile {profile_name})"),
        ),
        Some(pickle::Severity::Lead) => (
            RowStatus::Lead,
            format!("the pickle builds something profile {profile_name} does not prove to be data (judged in joblib mode)"),
        ),
        None if !run.reviewed_used.is_empty() => (
            RowStatus::Lead,
            format!("the pickle uses globals an operator reviewed (profile {profile_name}, joblib mode)"),
        ),
        None => (
            RowStatus::Pass,
            format!(
                "the pickle builds only what profile {profile_name} accepts, read in joblib mode to its STOP{}",
                pickle::models_phrase(&run.models)
            ),
        ),
    };
    ReportRow {
        check: PICKLE_CHECK.into(),
        status,
        summary: summary.into(),
        findings: findings.into(),
        names_severities: false,
    }
}

/// Column-major bytes put in row-major order: element `i` (row-major) of `shape` is column-major
/// element `Σ iₖ·strides[k]`.
fn to_row_major(bytes: &[u8], shape: &[u64], strides: &[u64], size: usize) -> Vec<u8> {
    let numel = bytes.len().checked_div(size).unwrap_or(0);
    let mut out = Vec::with_capacity(bytes.len());
    for flat in 0..numel as u64 {
        let mut rest = flat;
        let mut at = 0u64;
        for (&d, &s) in shape.iter().zip(strides).rev() {
            let i = rest.checked_rem(d).unwrap_or(0);
            rest = rest.checked_div(d).unwrap_or(0);
            at = at.saturating_add(i.saturating_mul(s));
        }
        let from = usize::try_from(at)
            .unwrap_or(usize::MAX)
            .saturating_mul(size);
        out.extend_from_slice(
            bytes
                .get(from..from.saturating_add(size))
                .unwrap_or_default(),
        );
    }
    out
}

/// For a big-endian numeric dtype (`>f8`, `>i4`, `>c16`: each half of a complex apart,
/// `>M8[ns]`), the width of each value to swap: `joblib.load` gives such an array back in the
/// host's (little-endian) order (joblib 1.6.0 numpy_pickle.py `load`:
/// `ensure_native_byte_order='auto'`, true without `mmap_mode`; `NumpyArrayWrapper.read_array`
/// then `numpy_pickle_utils._ensure_native_byte_order`: `array.byteswap().view(
/// dtype.newbyteorder('='))`), so the array is described as NumPy holds it after loading: the
/// `<` dtype, its bytes swapped (inline). `None` for anything else (kept as stored).
fn big_endian_width(descr: &str) -> Option<usize> {
    let rest = descr.strip_prefix('>')?;
    let kind = rest.chars().next()?;
    let digits: String = rest
        .chars()
        .skip(1)
        .take_while(char::is_ascii_digit)
        .collect();
    let size: usize = digits.parse().ok()?;
    let width = match kind {
        'i' | 'u' | 'f' | 'M' | 'm' => size,
        'c' => size / 2,
        _ => return None,
    };
    (width > 1 && width <= 16).then_some(width)
}

/// The arrays the run found, as descriptors (and what could not be described).
fn tensors(
    run: &pickle::Unpickled,
    compressor: Compressor,
    file_len: u64,
    data: &[u8],
) -> (Vec<TensorDescriptor>, Vec<Unread>) {
    let mut out = Vec::new();
    let mut unread = Vec::new();
    let limit = described_limit(file_len);
    let mut inline_left = inflate::bound(file_len);
    let unread_one = |name: &str, reason: String| Unread {
        tensor: ROption::RSome(name.into()),
        reason: reason.into(),
        outside_model: false,
    };
    for a in &run.arrays {
        let name = if a.path.is_empty() {
            "(the pickle's value)"
        } else {
            a.path.as_str()
        };
        let place = format!("{} (inflated byte {})", short(name), a.bytes.start);
        let len = (a.bytes.end.saturating_sub(a.bytes.start)) as u64;
        let swap = big_endian_width(&a.descr);
        let descr = match swap {
            Some(_) => format!("<{}", &a.descr[1..]),
            None => a.descr.clone(),
        };
        let (mut t, size) = match ndarray::describe(name, &descr, &a.shape, len) {
            Ok(described) => described,
            Err(why) => {
                unread.push(unread_one(name, format!("{place}: {why}")));
                continue;
            }
        };
        if out.len() as u64 >= limit {
            unread.push(unread_one(
                name,
                format!("{place}: past the {limit} tensors described for a file of this size"),
            ));
            continue;
        }
        if compressor == Compressor::None && swap.is_none() {
            ndarray::place_in_file(&mut t, a.bytes.start as u64, len, a.fortran_order);
        } else {
            let strides = if a.fortran_order {
                ndarray::fortran_strides(&a.shape)
            } else {
                None
            };
            if len > inline_left {
                unread.push(unread_one(name, format!("{place}: its inflated bytes would take the tensors handed to the host past 64 MiB + 8x the file's size")));
                continue;
            }
            inline_left -= len;
            let bytes = data.get(a.bytes.clone()).unwrap_or_default();
            let size = usize::try_from(size).unwrap_or(1);
            let mut bytes = match &strides {
                Some(s) => to_row_major(bytes, &a.shape, s, size),
                None => bytes.to_vec(),
            };
            if let Some(width) = swap {
                for element in bytes.chunks_mut(width) {
                    element.reverse();
                }
            }
            t.inline = ROption::RSome(bytes.into());
            t.origin = ROption::RSome(TensorOrigin {
                container: format!("{} stream", compressor.name()).into(),
                offset: a.bytes.start as u64,
            });
        }
        out.push(t);
    }
    (out, unread)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn column_major_bytes_in_row_major_order() {
        // A 2x3 array stored column-major: [[0,1,2],[3,4,5]] is 0,3,1,4,2,5.
        let f = [0u8, 3, 1, 4, 2, 5];
        let s = ndarray::fortran_strides(&[2, 3]).unwrap();
        assert_eq!(s, vec![1, 2]);
        assert_eq!(to_row_major(&f, &[2, 3], &s, 1), vec![0, 1, 2, 3, 4, 5]);
    }
}
