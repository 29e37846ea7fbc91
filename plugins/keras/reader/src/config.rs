//! A Keras model's `config.json` on its own: the file a Keras 3 model directory holds, which
//! `keras.saving.load_model(directory)` builds the model from (keras 3.15.1
//! `saving_api.load_model`: a directory holding `config.json` goes to
//! `saving_lib.load_model`, whose `_load_model_from_dir` reads `config.json` and calls
//! `_model_from_config` → `deserialize_keras_object` before it looks for weights). The same
//! grammar judges it as a `.keras` archive's `config.json`; nothing else in the directory is
//! read here (its `model.weights.h5` is the HDF5 reader's file).
//!
//! [`claims`] recognises the documents Keras writes: a JSON object whose first key is one a
//! serialized object starts with (`serialization_lib.serialize_keras_object` writes
//! `module`, `class_name`, `config`, `registered_name` in that order; tf-keras'
//! `Model.to_json` starts with `class_name`). A config that hides its Keras objects behind
//! another first key is not claimed; the companion rules make any JSON `config.json` that
//! holds an object with `class_name` and `config` a LEAD (`socair_plugin_kit::companion`).

use crate::grammar::{self, Dialect};
use crate::Analysis;
use socair_plugin_api::ReadAt;

/// Configs larger than this are refused (Keras' own are kilobytes to a few megabytes).
pub const MAX_CONFIG: u64 = 64 << 20;

/// The keys a serialized Keras object starts with, one of which is the claimed file's first.
const FIRST_KEYS: &[&[u8]] = &[b"module", b"class_name", b"config", b"registered_name"];

/// Whether `head` (a file's first bytes) starts like a Keras config: optional UTF-8 BOM and
/// whitespace, `{`, whitespace, then one of [`FIRST_KEYS`] as a JSON string followed by `:`.
pub fn claims(head: &[u8]) -> bool {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let rest = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let skip = |s: &[u8]| -> usize { s.iter().take_while(|b| ws(b)).count() };
    let rest = &rest[skip(rest)..];
    let Some(rest) = rest.strip_prefix(b"{") else {
        return false;
    };
    let rest = &rest[skip(rest)..];
    FIRST_KEYS.iter().any(|key| {
        rest.strip_prefix(b"\"")
            .and_then(|r| r.strip_prefix(*key))
            .and_then(|r| r.strip_prefix(b"\""))
            .is_some_and(|r| r[skip(r)..].starts_with(b":"))
    })
}

/// Reads the config `src` and judges it as Keras 3 deserializes it (every object with
/// `class_name` and `config`, wherever it is, as `deserialize_keras_object` walks a plain
/// dict's values).
pub fn read<S: ReadAt + ?Sized>(src: &S, reviewed: &[String]) -> Analysis {
    const KIND: &str = "a Keras model config";
    let size = src.size();
    if size > MAX_CONFIG {
        return crate::refused(
            KIND,
            "file".into(),
            format!("{size} bytes, more than the {MAX_CONFIG} socair reads as a Keras config"),
        );
    }
    // Bounded just above: at most 64 MiB.
    let mut text = vec![0u8; size as usize];
    if let Err(e) = src.read_exact_at(0, &mut text) {
        return crate::refused(KIND, "file".into(), format!("unreadable: {e}"));
    }
    // Places are JSON paths alone: the file is the one scanned, named by whoever reports it.
    let outcome = grammar::judge_document(&text, "", Dialect::Keras3, reviewed);
    Analysis {
        kind: format!("{KIND} (what keras.saving.load_model builds a model directory from)"),
        config: Some(outcome),
        ..Analysis::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_what_keras_writes_and_nothing_else() {
        for yes in [
            &br#"{"module": "keras", "class_name": "Sequential"}"#[..],
            br#"  {"class_name": "Sequential", "config": {}}"#,
            b"\xEF\xBB\xBF{\n  \"config\" : {}}",
            br#"{"registered_name":null}"#,
        ] {
            assert!(claims(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &br#"{"architectures": ["BertModel"], "class_name": "x"}"#[..],
            br#"{"_class_name": "UNet2DConditionModel"}"#,
            br#"{"modules": 1}"#,
            br#"{"module" 1}"#,
            br#"["module"]"#,
            b"",
            b"{",
        ] {
            assert!(!claims(no), "{}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn a_lambda_fails_and_plain_layers_pass() {
        let lambda = br#"{"module": "keras", "class_name": "Sequential", "config": {"layers": [
            {"module": "keras.layers", "class_name": "Lambda", "config": {"function":
            {"class_name": "__lambda__", "config": {"code": "4wEAAAAAAAAA"}}}}]}}"#;
        let out = read(&lambda[..], &[]);
        let config = out.config.expect("judged");
        assert_eq!(config.found.worst, Some(crate::Severity::Fail));
        let plain = br#"{"module": "keras", "class_name": "Sequential", "config": {"layers": []}}"#;
        assert_eq!(
            read(&plain[..], &[]).config.expect("judged").found.worst,
            None
        );
    }

    #[test]
    fn a_config_past_the_limit_is_refused() {
        struct Huge;
        impl ReadAt for Huge {
            fn size(&self) -> u64 {
                MAX_CONFIG + 1
            }
            fn read_exact_at(&self, _: u64, _: &mut [u8]) -> Result<(), String> {
                unreachable!("never read")
            }
        }
        assert!(read(&Huge, &[]).refused.is_some());
    }
}
