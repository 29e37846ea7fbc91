//! The `socair.report/v1` report as Python classes: every field of the host's document
//! (`socair_reports::report::document`), typed, beside the document's text as `socair scan --json`
//! prints it. The text is the host's serialization, kept as it was written, so `json()` is
//! byte for byte the command line's output; the classes are read from the same value.

use crate::values::json_text;
use pyo3::prelude::*;
use socair_reports::base::output::to_json_bytes;
use socair_reports::report::document as host;
use std::collections::BTreeMap;

record! {
    /// One finding of a row: where (`place`) and what (`reason`).
    Finding { place: String, reason: String }
}

record! {
    /// One check of a report: `status` is `PASS`, `FAIL`, `LEAD` or `NOT_TESTED`.
    Row { check: String, status: String, summary: String, findings: Vec<Finding> }
}

record! {
    /// The artifact a report is about: its file or directory name (never a path), `model
    /// directory` or the file's format, its subject digest and total size.
    ReportArtifact { name: String, format: String, sha256: String, size_bytes: u64 }
}

record! {
    /// A plugin that read files of the artifact, and the SHA-256 of its library file.
    PluginUse { name: String, version: String, sha256: String }
}

record! {
    /// The tool that wrote the report and the plugins that read the artifact.
    Tool { name: String, version: String, plugins: Vec<PluginUse> }
}

record! {
    /// A file named by its name and the SHA-256 of its bytes.
    NamedDigest { name: String, sha256: String }
}

record! {
    /// How much was scanned: `full` or `header-only`, the reference manifest, the reviewed
    /// classes, and why the subject digest is empty when it was not computed.
    Scope {
        mode: String,
        reference_data: Option<NamedDigest>,
        reviewed_classes: Option<Vec<String>>,
        digest: Option<String>,
    }
}

/// A `socair.report/v1` report: the document's fields, typed, and its text.
#[pyclass(frozen, eq, module = "socair._native")]
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    #[pyo3(get)]
    schema: String,
    #[pyo3(get)]
    artifact: ReportArtifact,
    #[pyo3(get)]
    tool: Tool,
    #[pyo3(get)]
    rules: BTreeMap<String, String>,
    #[pyo3(get)]
    scope: Scope,
    #[pyo3(get)]
    rows: Vec<Row>,
    /// The document as the host serialized it (pretty, trailing newline).
    text: String,
}

impl Report {
    /// The report's classes and its text, from the host's document.
    pub fn new(report: &host::Report) -> PyResult<Self> {
        Ok(Report {
            schema: report.schema.clone(),
            artifact: ReportArtifact {
                name: report.artifact.name.clone(),
                format: report.artifact.format.clone(),
                sha256: report.artifact.sha256.clone(),
                size_bytes: report.artifact.size_bytes,
            },
            tool: Tool {
                name: report.tool.name.clone(),
                version: report.tool.version.clone(),
                plugins: report
                    .tool
                    .plugins
                    .iter()
                    .map(|p| PluginUse {
                        name: p.name.clone(),
                        version: p.version.clone(),
                        sha256: p.sha256.clone(),
                    })
                    .collect(),
            },
            rules: report.rules.clone(),
            scope: Scope {
                mode: report.scope.mode.clone(),
                reference_data: report.scope.reference_data.as_ref().map(|d| NamedDigest {
                    name: d.name.clone(),
                    sha256: d.sha256.clone(),
                }),
                reviewed_classes: report.scope.reviewed_classes.clone(),
                digest: report.scope.digest.clone(),
            },
            rows: report
                .rows
                .iter()
                .map(|r| Row {
                    check: r.check.clone(),
                    status: r.status.clone(),
                    summary: r.summary.clone(),
                    findings: r
                        .findings
                        .iter()
                        .map(|f| Finding {
                            place: f.place.clone(),
                            reason: f.reason_text(),
                        })
                        .collect(),
                })
                .collect(),
            text: json_text(to_json_bytes(report))?,
        })
    }

    /// The worst status of the rows, as `socair scan` decides its exit code: any FAIL, else
    /// any LEAD, else PASS (NOT_TESTED rows do not make a report unclean).
    fn worst(&self) -> &'static str {
        let has = |s: &str| self.rows.iter().any(|r| r.status == s);
        if has("FAIL") {
            "FAIL"
        } else if has("LEAD") {
            "LEAD"
        } else {
            "PASS"
        }
    }
}

#[pymethods]
impl Report {
    /// `FAIL` if any row FAILs, else `LEAD` if any row is a LEAD, else `PASS`.
    #[getter]
    fn verdict(&self) -> &'static str {
        self.worst()
    }

    /// True exactly when `socair scan` would exit 0.
    #[getter]
    fn clean(&self) -> bool {
        self.worst() == "PASS"
    }

    /// The checks that were NOT_TESTED, in the rows' order.
    #[getter]
    fn gaps(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.status == "NOT_TESTED")
            .map(|r| r.check.clone())
            .collect()
    }

    /// The report as `socair scan --json` prints it (pretty, trailing newline).
    fn json(&self) -> &str {
        &self.text
    }

    /// The document as `json.loads` reads `json()`: plain dicts and lists.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::values::json_loads(py, &self.text)
    }

    /// `to_dict()`, under the name the package gave it before the report had classes.
    #[getter]
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.to_dict(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let name = pyo3::types::PyString::new(py, &self.artifact.name).repr()?;
        Ok(format!("<socair.Report {name} {}>", self.worst()))
    }
}
