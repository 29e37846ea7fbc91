//! YAML configs read strictly as data, as the loaders that read them would: PyYAML 6.0.3 (the
//! reference: `yaml.safe_load`, `yaml.full_load`, `yaml.unsafe_load`, `yaml.load(Loader=…)`;
//! OmegaConf's `OmegaConf.load` and NeMo's `model_config.yaml` go through it), then OmegaConf
//! 2.3's interpolations and Hydra 1.3's `_target_`.
//!
//! The bytes are decoded as PyYAML's reader decodes them ([`decode`]) and parsed into events by
//! saphyr-parser, which expands tag handles (`!!`, `%TAG` directives, verbatim `!<…>`, `%`
//! escapes) and resolves nothing else; what a node's tag makes PyYAML construct is decided
//! here ([`tags`], from `yaml/constructor.py`), for every node of every document (what
//! `yaml.load_all` reads), keys included:
//!
//! * a Python tag whose constructor imports a module or calls a callable (`python/name:`,
//!   `python/module:`, `python/object:`, `python/object/new:`, `python/object/apply:`),
//!   however it is spelled, is a FAIL naming the tag, its line and column, and what it runs;
//! * a Python tag that builds only data (`python/tuple`, `python/str`, …) is a note: the file is
//!   data, though `yaml.safe_load` refuses it;
//! * any other tag but the core ones (`!foo`, another global tag) is a LEAD: `yaml.safe_load`
//!   refuses it, and a loader that registers a constructor for it runs that constructor;
//! * OmegaConf interpolations that read the environment (`${oc.env:…}`) or call a resolver
//!   the program registered are LEADs ([`omegaconf`]); a Hydra `_target_` (or the `target`
//!   NeMo imports) naming a callable that runs code or does I/O is a FAIL, any other a LEAD;
//! * aliases are counted, never expanded: a document that would expand past the bound is a
//!   LEAD ([`walk`]);
//! * text the parser stopped at, text PyYAML refuses, or line breaks YAML 1.1 and 1.2 read
//!   differently are LEADs, and so is a Python tag spelled in the text where the parse found
//!   none (the parser and PyYAML would disagree on it).

pub mod decode;
mod judged;
pub mod omegaconf;
pub mod tags;
mod walk;

use socair_plugin_api::{OpenedFile, ReportRow, RowStatus};
use socair_plugin_kit::bounded::thousands;
use socair_plugin_kit::model::Severity;
use socair_plugin_kit::report::STRUCTURE_CHECK;

pub use judged::Judged;
pub use walk::{EXPANSION_FLOOR, EXPANSION_RATIO};

/// The format name.
pub const FORMAT: &str = "yaml";

/// YAML files larger than this are not read (a config is kilobytes; the companion rules read
/// text up to the same size).
pub const MAX_YAML: u64 = 64 << 20;

/// How many times the text spells a Python tag outright (`!!python/`, or the full
/// `tag:yaml.org,2002:python/` of a verbatim tag or a `%TAG` prefix), and the line and column
/// (1-based) of the first.
fn spelled_python_tags(text: &str) -> (u64, usize, usize) {
    let spellings = ["!!python/", tags::PYTHON_PREFIX];
    let count = spellings
        .iter()
        .map(|s| text.matches(s).count() as u64)
        .sum();
    let first = spellings
        .iter()
        .filter_map(|s| text.find(s))
        .min()
        .unwrap_or(0);
    let before = text.get(..first).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (count, line, column)
}

