//! The `socair.tensors/v1` manifest and the `socair.tensors.diff/v1` comparison as Python
//! classes: every field of the host's documents (`socair_reports::fingerprint`), typed, beside the
//! text `socair tensors --json` and `socair tensors diff` print, kept as the host wrote it.

use crate::values::json_text;
use pyo3::prelude::*;
use socair_reports::base::output::to_json_bytes;
use socair_reports::fingerprint::{diff as d, manifest as m};

record! {
    /// The model a manifest describes: its name, `model directory` or its format, and its
    /// subject digest (a file's SHA-256, or a directory's `socair.modeldir/v1` digest).
    ManifestArtifact { name: String, format: String, sha256: String }
}

record! {
    /// One tensor's fingerprint: its file, name, dtype as the format names it, shape, size
    /// in bytes, SHA-256 of its bytes and, for F32, F16 and BF16, of its values.
    TensorEntry {
        file: String,
        name: String,
        dtype: String,
        shape: Vec<u64>,
        bytes: u64,
        sha256: String,
        values: Option<String>,
    }
}

record! {
    /// Something not fingerprinted: the file, the tensor when only one is unread, and why.
    UnreadEntry { file: String, tensor: Option<String>, reason: String }
}

record! {
    /// A name a safetensors file's `__metadata__` records for another of its tensors.
    AliasEntry { file: String, name: String, of: String }
}

/// A `socair.tensors/v1` manifest: its fields, typed, and its text.
#[pyclass(frozen, eq, module = "socair._native")]
#[derive(Debug, Clone, PartialEq)]
pub struct TensorManifest {
    #[pyo3(get)]
    schema: String,
    #[pyo3(get)]
    artifact: ManifestArtifact,
    #[pyo3(get)]
    value_encoding: String,
    #[pyo3(get)]
    tensors: Vec<TensorEntry>,
    #[pyo3(get)]
    unread: Vec<UnreadEntry>,
    #[pyo3(get)]
    aliases: Vec<AliasEntry>,
    text: String,
}

impl TensorManifest {
    /// The manifest's classes and its text, from the host's document.
    pub fn new(manifest: &m::TensorManifest) -> PyResult<Self> {
        Ok(TensorManifest {
            schema: manifest.schema.clone(),
            artifact: ManifestArtifact {
                name: manifest.artifact.name.clone(),
                format: manifest.artifact.format.clone(),
                sha256: manifest.artifact.sha256.clone(),
            },
            value_encoding: manifest.value_encoding.clone(),
            tensors: manifest
                .tensors
                .iter()
                .map(|t| TensorEntry {
                    file: t.file.clone(),
                    name: t.name.clone(),
                    dtype: t.dtype.clone(),
                    shape: t.shape.clone(),
                    bytes: t.bytes,
                    sha256: t.sha256.clone(),
                    values: t.values.clone(),
                })
                .collect(),
            unread: manifest
                .unread
                .iter()
                .map(|u| UnreadEntry {
                    file: u.file.clone(),
                    tensor: u.tensor.clone(),
                    reason: u.reason.clone(),
                })
                .collect(),
            aliases: manifest
                .aliases
                .iter()
                .map(|a| AliasEntry {
                    file: a.file.clone(),
                    name: a.name.clone(),
                    of: a.of.clone(),
                })
                .collect(),
            text: json_text(to_json_bytes(manifest))?,
        })
    }
}

#[pymethods]
impl TensorManifest {
    /// The manifest as `socair tensors --json` prints it (pretty, trailing newline).
    fn json(&self) -> &str {
        &self.text
    }

    /// The document as `json.loads` reads `json()`: plain dicts and lists.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::values::json_loads(py, &self.text)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let name = pyo3::types::PyString::new(py, &self.artifact.name).repr()?;
        Ok(format!(
            "<socair.TensorManifest {name} {} tensors, {} unread>",
            self.tensors.len(),
            self.unread.len()
        ))
    }
}

record! {
    /// What a side of a comparison is called: its name, format and subject digest.
    ComparedModel { name: String, format: String, sha256: String }
}

record! {
    /// One side of a pair (or a tensor only one side holds): file, name, dtype, shape, and
    /// the tensor it names when the name is an alias the file records.
    Side { file: String, name: String, dtype: String, shape: Vec<u64>, alias_of: Option<String> }
}

record! {
    /// Elements compared and changed, max |Δ|, relative L2 and cosine over the elements
    /// finite on both sides, elements non-finite on one side and not equal on the other,
    /// and, between F32 and F16 or BF16, whether the narrower side is the wider rounded.
    Numbers {
        elements: u64,
        elements_changed: u64,
        max_abs_delta: f64,
        relative_l2: Option<f64>,
        cosine: Option<f64>,
        nonfinite_changed: u64,
        narrower_is_rounded_wider: Option<bool>,
    }
}

