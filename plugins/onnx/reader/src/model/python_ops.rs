//! Nodes whose runtime runs a Python function: the one place an ONNX graph is not data.
//!
//! * **`PyOp`, any domain**: onnxruntime's language-interop operators (built with
//!   `--enable_language_interop_ops`; `onnxruntime/core/language_interop_ops/
//!   language_interop_ops.cc` `LoadInterOp` registers every node whose `op_type` is `PyOp`,
//!   in the main graph or a subgraph, in the node's own domain). `pyop/pyop.cc` `LoadPyOp`
//!   takes its `module`, `class_name` and `compute` string attributes, and when the session
//!   is created `PyOpLibProxy::NewInstance` runs `PyImport_ImportModule(module)`, then calls
//!   `getattr(module, class_name)` with every other string attribute as a keyword argument:
//!   the file names the code a loader imports and calls. A FAIL.
//! * **`PythonOp` / `PythonOpGrad`** (onnxruntime training's `com.microsoft` operators, which
//!   ORTModule writes for a `torch.autograd.Function`, and the `PythonOp` torch.onnx exports
//!   for one with `ONNX_FALLTHROUGH`): the kernel calls the function registered under the
//!   node's `func_name` (`language_interop_ops/torch/custom_function_register.cc`
//!   `OrtTorchFunctionPool::GetForwardCore`, "No forward registered for …"): only a function
//!   the loading process registered runs. A LEAD naming it.
//! * **`ai.onnx.contrib`** (onnxruntime-extensions): a Python function decorated with
//!   `@onnx_op(op_type=…)` is registered under that name in that domain
//!   (`onnxruntime_extensions/_ocos.py` `Opdef.create` → `add_custom_op`, called back through
//!   `_on_pyop_invocation`), and may take any name, a C++ operator's too. A node of an
//!   operator the extensions library does not implement in C++ ([`EXTENSIONS_CPP_OPS`]) can
//!   only be such a function the loading process registered: a LEAD naming it. Nodes of the
//!   C++ operators are data (tokenizers, string and audio kernels).

use crate::proto::onnx::NodeProto;
use crate::wire::Severity;

/// The operators onnxruntime-extensions 0.15.2 (its PyPI wheel for CPython 3.11, linux x86-64)
/// registers in `ai.onnx.contrib` from C++: every name that a session with its library
/// (`SessionOptions.register_custom_ops_library(get_library_path())`, onnxruntime 1.32.0)
/// accepts as an operator, where any other name fails with "ai.onnx.contrib:<name>(-1) is not
/// a registered function/op" (probed name by name from the strings of the library; sorted).
pub const EXTENSIONS_CPP_OPS: &[&str] = &[
    "AudioDecoder",
    "BasicTokenizer",
    "BertTokenizerDecoder",
    "BlingFireSentenceBreaker",
    "BpeDecoder",
    "CLIPTokenizer",
    "GPT2Tokenizer",
    "HfBertTokenizer",
    "HfJsonTokenizer",
    "Inverse",
    "MaskedFill",
    "MergeSignalSegments",
    "NegPos",
    "RaggedTensorToSparse",
    "SegmentExtraction",
    "SegmentSum",
    "SentencepieceDecoder",
    "SentencepieceTokenizer",
    "SplitSignalSegments",
    "SpmTokenizer",
    "StftNorm",
    "StringConcat",
    "StringECMARegexReplace",
    "StringECMARegexSplitWithOffsets",
    "StringEqual",
    "StringJoin",
    "StringLength",
    "StringLower",
    "StringMapping",
    "StringRaggedTensorToDense",
    "StringRegexReplace",
    "StringRegexSplitWithOffsets",
    "StringSplit",
    "StringStrip",
    "StringToHashBucket",
    "StringToHashBucketFast",
    "StringToVector",
    "StringUpper",
    "TrieDetokenizer",
    "TrieTokenizer",
    "VectorToString",
    "WordpieceTokenizer",
];

/// The domain of onnxruntime-extensions' operators (`default_opset_domain()`).
pub const EXTENSIONS_DOMAIN: &str = "ai.onnx.contrib";

/// The value of the string attribute `name` of `node`, shortened for a finding.
fn string_attr(node: &NodeProto, name: &str) -> Option<String> {
    node.attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
        .and_then(|a| a.s.as_ref())
        .map(|s| crate::bounded::short(&String::from_utf8_lossy(s)))
}

/// What a node that runs Python is, when it is one: its severity and the words.
pub fn python_op(node: &NodeProto) -> Option<(Severity, String)> {
    let op = node.op_type.as_deref().unwrap_or("");
    let domain = node.domain.as_deref().unwrap_or("");
    if op == "PyOp" {
        let module = string_attr(node, "module").unwrap_or_default();
        let class = string_attr(node, "class_name").unwrap_or_default();
        let compute = string_attr(node, "compute").unwrap_or_else(|| "compute".into());
        return Some((
            Severity::Fail,
            format!("a Python operator (PyOp, domain {domain:?}): onnxruntime's language-interop operators import module {module:?} and call its {class:?} with the node's string attributes when the session is created, then its {compute:?} on every run: the model names Python code the loader runs"),
        ));
    }
    if op == "PythonOp" || op == "PythonOpGrad" {
        let func = string_attr(node, "func_name")
            .or_else(|| string_attr(node, "name"))
            .unwrap_or_default();
        return Some((
            Severity::Lead,
            format!("a Python operator ({op}, domain {domain:?}) calling the torch.autograd.Function {func:?}: onnxruntime training runs the function registered under that name in the loading process (none is in the file), which a person should know before running it"),
        ));
    }
    if domain == EXTENSIONS_DOMAIN && !EXTENSIONS_CPP_OPS.contains(&op) {
        return Some((
            Severity::Lead,
            format!("an onnxruntime-extensions operator {op:?} that the extensions library does not implement in C++: it runs the Python function the loading process registered under that name with @onnx_op (none is in the file), which a person should know before running it"),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::onnx::AttributeProto;

    fn node(op: &str, domain: &str, attrs: &[(&str, &str)]) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            domain: Some(domain.into()),
            attribute: attrs
                .iter()
                .map(|(k, v)| AttributeProto {
                    name: Some((*k).into()),
                    s: Some(bytes::Bytes::copy_from_slice(v.as_bytes())),
                    ..AttributeProto::default()
                })
                .collect(),
            ..NodeProto::default()
        }
    }

    #[test]
    fn python_operators_are_named() {
        let (s, why) = python_op(&node(
            "PyOp",
            "pyopmulti_1",
            &[("module", "subprocess"), ("class_name", "Popen")],
        ))
        .unwrap();
        assert_eq!(s, Severity::Fail);
        assert!(why.contains("subprocess") && why.contains("Popen"), "{why}");
        let (s, why) =
            python_op(&node("PythonOp", "com.microsoft", &[("func_name", "m.F")])).unwrap();
        assert_eq!(s, Severity::Lead);
        assert!(why.contains("m.F"), "{why}");
        let (s, _) = python_op(&node("ReverseMatrix", "ai.onnx.contrib", &[])).unwrap();
        assert_eq!(s, Severity::Lead);
        assert!(python_op(&node("GPT2Tokenizer", "ai.onnx.contrib", &[])).is_none());
        assert!(python_op(&node("Add", "", &[])).is_none());
        assert!(python_op(&node("FusedMatMul", "com.microsoft", &[])).is_none());
        assert!(EXTENSIONS_CPP_OPS.windows(2).all(|w| w[0] < w[1]));
    }
}
