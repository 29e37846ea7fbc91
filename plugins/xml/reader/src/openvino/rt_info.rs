//! The model's `<rt_info>`: key/value data OpenVINO keeps with the model
//! (`XmlDeserializer::read_meta_data`: each child's `name` attribute, else its element name, is
//! a key; its `value` attribute a string, else its children a nested map), which the runtime
//! and the programs around it read. Three kinds of key matter:
//!
//! * `__weights_path` names the weights file a device plugin re-reads for the weightless cache
//!   (the CPU and GPU plugins pass `model.get_rt_info("__weights_path")` on as `WEIGHTS_PATH`,
//!   src/plugins/intel_cpu/src/plugin.cpp `get_rt_info`, read when `CACHE_MODE` is
//!   `OPTIMIZE_SIZE`), and openvino.genai's VLM pipeline opens other models in its directory.
//!   `ov.save_model` never writes the key (src/core/src/pass/serialize.cpp skips it); the IR
//!   reader sets it to the real weights' path only when it is given none, so a file's own key
//!   names a file the runtime reads: a FAIL.
//! * `runtime_options` holds compile properties the plugins apply (`KV_CACHE_PRECISION`,
//!   `DYNAMIC_QUANTIZATION_GROUP_SIZE`, `ACTIVATIONS_SCALE_FACTOR`... through
//!   `apply_rt_info`): data, listed in the metadata.
//! * a chat template (`chat_template` and the keys openvino_tokenizers writes beside it) is
//!   code for the program that renders it (openvino.genai's Jinja): judged by the kit's rule
//!   ([`socair_plugin_kit::jinja`]), as the gguf reader judges its templates.
//!
//! A layer's own `<rt_info>` holds runtime attributes (`fused_names`, `decompression`,
//! `old_api_map_order`...) built by `ov::pass::Attributes` or skipped: data, never a path.

use crate::xml::tree::Tree;
use socair_plugin_kit::jinja;
use socair_plugin_kit::model::Severity;
use socair_plugin_kit::reading::{listed, Reading};

/// The finding kind of rt_info.
pub const KIND: &str = "rt_info findings";

/// Chat templates judged in one file (a tokenizer model carries one or two).
const MAX_TEMPLATES: usize = 8;

/// The key of a child of an rt_info section: its `name` attribute, else its element name.
fn key(tree: &Tree, node: usize) -> &str {
    tree.attribute(node, "name")
        .unwrap_or_else(|| tree.name(node))
}

/// Judges the model's rt_info section `section` (the root's first `<rt_info>`) and lists its
/// keys in `reading`'s metadata.
pub fn judge(tree: &Tree, section: usize, reading: &mut Reading) {
    let children: Vec<usize> = tree.all_children(section).collect();
    let mut keys = Vec::new();
    let mut templates = 0usize;
    for child in children {
        let name = key(tree, child).to_owned();
        let place = format!("rt_info {name:?} (byte {})", tree.offset(child));
        let value = tree.attribute(child, "value");
        if name == "__weights_path" {
            let shown = socair_plugin_kit::bounded::short(value.unwrap_or("(a nested map)"));
            reading.note(KIND, Severity::Fail, || place.clone(), || format!(
                "names the weights file {shown:?}: the CPU and GPU plugins pass this key on as WEIGHTS_PATH and re-read the weights from that path for the weightless cache (CACHE_MODE OPTIMIZE_SIZE), and openvino.genai opens models in its directory; ov.save_model never writes it, and the IR reader keeps the file's own value"
            ));
        } else if name.contains("chat_template") {
            if let Some(template) = value {
                templates += 1;
                if templates > MAX_TEMPLATES {
                    reading.note(
                        KIND,
                        Severity::Lead,
                        || place.clone(),
                        || format!("a chat template past the first {MAX_TEMPLATES}, not checked"),
                    );
                } else {
                    judge_template(&place, template, reading);
                }
            }
        } else if name == "runtime_options" {
            let options: Vec<String> = tree
                .all_children(child)
                .map(|o| {
                    format!(
                        "{}={}",
                        key(tree, o),
                        tree.attribute(o, "value").unwrap_or("…")
                    )
                })
                .collect();
            reading.metadata.push((
                "openvino.runtime_options".into(),
                listed(options.iter().map(String::as_str), 32),
            ));
        }
        keys.push(name);
    }
    if !keys.is_empty() {
        reading.metadata.push((
            "openvino.rt_info".into(),
            listed(keys.iter().map(String::as_str), 32),
        ));
    }
}

/// Judges one chat template by the kit's rule.
fn judge_template(place: &str, template: &str, reading: &mut Reading) {
    let j = jinja::judge(template);
    for f in &j.flags {
        reading.note(
            KIND,
            f.severity,
            || format!("{place} {}", f.place),
            || f.reason.clone(),
        );
    }
    if j.more > 0 {
        let worst = j.worst().unwrap_or(Severity::Lead);
        reading.note(
            KIND,
            worst,
            || place.to_owned(),
            || format!("and {} more findings in this chat template", j.more),
        );
    }
    reading.metadata.push((
        "openvino.chat_template".into(),
        match j.worst() {
            None => "parsed as Jinja, reaching nothing outside the template".into(),
            Some(Severity::Lead) => "not all proven ordinary Jinja".into(),
            Some(Severity::Fail) => "reaches Python internals".into(),
        },
    ));
}
