//! The other protobuf files of a SavedModel directory:
//!
//! * `fingerprint.pb` (`FingerprintDef`, tensorflow/core/protobuf/fingerprint.proto): hashes
//!   TensorFlow computes over the other files when it saves, and reads back only to report
//!   them (`tf.saved_model.experimental.read_fingerprint`); nothing is loaded from it. Read
//!   strictly, its values kept as metadata, not verified (they are FarmHash fingerprints of
//!   TensorFlow's own serializations, which socair does not recompute).
//! * `keras_metadata.pb` (`SavedMetadata`, tf-keras' keras/protobuf/saved_metadata.proto):
//!   the Keras layer configs, as JSON, that `tf_keras.models.load_model` rebuilds each layer
//!   from (`tf.saved_model.load` ignores the file). Each node's metadata is judged by the
//!   Keras config grammar's tf-keras dialect (`socair_keras::grammar::judge_tracking_metadata`,
//!   `plugins/keras/GRAMMAR.md`): a `Lambda`'s bytecode or named function, a module outside
//!   Keras FAIL with the node and the JSON path; names and keys the grammar does not model
//!   LEAD; the rest PASSes.

use crate::decode::{decode, ProtoError};
use crate::outcome::Reading;
use crate::proto::keras::SavedMetadata;
use crate::proto::schema::{FINGERPRINT_DEF, SAVED_METADATA};
use crate::proto::tensorflow::FingerprintDef;
use bytes::Bytes;
use socair_keras::grammar;
use socair_keras::Severity as KerasSeverity;
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::protobuf::walk::Severity;

/// Reads a `fingerprint.pb`.
pub fn fingerprint(data: Bytes) -> OpenedFile {
    let mut out = Reading::new(crate::savedmodel::FORMAT, data.len() as u64);
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
    let mut out = Reading::new(crate::savedmodel::FORMAT, data.len() as u64);
    let md: SavedMetadata = match decode(&data, SAVED_METADATA, "keras_metadata") {
        Ok((m, walked)) => {
            out.walked(&walked);
            m
        }
        Err(e) => return refused(e, "not a sound Keras metadata file"),
    };
    let mut objects = 0u64;
    for (i, node) in md.nodes.iter().enumerate() {
        if node.metadata.is_empty() {
            continue;
        }
        // Each node's metadata by the Keras config grammar's tf-keras dialect (socair-keras:
        // `grammar::judge_tracking_metadata`, the entry a legacy `.h5` model_config is judged
        // through, with the keys tf-keras 2.21 writes into SavedModel metadata).
        let place = format!("nodes[{i}] {:?} metadata", short(&node.node_path));
        let judged = grammar::judge_tracking_metadata(node.metadata.as_bytes(), &place, &[]);
        objects += judged.objects;
        for f in &judged.found.shown {
            let severity = match f.severity {
                KerasSeverity::Fail => Severity::Fail,
                KerasSeverity::Lead => Severity::Lead,
            };
            let kind = match f.severity {
                KerasSeverity::Fail => "Keras configs that run code or touch files",
                KerasSeverity::Lead => "Keras configs outside the grammar",
            };
            out.note(kind, severity, || f.place.clone(), || f.reason.clone());
        }
        if judged.found.more > 0 {
            let severity = match judged.found.worst {
                Some(KerasSeverity::Fail) => Severity::Fail,
                _ => Severity::Lead,
            };
            out.note(
                "Keras configs outside the grammar",
                severity,
                || place.clone(),
                || {
                    format!(
                        "{} more findings of the Keras config grammar, not listed",
                        judged.found.more
                    )
                },
            );
        }
    }
    out.finish(|status| match status {
        RowStatus::Fail => "Keras metadata (keras_metadata.pb) naming code tf-keras would load: see the findings".into(),
        RowStatus::Pass => format!(
            "Keras metadata (keras_metadata.pb): {} node(s), {} serialized object(s), every one inside the Keras config grammar (socair-keras 1, tf-keras 2.21); read by tf_keras.models.load_model, not by tf.saved_model.load",
            thousands(md.nodes.len() as u64),
            thousands(objects)
        ),
        _ => format!(
            "Keras metadata (keras_metadata.pb): {} node(s), {} serialized object(s), some outside the Keras config grammar: a person should look",
            thousands(md.nodes.len() as u64),
            thousands(objects)
        ),
    })
}

fn refused(e: ProtoError, summary: &str) -> OpenedFile {
    e.refused(crate::savedmodel::FORMAT, summary)
}
