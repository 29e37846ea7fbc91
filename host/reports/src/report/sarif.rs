//! Scans as a SARIF 2.1.0 log (`socair scan --format sarif`), as GitHub code scanning reads it.
//!
//! One run of the tool `socair`. One rule per check and kind of finding
//! (`socair/<check>/fail`, `socair/<check>/lead`, and `socair/unreadable`), each with
//! `properties.security-severity` (GitHub ranks 9.0 and above critical, 4.0 to 6.9 medium).
//! One result per FAIL and LEAD finding (of its own typed severity in a row that names its
//! findings' severities, otherwise of its row's), located in its file: the artifact, or for a model directory
//! the file its place names. GitHub requires `region.startLine` (a model file has no lines:
//! line 1, columns 1–2); when the place is a byte of the file itself (`byte N …`, `file byte
//! N`), `byteOffset` and `byteLength` (1: the byte it names) say so too, for readers of binary
//! regions. The place is also the result's logical location. `partialFingerprints` hash the
//! rule, the file, the place and the reason (and count repeats), so the same finding keeps its
//! fingerprint from run to run.
//! SARIF 2.1.0: OASIS errata 01, `fixtures/schemas/sarif-schema-2.1.0.json`.

use crate::base::digest::hex;
use crate::report::batch::{shown, ArtifactScan, Summary};
use serde::Serialize;
use sha2::{Digest, Sha256};
use socair_plugin_api::Severity;
use std::collections::{BTreeMap, HashMap};

/// The schema a log names.
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Severity GitHub shows for a FAIL (critical: evidence of code execution or of a file readers
/// read differently) and for a LEAD or an unreadable artifact (medium: nothing proven either
/// way, a person must look).
const FAIL_SEVERITY: &str = "9.5";
const LEAD_SEVERITY: &str = "5.0";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    invocations: Vec<Invocation>,
    results: Vec<SarifResult>,
    properties: RunProperties,
}

#[derive(Serialize)]
struct RunProperties {
    #[serde(rename = "socair.summary")]
    summary: Summary,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    name: String,
    short_description: Text,
    full_description: Text,
    help: Text,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    #[serde(rename = "security-severity")]
    security_severity: &'static str,
    #[serde(rename = "problem.severity")]
    problem_severity: &'static str,
    precision: &'static str,
    tags: Vec<&'static str>,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    properties: ResultProperties,
}

#[derive(Serialize)]
struct ResultProperties {
    #[serde(rename = "socair.check")]
    check: String,
    #[serde(rename = "socair.status")]
    status: &'static str,
    #[serde(rename = "socair.artifact")]
    artifact: String,
    #[serde(rename = "socair.sha256", skip_serializing_if = "String::is_empty")]
    sha256: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    logical_locations: Vec<LogicalLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u64,
    start_column: u64,
    end_line: u64,
    end_column: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    byte_offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    byte_length: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    fully_qualified_name: String,
}

/// `path` as a URI reference: relative paths stay relative (GitHub wants them relative to the
/// repository), absolute ones become `file://` URIs, `scheme://` ones keep their scheme; every
/// byte outside RFC 3986's unreserved characters and the separators is percent-encoded.
pub fn uri_of(path: &str) -> String {
    let encode = |s: &str, keep: &[u8]| {
        let mut out = String::new();
        for &b in s.as_bytes() {
            if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) || keep.contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    match path.split_once("://") {
        Some((scheme, rest))
            if !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            format!("{scheme}://{}", encode(rest, b"@:"))
        }
        _ if path.starts_with('/') => format!("file://{}", encode(path, b"")),
        _ => encode(path, b""),
    }
}

/// The byte of the file a place names: `file byte N` anywhere in it (torch's legacy
/// checkpoints: `main pickle byte 9 (file byte 1060, BINPERSID)`), or a place that starts with
/// `byte N` or, in a file of plain pickles (whose findings are at file offsets), `pickle byte
/// N`. A byte inside a record or a member (`data.pkl byte 167`) is not one of the file's.
fn byte_of(place: &str) -> Option<u64> {
    let number = |s: &str| {
        let n: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
        let after = s[n.len()..].chars().next();
        if n.is_empty() || after.is_some_and(|c| !matches!(c, ' ' | ':' | ',' | ')')) {
            None
        } else {
            n.parse().ok()
        }
    };
    if let Some(i) = place.find("file byte ") {
        return number(&place[i + "file byte ".len()..]);
    }
    ["byte ", "pickle byte "]
        .iter()
        .find_map(|p| place.strip_prefix(p))
        .and_then(number)
}

