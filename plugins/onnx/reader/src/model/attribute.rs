//! Tensors held by the attributes of the main graph's nodes other than `Constant`, read as
//! a Constant's value is: `ConstantOfShape`'s `value` (the one-element tensor whose value
//! fills its output: `onnx/defs/generator/defs.cc`; `onnx/reference/ops/op_constant_of_shape.py`
//! at onnx 1.23.2 reads `self.value[0]`), and any other node's tensor attribute `t`
//! (ai.onnx.ml's `LabelEncoder` `keys_tensor`, `TreeEnsemble` `nodes_splits`, a custom
//! operator's...). `onnx.numpy_helper.to_array(attribute.t)` is the array each one holds.
//!
//! Names: `ConstantOfShape`'s value takes the node's output, as a Constant's value does
//! (the value is what the output is made of); any other attribute tensor is named
//! `<output>.<attribute>` after the node's first output, so that no two share a name in a
//! graph in single static assignment form. A name that collides with another tensor's is
//! refused like a duplicate initializer. Repeated `tensors` attributes and the tensors of
//! subgraphs stay listed as outside the model ([`super::outside`]).

use crate::proto::onnx::NodeProto;

/// Whether `node` is the ONNX `ConstantOfShape` operator (of the default domain).
pub(super) fn is_constant_of_shape(node: &NodeProto) -> bool {
    node.op_type.as_deref() == Some("ConstantOfShape")
        && matches!(node.domain.as_deref(), None | Some("" | "ai.onnx"))
}

/// The name of the tensor `node`'s attribute `attr` holds, or `None` when the node has no
/// output to name it by.
pub(super) fn name(node: &NodeProto, attr: &str) -> Option<String> {
    let output = node.output.first().filter(|o| !o.is_empty())?;
    Some(if is_constant_of_shape(node) && attr == "value" {
        output.clone()
    } else {
        format!("{output}.{attr}")
    })
}