record! {
    /// A row (or column) of a float tensor holding elements past their blocks' bounds: its
    /// index, how many, the largest error and its block's bound, and the RMS of its elements'
    /// error-to-bound ratios.
    LineBeyond {
        row: u64,
        elements_beyond_bound: u64,
        max_abs_error: f64,
        bound_at_max: f64,
        rms_error_over_bound: f64,
    }
}

record! {
    /// A block-quantized tensor against a float one: the errors against each block's bound,
    /// the rows and columns past it, and whether they are the same weights, quantized
    /// (docs/diff.md, "Across quantization").
    QuantizedNumbers {
        quantized_type: String,
        bound: String,
        imatrix: bool,
        elements: u64,
        elements_beyond_bound: u64,
        nonfinite_changed: u64,
        max_abs_error: f64,
        rms_error: f64,
        rms_bound: f64,
        max_error_over_bound: f64,
        rows: u64,
        rows_beyond_bound: u64,
        outlier_rows: u64,
        rows_listed: Vec<LineBeyond>,
        columns: u64,
        columns_beyond_bound: u64,
        outlier_columns: u64,
        columns_listed: Vec<LineBeyond>,
        same_weights: bool,
    }
}

record! {
    /// A paired tensor: how the two compare, whether they were paired by content rather than
    /// by name, how they were found, what was undone to line them up, both sides, and the
    /// numbers (or why there are none); for a quantized tensor against a float one, the
    /// quantized numbers.
    Pair {
        outcome: String,
        renamed: bool,
        matched_by: String,
        transform: Option<String>,
        artifact: Side,
        reference: Side,
        numbers: Option<Numbers>,
        numbers_missing: Option<String>,
        quantized: Option<QuantizedNumbers>,
    }
}

fn lines(list: &[socair_reports::fingerprint::quantized::RowBeyond]) -> Vec<LineBeyond> {
    list.iter()
        .map(|l| LineBeyond {
            row: l.row,
            elements_beyond_bound: l.elements_beyond_bound,
            max_abs_error: l.max_abs_error,
            bound_at_max: l.bound_at_max,
            rms_error_over_bound: l.rms_error_over_bound,
        })
        .collect()
}

fn quantized(q: &socair_reports::fingerprint::quantized::QuantizedNumbers) -> QuantizedNumbers {
    QuantizedNumbers {
        quantized_type: q.quantized_type.clone(),
        bound: q.bound.to_owned(),
        imatrix: q.imatrix,
        elements: q.elements,
        elements_beyond_bound: q.elements_beyond_bound,
        nonfinite_changed: q.nonfinite_changed,
        max_abs_error: q.max_abs_error,
        rms_error: q.rms_error,
        rms_bound: q.rms_bound,
        max_error_over_bound: q.max_error_over_bound,
        rows: q.rows,
        rows_beyond_bound: q.rows_beyond_bound,
        outlier_rows: q.outlier_rows,
        rows_listed: lines(&q.rows_listed),
        columns: q.columns,
        columns_beyond_bound: q.columns_beyond_bound,
        outlier_columns: q.outlier_columns,
        columns_listed: lines(&q.columns_listed),
        same_weights: q.same_weights,
    }
}

record! {
    /// Counts per outcome.
    Summary {
        identical: usize,
        same_values: usize,
        renamed: usize,
        same_values_after_unpermute: usize,
        differs: usize,
        not_comparable: usize,
        only_in_artifact: usize,
        only_in_reference: usize,
        unread: usize,
        lower_precision: usize,
        transposed: usize,
        aliased: usize,
        same_weights_quantized: usize,
        differs_beyond_quantization: usize,
    }
}

record! {
    /// Every pair and leftover counted once, by what makes it the same weights or not.
    Accounting {
        identical: usize,
        same_values: usize,
        lower_precision: usize,
        unpermuted: usize,
        transposed: usize,
        not_comparable: usize,
        differs: usize,
        only_in_artifact: usize,
        only_in_reference: usize,
        same_weights_quantized: usize,
        differs_beyond_quantization: usize,
    }
}

