//! The value of a main-graph Constant node, as the tensor the node outputs: which of its
//! attributes holds the value, and that value located or decoded. Apart from the graph walk,
//! which names the tensor after the node's output.

use super::results::Tensor;
use super::tensor::{describe, fail, problem, Problem};
use crate::decode;
use crate::error::OnnxError;
use crate::proto::onnx::{AttributeProto, NodeProto};
use crate::wire;
use bytes::Bytes;

/// Whether `node` is the ONNX `Constant` operator (of the default domain: a Constant of
/// another domain is some other operator).
pub(super) fn is_constant(node: &NodeProto) -> bool {
    node.op_type.as_deref() == Some("Constant")
        && matches!(node.domain.as_deref(), None | Some("" | "ai.onnx"))
}

/// The attributes of a Constant that hold its value (`onnx/defs/generator/defs.cc`).
pub(super) const CONSTANT_VALUES: &[&str] = &[
    "value",
    "value_float",
    "value_floats",
    "value_int",
    "value_ints",
    "value_string",
    "value_strings",
    "sparse_value",
];

/// The value of main-graph Constant node `n`, as the tensor the node outputs (its name is set
/// by the caller). The outer error is an internal inconsistency.
///
/// What the operator outputs (onnx/defs/generator/defs.cc, and the reference implementation
/// `onnx/reference/ops/op_constant.py`): `value` its tensor; `value_float` a FLOAT scalar;
/// `value_floats` a 1-D FLOAT tensor; `value_int` an INT64 scalar; `value_ints` a 1-D INT64
/// tensor. `value_string(s)` have no fixed-width element type and `sparse_value` is a sparse
/// tensor: both are listed as not read.
pub(super) fn constant(
    node: &NodeProto,
    n: usize,
    walk: &wire::Walk,
    base: &Bytes,
) -> Result<Result<Tensor, Problem>, OnnxError> {
    let values: Vec<(usize, &AttributeProto)> = node
        .attribute
        .iter()
        .enumerate()
        .filter(|(_, a)| CONSTANT_VALUES.contains(&a.name.as_deref().unwrap_or("")))
        .collect();
    if values.len() != 1 {
        let names: Vec<&str> = values
            .iter()
            .map(|(_, a)| a.name.as_deref().unwrap_or(""))
            .collect();
        return Ok(Err(fail(format!(
            "{} of its attributes hold a value ({}); onnx requires exactly one (\"Only one of the attributes 'value', 'value_*' or 'sparse_value' must be specified for a Constant node.\"), so readers may take any",
            values.len(),
            names.join(", ")
        ))));
    }
    if node.output.len() != 1 {
        return Ok(Err(fail(format!(
            "it has {} outputs; the Constant operator has one",
            node.output.len()
        ))));
    }
    let (index, a) = values[0];
    let attr = a.name.as_deref().unwrap_or("");
    // onnx.checker: "Attribute should contain one and only one value field."
    let fields = [
        a.f.is_some(),
        a.i.is_some(),
        a.s.is_some(),
        a.t.is_some(),
        a.g.is_some(),
        a.sparse_tensor.is_some(),
        a.tp.is_some(),
        !a.floats.is_empty(),
        !a.ints.is_empty(),
        !a.strings.is_empty(),
        !a.tensors.is_empty(),
        !a.graphs.is_empty(),
        !a.sparse_tensors.is_empty(),
        !a.type_protos.is_empty(),
    ]
    .into_iter()
    .filter(|&present| present)
    .count();
    if fields > 1 {
        return Ok(Err(fail(format!(
            "attribute {attr:?} holds {fields} value fields; onnx.checker requires one (\"Attribute should contain one and only one value field.\"), so readers may take any"
        ))));
    }
    let spans = walk.attribute(n, index);
    let missing = |field: &str| {
        Ok(Err(fail(format!(
            "attribute {attr:?} does not hold its value in `{field}`"
        ))))
    };
    let inconsistent = || {
        OnnxError::Inconsistent(format!(
            "graph.node[{n}].attribute[{index}] decoded, not walked"
        ))
    };
    let tensor =
        |shape: Vec<u64>, dtype, ranges: Vec<(u64, u64)>, inline: Option<Vec<u8>>| Tensor {
            name: String::new(),
            dtype,
            shape,
            ranges,
            file: None,
            inline,
        };
    match attr {
        "value" => {
            let Some(t) = &a.t else { return missing("t") };
            let spans = spans.and_then(|s| s.t.as_ref()).ok_or_else(inconsistent)?;
            describe(t, spans, base)
        }
        "value_float" => {
            if a.f.is_none() {
                return missing("f");
            }
            let span = spans.and_then(|s| s.f).ok_or_else(inconsistent)?;
            Ok(Ok(tensor(Vec::new(), "F32", vec![span], None)))
        }
        "value_floats" => {
            let shape = vec![a.floats.len() as u64];
            let size = a.floats.len() as u64 * 4;
            if size == 0 {
                return Ok(Ok(tensor(shape, "F32", vec![(0, 0)], None)));
            }
            let spans = spans.ok_or_else(inconsistent)?;
            if spans.floats_unpacked {
                // One tag per value (proto2's default, as the Python protobuf writes
                // `floats`): no byte range holds them alone.
                return Ok(Ok(tensor(shape, "F32", Vec::new(), Some(decode::floats(&a.floats)))));
            }
            let walked: u64 = spans.floats.iter().map(|s| s.1).sum();
            if walked != size {
                return Err(OnnxError::Inconsistent(format!(
                    "floats: {size} bytes decoded, {walked} walked"
                )));
            }
            let ranges = spans.floats.iter().copied().filter(|s| s.1 > 0).collect();
            Ok(Ok(tensor(shape, "F32", ranges, None)))
        }
        "value_int" => match a.i {
            Some(i) => Ok(Ok(tensor(Vec::new(), "I64", Vec::new(), Some(decode::int64s(&[i]))))),
            None => missing("i"),
        },
        "value_ints" => {
            let shape = vec![a.ints.len() as u64];
            Ok(Ok(if a.ints.is_empty() {
                tensor(shape, "I64", vec![(0, 0)], None)
            } else {
                tensor(shape, "I64", Vec::new(), Some(decode::int64s(&a.ints)))
            }))
        }
        "sparse_value" => Ok(Err(Problem {
            outside_model: true,
            ..problem(
                None,
                "its value is a sparse tensor (values and indices), which this reader does not carry",
            )
        })),
        _ => Ok(Err(problem(
            None,
            format!("its value ({attr}) is STRING, which has no fixed-width element type in socair's vocabulary"),
        ))),
    }
}
