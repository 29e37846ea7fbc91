//! Files that no reader models, judged by what they are: what the host says of a model
//! directory's companion files and what the archive plugin says of an archive's members, by
//! the same rules (one place, so a `config.json` in a directory and in a zip get one verdict).
//!
//! Nothing unknown is clean. JSON documents and plain text (configs, tokenizer vocabularies,
//! READMEs) are parsed here as data: JSON strictly, text as UTF-8 without NUL bytes; a loader
//! reads them as data and nothing in them runs. Code (Python modules that `trust_remote_code`
//! imports, scripts, native libraries, executables), a `config.json` whose `auto_map` names
//! such code, and every other file are LEADs: nothing in them was checked, and a person must
//! look. Except an `__init__.py` holding nothing but whitespace: importing it runs nothing
//! (transformers' remote-code packages and any Python package carry empty ones).
//!
//! Chat templates are code for the program that renders them, and are judged by the one rule
//! in [`crate::jinja`] (the gguf plugin applies it to `tokenizer.chat_template` metadata): a
//! JSON document's top-level `chat_template` (a string, or a list of `{name, template}`, as
//! transformers reads it from `tokenizer_config.json`, `processor_config.json` and the legacy
//! `chat_template.json`; every occurrence of a duplicated key, where Python's `json` keeps the
//! last) and every `.jinja` file (`chat_template.jinja`, `additional_chat_templates/*.jinja`).
//! A template that reaches Python internals is a FAIL ([`Companion::Fail`]).
//!
//! A tokenizer's model file is data when the whole file is the `ModelProto` sentencepiece
//! writes ([`crate::sentencepiece`]) or a tiktoken vocabulary ([`crate::tiktoken`]).

use crate::{checkpoint_state, jinja, sentencepiece, tiktoken};
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

/// Extensions (and exact names) of plain-text companions. Not YAML: a YAML file is data only
/// when its tags construct nothing (`!!python/object/apply` runs code under `yaml.unsafe_load`),
/// which the config plugin's YAML reader judges.
const TEXT_EXTENSIONS: &[&str] = &[
    "txt", "md", "rst", "csv", "tsv", "cfg", "ini",
    // GPT-2's merges (`vocab.bpe`) and sentencepiece's vocabulary listings (`*.vocab`): text.
    "bpe", "vocab",
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
    /// Evidence of an attack: what it is, and each place (`chat_template line 1 column 16`)
    /// with its reason.
    Fail {
        /// One line.
        summary: String,
        /// (place, reason), FAILs first.
        findings: Vec<(String, String)>,
    },
}

/// The top-level keys that matter; every other value is skipped as it streams past. Every
/// occurrence of a repeated key is kept (serde's derive would refuse the document, and
/// Python's `json` reads it, keeping the last).
#[derive(Default)]
struct TopLevel {
    auto_map: bool,
    chat_templates: Vec<serde_json::Value>,
}

