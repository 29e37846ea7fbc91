//! TorchScript archives (`torch.jit.save`) judged by their code.
//!
//! `torch.load` hands an archive with a `constants.pkl` record to `torch.jit.load`
//! (torch/serialization.py `_is_torchscript_zip`; refused under `weights_only=True`), which
//! compiles the Python-like source under `code/` (torch/csrc/jit/serialization/import.cpp,
//! `ScriptModuleDeserializer`; import_source.cpp, `SourceImporterImpl`) and unpickles
//! `data.pkl` with TorchScript's own unpickler, whose classes are the archive's `__torch__`
//! classes (torch/csrc/jit/serialization/unpickler.cpp, `readGlobal`). TorchScript is not
//! Python: its code can do nothing but call the operators torch registers, the archive's own
//! classes and functions, and a fixed set of builtins. So the archive is judged by every call
//! its code makes ([`rules`]), against the operators torch 2.15.0 registers ([`ops`]), after
//! parsing it as torch's lexer and parser do ([`lexer`], [`parser`]); a file that does not
//! parse is a LEAD (torch.jit.load raises on it, and socair judges only what it parsed).
//! The archive's other records ([`archive`]) are its TorchScript pickles (`constants.pkl`,
//! `traced_inputs.pkl` and the `.debug_pkl` source maps), read by the pickle machine.

pub mod archive;
pub mod lexer;
pub mod ops;
pub mod parser;
pub mod rules;
#[cfg(test)]
mod tests;

use crate::pickle::Severity;
use socair_plugin_kit::model::Finding;
use std::collections::BTreeSet;

/// The check the code is reported under.
pub const CODE_CHECK: &str = "TorchScript code";

/// How many findings one archive's code lists; the rest are counted.
pub const MAX_FINDINGS: usize = 64;

/// A code file: its record name relative to the archive's prefix (`code/__torch__/m.py`) and
/// its bytes.
#[derive(Debug, Clone)]
pub struct CodeFile {
    /// `code/…/name.py`.
    pub name: String,
    /// Its text.
    pub text: Vec<u8>,
}

/// What judging an archive's code found.
#[derive(Debug, Clone, Default)]
pub struct Judgment {
    /// Findings, each naming its file and line.
    pub findings: Vec<Finding>,
    /// Findings not listed past [`MAX_FINDINGS`].
    pub more: usize,
    /// Code files read.
    pub files: usize,
    /// Classes they define, qualified (`__torch__.torch.nn.modules.linear.Linear`).
    pub classes: Vec<String>,
    /// Free functions they define.
    pub functions: usize,
    /// The registered operators the code calls.
    pub operators: BTreeSet<String>,
}

impl Judgment {
    /// The worst finding.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    fn add(&mut self, severity: Severity, place: String, reason: String) {
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(Finding::new(severity, place, reason));
        } else {
            self.more += 1;
        }
    }

    /// The row's summary.
    pub fn summary(&self) -> String {
        let namespaces: BTreeSet<&str> = self
            .operators
            .iter()
            .filter_map(|o| o.split_once("::").map(|(ns, _)| ns))
            .collect();
        const LISTED: usize = 12;
        let listed: Vec<&str> = self
            .operators
            .iter()
            .take(LISTED)
            .map(String::as_str)
            .collect();
        let unlisted = self.operators.len().saturating_sub(LISTED);
        let counts = format!(
            "{} code file(s), {} class(es), {} function(s), {} distinct operator(s) called in namespace(s) {}: {}{}",
            self.files,
            self.classes.len(),
            self.functions,
            self.operators.len(),
            namespaces.into_iter().collect::<Vec<_>>().join(", "),
            listed.join(", "),
            if unlisted > 0 { format!(" and {unlisted} more") } else { String::new() }
        );
        let more = if self.more > 0 {
            format!("; {} more finding(s) not listed", self.more)
        } else {
            String::new()
        };
        match self.worst() {
            None => format!(
                "TorchScript code read as torch 2.15.0's parser reads it and every name resolved as torch.jit.load resolves it: {counts}; every call is a torch operator that computes, a builtin, or the archive's own code"
            ),
            Some(Severity::Fail) => format!(
                "TorchScript code that reaches files or the network when the model runs: {counts}{more}"
            ),
            Some(_) => format!(
                "TorchScript code socair cannot prove safe (names torch.jit.load cannot resolve without a native library, or code it could not parse): {counts}{more}"
            ),
        }
    }
}

/// A file's qualifier (`code/__torch__/a/b.py` → `__torch__.a.b`), as the importer's source
/// loader maps a qualifier to a record (import.cpp, `findSourceInArchiveFromQualifier`:
/// `code/` + the qualifier with `.` as `/` + `.py`).
pub fn qualifier(name: &str) -> Option<String> {
    let path = name.strip_prefix("code/")?.strip_suffix(".py")?;
    Some(path.replace('/', "."))
}

/// Line and column (1-based) of a byte offset.
fn line_col(text: &[u8], at: usize) -> (usize, usize) {
    let before = text.get(..at.min(text.len())).unwrap_or_default();
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = at
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, col)
}

/// Judges the code files of one archive.
pub fn judge(files: &[CodeFile]) -> Judgment {
    let mut j = Judgment {
        files: files.len(),
        ..Judgment::default()
    };
    let mut defs = rules::Defs::default();
    let mut parsed = Vec::new();
    for f in files {
        let Some(q) = qualifier(&f.name) else {
            continue;
        };
        match parser::parse_module(&f.text) {
            Ok(m) => {
                defs.add(&q, &m);
                j.functions += m.functions.len();
                parsed.push((f, m));
            }
            Err(e) => {
                let (line, col) = line_col(&f.text, e.offset);
                j.add(
                    Severity::Lead,
                    format!("{} line {line} column {col}", f.name),
                    format!("TorchScript's parser stops here ({}): torch.jit.load raises on this file, and socair judges only code it parsed", e.reason),
                );
            }
        }
    }
    j.classes = defs.classes.iter().cloned().collect();
    j.classes.sort();
    for (f, m) in &parsed {
        let out = rules::judge_module(m, &defs);
        j.operators.extend(out.operators);
        for r in out.findings {
            let (line, col) = line_col(&f.text, r.at);
            j.add(
                r.severity,
                format!("{} line {line} column {col}", f.name),
                r.reason,
            );
        }
    }
    j
}

/// The property the fuzz target `torchscript_code` checks on arbitrary bytes: parsing and
/// judging them as one code file never panics, and every finding names a line of the file.
#[doc(hidden)]
pub fn check_code(data: &[u8]) {
    let j = judge(&[CodeFile {
        name: "code/__torch__/fuzz.py".into(),
        text: data.to_vec(),
    }]);
    for f in &j.findings {
        assert!(
            f.place.starts_with("code/__torch__/fuzz.py line "),
            "{}",
            f.place
        );
    }
    assert!(j.findings.len() <= MAX_FINDINGS);
}