fn slug(check: &str) -> String {
    let mut out = String::new();
    for c in check.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

fn rule(id: String, check: &str, kind: &'static str) -> Rule {
    let (level, severity, problem, meaning, help) = match kind {
        "FAIL" => (
            "error",
            FAIL_SEVERITY,
            "error",
            "FAIL: evidence of code execution when the model is loaded, or of a file that readers would read differently.",
            "Do not load it. Ask the publisher for a safetensors copy of the weights, and scan that. `socair scan PATH` on a terminal prints every row with what it means.",
        ),
        "LEAD" => (
            "warning",
            LEAD_SEVERITY,
            "warning",
            "LEAD: outside what socair can prove safe, not proof of harm; a person should look before it is loaded.",
            "A person reads the lead before anyone loads the model; a pickle global they clear is reviewed once for the airlock (`socair airlock review add`). `socair scan PATH` prints every row.",
        ),
        _ => (
            "warning",
            LEAD_SEVERITY,
            "warning",
            "The artifact could not be read at all: nothing in it was checked.",
            "Scan it alone (`socair scan PATH`) to see why; a file several plugins claim may need `--reader NAME`.",
        ),
    };
    let name: String = check
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("{}{}", w[..1].to_ascii_uppercase(), &w[1..]))
        .chain(std::iter::once(
            kind[..1].to_owned() + &kind[1..].to_ascii_lowercase(),
        ))
        .collect();
    Rule {
        id,
        name,
        short_description: Text {
            text: format!("{check}: {kind}"),
        },
        full_description: Text {
            text: format!("socair's check `{check}`. {meaning}"),
        },
        help: Text { text: help.into() },
        default_configuration: Configuration { level },
        properties: RuleProperties {
            security_severity: severity,
            problem_severity: problem,
            precision: "high",
            tags: vec!["security", "machine-learning", "model-file"],
        },
    }
}

fn location(uri: String, place: Option<&str>) -> Location {
    Location {
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation { uri },
            region: Region {
                start_line: 1,
                start_column: 1,
                end_line: 1,
                end_column: 2,
                byte_offset: place.and_then(byte_of),
                byte_length: place.and_then(byte_of).map(|_| 1),
            },
        },
        logical_locations: place
            .map(|p| LogicalLocation {
                fully_qualified_name: p.to_owned(),
            })
            .into_iter()
            .collect(),
    }
}

