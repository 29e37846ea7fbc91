//! What Core ML opens or runs besides the model file itself: a linked model
//! (`LinkedModelFile`, coremltools 9.0 mlmodel/format/LinkedModel.proto: a compiled model's file
//! name, looked for in a `:`-separated search path, each entry relative to this model,
//! absolute, or `$BUNDLE_MAIN` / `$BUNDLE_IDENTIFIER(id)`), judged as a link is: a relative
//! path is a file beside the model (a finding about that file, which the host turns into a
//! note when it is a file of the scanned directory that socair reads), an absolute path or one
//! with `..` is a file outside it (a FAIL), an app bundle is outside what was scanned (a LEAD).

use crate::proto::shallow::{self, Span};
use socair_plugin_kit::Severity;

/// The most search path entries judged one by one.
pub const MAX_SEARCH_PATHS: usize = 16;

/// One thing a link says Core ML opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkFinding {
    /// How bad.
    pub severity: Severity,
    /// Why.
    pub reason: String,
    /// The file it is about, relative to the model file's directory.
    pub file: Option<String>,
}

fn finding(severity: Severity, reason: String, file: Option<String>) -> LinkFinding {
    LinkFinding {
        severity,
        reason,
        file,
    }
}

/// Whether `path` leaves the directory it is relative to, or is not relative at all.
pub fn leaves(path: &str) -> bool {
    path.starts_with('/')
        || path.contains('\\')
        || path.contains('\0')
        || path.split('/').any(|c| c == "..")
}

/// The `LinkedModelFile` message `buf[span]`, judged.
pub fn linked_model_file(buf: &[u8], span: Span) -> Vec<LinkFinding> {
    let parameter = |n| {
        shallow::last_bytes(buf, span, n)
            .and_then(|p| shallow::last_text(buf, p, 1))
            .unwrap_or("")
    };
    let (name, search) = (parameter(1), parameter(2));
    if name.is_empty() {
        return vec![finding(
            Severity::Lead,
            "a linked model without a file name: Core ML's validator refuses it (LinkedModelValidator.cpp)".into(),
            None,
        )];
    }
    if leaves(name) {
        return vec![finding(
            Severity::Fail,
            format!("links the model {name:?}: an absolute path or one leaving the model's directory, which Core ML opens when it loads this model"),
            None,
        )];
    }
    let mut out = Vec::new();
    let entries: Vec<&str> = search.split(':').collect();
    for entry in entries.iter().take(MAX_SEARCH_PATHS) {
        let entry = entry.trim_end_matches('/');
        if entry.starts_with('$') {
            out.push(finding(
                Severity::Lead,
                format!("links the model {name:?}, looked for in the app's bundle ({entry}): outside what was scanned"),
                None,
            ));
        } else if leaves(entry) {
            out.push(finding(
                Severity::Fail,
                format!("links the model {name:?} in the search path {entry:?}: a directory outside the model's, which Core ML searches when it loads this model"),
                None,
            ));
        } else {
            let joined = format!("{entry}/{name}");
            let path: Vec<&str> = joined
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect();
            let path = path.join("/");
            out.push(finding(
                Severity::Lead,
                format!("links the model {path:?} beside this one: Core ML loads that compiled model when it loads this one; socair reads it only as a file of the scanned directory"),
                Some(path),
            ));
        }
    }
    if entries.len() > MAX_SEARCH_PATHS {
        out.push(finding(
            Severity::Lead,
            format!(
                "the search path has {} entries; the first {MAX_SEARCH_PATHS} were judged",
                entries.len()
            ),
            None,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(name: &str, search: &str) -> Vec<u8> {
        let param = |s: &str| {
            let mut p = vec![0x0a, s.len() as u8];
            p.extend(s.as_bytes());
            p
        };
        let mut out = Vec::new();
        for (tag, s) in [(0x0a, name), (0x12, search)] {
            let p = param(s);
            out.push(tag);
            out.push(p.len() as u8);
            out.extend(p);
        }
        out
    }

    #[test]
    fn relative_links_name_their_file_and_others_are_judged() {
        let m = link("Features.mlmodelc", "");
        let f = linked_model_file(&m, (0, m.len()));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Lead);
        assert_eq!(f[0].file.as_deref(), Some("Features.mlmodelc"));
        let m = link("F.mlmodelc", "./sub/:$BUNDLE_MAIN:/opt/models:../up");
        let f = linked_model_file(&m, (0, m.len()));
        let severities: Vec<Severity> = f.iter().map(|f| f.severity).collect();
        assert_eq!(
            severities,
            [
                Severity::Lead,
                Severity::Lead,
                Severity::Fail,
                Severity::Fail
            ]
        );
        assert_eq!(f[0].file.as_deref(), Some("sub/F.mlmodelc"));
        let m = link("/etc/F.mlmodelc", "");
        assert_eq!(
            linked_model_file(&m, (0, m.len()))[0].severity,
            Severity::Fail
        );
        let m = link("", "");
        assert!(linked_model_file(&m, (0, m.len()))[0]
            .reason
            .contains("without a file name"));
    }
}
