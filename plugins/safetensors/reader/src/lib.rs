//! socair plugin for safetensors: a strict reader and a writer that follows the safetensors
//! serializer byte for byte.
//!
//! The format logic is pure ([`header::parse_header`], [`writer::plan`]) and tested and fuzzed
//! in-process; this file is only the glue that exports it through `socair-plugin-api`. Every
//! exported function and trait method runs inside [`guard`], so a panic becomes an error.

pub use socair_plugin_kit::bounded;
pub mod dtype;
#[doc(hidden)]
pub mod fuzzing;
pub mod header;
/// The strict JSON value (no duplicate keys at any depth), shared through the kit.
pub use socair_plugin_kit::json;
pub mod writer;

use abi_stable::std_types::{ROption, RSliceMut, RString, RVec, Tuple2};
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, Finding, OpenedFile, PluginError, PluginErrorKind,
    ReadOptions, ReportRow, RowStatus, Severity, TensorDescriptor, Unread,
};
use socair_plugin_kit::export::{Plan, Reader, WriteTensor, Writer};
use socair_plugin_kit::report::{refused, tensor_in_file};

/// The format name this plugin reads and writes.
pub const FORMAT: &str = "safetensors";

/// The check every reader reports.
pub use socair_plugin_kit::report::STRUCTURE_CHECK;

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct SafetensorsReader;

impl Reader for SafetensorsReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        looks_like_safetensors(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        // The header is all this reader needs, with or without `header_only`.
        open_source(source)
    }
}

/// Whether `head` (the file's first bytes) starts like a safetensors file: a header length
/// that fits the file, then `{` after any whitespace. Leading whitespace is claimed here so
/// that `open` refuses it with its reason instead of the file going unrecognised.
pub fn looks_like_safetensors(head: &[u8], file_len: u64) -> bool {
    if header::header_len(head, file_len).is_err() {
        return false;
    }
    head.get(8..)
        .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()))
        .is_some_and(|&b| b == b'{')
}

fn read_exact(source: &ByteSourceRef<'_>, offset: u64, len: u64) -> Result<Vec<u8>, PluginError> {
    // Callers bound `len` by the file's length and MAX_HEADER_LEN before allocating.
    let len = usize::try_from(len)
        .map_err(|_| PluginError::new(PluginErrorKind::InvalidInput, "length over usize"))?;
    let mut buf = vec![0u8; len];
    source
        .read_at(offset, RSliceMut::from_mut_slice(&mut buf))
        .into_result()?;
    Ok(buf)
}

fn open_source(source: &ByteSourceRef<'_>) -> Result<OpenedFile, PluginError> {
    let file_len = source.file_len();
    let prefix_len = file_len.min(header::LEN_PREFIX);
    let len_bytes = read_exact(source, 0, prefix_len)?;
    let parsed = match header::header_len(&len_bytes, file_len) {
        Ok(n) => {
            let prefix = read_exact(source, 0, header::LEN_PREFIX + n)?;
            header::parse_header(&prefix, file_len)
        }
        Err(e) => Err(e),
    };
    Ok(opened_file(parsed))
}

