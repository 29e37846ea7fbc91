//! Files of a model directory that no plugin reads: what the host can say of them itself.
//!
//! Nothing unknown is clean. A directory's JSON documents and plain text (configs, tokenizer
//! vocabularies, READMEs) are parsed here as data: JSON strictly, text as UTF-8 without NUL
//! bytes; a loader reads them as data and nothing in them runs. Code (Python modules that
//! `trust_remote_code` imports, scripts, native libraries, executables), a `config.json` whose
//! `auto_map` names such code, and every other file no plugin reads are LEADs: nothing in them
//! was checked, and a person must look.

use crate::read::source::InputFile;
use serde::de::IgnoredAny;

/// JSON documents larger than this are not parsed here.
const MAX_JSON: u64 = 256 << 20;
/// Text files larger than this are not read here.
const MAX_TEXT: u64 = 64 << 20;

/// Extensions of files that hold code a loader or a person may run.
const CODE_EXTENSIONS: &[&str] = &[
    "py", "pyc", "pyo", "pyd", "pyx", "ipynb", "sh", "bash", "zsh", "bat", "cmd", "ps1", "js",
    "mjs", "cjs", "rb", "pl", "lua", "so", "dylib", "dll", "exe", "bin.exe", "jar", "class", "whl",
    "egg",
];

/// Extensions (and exact names) of plain-text companions.
const TEXT_EXTENSIONS: &[&str] = &[
    "txt", "md", "rst", "csv", "tsv", "yaml", "yml", "cfg", "ini",
];
const TEXT_NAMES: &[&str] = &[
    "LICENSE",
    "LICENCE",
    "NOTICE",
    "README",
    "COPYING",
    "AUTHORS",
    ".gitattributes",
    ".gitignore",
];

/// What the host makes of a file no plugin reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Companion {
    /// Read as data: the summary says what it is.
    Data(&'static str),
    /// A LEAD: the reason.
    Lead(String),
}

/// Only the top-level key that matters; every other value is skipped as it streams past.
#[derive(serde::Deserialize)]
struct TopLevel {
    #[serde(default)]
    auto_map: Option<IgnoredAny>,
}

fn read_all(input: &InputFile) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; input.len() as usize];
    input.read_exact_at(0, &mut bytes)?;
    Ok(bytes)
}

fn extension(rel: &str) -> Option<String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty())
        .map(|(_, ext)| ext.to_ascii_lowercase())
}

/// Classifies `input`, the directory's file at `rel` that no plugin claimed.
pub fn classify(rel: &str, input: &InputFile) -> Companion {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let ext = extension(rel);
    let mut head = [0u8; 4];
    let n = (input.len() as usize).min(4);
    let head = match input.read_exact_at(0, &mut head[..n]) {
        Ok(()) => &head[..n],
        Err(e) => {
            return Companion::Lead(format!(
                "it cannot be read ({e}): nothing in it was checked"
            ))
        }
    };
    let native = head.starts_with(b"\x7fELF")
        || head.starts_with(b"MZ")
        || matches!(
            head,
            [0xfe, 0xed, 0xfa, 0xce | 0xcf]
                | [0xce | 0xcf, 0xfa, 0xed, 0xfe]
                | [0xca, 0xfe, 0xba, 0xbe]
        );
    if native {
        return Companion::Lead(
            "a native executable or library: code, which no plugin reads".into(),
        );
    }
    if head.starts_with(b"#!") {
        return Companion::Lead(
            "a script (it starts with `#!`): code, which no plugin reads".into(),
        );
    }
    if let Some(e) = ext.as_deref().filter(|e| CODE_EXTENSIONS.contains(e)) {
        let why = if e.starts_with("py") || e == "ipynb" {
            "Python code, which `transformers` imports and runs when a model is loaded with trust_remote_code=True"
        } else {
            "code, which no plugin reads"
        };
        return Companion::Lead(format!("a .{e} file: {why}"));
    }
    if ext.as_deref() == Some("json") {
        if input.len() > MAX_JSON {
            return Companion::Lead(format!(
                "a JSON file of {} bytes, larger than the {MAX_JSON} socair parses: nothing in it was checked",
                input.len()
            ));
        }
        let bytes = match read_all(input) {
            Ok(b) => b,
            Err(e) => {
                return Companion::Lead(format!(
                    "it cannot be read ({e}): nothing in it was checked"
                ))
            }
        };
        let auto_map = match serde_json::from_slice::<TopLevel>(&bytes) {
            Ok(top) => top.auto_map.is_some(),
            Err(_) => match serde_json::from_slice::<IgnoredAny>(&bytes) {
                Ok(_) => false,
                Err(e) => {
                    return Companion::Lead(format!(
                        "named .json but not JSON ({e}): nothing in it was checked"
                    ))
                }
            },
        };
        if auto_map {
            return Companion::Lead(
                "its `auto_map` names custom model code, which `transformers` downloads or imports and runs when the model is loaded with trust_remote_code=True".into(),
            );
        }
        return Companion::Data("a JSON document, parsed as data");
    }
    let text_like = ext.as_deref().is_some_and(|e| TEXT_EXTENSIONS.contains(&e))
        || TEXT_NAMES
            .iter()
            .any(|t| name == *t || name.strip_prefix(t).is_some_and(|r| r.starts_with('.')));
    if text_like {
        if input.len() > MAX_TEXT {
            return Companion::Lead(format!(
                "a text file of {} bytes, larger than the {MAX_TEXT} socair reads: nothing in it was checked",
                input.len()
            ));
        }
        return match read_all(input) {
            Ok(b) if !b.contains(&0) && std::str::from_utf8(&b).is_ok() => {
                Companion::Data("UTF-8 text, read as data")
            }
            Ok(_) => Companion::Lead(
                "named as text but not UTF-8 text (or it holds NUL bytes): nothing in it was checked".into(),
            ),
            Err(e) => Companion::Lead(format!("it cannot be read ({e}): nothing in it was checked")),
        };
    }
    Companion::Lead("no loaded plugin reads this file, and it is neither JSON nor text: nothing in it was checked".into())
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

    #[test]
    fn data_code_and_unknown_files() {
        assert!(matches!(
            classify_bytes("config.json", br#"{"a": [1, {"b": null}]}"#),
            Companion::Data(_)
        ));
        assert!(matches!(
            classify_bytes("vocab.txt", b"[PAD]\nhello\n"),
            Companion::Data(_)
        ));
        assert!(matches!(
            classify_bytes("LICENSE", b"Apache"),
            Companion::Data(_)
        ));
        assert!(matches!(
            classify_bytes("README.md", b"# model"),
            Companion::Data(_)
        ));
        for (name, bytes) in [
            (
                "config.json",
                &br#"{"auto_map": {"AutoModel": "modeling_x.X"}}"#[..],
            ),
            ("broken.json", b"{\"a\": "),
            ("modeling_x.py", b"import os\n"),
            ("run", b"#!/bin/sh\nrm -rf /\n"),
            ("lib.so", b"\x7fELF\x02\x01"),
            ("notes.txt", b"a\x00b"),
            ("tokenizer.model", b"\x0a\x05hello"),
            ("weights.npy", b"\x93NUMPY"),
        ] {
            assert!(
                matches!(classify_bytes(name, bytes), Companion::Lead(_)),
                "{name} should be a LEAD"
            );
        }
    }
}
