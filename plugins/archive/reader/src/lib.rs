//! socair plugin for archives that wrap pickles: zip archives that are neither torch
//! checkpoints nor NumPy `.npz` files (joblib/sklearn bundles zipped, hand-zipped pickles),
//! and 7z archives.
//!
//! Every member of a zip ([`scan`]) or a 7z archive ([`sevenz`], decoded with the
//! `sevenz-rust2` crate) is opened: a pickle goes through the `socair-wo` pickle machine, a
//! nested zip or 7z is walked to a bounded depth, JSON and text are read as data as the host
//! reads a model directory's companions (`socair_plugin_kit::companion`), and every other
//! member is handed back to the host (`FormatReader::open_container`), which reads it with
//! whichever reader claims it. The claim rule ([`detect`]) is the complement of the torch-zip
//! and numpy plugins' rules, so that no file is claimed by two plugins.
//!
//! This file is the plugin's declaration (`export_plugin!`, which runs every entry point
//! inside `guard`) and the turn of a walk into what the plugin API reports.

pub mod detect;
#[doc(hidden)]
pub mod fuzzing;
mod keras;
pub(crate) mod members;
pub mod scan;
pub mod sevenz;
pub mod stream;
pub mod tar;

use abi_stable::std_types::{ROption, RVec};
use detect::Claim;
use scan::{Analysis, Finding as ScanFinding, HandedBytes, SourceReader};
use socair_plugin_api::{
    ByteRange, ByteSourceRef, Finding, Member, MemberBytes, OpenedContainer, OpenedFile,
    PluginError, ReadAt, ReadOptions, ReportRow, RowStatus, Unread,
};
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::model::status;
use socair_plugin_kit::report::reviewed_globals;

/// The zip format this plugin reads.
pub const ZIP_FORMAT: &str = "archive-zip";
/// The 7z format it reads.
pub const SEVEN_Z_FORMAT: &str = "archive-7z";
/// The pickle grammar's rule-set name and version.
pub const GRAMMAR: (&str, &str) = ("socair-wo", "1");
/// The pickle check.
pub use socair_plugin_kit::report::PICKLE_CHECK;
/// The structure check.
pub use socair_plugin_kit::report::STRUCTURE_CHECK;

/// The zip reader.
#[derive(Debug, Clone, Copy)]
pub struct ZipReader;

impl Reader for ZipReader {
    fn format(&self) -> &'static str {
        ZIP_FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        // A TorchServe archive whose manifest shows in the head is the torchserve plugin's.
        detect::claim(head, file_len) == Claim::Zip
            && !socair_torchserve::detect::looks_like_mar(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(members_unread(self.container(source, options, u64::MAX)))
    }

    fn open_container(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
        budget: u64,
    ) -> Option<Result<OpenedContainer, PluginError>> {
        Some(Ok(self.container(source, options, budget)))
    }
}

impl ZipReader {
    /// The zip's own reading and the members it hands back, the decoded ones within `budget`.
    fn container(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
        budget: u64,
    ) -> OpenedContainer {
        // torch-model-archiver writes `MAR-INF/MANIFEST.json` last: a `.mar` larger than the
        // head is claimed here, and read as TorchServe reads it, by the torchserve reader.
        if socair_torchserve::detect::manifest_in_central_directory(source) {
            return OpenedContainer {
                opened: socair_torchserve::read_with(source, options),
                members: RVec::new(),
            };
        }
        open_with(source, options, budget, ZIP_FORMAT, scan::scan)
    }
}

/// The 7z reader.
#[derive(Debug, Clone, Copy)]
pub struct SevenZReader;

impl Reader for SevenZReader {
    fn format(&self) -> &'static str {
        SEVEN_Z_FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        detect::claim(head, file_len) == Claim::SevenZ
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(members_unread(open_with(
            source,
            options,
            u64::MAX,
            SEVEN_Z_FORMAT,
            scan::scan_7z,
        )))
    }

    fn open_container(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
        budget: u64,
    ) -> Option<Result<OpenedContainer, PluginError>> {
        Some(Ok(open_with(
            source,
            options,
            budget,
            SEVEN_Z_FORMAT,
            scan::scan_7z,
        )))
    }
}

/// The tar reader: a container whose members the host reads ([`tar`]).
#[derive(Debug, Clone, Copy)]
pub struct TarReader;

impl Reader for TarReader {
    fn format(&self) -> &'static str {
        tar::TAR_FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        detect::claim(head, u64::MAX) == Claim::No && tar::claims(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(members_unread(tar::open(source)))
    }

    fn open_container(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
        _budget: u64,
    ) -> Option<Result<OpenedContainer, PluginError>> {
        Some(Ok(tar::open(source)))
    }
}

/// The compressed-stream reader: a container of one member, the decoded bytes ([`stream`]).
#[derive(Debug, Clone, Copy)]
pub struct StreamReader;

impl Reader for StreamReader {
    fn format(&self) -> &'static str {
        stream::STREAM_FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        stream::claims(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(members_unread(stream::open(source, 0)))
    }

    fn open_container(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
        budget: u64,
    ) -> Option<Result<OpenedContainer, PluginError>> {
        Some(Ok(stream::open(source, budget)))
    }
}

