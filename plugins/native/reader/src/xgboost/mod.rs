//! XGBoost's own model files, `Booster.save_model` to `.json` and `.ubj`: parsed as XGBoost
//! parses them ([`json`], [`ubj`]), strictly and within bounds, checked against what
//! `Learner::LoadModel` requires ([`model`]), every node array a tensor named by its path
//! (`learner.gradient_booster.model.trees.3.split_conditions`).
//!
//! XGBoost's C API (`XGBoosterLoadModel`, `src/c_api/c_api.cc` at v3.2.0) reads a file whose
//! first byte is `{`, as JSON when its name ends `.json` and as UBJSON when `.ubj`. socair
//! claims by content: a JSON object whose first key is `learner` (an object) or `version`
//! (an array of numbers, with `learner` further in its first 4 KiB), and a UBJSON object whose first key (`L` + a big-endian int64 length)
//! is `learner` or `version`, as XGBoost's writer puts them (its object keys are sorted).
//!
//! Stricter than XGBoost, and said: bytes after the document (XGBoost stops reading at its
//! end) are a LEAD naming the byte; a key written twice a LEAD naming the key and the value
//! XGBoost keeps (the last in JSON, the first in UBJSON); a count past the end of the file, a
//! nesting deeper than [`value::MAX_DEPTH`] or an index outside its tree a FAIL (XGBoost reads
//! outside its buffers).

pub mod json;
pub mod model;
pub mod ubj;
pub mod value;

use crate::model_read::ModelRead;
use socair_plugin_kit::report::PAST_BOUNDS;
use value::{Duplicate, ParseError, Value};

/// The JSON format's name.
pub const JSON_FORMAT: &str = "xgboost-json";
/// The UBJSON format's name.
pub const UBJ_FORMAT: &str = "xgboost-ubj";
/// The memory snapshot's name (a pickled `Booster`'s `handle`).
pub const SNAPSHOT_FORMAT: &str = "xgboost-snapshot";

/// The largest model file read (XGBoost reads the whole file into one string).
pub const MAX_FILE: u64 = 2 << 30;

/// Whether `head` begins an XGBoost JSON model: `{`, then the key `learner` with an object, or
/// `version` with an array of numbers and a `learner` key later in the head (whitespace
/// between tokens, as XGBoost's reader skips).
pub fn looks_like_json(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(b"{") else {
        return false;
    };
    let rest = skip_ws(rest);
    let (key, rest) = if let Some(r) = rest.strip_prefix(b"\"learner\"") {
        (b'{', r)
    } else if let Some(r) = rest.strip_prefix(b"\"version\"") {
        (b'[', r)
    } else {
        return false;
    };
    let Some(rest) = skip_ws(rest).strip_prefix(b":") else {
        return false;
    };
    let rest = skip_ws(rest);
    match rest.split_first() {
        Some((&c, after)) if c == key => {
            // `version` first (a document re-dumped in another key order) is claimed only when
            // the head also holds the `learner` key: ordinary JSON begins with `version` too.
            key == b'{'
                || (skip_ws(after).first().is_some_and(|d| d.is_ascii_digit())
                    && head.windows(9).any(|w| w == b"\"learner\""))
        }
        _ => false,
    }
}

fn skip_ws(mut s: &[u8]) -> &[u8] {
    while let Some((c, r)) = s.split_first() {
        if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
            break;
        }
        s = r;
    }
    s
}

/// Whether `head` begins an XGBoost UBJSON model: `{`, then the key `learner` or `version`
/// as XGBoost's `UBJWriter` writes keys, then `{` or `[`.
pub fn looks_like_ubj(head: &[u8]) -> bool {
    for (key, next) in [(&b"learner"[..], b'{'), (&b"version"[..], b'[')] {
        let mut want = vec![b'{', b'L'];
        want.extend_from_slice(&(key.len() as u64).to_be_bytes());
        want.extend_from_slice(key);
        want.push(next);
        if head.starts_with(&want) {
            return true;
        }
    }
    false
}

