//! TorchServe model archives (`.mar`, written by torch-model-archiver 0.12.0 and served by
//! TorchServe 0.12.0): the zip as TorchServe extracts it ([`mar`]), `MAR-INF/MANIFEST.json`
//! read strictly ([`manifest`]), and every member judged by what loading the model does with
//! it ([`judge`]): the handler and the model file are Python that TorchServe imports (FAIL),
//! TorchServe's own handlers pass, and the serialized model is judged by the torch-zip
//! readers (a TorchScript archive by its code, a state dict by the pickle machine).
//!
//! Nothing in the archive is run. Tensors inside the archive's (deflated) members are not
//! fingerprinted: they do not lie in the file's bytes; extracting the member and scanning it
//! does that.

pub mod detect;
#[doc(hidden)]
pub mod fuzzing;
pub mod judge;
pub mod manifest;
pub mod mar;

use abi_stable::std_types::{ROption, RVec};
use judge::{kind_of, Found, Kind};
use socair_plugin_api::{
    ByteSourceRef, Finding, OpenedFile, PluginError, ReadAt, ReadOptions, ReportRow, RowStatus,
    Unread,
};
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::report::STRUCTURE_CHECK;
use socair_plugin_kit::Severity;
use socair_torch_zip::checkpoint::AnalyzeOptions;

/// The format this plugin reads.
pub const FORMAT: &str = "torchserve-mar";
/// The check of what loading the archive runs.
pub const ARCHIVE_CHECK: &str = "TorchServe archive";

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct MarReader;

impl Reader for MarReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        detect::looks_like_mar(head, file_len)
    }

    fn detect_past_head(&self, source: &ByteSourceRef<'_>) -> bool {
        detect::manifest_in_central_directory(source)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(read_with(source, options))
    }
}

/// Reads a `.mar` under the options the host asked for: what this plugin's reader does, and
/// what the archive plugin does with a `.mar` whose manifest lies past the head (the archiver
/// writes `MAR-INF/MANIFEST.json` last, so only the central directory shows it).
pub fn read_with(src: &(impl ReadAt + ?Sized), options: &ReadOptions) -> OpenedFile {
    let analyze = AnalyzeOptions {
        header_only: false,
        reviewed: socair_plugin_kit::report::reviewed_globals(options),
        grammar: socair_torch_zip::requested_grammar(options),
        profile: socair_torch_zip::requested_profile(options),
    };
    read(src, &analyze)
}

/// Rows gathered while reading.
#[derive(Default)]
struct Rows {
    structure: Vec<Found>,
    archive: Vec<Found>,
    /// The torch-zip readers' rows of each torch member, by check name.
    torch: Vec<(String, RowStatus, Vec<String>, Vec<Finding>)>,
    unread: Vec<String>,
    data_members: usize,
    torch_members: usize,
}

