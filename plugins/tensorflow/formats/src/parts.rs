//! The other protobuf files of a SavedModel directory:
//!
//! * `fingerprint.pb` (`FingerprintDef`, tensorflow/core/protobuf/fingerprint.proto): hashes
//!   TensorFlow computes over the other files when it saves, and reads back only to report
//!   them (`tf.saved_model.experimental.read_fingerprint`); nothing is loaded from it. Read
//!   strictly, its values kept as metadata, not verified (they are FarmHash fingerprints of
//!   TensorFlow's own serializations, which socair does not recompute).
//! * `keras_metadata.pb` (`SavedMetadata`, tf-keras' keras/protobuf/saved_metadata.proto):
//!   the Keras layer configs, as JSON, that `tf_keras.models.load_model` rebuilds each layer
//!   from (`tf.saved_model.load` ignores the file). A `Lambda` layer, or any config naming a
//!   function to load (`function_type`), is FAIL: tf-keras rebuilds it from marshalled Python
//!   bytecode or a named callable. The rest is a LEAD: judging Keras configs is the Keras
//!   grammar's work, which this reader does not carry.

use crate::decode::{decode, ProtoError};
use crate::outcome::Outcome;
use crate::proto::keras::SavedMetadata;
use crate::proto::schema::{FINGERPRINT_DEF, SAVED_METADATA};
use crate::proto::tensorflow::FingerprintDef;
use bytes::Bytes;
use serde_json::Value;
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::protobuf::walk::Severity;

/// Reads a `fingerprint.pb`.
pub fn fingerprint(data: Bytes) -> OpenedFile {
    let mut out = Outcome::new(crate::savedmodel::FORMAT, data.len() as u64);
    let fp: FingerprintDef = match decode(&data, FINGERPRINT_DEF, "fingerprint") {
        Ok((f, walked)) => {
            out.walked(&walked);
            f
        }
        Err(e) => return refused(e, "not a sound SavedModel fingerprint"),
    };
    for (k, v) in [
        ("saved_model_checksum", fp.saved_model_checksum),
        ("graph_def_program_hash", fp.graph_def_program_hash),
        ("signature_def_hash", fp.signature_def_hash),
        ("saved_object_graph_hash", fp.saved_object_graph_hash),
        ("checkpoint_hash", fp.checkpoint_hash),
    ] {
        out.metadata
            .push((format!("tensorflow.fingerprint.{k}"), v.to_string()));
    }
    if !fp.uuid.is_empty() {
        out.metadata
            .push(("tensorflow.fingerprint.uuid".into(), short(&fp.uuid)));
    }
    out.finish(|status| match status {
        RowStatus::Pass => "SavedModel fingerprint (FingerprintDef): hashes TensorFlow wrote of the other files, read as data (not recomputed: nothing is loaded from them)".into(),
        _ => "SavedModel fingerprint (FingerprintDef) with parts this reader does not prove".into(),
    })
}

/// Reads a `keras_metadata.pb`.
pub fn keras_metadata(data: Bytes) -> OpenedFile {
    let mut out = Outcome::new(crate::savedmodel::FORMAT, data.len() as u64);
    let md: SavedMetadata = match decode(&data, SAVED_METADATA, "keras_metadata") {
        Ok((m, walked)) => {
            out.walked(&walked);
            m
        }
        Err(e) => return refused(e, "not a sound Keras metadata file"),
    };
    let mut classes: std::collections::BTreeSet<String> = Default::default();
    for (i, node) in md.nodes.iter().enumerate() {
        let place = || format!("nodes[{i}] {:?} metadata", short(&node.node_path));
        if node.metadata.is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(&node.metadata) {
            Ok(v) => v,
            Err(e) => {
                out.note("configs that are not JSON", Severity::Fail, place, || {
                    format!(
                        "not JSON ({e}): tf-keras refuses it, another reader may read it otherwise"
                    )
                });
                continue;
            }
        };
        let mut path = String::new();
        scan(&value, &mut path, 0, &mut |p, v| {
            let Value::Object(o) = v else {
                return;
            };
            if let Some(Value::String(c)) = o.get("class_name") {
                if classes.len() < 1_000 {
                    classes.insert(short(c));
                }
                if c == "Lambda" {
                    out.note("Lambda layers", Severity::Fail, || format!("{}{p}", place()), || {
                        "a Lambda layer: tf_keras.models.load_model rebuilds its function from the marshalled Python bytecode (or the named callable) in its config, and runs it when the layer is called".into()
                    });
                }
            }
            if o.contains_key("function_type") {
                out.note("configs that load functions", Severity::Fail, || format!("{}{p}", place()), || {
                    let t = o.get("function_type").and_then(Value::as_str).unwrap_or("?");
                    format!("a config with function_type {t:?}: tf-keras loads its function from marshalled bytecode (\"lambda\") or by module and name (\"function\")")
                });
            }
        });
    }
    out.note(
        "Keras configs",
        Severity::Lead,
        || "keras_metadata".into(),
        || {
            format!(
                "{} Keras object configs (classes {}) that tf_keras.models.load_model rebuilds layers from: this reader does not judge Keras configs (the Keras config grammar does)",
                thousands(md.nodes.len() as u64),
                crate::outcome::listed(classes.iter().map(String::as_str), 30)
            )
        },
    );
    out.finish(|status| match status {
        RowStatus::Fail => "Keras metadata (keras_metadata.pb) naming code tf-keras would load: see the findings".into(),
        _ => format!(
            "Keras metadata (keras_metadata.pb): {} object configs, read by tf_keras.models.load_model (not by tf.saved_model.load), not judged by this reader",
            thousands(md.nodes.len() as u64)
        ),
    })
}

/// Calls `visit` on every value of `v` with its path (`.config.layers[0]`), to depth 128.
fn scan(v: &Value, path: &mut String, depth: usize, visit: &mut dyn FnMut(&str, &Value)) {
    if depth > 128 {
        return;
    }
    visit(path, v);
    let len = path.len();
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                path.push('.');
                path.push_str(&short(k));
                scan(child, path, depth + 1, visit);
                path.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                path.push_str(&format!("[{i}]"));
                scan(child, path, depth + 1, visit);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn refused(e: ProtoError, summary: &str) -> OpenedFile {
    socair_plugin_kit::report::refused(
        crate::savedmodel::FORMAT,
        summary,
        e.to_string(),
        socair_plugin_api::Finding {
            place: e.place().into(),
            reason: e.to_string().into(),
        },
    )
}
