//! Members no reader here models (neither pickles nor archives): what can be said of them.
//!
//! This mirrors the host's rules for a model directory's companion files
//! (`host/src/report/companion.rs`) exactly, over a member's bytes instead of a file: JSON
//! parsed strictly, plain text as UTF-8 without NUL bytes, both read as data; code, a JSON
//! whose `auto_map` names code, and everything else are LEADs: nothing in them was checked.

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

/// What can be said of a member.
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

fn extension(rel: &str) -> Option<String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty())
        .map(|(_, ext)| ext.to_ascii_lowercase())
}

/// Classifies the member named `rel` (its path in the archive) whose bytes are `bytes`.
pub fn classify(rel: &str, bytes: &[u8]) -> Companion {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let ext = extension(rel);
    let head = &bytes[..bytes.len().min(4)];
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
        if bytes.len() as u64 > MAX_JSON {
            return Companion::Lead(format!(
                "a JSON file of {} bytes, larger than the {MAX_JSON} socair parses: nothing in it was checked",
                bytes.len()
            ));
        }
        let auto_map = match serde_json::from_slice::<TopLevel>(bytes) {
            Ok(top) => top.auto_map.is_some(),
            Err(_) => match serde_json::from_slice::<IgnoredAny>(bytes) {
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
        if bytes.len() as u64 > MAX_TEXT {
            return Companion::Lead(format!(
                "a text file of {} bytes, larger than the {MAX_TEXT} socair reads: nothing in it was checked",
                bytes.len()
            ));
        }
        return if !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok() {
            Companion::Data("UTF-8 text, read as data")
        } else {
            Companion::Lead(
                "named as text but not UTF-8 text (or it holds NUL bytes): nothing in it was checked".into(),
            )
        };
    }
    Companion::Lead("no reader of this archive's plugin models this member, and it is neither JSON nor text: nothing in it was checked".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's own cases (`host/src/report/companion.rs`), with the same verdicts.
    #[test]
    fn data_code_and_unknown_members() {
        for (name, bytes) in [
            ("config.json", &br#"{"a": [1, {"b": null}]}"#[..]),
            ("vocab.txt", b"[PAD]\nhello\n"),
            ("LICENSE", b"Apache"),
            ("README.md", b"# model"),
            ("dir/notes.yaml", b"a: 1\n"),
        ] {
            assert!(
                matches!(classify(name, bytes), Companion::Data(_)),
                "{name} should be data"
            );
        }
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
                matches!(classify(name, bytes), Companion::Lead(_)),
                "{name} should be a LEAD"
            );
        }
    }
}
