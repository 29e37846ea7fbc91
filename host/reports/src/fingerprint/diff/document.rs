//! The comparison document `socair tensors diff` writes (`socair.tensors.diff/v1`): each
//! pair's outcome, how it was found and what was undone, the counts, and what is left on
//! either side. Apart from the passes that fill it.

use crate::fingerprint::numeric::Numbers;
use crate::fingerprint::quantized::QuantizedNumbers;
use serde::Serialize;

/// The comparison's schema name. Still v1: every v1 field keeps its meaning; fields and
/// outcome values were added (`docs/diff.md` lists them).
pub const SCHEMA: &str = "socair.tensors.diff/v1";

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "socair.tensors.diff",
        version: "1",
        id: SCHEMA,
        summary: "tensor-by-tensor comparison: by name (aliases included), then by content (renamed, unpermuted), then by values (rounded, transposed, quantized roles), then what is left",
    }
}

/// How a pair compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Same dtype, shape and bytes.
    Identical,
    /// Same shape, equal values in another float dtype.
    SameValues,
    /// Equal values once llama.cpp's Q/K row permutation is undone.
    SameValuesAfterUnpermute,
    /// Equal values once one 2-D side is transposed.
    SameValuesTransposed,
    /// One side is the other rounded to its narrower float type (to nearest, ties to even);
    /// `transform` says whether it was also transposed or unpermuted.
    LowerPrecision,
    /// Another shape, or other contents.
    Differs,
    /// No encoding in common (a quantized tensor against a float one whose bytes are not both
    /// at hand, or that could not be measured).
    NotComparable,
    /// A block-quantized tensor whose dequantized values lie within the error its blocks'
    /// format implies of the float one's: the same weights, quantized.
    SameWeightsQuantized,
    /// A block-quantized tensor whose dequantized values lie beyond that error of the float
    /// one's: other weights (its `quantized` numbers name the rows).
    DiffersBeyondQuantization,
}

/// What was undone to line the two tensors up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// llama.cpp's Q/K row permutation.
    Unpermute,
    /// A 2-D transposition (GPT-2's Conv1D weights in llama.cpp).
    Transpose,
}

/// How the two tensors of a pair were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// The same name.
    Name,
    /// The same name, one of them an alias a safetensors file records.
    Alias,
    /// Equal bytes or values under different names.
    Content,
    /// Equal values after a transform, or a rounded copy, found by comparing values.
    Values,
    /// A quantized and a float tensor of the same role: same element count and a shape that
    /// lines up, confirmed within the quantization's bounds, else the nearest dequantized
    /// statistics or the only candidate in the layer.
    Role,
}

/// One side of a pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    /// File.
    pub file: String,
    /// Name.
    pub name: String,
    /// Dtype.
    pub dtype: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// When the name is an alias the file records: the tensor it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<String>,
}

/// A paired tensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// How they compare.
    pub outcome: Outcome,
    /// Paired by content, not by name.
    pub renamed: bool,
    /// How they were found.
    pub matched_by: MatchedBy,
    /// What was undone to line them up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
    /// The artifact's tensor.
    pub artifact: Side,
    /// The reference's tensor.
    pub reference: Side,
    /// Elements changed, max |Δ|, relative L2 and cosine: for pairs that differ or are a
    /// rounded copy, when both sides are models and their dtypes are floats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numbers: Option<Numbers>,
    /// Why a pair that differs has no numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numbers_missing: Option<String>,
    /// For a quantized tensor against a float one: the errors against the blocks' bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantized: Option<QuantizedNumbers>,
}

/// Counts per outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Identical under their own name.
    pub identical: usize,
    /// Same values under their own name.
    pub same_values: usize,
    /// Paired by content under different names.
    pub renamed: usize,
    /// Of those, matched after undoing llama.cpp's Q/K permutation.
    pub same_values_after_unpermute: usize,
    /// Same name, other contents or shape (a rounded copy no longer counts here).
    pub differs: usize,
    /// Same name, no encoding in common.
    pub not_comparable: usize,
    /// Only in the artifact.
    pub only_in_artifact: usize,
    /// Only in the reference.
    pub only_in_reference: usize,
    /// Files or tensors either side could not read.
    pub unread: usize,
    /// Pairs where one side is the other at lower precision, under any name.
    pub lower_precision: usize,
    /// Pairs with equal values once transposed, under any name.
    pub transposed: usize,
    /// Pairs in which one name is an alias.
    pub aliased: usize,
    /// Pairs of a quantized tensor holding a float one's weights, under any name.
    pub same_weights_quantized: usize,
    /// Pairs of a quantized tensor beyond a float one's weights, under any name.
    pub differs_beyond_quantization: usize,
}

/// Every pair and leftover counted once, by what makes it the same weights or not: the
/// transform first (unpermuted, transposed: exact or rounded), then the outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Accounting {
    /// Same dtype, shape and bytes, under any name.
    pub identical: usize,
    /// Equal values in another float dtype, under any name.
    pub same_values: usize,
    /// One side rounded to the other's narrower type, no transform.
    pub lower_precision: usize,
    /// Equal (or rounded) values after undoing llama.cpp's Q/K permutation.
    pub unpermuted: usize,
    /// Equal (or rounded) values after a transposition.
    pub transposed: usize,
    /// A quantized tensor against a float one, not measured.
    pub not_comparable: usize,
    /// A quantized tensor within its blocks' bounds of a float one (any transform).
    pub same_weights_quantized: usize,
    /// Other shapes or contents.
    pub differs: usize,
    /// A quantized tensor beyond its blocks' bounds of a float one.
    pub differs_beyond_quantization: usize,
    /// Only in the artifact.
    pub only_in_artifact: usize,
    /// Only in the reference.
    pub only_in_reference: usize,
}

impl Accounting {
    /// Pairs that hold the same weights (exactly, as a rounded copy, or quantized).
    pub fn same_weights(&self) -> usize {
        self.identical
            + self.same_values
            + self.lower_precision
            + self.unpermuted
            + self.transposed
            + self.same_weights_quantized
    }
}

/// What a side is called in the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    /// Its name.
    pub name: String,
    /// Its format.
    pub format: String,
    /// Its subject digest.
    pub sha256: String,
}

/// The comparison document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The artifact compared.
    pub artifact: Named,
    /// The reference.
    pub reference: Named,
    /// The values encoding both sides use.
    pub value_encoding: String,
    /// Whether every tensor on both sides matches under its own name (an alias's name
    /// included).
    pub matches: bool,
    /// Counts.
    pub summary: Summary,
    /// Every pair and leftover counted once.
    pub accounting: Accounting,
    /// Why no numbers were computed, when a side is a manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numbers_missing: Option<String>,
    /// Every pair, sorted by the artifact's file and name.
    pub pairs: Vec<Pair>,
    /// Tensors only the artifact holds.
    pub only_in_artifact: Vec<Side>,
    /// Tensors only the reference holds.
    pub only_in_reference: Vec<Side>,
}
