//! The PyTorch checkpoint reader: zip checkpoints through a hardened zip layer ([`zip`]), the
//! legacy format and torch 0.1's tar ([`legacy`], [`tar_checkpoint`], over `socair-tar`), `torch.export` archives
//! ([`pt2`]) and `torch.distributed.checkpoint` items ([`dcp`]); every pickle by the `socair-wo`
//! grammar (versions 1, 2 and 3: [`pickle`], [`globals`]) and the checkpoint model
//! ([`checkpoint`]). Nothing in a checkpoint is ever executed: the pickle is run over typed
//! values and globals are names.
//!
//! This file is the plugin's declaration (`export_plugin!`, which runs every entry point
//! inside `guard`) and the turn of an analysis into what the plugin API reports.

pub mod checkpoint;
pub mod dcp;
#[doc(hidden)]
pub mod fuzzing;
pub mod legacy;
pub mod pt2;
pub mod tar_checkpoint;
pub mod torchscript;
pub mod zip;

/// The pickle machine and its globals live in the `socair-pickle` crate, shared with the
/// other plugins that meet pickles.
pub use socair_pickle::{globals, pickle};

use abi_stable::std_types::{ROption, RString, RVec};
use checkpoint::{Analysis, AnalyzeOptions, Endian};
use pickle::Severity;
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, Finding, OpenedFile, PluginError, ReadOptions, ReportRow,
    RowStatus, TensorDescriptor, TensorOrigin, Unread,
};
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::report::reviewed_globals;

/// The format this plugin reads.
pub const FORMAT: &str = "torch-zip";
/// torch's legacy (non-zip) format, which this plugin reads too.
pub const LEGACY_FORMAT: &str = "torch-legacy";
/// The pickle grammar's versions: the plugin declares each, and runs the one
/// `ReadOptions.rules` asks for (the newest when it asks for none).
pub use pickle::Grammar;
/// The metadata keys this plugin gives facts under (the host reads them from its formats only).
use socair_plugin_api::facts::{ByteOrderRecord, Fact, TorchTensorKind};
/// The check the grammar reports.
pub use socair_plugin_kit::report::PICKLE_CHECK;
/// The structure check (not tested for pickle checkpoints).
pub use socair_plugin_kit::report::STRUCTURE_CHECK;

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct TorchZipReader;

impl Reader for TorchZipReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        // A zip with a record torch's reader looks for (however malformed the rest, so that
        // `open` says why it is refused), and torch's old preview format; any other zip is left
        // to other readers.
        checkpoint::looks_like_torch_zip(head, file_len) && !pt2::looks_like_pt2(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let analysis = legacy::analyze_as_zip(source, &analyze_options(options));
        Ok(opened_file(&analysis, options.header_only))
    }
}

/// The legacy-format reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct TorchLegacyReader;

impl Reader for TorchLegacyReader {
    fn format(&self) -> &'static str {
        LEGACY_FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        // Any pickle is claimed, of any protocol, so that a pickle named like a checkpoint is
        // scanned and said to be what it is rather than passed over; and torch's oldest
        // format, a tar of torch 0.1's members. Except a pickle whose first bytes name
        // joblib's array wrappers: the joblib plugin reads it as joblib.load does (the array
        // bytes after each wrapper), by the same rule (`socair_plugin_kit::joblib`), so that
        // one reader reads it and none leaves it unread.
        legacy::looks_like_legacy(head, file_len)
            && !(legacy::looks_like_pickle(head, file_len)
                && socair_plugin_kit::joblib::names_array_wrapper(head))
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let analysis = legacy::analyze(source, &analyze_options(options));
        Ok(opened_file(&analysis, options.header_only))
    }
}

/// The `torch.export` PT2 archive reader (`.pt2`), exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct Pt2Reader;

impl Reader for Pt2Reader {
    fn format(&self) -> &'static str {
        pt2::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        // A zip with a record only a PT2 archive holds; torch-zip's checkpoint reader leaves
        // such a file to this one.
        pt2::looks_like_pt2(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(pt2::open(source, &analyze_options(options), opened_file))
    }
}

/// The plugin API's read options as the analysis takes them.
fn analyze_options(options: &ReadOptions) -> AnalyzeOptions {
    AnalyzeOptions {
        header_only: options.header_only,
        reviewed: reviewed_globals(options),
        grammar: requested_grammar(options),
        profile: requested_profile(options),
    }
}

/// The profile `options.rules` asks for (`socair-sklearn` at `1`), else `socair-data/1`: a
/// profile is an opt-in rule set, run only when asked; `socair-data/1` is always on for a
/// pickle that is not a torch checkpoint.
pub fn requested_profile(options: &ReadOptions) -> pickle::Profile {
    let rules: Vec<(&str, &str)> = options
        .rules
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str()))
        .collect();
    pickle::Profile::asked(&rules)
}

