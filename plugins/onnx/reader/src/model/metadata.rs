//! The model's metadata as strings (`ir_version`, opsets, producer, `metadata_props`,
//! functions), as the report lists it. Apart from the tensors.

use super::results::Model;
use crate::bounded;
use crate::proto::onnx::ModelProto;

/// Metadata entries (`metadata_props`) passed on (a model has a handful).
pub const MAX_METADATA_LISTED: usize = 65_536;

pub(super) fn metadata(model: &ModelProto, out: &mut Model) {
    let m = &mut out.metadata;
    if let Some(v) = model.ir_version {
        m.push(("onnx.ir_version".into(), v.to_string()));
    }
    if !model.opset_import.is_empty() {
        let opsets: Vec<String> = model
            .opset_import
            .iter()
            .map(|o| {
                let domain = o
                    .domain
                    .as_deref()
                    .filter(|d| !d.is_empty())
                    .unwrap_or("ai.onnx");
                format!("{domain}:{}", o.version.unwrap_or(0))
            })
            .collect();
        m.push(("onnx.opset_import".into(), opsets.join(",")));
    }
    for (key, value) in [
        ("onnx.producer_name", &model.producer_name),
        ("onnx.producer_version", &model.producer_version),
        ("onnx.domain", &model.domain),
    ] {
        if let Some(v) = value {
            m.push((key.into(), v.clone()));
        }
    }
    if let Some(v) = model.model_version {
        m.push(("onnx.model_version".into(), v.to_string()));
    }
    for p in model.metadata_props.iter().take(MAX_METADATA_LISTED) {
        m.push((
            format!("onnx.metadata_props.{}", p.key.as_deref().unwrap_or("")),
            p.value.clone().unwrap_or_default(),
        ));
    }
    if model.metadata_props.len() > MAX_METADATA_LISTED {
        m.push((
            "onnx.metadata_props (socair: not listed)".into(),
            format!(
                "{} more entries are not listed",
                bounded::thousands((model.metadata_props.len() - MAX_METADATA_LISTED) as u64)
            ),
        ));
    }
    if !model.functions.is_empty() {
        m.push(("onnx.functions".into(), model.functions.len().to_string()));
    }
}