/// Reads a `.mar`: the pure entry point the plugin and the fuzz target call.
pub fn read(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> OpenedFile {
    let mut rows = Rows::default();
    let mut mar = match mar::open(src) {
        Ok(m) => m,
        Err(e) => {
            return socair_plugin_kit::report::refused(
                FORMAT,
                "the zip structure is refused: nothing in it was checked",
                format!("the zip structure is refused: {e}"),
                Finding::new(socair_plugin_api::Severity::Fail, "zip archive", e.as_str()),
            )
        }
    };
    rows.structure.append(&mut mar.findings);
    let mut budget = socair_plugin_kit::model::memory_bound(src.size());
    let members = mar.members.clone();
    let manifest_member = members.iter().find(|m| m.name == detect::MANIFEST);
    let mut manifest = None;
    match manifest_member.map(|m| mar.read(m.index, budget.min(1 << 20))) {
        None => rows.structure.push((Severity::Lead, detect::MANIFEST.into(), "absent: TorchServe reads an empty manifest and refuses the archive (ModelArchive.validate: no model)".into())),
        Some(Err(e)) => rows.structure.push((Severity::Lead, detect::MANIFEST.into(), format!("not read: {e}"))),
        Some(Ok(bytes)) => match manifest::parse(&bytes) {
            Ok((m, findings)) => {
                rows.structure.extend(findings.into_iter().map(|(s, k, r)| (s, format!("{} {k}", detect::MANIFEST), r)));
                manifest = Some(m);
            }
            Err(e) => rows.structure.push((Severity::Lead, detect::MANIFEST.into(), format!("{e}: TorchServe refuses the archive"))),
        },
    }
    // A manifest TorchServe refuses loads nothing: its fields are not judged, the members are.
    match &manifest {
        Some(m) => judge::judge_manifest(m, &members, &mut rows.archive),
        None => rows.archive.push((Severity::Lead, detect::MANIFEST.into(), "no manifest TorchServe reads: which handler and model it would load is unknown, so nothing here says what loading the archive runs".into())),
    }
    let m = manifest.unwrap_or_default();
    let roles: Vec<&str> = [
        &m.handler,
        &m.model_file,
        &m.requirements_file,
        &m.config_file,
    ]
    .into_iter()
    .flatten()
    .map(String::as_str)
    .collect();
    let handler_module = m.handler.as_deref().map(judge::handler_module);
    for member in &members {
        if member.is_dir || member.name == detect::MANIFEST {
            continue;
        }
        let in_role = roles.contains(&member.name.as_str())
            || handler_module.is_some_and(|h| {
                !judge::module_members(std::slice::from_ref(member), h).is_empty()
            });
        let serialized = m.serialized_file.as_deref() == Some(member.name.as_str());
        if in_role && !serialized {
            continue;
        }
        let kind = if serialized {
            Kind::Torch
        } else {
            kind_of(&member.name)
        };
        judge_member(&mut mar, member, kind, &mut budget, options, &mut rows);
    }
    opened(rows, &m)
}

fn judge_member<S: ReadAt + ?Sized>(
    mar: &mut mar::Mar<'_, S>,
    member: &mar::Member,
    kind: Kind,
    budget: &mut u64,
    options: &AnalyzeOptions,
    rows: &mut Rows,
) {
    let place = format!("member {:?}", member.name);
    match kind {
        Kind::Python => {
            rows.archive.push((Severity::Lead, place, "Python code on the worker's import path (the model directory precedes site-packages in PYTHONPATH: EnvironmentUtils.java getEnvString): it runs if the handler or anything it imports names a module of its name".into()));
            return;
        }
        Kind::Other if !member.name.to_ascii_lowercase().ends_with(".so") => {
            rows.archive.push((Severity::Lead, place, "a member nothing here checks (not JSON, text or a torch file): a person should look".into()));
            return;
        }
        Kind::Other => {
            rows.archive.push((Severity::Fail, place, "a shared library: TorchServe loads a serialized `.so` as an AOTInductor model (base_handler.py `_load_torch_export_aot_compile`), native code".into()));
            return;
        }
        _ => {}
    }
    let bytes = match mar.read(member.index, *budget) {
        Ok(b) => b,
        Err(e) if e.contains("CRC") || e.contains("checksum") => {
            rows.structure.push((
                Severity::Fail,
                place,
                format!("{e}: the bytes changed after they were written"),
            ));
            return;
        }
        Err(e) => {
            rows.unread.push(format!("{}: {e}", member.name));
            rows.archive
                .push((Severity::Lead, place, format!("not read: {e}")));
            return;
        }
    };
    *budget = budget.saturating_sub(bytes.len() as u64);
    match kind {
        Kind::Json => match serde_json::from_slice::<socair_plugin_kit::json::Json>(&bytes) {
            Ok(_) => rows.data_members += 1,
            Err(e) => rows.archive.push((
                Severity::Lead,
                place,
                format!("a .json member that is not strict JSON ({e}): a person should look"),
            )),
        },
        Kind::Text => match std::str::from_utf8(&bytes) {
            Ok(_) => rows.data_members += 1,
            Err(_) => rows.archive.push((
                Severity::Lead,
                place,
                "a text member that is not UTF-8: a person should look".into(),
            )),
        },
        _ => judge_torch(member, &bytes, options, rows),
    }
}

/// A torch member, read by the torch-zip readers as a file of its own.
fn judge_torch(member: &mar::Member, bytes: &[u8], options: &AnalyzeOptions, rows: &mut Rows) {
    rows.torch_members += 1;
    let analysis = socair_torch_zip::legacy::analyze_as_zip(bytes, options);
    let opened = socair_torch_zip::opened_file(&analysis, false);
    if !opened.tensors.is_empty() {
        rows.unread.push(format!("{}: its {} tensor(s) lie in a member, not in the archive's bytes: extract it and scan it to fingerprint them", member.name, opened.tensors.len()));
    }
    for row in opened
        .rows
        .iter()
        .filter(|r| r.check.as_str() != STRUCTURE_CHECK)
    {
        let findings: Vec<Finding> = row
            .findings
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.place = format!("member {:?}: {}", member.name, f.place).into();
                f
            })
            .collect();
        let summary = format!("member {:?}: {}", member.name, row.summary);
        match rows
            .torch
            .iter_mut()
            .find(|(c, ..)| c == row.check.as_str())
        {
            Some((_, status, summaries, all)) => {
                *status = status.worse(row.status);
                summaries.push(summary);
                all.extend(findings);
            }
            None => rows
                .torch
                .push((row.check.to_string(), row.status, vec![summary], findings)),
        }
    }
}