/// A container read by a host that reads no members (`open`, not `open_container`): its rows
/// cannot vouch for what it holds, so each member is a LEAD.
fn members_unread(container: OpenedContainer) -> OpenedFile {
    let mut opened = container.opened;
    if let Some(row) = opened.rows.first_mut() {
        for m in container.members.iter() {
            row.findings.push(Finding::new(
                socair_plugin_api::Severity::Lead,
                if m.name.is_empty() {
                    "stream"
                } else {
                    m.name.as_str()
                },
                "not read: this host reads no member a container hands back (plugin-api 0.5.1)",
            ));
            row.status = RowStatus::Lead;
        }
    }
    opened
}

/// What the zip and 7z readers do: walk the archive with `walk`, turn the analysis into rows
/// and hand back the members it does not read (the decoded ones within `hand_back` bytes).
fn open_with<'s, 'b>(
    source: &'s ByteSourceRef<'b>,
    options: &ReadOptions,
    hand_back: u64,
    format: &str,
    walk: impl FnOnce(SourceReader<'s, ByteSourceRef<'b>>, u64, scan::Scope<'_>) -> Analysis,
) -> OpenedContainer {
    let reviewed = reviewed_globals(options);
    let rules: Vec<(&str, &str)> = options
        .rules
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str()))
        .collect();
    let scope = scan::Scope {
        reviewed: &reviewed,
        profile: socair_pickle::pickle::Profile::asked(&rules),
        hand_back,
    };
    let analysis = walk(SourceReader::new(source), source.size(), scope);
    let opened = opened(&analysis, format);
    let members = analysis
        .handed
        .into_iter()
        .map(|h| Member {
            name: h.name.into(),
            bytes: match h.bytes {
                HandedBytes::Span { offset, len } => MemberBytes::Range(ByteRange { offset, len }),
                HandedBytes::Decoded(bytes) => MemberBytes::Decoded(bytes.into()),
            },
            unclaimed: h.unclaimed.into(),
        })
        .collect();
    OpenedContainer { opened, members }
}

fn findings(list: Vec<ScanFinding>) -> RVec<Finding> {
    list.into_iter()
        .map(|f| Finding::new(f.severity.into(), f.place, f.reason))
        .collect()
}

/// Turns the walk of a zip or 7z archive (`format`: [`ZIP_FORMAT`] or [`SEVEN_Z_FORMAT`])
/// into what the plugin API reports: no tensors (an archive has no tensor model), a structure
/// row and, when it holds pickles, a pickle row.
pub fn opened(a: &Analysis, format: &str) -> OpenedFile {
    let structure_worst = a.structure.worst.max(a.unchecked.worst);
    let structure_status = status(structure_worst);
    let unchecked = a.unchecked.total();
    let total = a.archives + a.sevenz_archives;
    let structure_summary = format!(
        "{} zip and {} 7z archive(s) opened ({} nested), {} members: {} pickles, {} JSON or text read as data, {} handed to the readers that claim them, {} not checked by anything; CRC-32 verified for {} members, {} bytes inflated or decoded of the {} allowed; the archive itself holds no tensor model (members' tensors are fingerprinted by their readers){}",
        a.archives,
        a.sevenz_archives,
        total.saturating_sub(1),
        a.members,
        a.pickles,
        a.data,
        a.handed.len(),
        unchecked,
        a.crc_verified,
        a.inflated,
        a.budget,
        match structure_status {
            RowStatus::Fail => "; a member names code its loader runs, or the archive is malformed or built to be read differently by different readers",
            RowStatus::Lead => "; members nothing checked must be looked at by a person",
            _ => "",
        }
    );
    let mut structure_findings = a.structure.listed("structure findings");
    structure_findings.extend(a.unchecked.listed("unchecked members"));
    let reviewed = if a.reviewed_used.is_empty() {
        String::new()
    } else {
        format!(
            "; reviewed globals accepted: {}",
            a.reviewed_used.join(", ")
        )
    };
    // No pickle row for an archive without pickles: the check does not apply, as it does not
    // to a safetensors file or a tar of one, and is no gap a reviewer must accept.
    let pickle_row = if a.pickles == 0 {
        None
    } else {
        let count = a.pickle.total();
        let st = status(a.pickle.worst);
        let summary = match st {
            RowStatus::Pass => format!(
                "all {} pickle member(s) build only what {} lists as data: pickle.load runs nothing for them{reviewed}",
                a.pickles,
                a.profile.unwrap_or("socair-data/1")
            ),
            RowStatus::Fail => format!(
                "{count} finding(s) in {} pickle member(s), code execution or a file readers would read differently among them{reviewed}",
                a.pickles
            ),
            _ => format!(
                "{count} finding(s) in {} pickle member(s) outside what {} proves safe; a person should look{reviewed}",
                a.pickles,
                a.profile.unwrap_or("socair-data/1")
            ),
        };
        Some(ReportRow {
            check: PICKLE_CHECK.into(),
            status: st,
            summary: summary.into(),
            findings: findings(a.pickle.listed("pickle findings")),
            names_severities: true,
        })
    };
    // What `socair tensors` lists unread: every member nothing read (a Keras archive, a
    // nested checkpoint or array, an unknown binary…): an archive has no tensor model, so a
    // member that may hold tensors is never passed over in silence.
    let unread: RVec<Unread> = a
        .unchecked
        .listed("unchecked members")
        .into_iter()
        .map(|f| Unread {
            tensor: ROption::RNone,
            reason: format!("{}: {}", f.place, f.reason).into(),
            outside_model: false,
        })
        .collect();
    OpenedFile {
        format: format.into(),
        tensors: RVec::new(),
        unread,
        rows: std::iter::once(ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: structure_status,
            summary: structure_summary.into(),
            findings: findings(structure_findings),
            names_severities: true,
        })
        .chain(pickle_row)
        .collect(),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}
