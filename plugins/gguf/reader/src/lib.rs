//! socair plugin for GGUF: a strict reader for versions 2 and 3 ([`reader`]), the ggml type
//! table ([`types`]) and a v3 writer ([`writer`]). This file is the plugin's declaration
//! (`export_plugin!`, which runs every entry point inside `guard`) and the turn of the
//! reader's verdict into what the plugin API reports: the layout's findings, and the chat
//! templates in the metadata judged by the kit's rule ([`socair_plugin_kit::jinja`]).
//!
//! A file of a GGUF version no current reader reads (1, whose counts and lengths are 32-bit,
//! or one past 3) is not refused as a malformed file: `open` answers with a
//! [`PluginErrorKind::Unsupported`] error, which the host reports as a file it cannot read
//! (exit 2), as gguf-py 0.19.0's `GGUFReader` raises `ValueError("Sorry, file appears to be
//! version 1 which we cannot handle")`.

pub use socair_plugin_kit::bounded;
#[doc(hidden)]
pub mod fuzzing;
pub mod legacy_ggml;
pub mod reader;
pub mod types;
pub mod writer;

pub use legacy_ggml::GgmlLegacyReader;

use abi_stable::std_types::{ROption, RString, RVec, Tuple2};
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, Finding, OpenedFile, PluginError, PluginErrorKind,
    ReadOptions, ReportRow, RowStatus, Severity, TensorDescriptor, Unread,
};
use socair_plugin_kit::export::{Plan, Reader, WriteTensor, Writer};
use socair_plugin_kit::jinja;
use socair_plugin_kit::report::{refused, tensor_in_file};

/// The format name.
pub const FORMAT: &str = "gguf";
/// The structure check.
pub use socair_plugin_kit::report::STRUCTURE_CHECK;

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct GgufReader;

impl Reader for GgufReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        // Big-endian files are claimed too, so `open` can say why they are refused.
        head.starts_with(b"GGUF") || head.starts_with(b"FUGG")
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        if let Some(why) = reader::unreadable_version(source) {
            // Not evidence against the file: a layout no current reader reads. The host
            // says the file cannot be read (exit 2), as gguf-py's GGUFReader refuses it.
            return Err(PluginError::new(PluginErrorKind::Unsupported, why));
        }
        Ok(opened_file(reader::parse(source, !options.header_only)))
    }
}