impl<'de> serde::Deserialize<'de> for TopLevel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = TopLevel;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON document")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<TopLevel, A::Error> {
                let mut top = TopLevel::default();
                while let Some(key) = m.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "auto_map" => {
                            m.next_value::<IgnoredAny>()?;
                            top.auto_map = true;
                        }
                        "chat_template" => top.chat_templates.push(m.next_value()?),
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(top)
            }
            // Any other document (an array, a number): no top-level keys.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> Result<TopLevel, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(TopLevel::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<TopLevel, E> {
                Ok(TopLevel::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<TopLevel, E> {
                Ok(TopLevel::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<TopLevel, E> {
                Ok(TopLevel::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<TopLevel, E> {
                Ok(TopLevel::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<TopLevel, E> {
                Ok(TopLevel::default())
            }
            fn visit_unit<E>(self) -> Result<TopLevel, E> {
                Ok(TopLevel::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// The templates a `chat_template` value holds, each with its place; a value of another
/// shape is a LEAD (transformers would fail to load it, or read something socair did not).
fn templates_of(value: &serde_json::Value) -> Result<Vec<(String, &str)>, String> {
    use serde_json::Value;
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(t) => Ok(vec![("chat_template".to_owned(), t.as_str())]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match (item.get("name"), item.get("template")) {
                (Some(Value::String(name)), Some(Value::String(t))) => {
                    Ok((format!("chat_template[{i}] ({name:?})"), t.as_str()))
                }
                _ => Err(format!("its `chat_template` entry {i} is not a {{name, template}} pair of strings, which transformers reads as its templates: it was not checked")),
            })
            .collect(),
        _ => Err("its `chat_template` is neither a string nor a list of {name, template}: it was not checked".into()),
    }
}

/// Judges templates (place, text) by [`crate::jinja`]: `None` when all are ordinary.
fn judge_templates(templates: &[(String, &str)]) -> Option<Companion> {
    let mut fails = Vec::new();
    let mut leads = Vec::new();
    for (place, text) in templates {
        let j = jinja::judge(text);
        for f in &j.flags {
            let at = format!("{place} {}", f.place);
            match f.severity {
                jinja::Severity::Fail => fails.push((at, f.reason.clone())),
                jinja::Severity::Lead => leads.push((at, f.reason.clone())),
            }
        }
        if j.more > 0 {
            leads.push((
                place.clone(),
                format!("and {} more findings in this template", j.more),
            ));
        }
    }
    if let Some((place, reason)) = fails.first() {
        let summary = format!("a chat template that reaches Python internals ({place}: {reason})");
        fails.extend(leads);
        return Some(Companion::Fail {
            summary,
            findings: fails,
        });
    }
    let (place, reason) = leads.first()?;
    let more = match leads.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Some(Companion::Lead(format!(
        "its chat template is not proven ordinary: {place}: {reason}{more}"
    )))
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
    if let Some(code) = code(name, ext.as_deref(), head, input) {
        return code;
    }
    if ext.as_deref() == Some("json") {
        return json_document(input);
    }
    if ext.as_deref() == Some("jinja") {
        return jinja_template(input);
    }
    if let Some(judged) = tokenizer_model(name, ext.as_deref(), input) {
        return judged;
    }
    if let Some(judged) = checkpoint_state_file(name, input) {
        return judged;
    }
    let text_like = ext.as_deref().is_some_and(|e| TEXT_EXTENSIONS.contains(&e))
        || TEXT_NAMES
            .iter()
            .any(|t| name == *t || name.strip_prefix(t).is_some_and(|r| r.starts_with('.')));
    if text_like {
        return text_file(input);
    }
    Companion::Lead(format!(
        "{unread}, and it is neither JSON nor text: nothing in it was checked"
    ))
}

/// A LEAD for code, by its first bytes `head` (a native executable or library, a `#!`
/// script) or its extension, or data for an empty `__init__.py`; none for anything else.
fn code(
    name: &str,
    ext: Option<&str>,
    head: &[u8],
    input: &(impl Contents + ?Sized),
) -> Option<Companion> {
    let native = head.starts_with(b"\x7fELF")
        || head.starts_with(b"MZ")
        || matches!(
            head,
            [0xfe, 0xed, 0xfa, 0xce | 0xcf]
                | [0xce | 0xcf, 0xfa, 0xed, 0xfe]
                | [0xca, 0xfe, 0xba, 0xbe]
        );
    if native {
        return Some(Companion::Lead(
            "a native executable or library: code, which no plugin reads".into(),
        ));
    }
    if head.starts_with(b"#!") {
        return Some(Companion::Lead(
            "a script (it starts with `#!`): code, which no plugin reads".into(),
        ));
    }
    if name == "__init__.py" && is_blank(input) {
        return Some(Companion::Data(
            "an empty `__init__.py` (nothing but whitespace): importing it runs nothing",
        ));
    }
    let e = ext.filter(|e| CODE_EXTENSIONS.contains(e))?;
    let why = if e.starts_with("py") || e == "ipynb" {
        "Python code, which `transformers` imports and runs when a model is loaded with trust_remote_code=True"
    } else {
        "code, which no plugin reads"
    };
    Some(Companion::Lead(format!("a .{e} file: {why}")))
}

/// A `.json` file: data once it parses, unless its chat templates reach outside the template
/// or its `auto_map` names custom model code.
fn json_document(input: &(impl Contents + ?Sized)) -> Companion {
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
    let top = match serde_json::from_slice::<TopLevel>(&bytes) {
        Ok(top) => top,
        Err(e) => {
            return Companion::Lead(format!(
                "named .json but not JSON ({e}): nothing in it was checked"
            ))
        }
    };
    let mut templates = Vec::new();
    for value in &top.chat_templates {
        match templates_of(value) {
            Ok(found) => templates.extend(found),
            Err(why) => return Companion::Lead(why),
        }
    }
    let judged = judge_templates(&templates);
    if let Some(fail @ Companion::Fail { .. }) = judged {
        return fail;
    }
    if top.auto_map {
        return Companion::Lead(
            "its `auto_map` names custom model code, which `transformers` downloads or imports and runs when the model is loaded with trust_remote_code=True".into(),
        );
    }
    if let Some(lead) = judged {
        return lead;
    }
    if templates.is_empty() {
        return Companion::Data("a JSON document, parsed as data");
    }
    Companion::Data(
        "a JSON document, parsed as data; its chat template parsed as Jinja, and it reaches nothing outside the template",
    )
}

/// A `.jinja` chat template, judged as Jinja.
fn jinja_template(input: &(impl Contents + ?Sized)) -> Companion {
    if input.len() > jinja::MAX_TEMPLATE as u64 {
        return Companion::Lead(format!(
            "a template of {} bytes, larger than the {} socair parses: nothing in it was checked",
            input.len(),
            jinja::MAX_TEMPLATE
        ));
    }
    match input.all() {
        Ok(b) => match std::str::from_utf8(&b) {
            // transformers opens it with encoding="utf-8".
            Ok(text) => judge_templates(&[("template".to_owned(), text)]).unwrap_or(
                Companion::Data("a chat template, parsed as Jinja: it reaches nothing outside the template"),
            ),
            Err(_) => Companion::Lead(
                "a .jinja file that is not UTF-8, which transformers refuses to read: nothing in it was checked".into(),
            ),
        },
        Err(e) => Companion::Lead(format!("it cannot be read ({e}): nothing in it was checked")),
    }
}

/// TensorFlow's `checkpoint` state file, when its first bytes say it is one and it is UTF-8;
/// none otherwise.
fn checkpoint_state_file(name: &str, input: &(impl Contents + ?Sized)) -> Option<Companion> {
    const STATE: &[u8] = b"model_checkpoint_path: ";
    let mut first = [0u8; STATE.len()];
    if name != "checkpoint"
        || !(STATE.len() as u64..=MAX_TEXT).contains(&input.len())
        || input.head(&mut first).is_err()
        || first != STATE
    {
        return None;
    }
    // TensorFlow's checkpoint state file, a text proto (crate::checkpoint_state): read
    // whole only once its first bytes say so, and decoded in place.
    let bytes = input.all().ok();
    let text = bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok())?;
    Some(match checkpoint_state::read(text) {
        Ok(_) => Companion::Data(
            "TensorFlow's checkpoint state (a CheckpointState text proto), every checkpoint it names inside the directory: read as data",
        ),
        Err(e) => Companion::Lead(format!(
            "TensorFlow's checkpoint state file, but line {}: {}: nothing in it was checked",
            e.line, e.what
        )),
    })
}

/// A file named as text: data when it is UTF-8 without NUL bytes.
fn text_file(input: &(impl Contents + ?Sized)) -> Companion {
    if input.len() > MAX_TEXT {
        return Companion::Lead(format!(
            "a text file of {} bytes, larger than the {MAX_TEXT} socair reads: nothing in it was checked",
            input.len()
        ));
    }
    match input.all() {
        Ok(b) if !b.contains(&0) && std::str::from_utf8(&b).is_ok() => {
            Companion::Data("UTF-8 text, read as data")
        }
        Ok(_) => Companion::Lead(
            "named as text but not UTF-8 text (or it holds NUL bytes): nothing in it was checked"
                .into(),
        ),
        Err(e) => Companion::Lead(format!(
            "it cannot be read ({e}): nothing in it was checked"
        )),
    }
}

/// The largest `config.json` searched for serialized Keras objects.
const MAX_KERAS_SEARCH: usize = 16 << 20;

/// For a model directory's `config.json` that [`classify`] found to be data: a LEAD when
/// `bytes` holds a serialized Keras object (a JSON object with both `class_name` and
/// `config`, at any depth), which `keras.saving.load_model` given the directory builds (keras
/// 3.15.1 `saving_lib._load_model_from_dir` → `deserialize_keras_object`, which walks a plain
/// dict's values). The Keras plugin claims and judges the configs Keras writes
/// (`socair_keras::config`); one that reaches this rule starts otherwise, and was judged by
/// nothing. Not a rule for archive members: Keras loads a zip's root `config.json` only, and
/// the archive plugin judges that one with the Keras grammar itself.
pub fn keras_objects(bytes: &[u8]) -> Option<Companion> {
    if bytes.len() > MAX_KERAS_SEARCH {
        return Some(Companion::Lead(format!(
            "a config.json of {} bytes, larger than the {MAX_KERAS_SEARCH} socair searches for the Keras objects keras.saving.load_model would build from it",
            bytes.len()
        )));
    }
    // serde_json bounds the nesting (128 levels); the walk below is iterative.
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let mut stack = vec![&value];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => {
                if m.contains_key("class_name") && m.contains_key("config") {
                    return Some(Companion::Lead(
                        "it holds a serialized Keras object (`class_name` and `config`), which keras.saving.load_model builds when given this directory, and no loaded plugin judged it (the Keras plugin reads a config.json that starts as Keras writes one)".into(),
                    ));
                }
                stack.extend(m.values());
            }
            serde_json::Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    None
}

/// The largest `__init__.py` read to see whether it is blank.
const MAX_BLANK: u64 = 4096;

/// Whether `input` holds nothing but the whitespace Python's tokenizer skips between tokens
/// (space, tab, form feed, CR, LF: CPython 3.13 `Parser/lexer.c`), so that importing it as a
/// module runs no statement. An `__init__.py` is what makes a model directory's code a package
/// (`transformers` copies them beside `trust_remote_code` modules); an empty one is the usual
/// case. A comment is not blank: a first or second line `# coding: ...` chooses the codec the
/// source is decoded with, and nothing else is judged here.
fn is_blank(input: &(impl Contents + ?Sized)) -> bool {
    if input.len() > MAX_BLANK {
        return false;
    }
    input.all().is_ok_and(|b| {
        b.iter()
            .all(|c| matches!(c, b' ' | b'\t' | b'\x0c' | b'\r' | b'\n'))
    })
}

/// A tokenizer's model file: a SentencePiece `ModelProto` (`tokenizer.model`, `spiece.model`,
/// Marian's `source.spm`, Mistral's `tokenizer.model.v3`) or a tiktoken vocabulary (Llama 3's
/// `original/tokenizer.model`, `*.tiktoken`), each data when the whole file is what its
/// library writes. `None` for a `.model` of another kind under another name (XGBoost and
/// others name files `.model` too), which the generic rule judges.
fn tokenizer_model(
    name: &str,
    ext: Option<&str>,
    input: &(impl Contents + ?Sized),
) -> Option<Companion> {
    let conventional = sentencepiece::NAMES.contains(&name)
        || name.starts_with("tokenizer.model.")
        || matches!(ext, Some("spm" | "tiktoken"));
    if !(conventional || ext == Some("model")) || input.len() > sentencepiece::MAX_SIZE {
        return None;
    }
    let bytes = match input.all() {
        Ok(b) => b,
        Err(e) => {
            return Some(Companion::Lead(format!(
                "it cannot be read ({e}): nothing in it was checked"
            )))
        }
    };
    let spm = match sentencepiece::read(&bytes) {
        Ok(_) => return Some(Companion::Data(
            "a SentencePiece tokenizer model (sentencepiece's ModelProto, read to its last byte), parsed as data",
        )),
        Err(e) => e,
    };
    let tiktoken = match std::str::from_utf8(&bytes).map(tiktoken::read) {
        Ok(Ok(_)) => {
            return Some(Companion::Data(
                "a tiktoken BPE vocabulary (a base64 token and its rank a line), read as data",
            ))
        }
        Ok(Err(e)) => e.to_string(),
        Err(_) => "not UTF-8".to_owned(),
    };
    conventional.then(|| Companion::Lead(format!(
        "named as a tokenizer model, but neither the ModelProto sentencepiece writes ({spm}) nor a tiktoken vocabulary ({tiktoken}): nothing in it was checked"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNREAD: &str = "no reader here models this member";

    #[test]
    fn a_config_json_holding_keras_objects_is_a_lead() {
        let hidden =
            br#"{"architectures": ["X"], "model": [{"class_name": "Lambda", "config": {}}]}"#;
        assert!(matches!(
            keras_objects(hidden),
            Some(Companion::Lead(why)) if why.contains("Keras")
        ));
        // Without both keys in one object, nothing Keras builds.
        for bytes in [
            &br#"{"_class_name": "UNet", "config": {}}"#[..],
            br#"{"class_name": "BertModel", "x": {"config": 1}}"#,
            b"not json",
        ] {
            assert!(
                keras_objects(bytes).is_none(),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn data_code_and_unknown_files() {
        for (name, bytes) in [
            ("config.json", &br#"{"a": [1, {"b": null}]}"#[..]),
            ("vocab.txt", b"[PAD]\nhello\n"),
            ("LICENSE", b"Apache"),
            ("README.md", b"# model"),
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
            // YAML is the YAML reader's to judge: a tag may construct code.
            (
                "dir/notes.yaml",
                b"a: !!python/object/apply:os.system [ls]\n",
            ),
        ] {
            assert!(
                matches!(classify(name, bytes, UNREAD), Companion::Lead(_)),
                "{name} should be a LEAD"
            );
        }
        assert_eq!(
            classify("tokenizer.model", &b"\x0a\x05hello"[..], UNREAD),
            Companion::Lead(
                "named as a tokenizer model, but neither the ModelProto sentencepiece writes (byte 2: field 13 (wire type 0) in a piece, which holds only piece, score and type) nor a tiktoken vocabulary (line 2: not two fields, a token and its rank, split by one space): nothing in it was checked".into()
            )
        );
        // An empty `__init__.py` runs nothing; one with anything else in it is code.
        for blank in [&b""[..], b"\n", b"  \t\r\n\x0c\n"] {
            assert_eq!(
                classify("pkg/__init__.py", blank, UNREAD),
                Companion::Data(
                    "an empty `__init__.py` (nothing but whitespace): importing it runs nothing"
                ),
                "{blank:?}"
            );
        }
        for code in [
            &b"# coding: utf-8\n"[..],
            b"import os\n",
            b"\n\nx = 1",
            b"\xef\xbb\xbf",
            b"\x00",
            b"\x0b",
        ] {
            assert!(
                matches!(classify("__init__.py", code, UNREAD), Companion::Lead(_)),
                "{code:?}"
            );
        }
        // Only `__init__.py`: an empty module under another name stays a LEAD.
        assert!(matches!(
            classify("modeling_x.py", &b""[..], UNREAD),
            Companion::Lead(_)
        ));
        // A `.model` of another library's is no SentencePiece file: the generic LEAD.
        assert_eq!(
            classify("xgb.model", &b"binf\x00\x00"[..], UNREAD),
            Companion::Lead(format!(
                "{UNREAD}, and it is neither JSON nor text: nothing in it was checked"
            ))
        );
    }

    #[test]
    fn chat_templates_are_judged_wherever_transformers_reads_them() {
        let hostile = r#"{{ cycler.__init__.__globals__.os.getcwd() }}"#;
        let json_hostile = serde_json::json!({"chat_template": hostile}).to_string();
        let listed = serde_json::json!({"chat_template": [
            {"name": "default", "template": "{{ messages[0].content }}"},
            {"name": "tool_use", "template": hostile},
        ]})
        .to_string();
        // Python's json keeps the last of a repeated key: an ordinary first one hides nothing.
        let repeated = format!(
            r#"{{"chat_template": "{{{{ x }}}}", "chat_template": {}}}"#,
            serde_json::to_string(hostile).unwrap()
        );
        for (name, bytes) in [
            ("tokenizer_config.json", json_hostile.as_bytes()),
            ("sub/processor_config.json", listed.as_bytes()),
            ("chat_template.json", repeated.as_bytes()),
            ("chat_template.jinja", hostile.as_bytes()),
            (
                "additional_chat_templates/tool_use.jinja",
                hostile.as_bytes(),
            ),
        ] {
            let Companion::Fail { summary, findings } = classify(name, bytes, UNREAD) else {
                panic!("{name} should FAIL");
            };
            assert!(
                summary.contains("reaches Python internals"),
                "{name}: {summary}"
            );
            assert!(
                findings[0].0.contains("line 1 column 11"),
                "{name}: {findings:?}"
            );
            assert!(findings[0].1.contains("`__init__`"), "{name}: {findings:?}");
        }
        let Companion::Fail { findings, .. } =
            classify("tokenizer_config.json", listed.as_bytes(), UNREAD)
        else {
            panic!()
        };
        assert_eq!(
            findings[0].0,
            r#"chat_template[1] ("tool_use") line 1 column 11"#
        );
        for (name, bytes) in [
            (
                "tokenizer_config.json",
                &br#"{"chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"}"#[..],
            ),
            (
                "chat_template.jinja",
                b"{{ bos_token }}{% for m in messages %}{{ m.role }}{% endfor %}",
            ),
            ("tokenizer_config.json", br#"{"chat_template": null}"#),
        ] {
            assert!(
                matches!(classify(name, bytes, UNREAD), Companion::Data(_)),
                "{name}"
            );
        }
        for (name, bytes) in [
            (
                "tokenizer_config.json",
                &br#"{"chat_template": "{{ x[k ~ 'y'] }}"}"#[..],
            ),
            ("tokenizer_config.json", br#"{"chat_template": 7}"#),
            (
                "tokenizer_config.json",
                br#"{"chat_template": [{"name": "a"}]}"#,
            ),
            ("chat_template.jinja", b"{% include 'x' %}"),
            ("chat_template.jinja", b"\xff\xfe"),
        ] {
            assert!(
                matches!(classify(name, bytes, UNREAD), Companion::Lead(_)),
                "{name}: {:?}",
                classify(name, bytes, UNREAD)
            );
        }
        // auto_map stays a LEAD; a hostile template beside it is a FAIL.
        let both = serde_json::json!({"auto_map": {}, "chat_template": hostile}).to_string();
        assert!(matches!(
            classify("tokenizer_config.json", both.as_bytes(), UNREAD),
            Companion::Fail { .. }
        ));
    }

    #[test]
    fn the_fixtures_tokenizer_configs_are_data() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../fixtures/jinja/tokenizer_config"
        );
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(
                classify("tokenizer_config.json", &bytes[..], UNREAD),
                Companion::Data("a JSON document, parsed as data; its chat template parsed as Jinja, and it reaches nothing outside the template"),
                "{}",
                path.display()
            );
        }
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
