//! Files of a model directory that no plugin reads: judged by the companion rules that the
//! archive plugin applies to an archive's members too (`socair_plugin_kit::companion`: JSON
//! and UTF-8 text read as data; code, `auto_map` references and everything else LEADs). This
//! module applies them to a file the host opened (`InputFile` implements the rules'
//! `Contents` in the reading crate).

use crate::read::source::InputFile;
use socair_plugin_kit::companion::Contents;

pub use socair_plugin_kit::companion::Companion;

/// Who did not read a companion that is none of the rules' kinds.
const UNREAD: &str = "no loaded plugin reads this file";

/// Classifies `input`, the directory's file at `rel` that no plugin claimed: the companion
/// rules, and for a `config.json` they read as data, whether Keras would build objects from it
/// when given the directory (`socair_plugin_kit::companion::keras_objects`).
pub fn classify(rel: &str, input: &InputFile) -> Companion {
    let verdict = socair_plugin_kit::companion::classify(rel, input, UNREAD);
    let is_config = rel.rsplit('/').next() == Some("config.json");
    if is_config && matches!(verdict, Companion::Data(_)) {
        if let Some(lead) = input
            .all()
            .ok()
            .and_then(|bytes| socair_plugin_kit::companion::keras_objects(&bytes))
        {
            return lead;
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify_bytes(name: &str, bytes: &[u8]) -> Companion {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        classify(name, &InputFile::open(&path).unwrap())
    }

    /// The rules' own cases are the kit's tests; here, that a file is read through
    /// [`InputFile`] and a lone unknown one says no plugin reads it.
    #[test]
    fn files_are_judged_by_the_companion_rules() {
        assert_eq!(
            classify_bytes("config.json", br#"{"a": [1, {"b": null}]}"#),
            Companion::Data("a JSON document, parsed as data")
        );
        assert_eq!(
            classify_bytes("vocab.txt", b"[PAD]\nhello\n"),
            Companion::Data("UTF-8 text, read as data")
        );
        assert!(matches!(
            classify_bytes("modeling_x.py", b"import os\n"),
            Companion::Lead(_)
        ));
        assert_eq!(
            classify_bytes("opaque.dat", b"\x0a\x05hello"),
            Companion::Lead(
                "no loaded plugin reads this file, and it is neither JSON nor text: nothing in it was checked".into()
            )
        );
    }
}