/// Turns the reader's verdict into what the plugin API reports.
pub fn opened_file(parsed: Result<reader::Gguf, reader::GgufError>) -> OpenedFile {
    let g = match parsed {
        Ok(g) => g,
        Err(e) => {
            return refused(
                FORMAT,
                "not a sound GGUF file: loaders may disagree on its tensors",
                e.to_string(),
                Finding::new(Severity::Fail, e.place.as_str(), e.reason.as_str()),
            )
        }
    };
    let total_metadata = g.metadata.len();
    let Described {
        tensors,
        mut findings,
        unread,
        unsized_tensors,
        past_budget,
    } = describe_tensors(&g);
    let mut status = if findings.is_empty() {
        RowStatus::Pass
    } else {
        RowStatus::Lead
    };
    let templates = chat_templates(&g.metadata);
    if let Some(worst) = templates.worst {
        status = worst.into();
    }
    findings.extend(templates.findings);
    let mut notes = Vec::new();
    if unsized_tensors > 0 {
        notes.push(format!(
            "{} tensor(s) of a type whose size is not known or disputed",
            bounded::thousands(unsized_tensors)
        ));
    }
    if past_budget > 0 {
        notes.push(format!(
            "{} tensor(s) past what socair describes for a file of this size",
            bounded::thousands(past_budget)
        ));
    }
    let exported = total_metadata.min(MAX_METADATA_LISTED);
    if exported < total_metadata {
        notes.push(format!(
            "only the first {} of its metadata keys are passed on",
            bounded::thousands(exported as u64)
        ));
    }
    notes.extend(templates.note);
    let summary = format!(
        "GGUF v{} with {} metadata keys and {} tensors (alignment {}) laid out as ggml requires{}",
        g.version,
        total_metadata,
        g.tensors.len(),
        g.alignment,
        notes.iter().map(|n| format!("; {n}")).collect::<String>()
    );
    OpenedFile {
        format: FORMAT.into(),
        tensors: tensors.into(),
        unread: unread.into(),
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: findings.into(),
            names_severities: false,
        }]),
        metadata: exported_metadata(g.metadata, exported).into(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

/// The tensors of a sound file as the plugin API carries them, and what keeps others out.
struct Described {
    tensors: Vec<TensorDescriptor>,
    /// The findings on the tensors, each kind past its bound counted in one.
    findings: Vec<Finding>,
    /// The tensors not carried, each kind past its bound counted in one.
    unread: Vec<Unread>,
    /// Findings on tensors of an unknown or disputed size.
    unsized_tensors: u64,
    /// Tensors past the budget for a file of this size.
    past_budget: u64,
}

/// Every tensor of known, undisputed size located in the file, within the budget.
fn describe_tensors(g: &reader::Gguf) -> Described {
    let file_len = g.file_len;
    let limit = bounded::described_limit(file_len);
    let mut past_budget = 0u64;
    let mut tensors = Vec::new();
    let mut unread = bounded::Listing::new(bounded::UNREAD_PER_KIND);
    let mut findings = bounded::Listing::new(bounded::FINDINGS_PER_KIND);
    for t in &g.tensors {
        let place = || RString::from(format!("tensor {:?}", t.name));
        match (t.ggml_type, t.byte_len) {
            (Some(ty), Some(_)) if ty.disputed.is_some() => {
                let reason = ty.disputed.unwrap_or_default();
                findings.push("tensors of a disputed size", || {
                    Finding::new(Severity::Lead, place(), reason)
                });
                unread.push("tensors of a disputed size", || Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: reason.into(),
                    outside_model: false,
                });
            }
            (Some(_), Some(_)) if tensors.len() as u64 >= limit => {
                past_budget += 1;
                unread.push("tensors past the budget", || Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: budget_reason(g.tensors.len(), limit, file_len).into(),
                    outside_model: false,
                });
            }
            (Some(ty), Some(len)) => tensors.push(tensor_in_file(
                &t.name,
                ty.name,
                ty.element,
                t.shape(),
                vec![ByteRange {
                    offset: g.data_start + t.offset,
                    len,
                }],
                ByteOrder::Little,
            )),
            _ => {
                findings.push("tensors of an unknown type", || {
                    let reason = types::unknown_reason(t.type_id);
                    Finding::new(
                        Severity::Lead,
                        place(),
                        format!("{reason}; the layout after it is only partly checked"),
                    )
                });
                unread.push("tensors of an unknown type", || Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: types::unknown_reason(t.type_id).into(),
                    outside_model: false,
                });
            }
        }
    }
    let unsized_tensors = findings.total();
    if past_budget > 0 {
        findings.push("tensors past the budget", || {
            Finding::new(
                Severity::Lead,
                "tensor infos",
                budget_reason(g.tensors.len(), limit, file_len),
            )
        });
    }
    let (mut findings, over) = findings.finish();
    for (kind, n) in over {
        findings.push(Finding::new(
            Severity::Lead,
            "tensor infos",
            bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
        ));
    }
    let (mut unread, over) = unread.finish();
    for (kind, n) in over {
        unread.push(Unread {
            tensor: ROption::RNone,
            reason: bounded::and_more(n, kind, bounded::UNREAD_PER_KIND).into(),
            outside_model: false,
        });
    }
    Described {
        tensors,
        findings,
        unread,
        unsized_tensors,
        past_budget,
    }
}

/// The first `exported` metadata entries, and one that counts the rest.
fn exported_metadata(
    all: Vec<(String, reader::Value)>,
    exported: usize,
) -> Vec<Tuple2<RString, RString>> {
    let total_metadata = all.len();
    // Metadata goes across as typed JSON, each value written straight into its text (at most
    // 6 bytes per byte of the file) and its encoded form dropped as soon as it is written.
    let mut metadata = Vec::with_capacity(exported);
    for (k, v) in all.into_iter().take(exported) {
        metadata.push(Tuple2(RString::from(k), RString::from(v.json_text())));
    }
    let omitted = total_metadata - exported;
    if omitted > 0 {
        metadata.push(Tuple2(
            RString::from(OMITTED_METADATA_KEY),
            RString::from(format!(
                "{} more metadata keys are not listed (only the first {} are)",
                bounded::thousands(omitted as u64),
                bounded::thousands(exported as u64)
            )),
        ));
    }
    metadata
}

/// What the chat-template rule says of a file's templates.
struct Templates {
    worst: Option<jinja::Severity>,
    findings: Vec<Finding>,
    note: Option<String>,
}