/// The `socair-wo` version `options.rules` asks for; the newest when it asks for none (the
/// host asks only for a version a loaded plugin declares: `Pins::reader_choice`).
pub fn requested_grammar(options: &ReadOptions) -> Grammar {
    options
        .rules
        .iter()
        .find(|r| r.0.as_str() == Grammar::RULE_SET)
        .and_then(|r| Grammar::from_version(r.1.as_str()))
        .unwrap_or(Grammar::NEWEST)
}

/// Turns an analysis into what the plugin API reports.
pub fn opened_file(a: &Analysis, header_only: bool) -> OpenedFile {
    let byte_order = match a.endian() {
        Endian::Little => ByteOrder::Little,
        Endian::Big => ByteOrder::Big,
    };
    let mut tensors = Vec::new();
    let mut unread: Vec<Unread> = a
        .unread
        .iter()
        .map(|(name, reason)| Unread {
            tensor: name.as_deref().map(RString::from).into(),
            reason: reason.as_str().into(),
            outside_model: false,
        })
        .chain(a.outside.iter().map(|(name, reason)| Unread {
            tensor: ROption::RSome(name.as_str().into()),
            reason: reason.as_str().into(),
            outside_model: true,
        }))
        .collect();
    for t in &a.tensors {
        let m = &t.model;
        if m.conj || m.neg {
            unread.push(Unread {
                tensor: ROption::RSome(t.name.as_str().into()),
                reason: "torch's conj/neg bit is set: its bytes are not its values".into(),
                outside_model: t.outside_model,
            });
            continue;
        }
        // check_bounds in the machine guarantees these products fit and lie in the storage.
        let size = m.dtype.size;
        let contiguous = m.is_contiguous();
        // A packed dtype (float4_e2m1fn_x2: two F4 values a byte) is written by safetensors
        // with its last dimension multiplied by the values per element.
        let shape = match m.shape.split_last() {
            _ if m.dtype.packed == 1 => Some(m.shape.clone()),
            Some((&last, outer)) if contiguous => last
                .checked_mul(m.dtype.packed)
                .map(|l| outer.iter().copied().chain([l]).collect::<Vec<u64>>()),
            _ => None,
        };
        let Some(shape) = shape else {
            unread.push(Unread {
                tensor: ROption::RSome(t.name.as_str().into()),
                reason: format!(
                    "{} packs {} values an element and safetensors writes it with its last dimension multiplied by that: a 0-dimensional or non-contiguous one has no such shape",
                    m.dtype.torch, m.dtype.packed
                )
                .into(),
                outside_model: t.outside_model,
            });
            continue;
        };
        let len = if contiguous {
            m.numel().unwrap_or(0) * size
        } else {
            // A strided view: from its first element to the last byte of the furthest one.
            let furthest: u64 = m
                .shape
                .iter()
                .zip(&m.stride)
                .map(|(&d, &st)| d.saturating_sub(1) * st)
                .sum();
            (furthest + 1) * size
        };
        tensors.push(TensorDescriptor {
            name: t.name.as_str().into(),
            dtype: m.dtype.safetensors.into(),
            element_type: ROption::RSome(m.dtype.safetensors.into()),
            shape: shape.into(),
            ranges: RVec::from(vec![ByteRange {
                offset: t.record_offset + m.storage_offset * size,
                len,
            }]),
            byte_order,
            origin: ROption::RSome(TensorOrigin {
                container: t.record.as_str().into(),
                offset: t.record_base + m.storage_offset * size,
            }),
            strides: if contiguous {
                ROption::RNone
            } else {
                ROption::RSome(m.stride.clone().into())
            },
            file: ROption::RNone,
            inline: ROption::RNone,
            outside_model: t.outside_model,
        });
    }
    tensors.extend(a.array_tensors.iter().cloned());
    OpenedFile {
        format: if a.legacy { LEGACY_FORMAT } else { FORMAT }.into(),
        tensors: tensors.into(),
        unread: unread.into(),
        rows: std::iter::once(structure_row())
            .chain(a.torchscript_code.as_ref().map(torchscript_row))
            .chain([pickle_row(a, header_only)])
            .collect(),
        // A torch checkpoint has no metadata of its own that socair reads as such.
        metadata: RVec::new(),
        not_carried: a
            .not_carried
            .iter()
            .map(|s| RString::from(s.as_str()))
            .collect(),
        // What the host's derivation record says about the input's byte order: the record
        // present (`little`/`big`), absent (read as little-endian, as torch.load does), or a
        // legacy file (which has no such record); what torch.load returns tensors as; a
        // distributed checkpoint's items.
        facts: std::iter::once(Fact::ByteOrderRecord(match a.byteorder_record {
            _ if a.legacy => ByteOrderRecord::Legacy,
            Some(Endian::Little) => ByteOrderRecord::Little,
            Some(Endian::Big) => ByteOrderRecord::Big,
            None => ByteOrderRecord::Absent,
        }))
        .chain(tensor_kinds(a))
        .chain(
            a.dcp_items
                .clone()
                .map(|items| Fact::DcpItems(items.into())),
        )
        .collect(),
    }
}

