//! socair plugin for Keras: `.keras` archives (format `keras`), a model directory's
//! `config.json` (format `keras-config`) and HDF5 files (format `hdf5`: legacy `.h5` models,
//! `.weights.h5` files, any other HDF5 file). The reading and
//! the rules are the `socair-keras` and `socair-hdf5` libraries; this file is the plugin's
//! declaration (`export_plugin!`, which runs every entry point inside `guard`), its claims,
//! and the turn of an [`Analysis`] into what the plugin API reports.

#[doc(hidden)]
pub mod fuzzing;

use abi_stable::std_types::{ROption, RString, RVec, Tuple2};
use socair_hdf5::Severity;
use socair_keras::{Analysis, Bytes};
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, Finding, OpenedFile, PluginError, ReadAt, ReadOptions,
    ReportRow, RowStatus, TensorDescriptor, TensorOrigin, Unread,
};
use socair_plugin_kit::export::{rule_set, Reader};
use socair_plugin_kit::model::status;
use socair_plugin_kit::report::{refused, reviewed_globals, tensor_in_file, STRUCTURE_CHECK};
use socair_plugin_kit::zip::claims::{self, central_header_names, torch_record_name};

/// The `.keras` archive format.
pub const KERAS_FORMAT: &str = "keras";
/// A Keras model's `config.json` read on its own (a Keras 3 model directory's).
pub const KERAS_CONFIG_FORMAT: &str = "keras-config";
/// The HDF5 format.
pub const HDF5_FORMAT: &str = "hdf5";
/// The config grammar's check.
pub const CONFIG_CHECK: &str = "Keras config grammar";
/// The check of an archive's other members.
pub const MEMBERS_CHECK: &str = "Archive members";
/// The grammar's rule-set name and version (`plugins/keras/GRAMMAR.md`).
pub const GRAMMAR: (&str, &str) = ("socair-keras", "1");

socair_plugin_kit::export_plugin! {
    name: "keras",
    rule_sets: [rule_set(GRAMMAR.0, GRAMMAR.1)],
    readers: [KerasReader, KerasConfigReader, Hdf5Reader],
    writers: [],
    encoders: [],
}

/// Whether this plugin claims the zip whose first bytes are `head`: Keras' first members
/// (`claims::keras_claims`), unless torch's rule, widened as the archive plugin widens it,
/// claims it (`plugins/archive/reader/src/detect.rs`).
pub fn keras_claims(head: &[u8], file_len: u64) -> bool {
    claims::keras_claims(head)
        && !claims::torch_claims(head, file_len, |h| {
            central_header_names(h).any(torch_record_name)
        })
}

/// The `.keras` reader.
#[derive(Debug, Clone, Copy)]
pub struct KerasReader;

impl Reader for KerasReader {
    fn format(&self) -> &'static str {
        KERAS_FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        keras_claims(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(open_with(
            source,
            options,
            KERAS_FORMAT,
            socair_keras::archive::read,
        ))
    }
}

/// The reader of a Keras model's `config.json` ([`socair_keras::config`]).
#[derive(Debug, Clone, Copy)]
pub struct KerasConfigReader;

impl Reader for KerasConfigReader {
    fn format(&self) -> &'static str {
        KERAS_CONFIG_FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        socair_keras::config::claims(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(open_with(
            source,
            options,
            KERAS_CONFIG_FORMAT,
            |src, _read_data, reviewed| socair_keras::config::read(src, reviewed),
        ))
    }
}

/// The HDF5 reader: a file whose superblock signature is at offset 0, 512, 1024 or 2048.
#[derive(Debug, Clone, Copy)]
pub struct Hdf5Reader;

impl Reader for Hdf5Reader {
    fn format(&self) -> &'static str {
        HDF5_FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        socair_hdf5::detect(head)
    }

    fn detect_past_head(&self, source: &ByteSourceRef<'_>) -> bool {
        socair_hdf5::detect_past_head(source)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(open_with(
            source,
            options,
            HDF5_FORMAT,
            socair_keras::h5model::read,
        ))
    }
}