/// Judges every chat template in the metadata by the kit's rule ([`jinja`], the same as
/// for `tokenizer_config.json` and `chat_template.jinja` beside a model): the
/// `tokenizer.chat_template` key and its named variants `tokenizer.chat_template.<name>`
/// (gguf-py 0.19.0 `Keys.Tokenizer.CHAT_TEMPLATE` / `CHAT_TEMPLATE_N`, which llama.cpp's
/// `llama_model_chat_template` reads). A value of another type is no template llama.cpp
/// reads and is not judged.
fn chat_templates(metadata: &[(String, reader::Value)]) -> Templates {
    let mut out = Templates {
        worst: None,
        findings: Vec::new(),
        note: None,
    };
    let mut judged = 0usize;
    for (key, value) in metadata {
        let is_template = key == CHAT_TEMPLATE_KEY
            || key
                .strip_prefix(CHAT_TEMPLATE_KEY)
                .is_some_and(|rest| rest.starts_with('.'));
        let (true, reader::Value::String(text)) = (is_template, value) else {
            continue;
        };
        if judged == MAX_TEMPLATES {
            out.worst = out.worst.max(Some(jinja::Severity::Lead));
            out.findings.push(Finding::new(
                Severity::Lead,
                format!("metadata {key}"),
                format!("a chat template past the first {MAX_TEMPLATES} (a GGUF carries a handful), which socair does not parse: it and the ones after it were not checked"),
            ));
            break;
        }
        judged += 1;
        let j = jinja::judge(text);
        out.worst = out.worst.max(j.worst());
        for f in j.flags {
            out.findings.push(Finding::new(
                f.severity.into(),
                format!("metadata {key} {}", f.place),
                f.reason,
            ));
        }
        if j.more > 0 {
            out.findings.push(Finding::new(
                Severity::Note,
                format!("metadata {key}"),
                format!("and {} more findings in this template", j.more),
            ));
        }
    }
    out.note = match (judged, out.worst) {
        (0, _) => None,
        (n, None) => Some(format!(
            "{n} chat template(s) parsed as Jinja, reaching nothing outside the template"
        )),
        (n, Some(jinja::Severity::Lead)) => Some(format!(
            "{n} chat template(s), not all proven ordinary Jinja"
        )),
        (n, Some(jinja::Severity::Fail)) => Some(format!(
            "{n} chat template(s), one reaching Python internals as CVE-2024-34359's did"
        )),
    };
    out
}

/// Chat templates judged in one file (llama.cpp's models carry one to three).
pub const MAX_TEMPLATES: usize = 64;

/// The chat template's metadata key.
pub const CHAT_TEMPLATE_KEY: &str = "tokenizer.chat_template";

/// Metadata keys passed on to the host, in file order; a GGUF has a few dozen.
pub const MAX_METADATA_LISTED: usize = 65_536;

/// The key standing for metadata keys past [`MAX_METADATA_LISTED`] (no GGUF key can have this
/// name's form: GGUF keys are lower_snake_case segments).
pub const OMITTED_METADATA_KEY: &str = "(socair: metadata not listed)";

fn budget_reason(total: usize, limit: u64, file_len: u64) -> String {
    format!(
        "the file describes {} tensors in {} bytes; socair describes at most {} for a file of this size (16,384 plus one per 256 bytes), so the rest are not fingerprinted",
        bounded::thousands(total as u64),
        bounded::thousands(file_len),
        bounded::thousands(limit)
    )
}

/// The writer exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct GgufWriter;

impl Writer for GgufWriter {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn plan(
        &self,
        tensors: &[WriteTensor],
        metadata: &[(String, String)],
    ) -> Result<Plan, PluginError> {
        writer::plan(tensors, metadata)
            .map_err(|e| PluginError::new(PluginErrorKind::InvalidInput, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(key: &str, text: &str) -> (String, reader::Value) {
        (key.to_owned(), reader::Value::String(text.to_owned()))
    }

    #[test]
    fn every_template_key_is_judged_and_their_number_bounded() {
        let t = chat_templates(&[
            template("tokenizer.chat_template", "{{ messages[0].content }}"),
            template("tokenizer.chat_template.tool_use", "{{ x.__class__ }}"),
            template("tokenizer.chat_templates", "{{ x.__class__ }}"),
            template("tokenizer.chat_template_x", "{{ x.__class__ }}"),
            (
                "tokenizer.chat_template.rag".into(),
                reader::Value::Bool(true),
            ),
        ]);
        assert_eq!(t.worst, Some(jinja::Severity::Fail));
        assert_eq!(t.findings.len(), 1, "{:?}", t.findings);
        assert_eq!(
            t.findings[0].place.as_str(),
            "metadata tokenizer.chat_template.tool_use line 1 column 6"
        );
        let many: Vec<_> = (0..MAX_TEMPLATES + 3)
            .map(|i| template(&format!("tokenizer.chat_template.t{i}"), "{{ x }}"))
            .collect();
        let t = chat_templates(&many);
        assert_eq!(t.worst, Some(jinja::Severity::Lead));
        assert_eq!(t.findings.len(), 1);
        assert!(t.findings[0].reason.contains("past the first 64"));
    }
}
