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

use crate::outcome::Outcome;
use socair_plugin_kit::report::PAST_BOUNDS;
use value::{Duplicate, ParseError, Value};

/// The JSON format's name.
pub const JSON_FORMAT: &str = "xgboost-json";
/// The UBJSON format's name.
pub const UBJ_FORMAT: &str = "xgboost-ubj";

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

fn finish(
    format: &'static str,
    data: &[u8],
    parsed: Result<(Value, Vec<Duplicate>, usize), ParseError>,
    kept: &str,
) -> Outcome {
    let mut out = Outcome::new(format);
    let (value, duplicates, end) = match parsed {
        Ok(p) => p,
        Err(e) if e.past_bounds => {
            out.what = PAST_BOUNDS.to_owned();
            out.lead(format!("byte {}", e.offset), e.reason);
            return out;
        }
        Err(e) => return out.refuse(format!("byte {}", e.offset), e.reason),
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
    out.what = model::check(&value, data, &mut out);
    model::check_indices(&value, data, &mut out);
    out
}

/// Reads an XGBoost JSON model.
pub fn read_json(data: &[u8]) -> Outcome {
    let parsed = json::parse(data).map(|p| (p.value, p.duplicates, p.end));
    finish(JSON_FORMAT, data, parsed, "last")
}

/// Reads an XGBoost UBJSON model.
pub fn read_ubj(data: &[u8]) -> Outcome {
    let parsed = ubj::parse(data).map(|p| (p.value, p.duplicates, p.end));
    finish(UBJ_FORMAT, data, parsed, "first")
}