/// One fact for each tensor torch.load returns as an `nn.Parameter` or with `requires_grad`
/// set.
fn tensor_kinds(a: &Analysis) -> impl Iterator<Item = Fact> + '_ {
    a.tensors.iter().filter_map(|t| {
        let kind = match (t.model.parameter, t.model.requires_grad) {
            (true, true) => TorchTensorKind::Parameter,
            (true, false) => TorchTensorKind::FrozenParameter,
            (false, true) => TorchTensorKind::RequiresGrad,
            (false, false) => return None,
        };
        Some(Fact::TorchTensorKind {
            tensor: RString::from(t.name.as_str()),
            kind,
        })
    })
}

fn structure_row() -> ReportRow {
    ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: RowStatus::NotTested,
        summary: "a pickle checkpoint's structure is its pickle: Socair parses no Python object structure beyond what the Pickle opcode scan's grammar models".into(),
        findings: RVec::new(),
        names_severities: false,
    }
}

/// A TorchScript archive's code, judged ([`torchscript`]).
fn torchscript_row(j: &torchscript::Judgment) -> ReportRow {
    ReportRow {
        check: torchscript::CODE_CHECK.into(),
        status: socair_plugin_kit::model::status(j.worst()),
        summary: j.summary().into(),
        findings: j
            .findings
            .iter()
            .map(|f| Finding::new(f.severity.into(), f.place.as_str(), f.reason.as_str()))
            .collect(),
        names_severities: true,
    }
}

fn pickle_row(a: &Analysis, header_only: bool) -> ReportRow {
    let status = socair_plugin_kit::model::status(a.worst());
    let order = match a.byteorder_record {
        _ if a.legacy => "storages little-endian, as torch writes legacy storages on every machine",
        Some(Endian::Little) => "byteorder little",
        Some(Endian::Big) => "byteorder big",
        None => "no byteorder record (read as little-endian, as torch.load does)",
    };
    let crc = if a.legacy {
        format!(
            "legacy format (magic number, protocol 1001, sys_info {}, main pickle at file byte {}, storage keys, storages): every storage's count matches its persistent id and the file ends with the last one",
            a.sys_info.as_deref().unwrap_or("?"),
            a.main_pickle_offset.unwrap_or(0)
        )
    } else if header_only {
        format!(
            "CRC-32 verified for {} records, not read for {} storage records (header-only)",
            a.crc_verified, a.crc_skipped
        )
    } else {
        format!("CRC-32 verified for all {} records", a.crc_verified)
    };
    let reviewed = if a.reviewed_used.is_empty() {
        String::new()
    } else {
        format!(
            "; reviewed globals accepted: {}",
            a.reviewed_used.join(", ")
        )
    };
    let rules = a.profile.unwrap_or(a.grammar.name());
    let summary = match status {
        RowStatus::Pass if a.profile.is_some() => {
            let shown: Vec<String> = a
                .arrays
                .iter()
                .take(8)
                .map(|(p, what)| format!("{} ({what})", if p.is_empty() { "the value" } else { p }))
                .collect();
            let more = a.arrays.len().saturating_sub(shown.len());
            format!(
                "a plain pickle (protocol {}), not a torch checkpoint, that builds only what {rules} lists as data: pickle.load runs nothing for it; {} NumPy array(s){}{}{}{reviewed}",
                a.protocol.map_or("0 or 1".into(), |p| p.to_string()),
                a.arrays.len(),
                if shown.is_empty() { String::new() } else { format!(": {}", shown.join(", ")) },
                if more > 0 { format!(" and {more} more") } else { String::new() },
                socair_pickle::pickle::models_phrase(&a.models),
            )
        }
        RowStatus::Pass => format!(
            "{} (protocol {}) lies inside {}: {} tensors over {} storages, each storage matching its record exactly; {crc}; {order}{reviewed}",
            a.pickle_name,
            a.protocol.map_or("?".into(), |p| p.to_string()),
            a.grammar.name(),
            a.tensors.len() + a.unread.iter().filter(|u| u.0.is_some()).count(),
            a.storage_count
        ),
        RowStatus::Fail => format!(
            "{} finding(s) of code execution or of a file readers would read differently{reviewed}",
            a.findings.iter().filter(|f| f.severity == Severity::Fail).count()
        ),
        _ => format!(
            "{} finding(s) outside what {rules} proves safe; a person should look{reviewed}",
            a.findings.len(),
        ),
    };
    ReportRow {
        check: PICKLE_CHECK.into(),
        status,
        summary: summary.into(),
        findings: a
            .findings
            .iter()
            .map(|f| Finding::new(f.severity.into(), f.place.as_str(), f.reason.as_str()))
            .collect(),
        names_severities: true,
    }
}