/// Judges a YAML file's bytes.
pub fn judge(bytes: &[u8]) -> Judged {
    let mut judged = Judged::default();
    if bytes.len() as u64 > MAX_YAML {
        judged.unread = Some(format!(
            "a YAML file of {} bytes, larger than the {} socair reads",
            thousands(bytes.len() as u64),
            thousands(MAX_YAML)
        ));
        return judged;
    }
    let decoded = match decode::decode(bytes) {
        Ok(d) => d,
        Err(decode::NotText(why)) => {
            judged.unread = Some(why);
            return judged;
        }
    };
    judged.encoding = decoded.encoding;
    if let Some((code, line, column)) = decoded.unprintable {
        judged.findings.add(
            Severity::Lead,
            format!("line {line} column {column}"),
            format!("the character U+{code:04X}, which PyYAML's reader refuses (`unacceptable character`): PyYAML loads no part of this file, other YAML loaders may"),
        );
    }
    let (breaks, line, column) = decoded.extra_breaks;
    if breaks > 0 {
        judged.findings.add(
            Severity::Lead,
            format!("line {line} column {column}"),
            format!("{breaks} line break(s) written as U+0085, U+2028 or U+2029, which PyYAML (YAML 1.1) reads as line breaks and YAML 1.2 parsers as text: readers see different lines (judged here as PyYAML reads them)"),
        );
    }
    let mut walk = walk::Walk::new(&mut judged);
    walk.run(&decoded.text);
    let found = walk.python_tags;
    let (spelled, line, column) = spelled_python_tags(&decoded.text);
    if spelled > found {
        judged.findings.add(
            Severity::Lead,
            format!("line {line} column {column}"),
            format!("it spells a Python tag ({spelled} time(s): `!!python/` or `{}`) where the parse found {found}: in a comment, a string or a directive, or where another YAML parser would read a tag", tags::PYTHON_PREFIX),
        );
    }
    judged
}

/// The place and reason of the first finding of `severity`.
fn first(judged: &Judged, severity: Severity) -> Option<(&str, &str)> {
    judged
        .findings
        .shown
        .iter()
        .find(|f| f.severity == severity)
        .map(|f| (f.place.as_str(), f.reason.as_str()))
}

/// The row's one sentence.
fn summary(judged: &Judged) -> String {
    let total = judged.findings.total();
    match judged.findings.status() {
        RowStatus::Fail => {
            let (place, _) = first(judged, Severity::Fail).unwrap_or(("", ""));
            format!("a YAML config that runs code when it is loaded: {total} finding(s), the first FAIL at {place}")
        }
        RowStatus::Lead => {
            let (place, _) = first(judged, Severity::Lead).unwrap_or(("", ""));
            format!("a YAML config read as data, with {total} thing(s) outside what socair proves safe (the first at {place}): a person should look")
        }
        _ => format!(
            "a YAML config read strictly as data ({} document(s), {} nodes, {} alias(es)): no node builds a Python object and nothing names code",
            thousands(judged.documents),
            thousands(judged.nodes),
            thousands(judged.aliases)
        ),
    }
}

/// The `OpenedFile` of a judged YAML file: no tensors, one structure row.
pub fn opened_file(judged: &Judged) -> OpenedFile {
    use socair_plugin_api::Finding as ApiFinding;
    if let Some(why) = &judged.unread {
        return socair_plugin_kit::report::refused_as(
            RowStatus::Lead,
            FORMAT,
            &format!("not read as YAML: {why}; nothing in it was checked"),
            why.clone(),
            ApiFinding::new(socair_plugin_api::Severity::Lead, "file", why.as_str()),
        );
    }
    let mut findings: Vec<ApiFinding> = judged
        .findings
        .listed("findings")
        .into_iter()
        .map(Into::into)
        .collect();
    // FAILs first (a stable sort keeps each kind in file order).
    findings.sort_by_key(|f| f.severity != socair_plugin_api::Severity::Fail);
    for (place, reason) in &judged.notes {
        findings.push(ApiFinding::new(
            socair_plugin_api::Severity::Note,
            place.as_str(),
            reason.as_str(),
        ));
    }
    if judged.notes_more > 0 {
        findings.push(ApiFinding::new(
            socair_plugin_api::Severity::Note,
            "(the rest of the file)",
            format!(
                "… and {} more data-only Python tags not listed",
                thousands(judged.notes_more)
            ),
        ));
    }
    let mixed = findings
        .iter()
        .any(|f| Some(f.severity) != findings.first().map(|g| g.severity));
    OpenedFile {
        format: FORMAT.into(),
        tensors: Default::default(),
        unread: Default::default(),
        rows: vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: judged.findings.status(),
            summary: summary(judged).into(),
            findings: findings.into(),
            names_severities: mixed,
        }]
        .into(),
        metadata: Default::default(),
        not_carried: Default::default(),
        facts: Default::default(),
    }
}

#[cfg(test)]
mod tests;