/// A `socair.tensors.diff/v1` comparison: its fields, typed, and its text.
#[pyclass(frozen, eq, module = "socair._native")]
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    #[pyo3(get)]
    schema: String,
    #[pyo3(get)]
    artifact: ComparedModel,
    #[pyo3(get)]
    reference: ComparedModel,
    #[pyo3(get)]
    value_encoding: String,
    #[pyo3(get)]
    matches: bool,
    #[pyo3(get)]
    summary: Summary,
    #[pyo3(get)]
    accounting: Accounting,
    #[pyo3(get)]
    numbers_missing: Option<String>,
    #[pyo3(get)]
    pairs: Vec<Pair>,
    #[pyo3(get)]
    only_in_artifact: Vec<Side>,
    #[pyo3(get)]
    only_in_reference: Vec<Side>,
    text: String,
}

/// An outcome, transform or way of matching as the comparison's JSON names it: the host's
/// own serialization, so the two cannot drift apart.
fn serde_name<T: serde::Serialize>(value: &T) -> PyResult<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => Ok(s),
        other => Err(crate::values::error(format!(
            "a comparison value serialized as {other:?}, not a name"
        ))),
    }
}

fn named(n: &d::Named) -> ComparedModel {
    ComparedModel {
        name: n.name.clone(),
        format: n.format.clone(),
        sha256: n.sha256.clone(),
    }
}

fn side(s: &d::Side) -> Side {
    Side {
        file: s.file.clone(),
        name: s.name.clone(),
        dtype: s.dtype.clone(),
        shape: s.shape.clone(),
        alias_of: s.alias_of.clone(),
    }
}

fn pair(p: &d::Pair) -> PyResult<Pair> {
    Ok(Pair {
        outcome: serde_name(&p.outcome)?,
        renamed: p.renamed,
        matched_by: serde_name(&p.matched_by)?,
        transform: p.transform.as_ref().map(serde_name).transpose()?,
        artifact: side(&p.artifact),
        reference: side(&p.reference),
        numbers: p.numbers.as_ref().map(|n| Numbers {
            elements: n.elements,
            elements_changed: n.elements_changed,
            max_abs_delta: n.max_abs_delta,
            relative_l2: n.relative_l2,
            cosine: n.cosine,
            nonfinite_changed: n.nonfinite_changed,
            narrower_is_rounded_wider: n.narrower_is_rounded_wider,
        }),
        numbers_missing: p.numbers_missing.clone(),
        quantized: p.quantized.as_ref().map(quantized),
    })
}

impl Comparison {
    /// The comparison's classes and its text, from the host's document.
    pub fn new(c: &d::Comparison) -> PyResult<Self> {
        let s = &c.summary;
        let a = &c.accounting;
        Ok(Comparison {
            schema: c.schema.clone(),
            artifact: named(&c.artifact),
            reference: named(&c.reference),
            value_encoding: c.value_encoding.clone(),
            matches: c.matches,
            summary: Summary {
                identical: s.identical,
                same_values: s.same_values,
                renamed: s.renamed,
                same_values_after_unpermute: s.same_values_after_unpermute,
                differs: s.differs,
                not_comparable: s.not_comparable,
                only_in_artifact: s.only_in_artifact,
                only_in_reference: s.only_in_reference,
                unread: s.unread,
                lower_precision: s.lower_precision,
                transposed: s.transposed,
                aliased: s.aliased,
                same_weights_quantized: s.same_weights_quantized,
                differs_beyond_quantization: s.differs_beyond_quantization,
            },
            accounting: Accounting {
                identical: a.identical,
                same_values: a.same_values,
                lower_precision: a.lower_precision,
                unpermuted: a.unpermuted,
                transposed: a.transposed,
                not_comparable: a.not_comparable,
                differs: a.differs,
                only_in_artifact: a.only_in_artifact,
                only_in_reference: a.only_in_reference,
                same_weights_quantized: a.same_weights_quantized,
                differs_beyond_quantization: a.differs_beyond_quantization,
            },
            numbers_missing: c.numbers_missing.clone(),
            pairs: c.pairs.iter().map(pair).collect::<PyResult<_>>()?,
            only_in_artifact: c.only_in_artifact.iter().map(side).collect(),
            only_in_reference: c.only_in_reference.iter().map(side).collect(),
            text: json_text(to_json_bytes(c))?,
        })
    }
}

#[pymethods]
impl Comparison {
    /// The comparison as `socair tensors diff` prints it (pretty, trailing newline).
    fn json(&self) -> &str {
        &self.text
    }

    /// The document as `json.loads` reads `json()`: plain dicts and lists.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::values::json_loads(py, &self.text)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let a = pyo3::types::PyString::new(py, &self.artifact.name).repr()?;
        let r = pyo3::types::PyString::new(py, &self.reference.name).repr()?;
        Ok(format!(
            "<socair.Comparison {a} vs {r} matches={}>",
            if self.matches { "True" } else { "False" }
        ))
    }
}