/// Turns the parser's verdict into what the plugin API reports.
pub fn opened_file(parsed: Result<header::Header, header::SafetensorsError>) -> OpenedFile {
    match parsed {
        Ok(h) => {
            let data_start = h.data_start();
            let file_len = data_start + h.tensors.iter().map(|t| t.end - t.begin).sum::<u64>();
            let limit = bounded::described_limit(file_len);
            let data_len = file_len - data_start;
            let count = h.tensors.len();
            let mut tensors: Vec<TensorDescriptor> = Vec::new();
            let mut unread = Vec::new();
            let mut findings = Vec::new();
            let past_budget = (count as u64).saturating_sub(limit);
            let reason = || {
                format!(
                    "the header lists {} tensors in a {}-byte file; socair describes at most {} for a file of this size (16,384 plus one per 256 bytes), so the rest are not fingerprinted",
                    bounded::thousands(count as u64),
                    bounded::thousands(file_len),
                    bounded::thousands(limit)
                )
            };
            for (i, t) in h.tensors.into_iter().enumerate() {
                if i as u64 >= limit {
                    if unread.len() < bounded::UNREAD_PER_KIND {
                        unread.push(Unread {
                            tensor: ROption::RSome(t.name.into()),
                            reason: reason().into(),
                            outside_model: false,
                        });
                    }
                    continue;
                }
                tensors.push(tensor_in_file(
                    &t.name,
                    t.dtype.name(),
                    Some(t.dtype.name()),
                    t.shape,
                    vec![ByteRange {
                        offset: data_start + t.begin,
                        len: t.end - t.begin,
                    }],
                    ByteOrder::Little,
                ));
            }
            if past_budget > bounded::UNREAD_PER_KIND as u64 {
                unread.push(Unread {
                    tensor: ROption::RNone,
                    reason: bounded::and_more(
                        past_budget - bounded::UNREAD_PER_KIND as u64,
                        "tensors past the budget",
                        bounded::UNREAD_PER_KIND,
                    )
                    .into(),
                    outside_model: false,
                });
            }
            if past_budget > 0 {
                findings.push(Finding::new(Severity::Lead, "header", reason()));
            }
            let mut summary = format!(
                "safetensors header of {} bytes lists {} tensors that own the {}-byte data section exactly",
                h.header_len,
                bounded::thousands(count as u64),
                data_len
            );
            let mut metadata: Vec<Tuple2<RString, RString>> = h
                .metadata
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| Tuple2(RString::from(k), RString::from(v)))
                .collect();
            let omitted = h.metadata_total.saturating_sub(metadata.len() as u64);
            if omitted > 0 {
                summary.push_str(&format!(
                    "; only the first {} of its {} `__metadata__` entries are passed on",
                    bounded::thousands(metadata.len() as u64),
                    bounded::thousands(h.metadata_total)
                ));
                metadata.push(Tuple2(
                    RString::from(OMITTED_METADATA_KEY),
                    RString::from(format!(
                        "{} more `__metadata__` entries are not listed",
                        bounded::thousands(omitted)
                    )),
                ));
            }
            if past_budget > 0 {
                summary.push_str(&format!(
                    "; {} tensors past what socair describes for a file of this size",
                    bounded::thousands(past_budget)
                ));
            }
            deviations(&h.deviations, &mut summary, &mut findings);
            OpenedFile {
                format: FORMAT.into(),
                tensors: tensors.into(),
                unread: unread.into(),
                rows: RVec::from(vec![ReportRow {
                    check: STRUCTURE_CHECK.into(),
                    status: if findings.is_empty() {
                        RowStatus::Pass
                    } else {
                        RowStatus::Lead
                    },
                    summary: summary.into(),
                    findings: findings.into(),
                    names_severities: false,
                }]),
                metadata: metadata.into(),
                not_carried: RVec::new(),
                facts: Default::default(),
            }
        }
        Err(e) => refused(
            FORMAT,
            "not a sound safetensors file: readers may disagree on its tensors",
            e.to_string(),
            Finding::new(Severity::Fail, e.place(), e.to_string()),
        ),
    }
}

/// What the header holds beyond what safetensors' writer writes and the library reads the same
/// (safetensors 0.8.0 `src/tensor.rs`, checked against the library's `safe_open` and
/// `load_file`): said in the summary, and a LEAD for fields the format does not define (the
/// library ignores them, so they carry something no reader uses).
fn deviations(d: &header::Deviations, summary: &mut String, findings: &mut Vec<Finding>) {
    let mut notes = Vec::new();
    if d.metadata_null {
        notes.push("`__metadata__` is null, which the library reads as no metadata");
    }
    if d.leading_whitespace {
        notes.push("JSON whitespace precedes the header object, which the library skips");
    }
    if d.trailing_whitespace {
        notes.push("the header is padded with tabs, newlines or carriage returns as well as spaces, which the library skips as JSON whitespace");
    }
    for n in notes {
        summary.push_str("; ");
        summary.push_str(n);
    }
    if d.extra_fields_total > 0 {
        let listed: Vec<String> = d
            .extra_fields
            .iter()
            .map(|(t, f)| format!("{f:?} of {t:?}"))
            .collect();
        let more = d.extra_fields_total - d.extra_fields.len() as u64;
        let text = format!(
            "{} field(s) of tensor entries the format does not define ({}{}): the safetensors library ignores them (its TensorInfo has no deny_unknown_fields) and reads the same tensors, but no reader uses what they carry",
            bounded::thousands(d.extra_fields_total),
            listed.join(", "),
            if more > 0 {
                format!(", and {} more", bounded::thousands(more))
            } else {
                String::new()
            }
        );
        summary.push_str(&format!(
            "; {} undefined field(s) in tensor entries",
            bounded::thousands(d.extra_fields_total)
        ));
        let place = match d.extra_fields.first() {
            Some((t, _)) => format!("header key {t:?}"),
            None => "header".into(),
        };
        findings.push(Finding::new(Severity::Lead, place, text));
    }
}

/// The key standing for `__metadata__` entries past [`header::MAX_METADATA_LISTED`]: a
/// metadata key of its own in the host's list, which no real key spells so.
pub const OMITTED_METADATA_KEY: &str = "(socair: metadata not listed)";

/// The writer exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct SafetensorsWriter;

impl Writer for SafetensorsWriter {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn plan(
        &self,
        tensors: &[WriteTensor],
        metadata: &[(String, String)],
    ) -> Result<Plan, PluginError> {
        writer::plan(tensors, metadata)
            .map_err(|e| PluginError::new(PluginErrorKind::InvalidInput, e.to_string()))
    }
}
