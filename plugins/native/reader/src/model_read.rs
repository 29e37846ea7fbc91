//! What one read found, in plain Rust values: every reader of this crate fills an
//! [`ModelRead`]; the `native` plugin turns it into what the plugin API reports.

use socair_plugin_api::ByteOrder;
use socair_plugin_kit::Severity;

/// Where a tensor's bytes are (decoded ones in the tensor's own byte order): the reading
/// model's.
pub use socair_plugin_kit::model::Bytes;

/// One tensor found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its path in the model (`learner.gradient_booster.model.trees.3.split_conditions`).
    pub name: String,
    /// The format's own name for its type.
    pub dtype: String,
    /// socair's element type (`F32`, `I64`, …).
    pub element_type: &'static str,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its bytes.
    pub bytes: Bytes,
    /// Their byte order.
    pub byte_order: ByteOrder,
}

/// One finding and a row's findings, bounded: the reading model every first-party reader shares.
pub use socair_plugin_kit::model::{Finding, Findings};

/// What a read found.
#[derive(Debug, Clone, Default)]
pub struct ModelRead {
    /// The format read.
    pub format: &'static str,
    /// What the file holds, said in one phrase when it is sound (`an XGBoost gbtree model of
    /// 2 trees`).
    pub what: String,
    /// LEADs and FAILs: the first ones listed, the rest counted, the worst of all kept.
    pub findings: Findings,
    /// The tensors.
    pub tensors: Vec<Tensor>,
    /// The whole file was refused: nothing was located.
    pub refused: bool,
    /// The input's length (the decoding budget is 8 times it).
    pub input_len: u64,
    /// Bytes decoded into tensors so far.
    pub decoded: u64,
}

impl ModelRead {
    /// Whether `bytes` more decoded bytes stay within 8 times the input; if so they are counted.
    pub fn decode(&mut self, bytes: u64) -> bool {
        let total = self.decoded.saturating_add(bytes);
        if total > self.input_len.saturating_mul(8) {
            return false;
        }
        self.decoded = total;
        true
    }

    /// An empty read of `format`.
    pub fn new(format: &'static str) -> Self {
        ModelRead {
            format,
            ..ModelRead::default()
        }
    }

    /// Adds a finding (counted once enough are listed).
    pub fn push(
        &mut self,
        severity: Severity,
        place: impl Into<String>,
        reason: impl Into<String>,
    ) {
        self.findings.add(severity, place, reason);
    }

    /// A LEAD.
    pub fn lead(&mut self, place: impl Into<String>, reason: impl Into<String>) {
        self.push(Severity::Lead, place, reason);
    }

    /// A FAIL.
    pub fn fail(&mut self, place: impl Into<String>, reason: impl Into<String>) {
        self.push(Severity::Fail, place, reason);
    }

    /// The worst severity found.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.worst
    }

    /// The file refused as a whole at `place` for `reason`: every tensor dropped.
    pub fn refuse(mut self, place: impl Into<String>, reason: impl Into<String>) -> Self {
        self.tensors.clear();
        self.refused = true;
        self.fail(place, reason);
        self
    }
}
