//! Which layer types OpenVINO's IR reader creates from its own operation sets, as
//! `XmlDeserializer::create_node` (openvino 2026.4.1, src/core/xml_util/src/xml_deserialize_util.cpp)
//! finds them: the type's legacy spellings translated (`translate_type_name`: `Const`,
//! `PReLU`, `ReLU`, `SoftMax`), the eight experimental operations written with version
//! `experimental` or `extension` read from opset6, `MVN`, `ROIPooling` and `ReorgYolo` of
//! `opset1` read from opset2, then the opset named by the layer's `version` attribute (exactly)
//! searched for the type ignoring ASCII case (`OpSet::create_insensitive`). Anything else is
//! created only by an extension the loading process registered (`Core.add_extension`: a
//! library's code), or the model is refused.

use super::tables::OPSETS;

/// `translate_type_name` in xml_deserialize_util.cpp (the inverse of the serializer's).
fn translate(type_name: &str) -> &str {
    match type_name {
        "Const" => "Constant",
        "PReLU" => "PRelu",
        "ReLU" => "Relu",
        "SoftMax" => "Softmax",
        other => other,
    }
}

/// The operations added to opset6 that old IRs name with version `experimental` or
/// `extension` (`experimental_ops_added_to_opset` in create_node).
const EXPERIMENTAL_IN_OPSET6: &[&str] = &[
    "ExperimentalDetectronDetectionOutput",
    "ExperimentalDetectronGenerateProposalsSingleImage",
    "ExperimentalDetectronPriorGridGenerator",
    "ExperimentalDetectronROIFeatureExtractor",
    "ExperimentalDetectronTopKROIs",
    "GRUCell",
    "RNNCell",
    "Proposal",
];

/// The opset OpenVINO creates a layer of `type_name` and `version` from.
fn opset_for<'v>(type_name: &str, version: &'v str) -> &'v str {
    if EXPERIMENTAL_IN_OPSET6.contains(&type_name)
        && matches!(version, "experimental" | "extension")
    {
        return "opset6";
    }
    if version == "opset1" && matches!(type_name, "MVN" | "ROIPooling" | "ReorgYolo") {
        return "opset2";
    }
    version
}

/// Whether OpenVINO creates a layer of `type_attr` and `version` from its own opsets.
pub fn in_opsets(type_attr: &str, version: &str) -> bool {
    let type_name = translate(type_attr);
    let opset = opset_for(type_name, version);
    OPSETS
        .iter()
        .find(|(name, _)| *name == opset)
        .is_some_and(|(_, ops)| ops.iter().any(|op| op.eq_ignore_ascii_case(type_name)))
}

/// Whether a layer of `type_attr` is a subgraph operation, and the bodies OpenVINO reads for
/// it (`XmlDeserializer::on_adapter` for `std::shared_ptr<ov::Model>`: `body`, `then_body`,
/// `else_body`, asked for by TensorIterator, Loop and If).
pub fn bodies(type_attr: &str) -> &'static [&'static str] {
    let t = translate(type_attr);
    if t.eq_ignore_ascii_case("TensorIterator") || t.eq_ignore_ascii_case("Loop") {
        &["body"]
    } else if t.eq_ignore_ascii_case("If") {
        &["then_body", "else_body"]
    } else {
        &[]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opsets_as_the_ir_reader_searches_them() {
        assert!(in_opsets("Const", "opset1"));
        assert!(in_opsets("ReLU", "opset1"));
        assert!(in_opsets("add", "opset1"));
        assert!(in_opsets("ADD", "opset13"));
        assert!(in_opsets("ScaledDotProductAttention", "opset13"));
        assert!(!in_opsets("ScaledDotProductAttention", "opset12"));
        assert!(in_opsets("MVN", "opset1"));
        assert!(!in_opsets("mvn", "opset1"));
        assert!(in_opsets("Proposal", "experimental"));
        assert!(in_opsets("RNNCell", "extension"));
        assert!(!in_opsets("Add", "extension"));
        assert!(!in_opsets("Add", "Opset1"));
        assert!(!in_opsets("Add", ""));
        assert!(!in_opsets("MyCustomOp", "extension"));
        assert!(!in_opsets("Parameter", "opset18"));
        assert!(in_opsets("Parameter", "opset17"));
        assert_eq!(bodies("If"), ["then_body", "else_body"]);
        assert_eq!(bodies("Loop"), ["body"]);
        assert!(bodies("Add").is_empty());
    }
}
