//! Files that no reader models, judged by what they are: what the host says of a model
//! directory's companion files and what the archive plugin says of an archive's members, by
//! the same rules (one place, so a `config.json` in a directory and in a zip get one verdict).
//!
//! Nothing unknown is clean. JSON documents and plain text (configs, tokenizer vocabularies,
//! READMEs) are parsed here as data: JSON strictly, text as UTF-8 without NUL bytes; a loader
//! reads them as data and nothing in them runs. Code (Python modules that `trust_remote_code`
//! imports, scripts, native libraries, executables), a `config.json` whose `auto_map` names
//! such code, and every other file are LEADs: nothing in them was checked, and a person must
//! look.

use serde::de::IgnoredAny;
use std::borrow::Cow;

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

/// What can be said of a file or member no reader models.
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

/// The bytes being classified: a file the host opened, or an archive member already in
/// memory (borrowed, not copied). Errors are the reader's own words, shown in the LEAD.
pub trait Contents {
    /// Their length.
    fn len(&self) -> u64;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` from the first byte.
    fn head(&self, buf: &mut [u8]) -> Result<(), String>;
    /// All of them (read only after the size checks below).
    fn all(&self) -> Result<Cow<'_, [u8]>, String>;
}

impl Contents for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn head(&self, buf: &mut [u8]) -> Result<(), String> {
        let n = buf.len();
        let src = self
            .get(..n)
            .ok_or_else(|| "read past the end".to_owned())?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn all(&self) -> Result<Cow<'_, [u8]>, String> {
        Ok(Cow::Borrowed(self))
    }
}

fn extension(rel: &str) -> Option<String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty())
        .map(|(_, ext)| ext.to_ascii_lowercase())
}

/// Classifies `input`, the file or member at `rel` that no reader models. `unread` says who
/// did not read it, for the LEAD of a file that is none of the kinds here ("no loaded plugin
/// reads this file", "no reader of this archive's plugin models this member").
pub fn classify(rel: &str, input: &(impl Contents + ?Sized), unread: &str) -> Companion {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let ext = extension(rel);
    let mut head = [0u8; 4];
    let n = (input.len() as usize).min(4);
    let head = match input.head(&mut head[..n]) {
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
        let bytes = match input.all() {
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
        return match input.all() {
            Ok(b) if !b.contains(&0) && std::str::from_utf8(&b).is_ok() => {
                Companion::Data("UTF-8 text, read as data")
            }
            Ok(_) => Companion::Lead(
                "named as text but not UTF-8 text (or it holds NUL bytes): nothing in it was checked".into(),
            ),
            Err(e) => Companion::Lead(format!("it cannot be read ({e}): nothing in it was checked")),
        };
    }
    Companion::Lead(format!(
        "{unread}, and it is neither JSON nor text: nothing in it was checked"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNREAD: &str = "no reader here models this member";

    #[test]
    fn data_code_and_unknown_files() {
        for (name, bytes) in [
            ("config.json", &br#"{"a": [1, {"b": null}]}"#[..]),
            ("vocab.txt", b"[PAD]\nhello\n"),
            ("LICENSE", b"Apache"),
            ("README.md", b"# model"),
            ("dir/notes.yaml", b"a: 1\n"),
        ] {
            assert!(
                matches!(classify(name, bytes, UNREAD), Companion::Data(_)),
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
                matches!(classify(name, bytes, UNREAD), Companion::Lead(_)),
                "{name} should be a LEAD"
            );
        }
        assert_eq!(
            classify("tokenizer.model", &b"\x0a\x05hello"[..], UNREAD),
            Companion::Lead(format!(
                "{UNREAD}, and it is neither JSON nor text: nothing in it was checked"
            ))
        );
    }

    /// A source that cannot be read: the LEAD names the reader's error.
    struct Unreadable;

    impl Contents for Unreadable {
        fn len(&self) -> u64 {
            10
        }
        fn head(&self, _buf: &mut [u8]) -> Result<(), String> {
            Err("disk on fire".into())
        }
        fn all(&self) -> Result<Cow<'_, [u8]>, String> {
            Err("disk on fire".into())
        }
    }

    #[test]
    fn an_unreadable_file_is_a_lead_naming_why() {
        assert_eq!(
            classify("config.json", &Unreadable, UNREAD),
            Companion::Lead("it cannot be read (disk on fire): nothing in it was checked".into())
        );
    }
}
