//! The `socair.report/v1` document: the artifact, the tool and plugins, the rule sets, the
//! scope, and one row per check (PASS, FAIL, LEAD or NOT_TESTED, each finding with its place).

use serde::{Deserialize, Serialize};
use socair_plugin_api::{Finding, RowStatus, Severity};
use std::collections::BTreeMap;

/// The report's schema name.
pub const SCHEMA: &str = "socair.report/v1";

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "socair.report",
        version: "1",
        id: SCHEMA,
        summary: "scan report: artifact, tool, rules, scope, rows of PASS/FAIL/LEAD/NOT_TESTED",
    }
}

/// The check plugins report for the format's structure.
pub const STRUCTURE_CHECK: &str = "Format and structure";
/// The check pickle readers report.
pub const PICKLE_CHECK: &str = "Pickle opcode scan";

/// A report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// What was scanned.
    pub artifact: ReportArtifact,
    /// What scanned it.
    pub tool: Tool,
    /// The rule sets applied, name → version.
    pub rules: BTreeMap<String, String>,
    /// How much was scanned.
    pub scope: Scope,
    /// One row per check.
    pub rows: Vec<Row>,
}

/// The artifact a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportArtifact {
    /// File or directory name (never a path).
    pub name: String,
    /// `model directory`, or the file's format.
    pub format: String,
    /// The subject digest.
    pub sha256: String,
    /// Total size.
    pub size_bytes: u64,
}

/// The tool and the plugins that read the artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// `socair`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The plugins that read files of the artifact.
    pub plugins: Vec<PluginUse>,
}

/// A plugin used for a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginUse {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// SHA-256 of its library file.
    pub sha256: String,
}

/// The scan's scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// `full` or `header-only`.
    pub mode: String,
    /// The reference manifest, when `SOCAIR_TENSOR_REFERENCE` was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_data: Option<NamedDigest>,
    /// Globals the operator reviewed (`--reviewed-classes`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed_classes: Option<Vec<String>>,
    /// Why `artifact.sha256` is empty, when the subject digest was not computed: a
    /// header-only scan of an object in object storage fetches only what the readers ask
    /// for, not every byte. Such a report names no subject and cannot be signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// What `scope.digest` says of a header-only scan of an object in object storage.
pub const DIGEST_NOT_COMPUTED: &str = "not computed: a header-only scan of an object in object storage fetches only the bytes the readers ask for; `socair scan` without --header-only, `socair attest` and `socair airlock pull` hash every byte";

/// A file named by its name and digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedDigest {
    /// File name.
    pub name: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
}

/// One row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The check.
    pub check: String,
    /// `PASS`, `FAIL`, `LEAD` or `NOT_TESTED`.
    pub status: String,
    /// One sentence.
    pub summary: String,
    /// What was found, and where.
    pub findings: Vec<RowFinding>,
}

/// One finding of a row.
///
/// The document writes a finding as `{"place", "reason"}`. Where the reader asked for it
/// ([`ReportRow::names_severities`](socair_plugin_api::ReportRow::names_severities): rows whose
/// findings differ in severity, such as a pickle scan's), the reason is written after the
/// finding's severity, `FAIL: …` or `LEAD: …`: that is this schema's presentation of
/// [`RowFinding::severity`], written here and read back here only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "WrittenFinding", from = "WrittenFinding")]
pub struct RowFinding {
    /// Where.
    pub place: String,
    /// Why, without its severity.
    pub reason: String,
    /// The finding's own severity when the document names it (FAIL or LEAD); none when the
    /// row's status says it.
    pub severity: Option<Severity>,
}

/// A finding as the document writes it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenFinding {
    place: String,
    reason: String,
}

/// The words a finding's severity is written with, before its reason.
const SEVERITY_WORDS: [(Severity, &str); 2] =
    [(Severity::Fail, "FAIL: "), (Severity::Lead, "LEAD: ")];

impl RowFinding {
    /// A reader's finding as this document shows it: its severity named when the row asks
    /// for it (a note is never named: it is a fact, not a verdict).
    pub fn of(f: &Finding, names_severities: bool) -> Self {
        RowFinding {
            place: f.place.to_string(),
            reason: f.reason.to_string(),
            severity: (names_severities && f.severity != Severity::Note).then_some(f.severity),
        }
    }

    /// The reason as the document writes it.
    pub fn reason_text(&self) -> String {
        match SEVERITY_WORDS
            .iter()
            .find(|(s, _)| Some(*s) == self.severity)
        {
            Some((_, words)) => format!("{words}{}", self.reason),
            None => self.reason.clone(),
        }
    }
}

impl From<RowFinding> for WrittenFinding {
    fn from(f: RowFinding) -> Self {
        WrittenFinding {
            reason: f.reason_text(),
            place: f.place,
        }
    }
}

impl From<WrittenFinding> for RowFinding {
    fn from(w: WrittenFinding) -> Self {
        let named = SEVERITY_WORDS
            .iter()
            .find_map(|(s, words)| w.reason.strip_prefix(words).map(|rest| (*s, rest)));
        match named {
            Some((severity, rest)) => RowFinding {
                place: w.place,
                reason: rest.to_owned(),
                severity: Some(severity),
            },
            None => RowFinding {
                place: w.place,
                reason: w.reason,
                severity: None,
            },
        }
    }
}

/// A status's name in reports.
pub fn status_name(s: RowStatus) -> &'static str {
    match s {
        RowStatus::Pass => "PASS",
        RowStatus::Fail => "FAIL",
        RowStatus::Lead => "LEAD",
        RowStatus::NotTested => "NOT_TESTED",
    }
}

#[cfg(test)]
mod finding_tests {
    use super::*;

    #[test]
    fn a_named_severity_is_written_before_the_reason_and_read_back() {
        let fail = Finding::new(Severity::Fail, "byte 3", "global os.system");
        let named = RowFinding::of(&fail, true);
        let text = serde_json::to_string(&named).unwrap();
        assert_eq!(
            text,
            r#"{"place":"byte 3","reason":"FAIL: global os.system"}"#
        );
        assert_eq!(serde_json::from_str::<RowFinding>(&text).unwrap(), named);
        // Unnamed: the row's status says it; a note is never named.
        let plain = serde_json::to_string(&RowFinding::of(&fail, false)).unwrap();
        assert_eq!(plain, r#"{"place":"byte 3","reason":"global os.system"}"#);
        let note = RowFinding::of(&Finding::new(Severity::Note, "file", "3 more"), true);
        assert_eq!(note.reason_text(), "3 more");
        assert!(serde_json::from_str::<RowFinding>(r#"{"place":"p","reason":"r","x":1}"#).is_err());
    }
}