fn findings_of(found: &[Found]) -> RVec<Finding> {
    found
        .iter()
        .map(|(s, p, r)| Finding::new((*s).into(), p.as_str(), r.as_str()))
        .collect()
}

fn status_of(found: &[Found]) -> RowStatus {
    socair_plugin_kit::model::status(found.iter().map(|f| f.0).max())
}

fn opened(rows: Rows, m: &manifest::Manifest) -> OpenedFile {
    let structure_status = status_of(&rows.structure);
    let structure = ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: structure_status,
        summary: match structure_status {
            RowStatus::Pass => "a zip TorchServe extracts as every other zip reader reads it (local headers in central-directory order, each name once, none leaving the model directory), with a MAR-INF/MANIFEST.json torch-model-archiver would write".to_string(),
            _ => format!("{} finding(s) in the zip layer or the manifest", rows.structure.len()),
        }
        .into(),
        findings: findings_of(&rows.structure),
        names_severities: true,
    };
    let archive_status = status_of(&rows.archive);
    let handler = m.handler.as_deref().unwrap_or("(none)");
    let archive = ReportRow {
        check: ARCHIVE_CHECK.into(),
        status: archive_status,
        summary: match archive_status {
            RowStatus::Pass => format!("handler {handler:?} is TorchServe's own, no Python code of the archive is imported, {} data member(s) (JSON, text) and {} torch member(s) judged below", rows.data_members, rows.torch_members),
            RowStatus::Fail => format!("loading the model in TorchServe runs code the archive holds or loads native code (handler {handler:?})"),
            _ => format!("handler {handler:?}; {} finding(s) outside what socair proves safe: a person should look", rows.archive.len()),
        }
        .into(),
        findings: findings_of(&rows.archive),
        names_severities: true,
    };
    let torch_rows = rows
        .torch
        .into_iter()
        .map(|(check, status, summaries, findings)| ReportRow {
            check: check.into(),
            status,
            summary: summaries.join("; ").into(),
            findings: findings.into(),
            names_severities: true,
        });
    OpenedFile {
        format: FORMAT.into(),
        tensors: RVec::new(),
        unread: rows
            .unread
            .into_iter()
            .map(|r| Unread {
                tensor: ROption::RNone,
                reason: r.into(),
                outside_model: false,
            })
            .collect(),
        rows: [structure, archive].into_iter().chain(torch_rows).collect(),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}