/// What both readers' `open` do: read with `read` (data too unless header-only) and report.
fn open_with<'s, 'b>(
    source: &'s ByteSourceRef<'b>,
    options: &ReadOptions,
    format: &str,
    read: impl FnOnce(&'s ByteSourceRef<'b>, bool, &[String]) -> Analysis,
) -> OpenedFile {
    let a = read(source, !options.header_only, &reviewed_globals(options));
    opened(a, format, source.size())
}

fn order(o: socair_hdf5::Order) -> ByteOrder {
    match o {
        socair_hdf5::Order::Little => ByteOrder::Little,
        socair_hdf5::Order::Big => ByteOrder::Big,
    }
}

/// Turns an analysis into what the plugin API reports; `file_len` bounds the tensors
/// described (`socair_plugin_kit::bounded::described_limit`).
pub fn opened(a: Analysis, format: &str, file_len: u64) -> OpenedFile {
    if let Some(r) = a.refused {
        return refused(
            format,
            &format!("not a sound {}: nothing in it was checked", a.kind),
            format!("{}: {}", r.place, r.reason),
            Finding::new(socair_plugin_api::Severity::Fail, r.place, r.reason),
        );
    }
    let limit = socair_plugin_kit::bounded::described_limit(file_len);
    let mut structure = a.structure;
    let mut unread = unread_datasets(&a.unread, &a.deferred, &a.data);
    for (name, why) in &a.unread {
        structure.add(
            Severity::Lead,
            format!("dataset /{name}"),
            format!("not located: {why}"),
        );
    }
    let total = a.tensors.len();
    let mut tensors = Vec::new();
    for t in a.tensors {
        if tensors.len() as u64 >= limit {
            unread.push(Unread {
                tensor: ROption::RSome(t.name.as_str().into()),
                reason: "past the tensors socair describes for a file of this size (16,384 plus one per 256 bytes)".into(),
                outside_model: false,
            });
            continue;
        }
        tensors.push(descriptor(t, a.record.as_ref()));
    }
    if total as u64 > limit {
        structure.add(Severity::Lead, "file", format!("{total} weights, more than the {limit} socair describes for a file of this size: the rest are not fingerprinted"));
    }
    let summary = structure_summary(
        &a.kind,
        a.plain_hdf5,
        tensors.len(),
        a.unread.len(),
        a.data.len(),
        &structure,
    );
    let mut rows = vec![ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: status(structure.worst),
        summary: summary.into(),
        findings: structure.to_api("structure findings"),
        names_severities: false,
    }];
    // An HDF5 file nothing marks as Keras' (no model_config, no layer_names, no Keras 3 vars)
    // is no model Keras loads: its config check does not apply, and is not listed as a gap.
    rows.extend(config_row(a.config.as_ref(), a.plain_hdf5, &a.no_config));
    if format == KERAS_FORMAT {
        rows.push(ReportRow {
            check: MEMBERS_CHECK.into(),
            status: status(a.members.worst),
            summary: match a.members.worst {
                None => format!("every member is one Keras writes ({} asset(s) read as data)", a.data_members),
                Some(_) => "members beside the model's own, which Keras does not write or which no reader models".to_owned(),
            }
            .into(),
            findings: a.members.to_api("member findings"),
            names_severities: false,
        });
    }
    OpenedFile {
        format: format.into(),
        tensors: tensors.into(),
        unread: unread.into(),
        rows: rows.into(),
        metadata: a
            .metadata
            .into_iter()
            .map(|(k, v)| Tuple2(RString::from(k), RString::from(v)))
            .collect(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

/// What `socair tensors` lists unread: datasets not located (`unread`), located but not
/// assembled in a headers-only read (`deferred`), and sound data of no tensor type (`data`:
/// outside the tensor model, not a finding).
fn unread_datasets(
    not_located: &[(String, String)],
    deferred: &[(String, String)],
    data: &[(String, String)],
) -> Vec<Unread> {
    let entry = |(name, why): &(String, String), outside_model: bool| Unread {
        tensor: ROption::RSome(name.as_str().into()),
        reason: why.as_str().into(),
        outside_model,
    };
    not_located
        .iter()
        .chain(deferred)
        .map(|e| entry(e, false))
        .chain(data.iter().map(|e| entry(e, true)))
        .collect()
}

/// A located dataset as the plugin API describes it: byte ranges of the file (in a stored
/// weights member, `record`, a one-range tensor is also a place in that zip record: a
/// conversion's second path reads it there through the `zip` crate), ranges of another file,
/// or its assembled bytes.
fn descriptor(t: socair_keras::Tensor, record: Option<&(String, u64)>) -> TensorDescriptor {
    let socair_keras::Tensor {
        name,
        element,
        shape,
        order: byte_order,
        bytes,
        ..
    } = t;
    let in_file = |ranges: Vec<(u64, u64)>| {
        tensor_in_file(
            &name,
            element,
            Some(element),
            shape,
            ranges
                .into_iter()
                .map(|(offset, len)| ByteRange { offset, len })
                .collect(),
            order(byte_order),
        )
    };
    match bytes {
        Bytes::Ranges(ranges) => TensorDescriptor {
            origin: match (record, ranges.as_slice()) {
                (Some((member, start)), [(offset, _)]) if offset >= start => {
                    ROption::RSome(TensorOrigin {
                        container: member.as_str().into(),
                        offset: offset - start,
                    })
                }
                _ => ROption::RNone,
            },
            ..in_file(ranges)
        },
        Bytes::Elsewhere { file, ranges } => TensorDescriptor {
            file: ROption::RSome(file.as_str().into()),
            ..in_file(ranges)
        },
        Bytes::Inline(bytes) => TensorDescriptor {
            inline: ROption::RSome(bytes.into()),
            ..in_file(Vec::new())
        },
    }
}

/// The structure row's summary: what was located, what not, and what the worst finding means.
fn structure_summary(
    kind: &str,
    plain_hdf5: bool,
    located: usize,
    not_located: usize,
    data: usize,
    structure: &socair_plugin_kit::model::Findings,
) -> String {
    format!(
        "{kind}: {located} {} located{}{}{}",
        // A Keras file's datasets are its weights; any other HDF5 file's are datasets.
        if plain_hdf5 {
            "dataset(s)"
        } else {
            "weight(s)"
        },
        if not_located == 0 {
            String::new()
        } else {
            format!(", {not_located} not located")
        },
        if data == 0 {
            String::new()
        } else {
            format!(", {data} of data that is no tensor listed")
        },
        match structure.worst {
            None => "; the structure is within what h5py and keras.saving write".to_owned(),
            Some(Severity::Lead) => "; parts lie outside what socair models".to_owned(),
            // Every FAIL about another file (an external link): the host judges those by
            // where the file lies, so the summary says what they are, not a verdict.
            Some(Severity::Fail)
                if structure.more == 0
                    && structure
                        .shown
                        .iter()
                        .all(|f| f.severity != Severity::Fail || f.file.is_some()) =>
                "; it links to other files its loader opens, each judged by where it lies"
                    .to_owned(),
            Some(Severity::Fail) =>
                "; it makes its loader read other files or is malformed".to_owned(),
        }
    )
}

/// The Keras config row: the grammar's verdict on the config, a gap when a Keras file has
/// none, nothing for an HDF5 file nothing marks as Keras'.
fn config_row(
    config: Option<&socair_keras::grammar::Judged>,
    plain_hdf5: bool,
    no_config: &str,
) -> Option<ReportRow> {
    match config {
        None if plain_hdf5 => None,
        Some(o) => Some(ReportRow {
            check: CONFIG_CHECK.into(),
            status: status(o.found.worst),
            summary: match o.found.worst {
                None => format!("{} serialized object(s), every one a Keras layer, model, optimizer or other modeling object the grammar holds (socair-keras 1: keras 3.15.1, tf-keras 2.21)", o.objects),
                Some(Severity::Lead) => format!("{} serialized object(s); some lie outside the grammar (custom objects, names it does not model): a person should look", o.objects),
                Some(Severity::Fail) => format!("{} serialized object(s); the config runs code or touches files when Keras loads it", o.objects),
            }
            .into(),
            findings: o.found.to_api("config findings"),
            names_severities: false,
        }),
        None => Some(ReportRow {
            check: CONFIG_CHECK.into(),
            status: RowStatus::NotTested,
            summary: no_config.into(),
            findings: RVec::new(),
            names_severities: false,
        }),
    }
}
