//! What the reader makes of a model: the tensors it located, those it did not (and those
//! outside the model), and the findings of the checks. Apart from the code that fills them.

/// One located tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name.
    pub name: String,
    /// Its element type in socair's names (`F32`, …).
    pub dtype: &'static str,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Its bytes, `(offset, len)`, in element order.
    pub ranges: Vec<(u64, u64)>,
    /// The external data file (relative to the model's directory), when not this file.
    pub file: Option<String>,
    /// The tensor's bytes as decoded by the reader (its elements' little-endian bytes in
    /// row-major order, what `onnx.numpy_helper.to_array` returns), when the file holds its
    /// values as numbers rather than as those bytes (varint-coded, or one tag per value):
    /// `ranges` is then empty and `file` none.
    pub inline: Option<Vec<u8>>,
}

/// A tensor (or the file) not located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadTensor {
    /// Its name, when it has one.
    pub name: Option<String>,
    /// Why, naming the place.
    pub reason: String,
    /// Sound but outside socair's model of the file (not carried by a conversion).
    pub outside_model: bool,
}

/// One finding: the reading model every first-party reader shares.
pub use socair_plugin_kit::model::Finding;

/// What the reader made of a model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Model {
    /// `ir_version`.
    pub ir_version: Option<i64>,
    /// The main graph's initializers that were located, in file order, then the values of
    /// its Constant nodes, in node order (each named by the node's output), then the tensors
    /// its other nodes' attributes hold (see `model/attribute.rs`).
    pub tensors: Vec<Tensor>,
    /// Those that were not, and tensors elsewhere in the model.
    pub unread: Vec<UnreadTensor>,
    /// Findings.
    pub findings: Vec<Finding>,
    /// Model metadata as strings.
    pub metadata: Vec<(String, String)>,
    /// Initializers in the main graph (located or not).
    pub initializers: usize,
    /// Constant nodes in the main graph (their values located or not).
    pub constants: usize,
    /// Tensors held by the attributes of the main graph's other nodes (ConstantOfShape's
    /// value...), located or not.
    pub attribute_tensors: usize,
}