/// What parsing found, checked for what every XGBoost document shares: a parse error is the
/// refusal (`Err`); else what was read so far (duplicate keys, bytes after the document) and the
/// document.
fn parsed_document(
    format: &'static str,
    data: &[u8],
    parsed: Result<(Value, Vec<Duplicate>, usize), ParseError>,
    kept: &str,
) -> Result<(ModelRead, Value), Box<ModelRead>> {
    let mut out = ModelRead::new(format);
    let (value, duplicates, end) = match parsed {
        Ok(p) => p,
        Err(e) if e.past_bounds => {
            out.what = PAST_BOUNDS.to_owned();
            out.lead(format!("byte {}", e.offset), e.reason);
            return Err(Box::new(out));
        }
        Err(e) => return Err(Box::new(out.refuse(format!("byte {}", e.offset), e.reason))),
    };
    for d in duplicates {
        // The offset is the later occurrence's: the one JSON keeps, the one UBJSON drops.
        let which = if kept == "last" {
            format!("XGBoost keeps the last, at byte {}", d.offset)
        } else {
            format!("XGBoost keeps the first, not the one at byte {}", d.offset)
        };
        out.lead(
            d.path.clone(),
            format!("the key is written twice; {which}; another reader may keep the other"),
        );
    }
    let trailing = data.get(end..).unwrap_or_default();
    let significant = if format == JSON_FORMAT {
        trailing
            .iter()
            .any(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
    } else {
        !trailing.is_empty()
    };
    if significant {
        out.lead(
            format!("byte {end}"),
            format!(
                "{} bytes follow the document; XGBoost never reads them",
                trailing.len()
            ),
        );
    }
    Ok((out, value))
}

fn finish(
    format: &'static str,
    data: &[u8],
    parsed: Result<(Value, Vec<Duplicate>, usize), ParseError>,
    kept: &str,
) -> ModelRead {
    match parsed_document(format, data, parsed, kept) {
        Ok((mut out, value)) => {
            out.what = model::check(&value, data, &mut out);
            model::check_indices(&value, data, &mut out);
            out
        }
        Err(out) => *out,
    }
}

/// Reads an XGBoost JSON model.
pub fn read_json(data: &[u8]) -> ModelRead {
    let parsed = json::parse(data).map(|p| (p.value, p.duplicates, p.end));
    finish(JSON_FORMAT, data, parsed, "last")
}

/// Reads an XGBoost UBJSON model.
pub fn read_ubj(data: &[u8]) -> ModelRead {
    let parsed = ubj::parse(data).map(|p| (p.value, p.duplicates, p.end));
    finish(UBJ_FORMAT, data, parsed, "first")
}

/// Reads the memory snapshot a pickled `xgboost.core.Booster` holds in its `handle`
/// (`Booster.__getstate__` calls `XGBoosterSerializeToBuffer`, which writes
/// `LearnerIO::Save`'s snapshot, src/learner.cc at v3.2.0): one UBJSON object, `{"Config": …,
/// "Model": …}`, `Model` what `save_model` writes and `Config` the learner's configuration.
/// `Booster.__setstate__` hands it to `XGBoosterUnserializeFromBuffer`, whose
/// `LearnerIO::Load` at 3.2.0 checks that the first byte is `{` and the second a letter (the
/// `L` of UBJSON's first key), then loads `Model` as `LoadModel` loads a model file and
/// `Config` as `LoadConfig` (an object). A JSON snapshot (`{"`: what XGBoost 1.0 to 1.5
/// pickled, and what their `Load` read) is read as JSON with a LEAD saying that 3.2.0 refuses
/// it; anything else (the binary format of XGBoost before 1.0) is not read, a LEAD. Verified
/// against xgboost 3.2.0 itself: fixtures/boosters/make_fixtures.py. The model is checked as a
/// model file is, not fingerprinted: the read holds no tensors.
pub fn read_snapshot(data: &[u8]) -> ModelRead {
    let (parsed, kept) = match data {
        [b'{', b'"', ..] => (
            json::parse(data).map(|p| (p.value, p.duplicates, p.end)),
            "last",
        ),
        [b'{', c, ..] if c.is_ascii_alphabetic() => (
            ubj::parse(data).map(|p| (p.value, p.duplicates, p.end)),
            "first",
        ),
        _ => {
            let mut out = ModelRead::new(SNAPSHOT_FORMAT);
            out.what = "an XGBoost snapshot in a binary format socair does not read".into();
            out.lead(
                "byte 0",
                "not a JSON or UBJSON snapshot: the binary format of XGBoost before 1.0 (or not XGBoost's at all), which socair does not read",
            );
            return out;
        }
    };
    let format = if kept == "last" {
        JSON_FORMAT
    } else {
        UBJ_FORMAT
    };
    let (mut out, root) = match parsed_document(format, data, parsed, kept) {
        Ok(p) => p,
        Err(mut out) => {
            out.format = SNAPSHOT_FORMAT;
            return *out;
        }
    };
    out.format = SNAPSHOT_FORMAT;
    if kept == "last" {
        out.lead(
            "byte 1",
            "a JSON snapshot, as XGBoost 1.0 to 1.5 pickled a Booster: XGBoost 3.2.0 refuses it (Invalid serialization file), older versions load it as read here",
        );
    }
    let Value::Object(entries) = &root else {
        return out.refuse(
            "snapshot",
            format!("is {}; XGBoost reads an object", root.kind()),
        );
    };
    for (key, _) in entries {
        if key != "Model" && key != "Config" {
            out.lead(
                key.clone(),
                "XGBoost's LearnerIO::Load reads only Model and Config; this key is ignored",
            );
        }
    }
    if !matches!(root.get("Config"), Some(Value::Object(_))) {
        out.fail(
            "Config",
            "missing or not an object: XGBoost's LoadConfig requires one",
        );
    }
    let Some(model) = root.get("Model") else {
        return out.refuse("Model", "missing: XGBoost's LoadModel requires it");
    };
    let before = out.findings.shown.len();
    let what = model::check(model, data, &mut out);
    model::check_indices(model, data, &mut out);
    for f in out.findings.shown.iter_mut().skip(before) {
        f.place = format!("Model.{}", f.place);
    }
    out.tensors.clear();
    out.what = format!("an XGBoost memory snapshot of {what}");
    out
}