/// The kind of a finding: its own severity where the report names it, else its row's.
fn kind_of(severity: Option<Severity>, status: &'static str) -> &'static str {
    match severity {
        Some(Severity::Fail) => "FAIL",
        Some(Severity::Lead) => "LEAD",
        _ => status,
    }
}

/// The SARIF log of these scans.
pub fn log(outcomes: &[ArtifactScan]) -> impl Serialize {
    let mut rules: Vec<Rule> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut rule_index = |check: &str, kind: &'static str, rules: &mut Vec<Rule>| {
        let id = if kind == "UNREADABLE" {
            "socair/unreadable".to_owned()
        } else {
            format!("socair/{}/{}", slug(check), kind.to_ascii_lowercase())
        };
        *index.entry(id.clone()).or_insert_with(|| {
            rules.push(rule(id.clone(), check, kind));
            rules.len() - 1
        })
    };
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut fingerprint = |parts: &[&str]| {
        let full = hex(&Sha256::digest(parts.join("\0").as_bytes()));
        let n = seen.entry(full.clone()).or_insert(0);
        *n += 1;
        let mut f = BTreeMap::new();
        f.insert("primaryLocationLineHash", format!("{}:{n}", &full[..16]));
        f.insert("socairFinding/v1", format!("{full}:{n}"));
        f
    };
    for o in outcomes {
        let given = shown(&o.path);
        let scanned = match &o.scan {
            Ok(s) => s,
            Err(why) => {
                let rule_index = rule_index("unreadable", "UNREADABLE", &mut rules);
                let text =
                    format!("{given}: could not be read, so nothing in it was checked: {why}");
                results.push(SarifResult {
                    rule_id: rules[rule_index].id.clone(),
                    rule_index,
                    level: "warning",
                    message: Text { text: text.clone() },
                    locations: vec![location(uri_of(&given), None)],
                    partial_fingerprints: fingerprint(&["socair/unreadable", &given]),
                    properties: ResultProperties {
                        check: "unreadable".into(),
                        status: "UNREADABLE",
                        artifact: given.clone(),
                        sha256: String::new(),
                    },
                });
                notifications.push(Notification {
                    level: "error",
                    message: Text { text },
                    locations: vec![location(uri_of(&given), None)],
                });
                continue;
            }
        };
        let report = &scanned.report;
        let in_dir = report.artifact.format == "model directory";
        for f in &scanned.findings {
            let kind = kind_of(f.severity, f.status);
            let path = if in_dir && f.file != report.artifact.name {
                format!("{}/{}", given.trim_end_matches('/'), f.file)
            } else {
                given.clone()
            };
            let rule_index = rule_index(&f.check, kind, &mut rules);
            let rule_id = rules[rule_index].id.clone();
            let at = if f.place.is_empty() {
                String::new()
            } else {
                format!(" at {}", f.place)
            };
            let fingerprints = fingerprint(&[&rule_id, &path, &f.place, &f.reason]);
            results.push(SarifResult {
                rule_id,
                rule_index,
                level: if kind == "FAIL" { "error" } else { "warning" },
                message: Text {
                    text: format!("{} {kind} in {path}{at}: {}", f.check, f.reason),
                },
                locations: vec![location(
                    uri_of(&path),
                    Some(f.place.as_str()).filter(|p| !p.is_empty()),
                )],
                partial_fingerprints: fingerprints,
                properties: ResultProperties {
                    check: f.check.clone(),
                    status: kind,
                    artifact: report.artifact.name.clone(),
                    sha256: report.artifact.sha256.clone(),
                },
            });
        }
    }
    Log {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "socair",
                    version: crate::VERSION,
                    semantic_version: crate::VERSION,
                    rules,
                },
            },
            invocations: vec![Invocation {
                execution_successful: true,
                tool_execution_notifications: notifications,
            }],
            results,
            properties: RunProperties {
                summary: Summary::of(outcomes),
            },
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_of_places() {
        assert_eq!(byte_of("byte 167 (GLOBAL)"), Some(167));
        assert_eq!(byte_of("byte 0"), Some(0));
        assert_eq!(byte_of("byte 0x1f"), None);
        assert_eq!(byte_of("data.pkl byte 3"), None);
        assert_eq!(byte_of("bytes 3"), None);
        assert_eq!(byte_of("pickle byte 27 (REDUCE)"), Some(27));
        assert_eq!(
            byte_of("main pickle byte 9 (file byte 1060, BINPERSID)"),
            Some(1060)
        );
        assert_eq!(byte_of("storage \"0\" (file byte 77)"), Some(77));
    }

    #[test]
    fn uris_are_references() {
        assert_eq!(uri_of("models/a b.pt"), "models/a%20b.pt");
        assert_eq!(uri_of("/abs/x#1.pt"), "file:///abs/x%231.pt");
        assert_eq!(uri_of("hf://org/name@v1/c.json"), "hf://org/name@v1/c.json");
        assert_eq!(uri_of("dir/ünï"), "dir/%C3%BCn%C3%AF");
    }

    #[test]
    fn slugs_and_names() {
        assert_eq!(slug("Pickle opcode scan"), "pickle-opcode-scan");
        assert_eq!(slug("Format and structure"), "format-and-structure");
        assert_eq!(
            rule("x".into(), "Hugging Face cache", "FAIL").name,
            "HuggingFaceCacheFail"
        );
    }
}
