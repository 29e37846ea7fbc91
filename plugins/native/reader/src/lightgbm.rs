//! LightGBM's text model (`Booster.save_model`, `model_to_string`), read as LightGBM's own
//! loader reads it (`src/boosting/gbdt_model_text.cpp` `GBDT::LoadModelFromString` and
//! `src/io/tree.cpp` `Tree::Tree(const char*, size_t*)` at v4.6.0; the Python package's
//! `_load_pandas_categorical` in `python-package/lightgbm/basic.py`), strictly.
//!
//! Lines end at `\r`, `\n` or `\r\n` (`Common::GetLine`, `SkipNewLine`). The header, up to the
//! first `Tree=` line, is `key=value` lines split on `=` (a line with more than one `=` is
//! refused unless its key is `feature_names` or `monotone_constraints`); `num_class`,
//! `label_index`, `max_feature_idx`, `feature_names` and `feature_infos` (one per feature) are
//! required. With `tree_sizes` (every LightGBM since 2.1 writes it), tree *i* starts
//! `tree_sizes[0..i]` bytes after the first `Tree=` line, which LightGBM never checks (a
//! hostile size reads outside the file): socair requires each to land on a `Tree=` line. A tree
//! is at most 22 `key=value` lines up to a blank line; `num_leaves`, `num_cat`, `leaf_value`
//! and, with more than one leaf, `left_child`, `right_child`, `split_feature` and `threshold`
//! are required. Arrays LightGBM reads with `StringToArray` (`leaf_value`, `threshold`,
//! `leaf_weight`, `leaf_const`, `leaf_coeff`) must hold exactly their count (`CHECK_EQ`: a
//! FAIL); those it reads with `StringToArrayFast` are read to their count, silently padded with
//! zeros or cut (a LEAD). After the trees: `end of trees`, `feature_importances:`,
//! `parameters:` ... `end of parameters`, `parser:` ... `end of parser` and the
//! `pandas_categorical:` JSON line; any other text, an unknown key or a key written twice (the
//! last kept, as `key_vals[key] = ...` keeps it) is a LEAD; a NUL byte, an index outside its
//! tree or a feature past `max_feature_idx` a FAIL. Every tree array is a tensor
//! (`tree.3.leaf_value`), decoded into the type LightGBM holds it in.

use crate::model_read::{Bytes, ModelRead, Tensor};
use socair_plugin_api::ByteOrder;
use std::collections::HashMap;

/// The format's name.
pub const FORMAT: &str = "lightgbm-text";

/// The largest model read.
pub const MAX_FILE: u64 = 1 << 30;

/// Header keys `GBDT::SaveModelToString` writes (and `average_output`, a key alone).
const HEADER_KEYS: &[&str] = &[
    "tree",
    "version",
    "num_class",
    "num_tree_per_iteration",
    "label_index",
    "max_feature_idx",
    "objective",
    "average_output",
    "feature_names",
    "monotone_constraints",
    "feature_infos",
    "tree_sizes",
];

/// How LightGBM reads each tree key: its element type, whether `StringToArray` checks the
/// count, and which count (`L` leaves, `I` internal nodes, `C` categories + 1, `T` the last
/// category boundary, `F` the sum of `num_features`, `-` a scalar).
const TREE_KEYS: &[(&str, &str, bool, char)] = &[
    ("num_leaves", "I32", false, '-'),
    ("num_cat", "I32", false, '-'),
    ("is_linear", "I32", false, '-'),
    ("shrinkage", "F64", false, '-'),
    ("leaf_value", "F64", true, 'L'),
    ("leaf_weight", "F64", true, 'L'),
    ("leaf_count", "I32", false, 'L'),
    ("left_child", "I32", false, 'I'),
    ("right_child", "I32", false, 'I'),
    ("split_feature", "I32", false, 'I'),
    ("threshold", "F64", true, 'I'),
    ("split_gain", "F32", false, 'I'),
    ("internal_count", "I32", false, 'I'),
    ("internal_value", "F64", false, 'I'),
    ("internal_weight", "F64", false, 'I'),
    ("decision_type", "I8", false, 'I'),
    ("leaf_const", "F64", true, 'L'),
    ("num_features", "I32", false, 'L'),
    ("leaf_features", "I32", false, 'F'),
    ("leaf_coeff", "F64", true, 'F'),
    ("cat_boundaries", "I32", false, 'C'),
    ("cat_threshold", "U32", false, 'T'),
];

/// Whether `head` begins a LightGBM model: `tree` alone on the first line, then `version=`.
pub fn looks_like_model(head: &[u8]) -> bool {
    head.starts_with(b"tree\nversion=") || head.starts_with(b"tree\r\nversion=")
}

/// One line: its first byte and its text.
struct Line<'a> {
    at: usize,
    text: &'a [u8],
}

fn lines(data: &[u8]) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < data.len() {
        let start = p;
        while p < data.len() && !matches!(data.get(p), Some(b'\r' | b'\n')) {
            p += 1;
        }
        out.push(Line {
            at: start,
            text: data.get(start..p).unwrap_or_default(),
        });
        if data.get(p) == Some(&b'\r') {
            p += 1;
        }
        if data.get(p) == Some(&b'\n') {
            p += 1;
        }
    }
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn values(s: &str) -> Vec<&str> {
    s.split(' ').filter(|v| !v.is_empty()).collect()
}

/// A refusal of the whole model: where, and why.
struct Refusal {
    place: String,
    reason: String,
}

fn refusal(place: impl Into<String>, reason: impl Into<String>) -> Refusal {
    Refusal {
        place: place.into(),
        reason: reason.into(),
    }
}

/// Reads a LightGBM text model.
pub fn read(data: &[u8]) -> ModelRead {
    let mut out = ModelRead::new(FORMAT);
    if let Some(at) = data.iter().position(|&b| b == 0) {
        return out.refuse(
            format!("byte {at}"),
            "a NUL byte: LightGBM reads the model as a C string and its line reader never passes one",
        );
    }
    out.input_len = data.len() as u64;
    let breaks = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count();
    let max_lines = 1_000_000 + data.len() / 32;
    if breaks > max_lines {
        out.what = socair_plugin_kit::report::PAST_BOUNDS.into();
        out.lead(
            "file",
            format!("{breaks} line breaks; socair reads LightGBM models of at most {max_lines}"),
        );
        return out;
    }
    let all = lines(data);
    match read_model(&all, data, &mut out) {
        Ok(()) => out,
        Err(r) => out.refuse(r.place, r.reason),
    }
}

/// Reads the lines of a model: its header, its trees and what follows them.
fn read_model(all: &[Line<'_>], data: &[u8], out: &mut ModelRead) -> Result<(), Refusal> {
    let (header, first_tree) = read_header(all, out)?;
    let max_feature = required_header(&header)?;
    let Some(first_tree) = first_tree else {
        out.what = "a LightGBM model of no trees".into();
        check_tail(all, 0, data, out);
        return Ok(());
    };
    let (starts, tail_from) = tree_starts(all, &header, first_tree, data.len())?;
    let mut covered_to = first_tree;
    for (t, &start) in starts.iter().enumerate() {
        let Some(line) = all.get(start) else { continue };
        if !line.text.starts_with(b"Tree=") {
            return Err(refusal(
                format!("line {}", start + 1),
                format!("tree {t} starts here by tree_sizes, and this is no `Tree=` line (LightGBM refuses it)"),
            ));
        }
        if start != covered_to {
            out.lead(
                format!("line {}", covered_to + 1),
                format!(
                    "lines {}..{} lie between trees; LightGBM skips them unread",
                    covered_to + 1,
                    start
                ),
            );
        }
        covered_to = tree(all, start, t, max_feature, out);
        if out.refused {
            return Ok(());
        }
        while all.get(covered_to).is_some_and(|l| l.text.is_empty()) {
            covered_to += 1;
        }
    }
    let tail = tail_from.unwrap_or(covered_to);
    if tail != covered_to {
        out.lead(
            format!("line {}", covered_to + 1),
            "lines after the last tree that LightGBM skips unread",
        );
    }
    out.what = format!("a LightGBM model of {} trees", starts.len());
    check_tail(all, tail, data, out);
    Ok(())
}

/// The header's `key=value` lines, up to the first `Tree=` line (its index, if any).
fn read_header(
    all: &[Line<'_>],
    out: &mut ModelRead,
) -> Result<(HashMap<String, String>, Option<usize>), Refusal> {
    let mut header: HashMap<String, String> = HashMap::new();
    let mut first_tree = None;
    for (i, line) in all.iter().enumerate() {
        if line.text.is_empty() {
            continue;
        }
        if line.text.starts_with(b"Tree=") {
            first_tree = Some(i);
            break;
        }
        let s = text(line.text);
        let parts: Vec<&str> = s.split('=').filter(|p| !p.is_empty()).collect();
        let (key, value) = match parts.as_slice() {
            [] => continue,
            [k] => (*k, String::new()),
            [k, v] => (*k, (*v).to_owned()),
            [k, ..] if *k == "feature_names" || *k == "monotone_constraints" => {
                (*k, s.get(k.len() + 1..).unwrap_or("").to_owned())
            }
            _ => {
                return Err(refusal(
                    format!("line {}", i + 1),
                    "a header line with more than one `=` (LightGBM refuses it: \"Wrong line at model file\")",
                ))
            }
        };
        if !HEADER_KEYS.contains(&key) {
            out.lead(
                format!("line {}", i + 1),
                format!("`{key}` is no key LightGBM writes; it ignores it"),
            );
        }
        if header.insert(key.to_owned(), value).is_some() {
            out.lead(
                format!("line {}", i + 1),
                format!("`{key}` is written twice; LightGBM keeps the last"),
            );
        }
    }
    Ok((header, first_tree))
}

/// The header keys `GBDT::LoadModelFromString` requires; `max_feature_idx`.
fn required_header(header: &HashMap<String, String>) -> Result<i64, Refusal> {
    let int = |k: &str| header.get(k).and_then(|v| v.trim().parse::<i64>().ok());
    for k in ["num_class", "label_index", "max_feature_idx"] {
        if int(k).is_none() {
            return Err(refusal(
                k,
                "missing or not an integer: LightGBM's GBDT::LoadModelFromString requires it",
            ));
        }
    }
    let max_feature = int("max_feature_idx").unwrap_or(-1);
    for k in ["feature_names", "feature_infos"] {
        let Some(v) = header.get(k) else {
            return Err(refusal(
                k,
                "missing: LightGBM's GBDT::LoadModelFromString requires it",
            ));
        };
        let n = values(v).len() as i64;
        if n != max_feature + 1 {
            return Err(refusal(
                k,
                format!("holds {n} entries where max_feature_idx is {max_feature} (LightGBM refuses a count that disagrees)"),
            ));
        }
    }
    Ok(max_feature)
}

/// Where each tree's `Tree=` line is: by tree_sizes, or one after the other; and the line
/// where what follows the trees starts.
fn tree_starts(
    all: &[Line<'_>],
    header: &HashMap<String, String>,
    first_tree: usize,
    data_len: usize,
) -> Result<(Vec<usize>, Option<usize>), Refusal> {
    let tree_start = all.get(first_tree).map_or(0, |l| l.at);
    let mut starts = Vec::new();
    let tail_from;
    if let Some(sizes) = header.get("tree_sizes") {
        let mut at = tree_start as u64;
        for (i, s) in values(sizes).iter().enumerate() {
            let Ok(size) = s.parse::<u64>() else {
                return Err(refusal("tree_sizes", format!("`{s}` is not a size")));
            };
            let Some(line) = all.iter().position(|l| l.at as u64 == at) else {
                return Err(refusal(
                    format!("tree_sizes.{i}"),
                    format!("tree {i} would start at byte {at}, which begins no line of the file (LightGBM reads there unchecked)"),
                ));
            };
            starts.push(line);
            at = at.saturating_add(size);
        }
        tail_from = all
            .iter()
            .position(|l| l.at as u64 == at)
            .or(if at == data_len as u64 {
                Some(all.len())
            } else {
                None
            });
        if tail_from.is_none() {
            return Err(refusal(
                "tree_sizes",
                format!("the trees would end at byte {at}, which begins no line of the file"),
            ));
        }
    } else {
        let mut i = first_tree;
        while let Some(line) = all.get(i) {
            if line.text.is_empty() {
                i += 1;
                continue;
            }
            if !line.text.starts_with(b"Tree=") {
                break;
            }
            starts.push(i);
            i = tree_end(all, i + 1);
        }
        tail_from = Some(i);
    }
    Ok((starts, tail_from))
}

/// The line after a tree that starts at `from` (LightGBM reads at most 22 lines, to a blank).
fn tree_end(all: &[Line<'_>], from: usize) -> usize {
    let mut i = from;
    while i < from + 22 && all.get(i).is_some_and(|l| !l.text.is_empty()) {
        i += 1;
    }
    i
}

/// The `key=value` lines of tree `t`, by key, with the line each is on.
struct TreeLines {
    t: usize,
    kv: HashMap<&'static str, (usize, String)>,
}

impl TreeLines {
    /// Reads the lines after the `Tree=` line `start`, up to `end`.
    fn read(all: &[Line<'_>], start: usize, end: usize, t: usize, out: &mut ModelRead) -> Self {
        let mut kv: HashMap<&str, (usize, String)> = HashMap::new();
        for i in start + 1..end {
            let Some(line) = all.get(i) else { break };
            let s = text(line.text);
            let Some((k, v)) = s.split_once('=') else {
                out.fail(
                    format!("line {}", i + 1),
                    "a tree line with no `=` (LightGBM's Tree parser scans past the line for one)",
                );
                continue;
            };
            let key = TREE_KEYS
                .iter()
                .find(|(name, ..)| *name == k)
                .map(|(name, ..)| *name);
            let Some(key) = key else {
                out.lead(
                    format!("line {}", i + 1),
                    format!("`{k}` is no tree key LightGBM reads; it ignores it"),
                );
                continue;
            };
            if kv.insert(key, (i, v.to_owned())).is_some() {
                out.lead(
                    format!("line {}", i + 1),
                    format!("`{key}` is written twice in tree {t}; LightGBM keeps the last"),
                );
            }
        }
        if end == start + 23 && all.get(end).is_some_and(|l| !l.text.is_empty()) {
            out.lead(
                format!("line {}", end + 1),
                format!("tree {t} goes on past the 22 lines LightGBM reads"),
            );
        }
        TreeLines { t, kv }
    }

    /// Where key `k` is, for findings.
    fn place(&self, k: &str) -> String {
        let t = self.t;
        match self.kv.get(k) {
            Some((i, _)) => format!("tree {t} {k} (line {})", i + 1),
            None => format!("tree {t} {k}"),
        }
    }

    /// Key `k` as an integer.
    fn scalar(&self, k: &str) -> Option<i64> {
        self.kv
            .get(k)
            .and_then(|(_, v)| v.trim().parse::<i64>().ok())
    }
}

/// Reads the tree whose `Tree=` line is `start`; returns the line after it.
fn tree(all: &[Line<'_>], start: usize, t: usize, max_feature: i64, out: &mut ModelRead) -> usize {
    let end = tree_end(all, start + 1);
    let lines = TreeLines::read(all, start, end, t, out);
    let place = |k: &str| lines.place(k);
    let Some(leaves) = lines
        .scalar("num_leaves")
        .filter(|&n| (1..=1 << 24).contains(&n))
    else {
        out.fail(
            place("num_leaves"),
            "missing or not a count: LightGBM's Tree requires it",
        );
        return end;
    };
    let Some(num_cat) = lines
        .scalar("num_cat")
        .filter(|&n| (0..=1 << 24).contains(&n))
    else {
        out.fail(
            place("num_cat"),
            "missing or not a count: LightGBM's Tree requires it",
        );
        return end;
    };
    let is_linear = lines.scalar("is_linear").unwrap_or(0) != 0;
    let mut required = vec!["leaf_value"];
    if leaves > 1 || is_linear {
        required.extend(["left_child", "right_child", "split_feature", "threshold"]);
    }
    if num_cat > 0 {
        required.extend(["cat_boundaries", "cat_threshold"]);
    }
    for k in required {
        if !lines.kv.contains_key(k) {
            out.fail(place(k), "missing: LightGBM's Tree requires it");
        }
    }
    let Some(decoded) = tree_arrays(&lines, leaves, num_cat, is_linear, out) else {
        return end;
    };
    check_tree_indices(&lines, &decoded, leaves, max_feature, out);
    end
}

/// Every array of the tree as a tensor, read to the count LightGBM reads; the arrays that
/// index (children, split features, category boundaries, linear features). `None` after a
/// value that is not a number.
fn tree_arrays(
    lines: &TreeLines,
    leaves: i64,
    num_cat: i64,
    is_linear: bool,
    out: &mut ModelRead,
) -> Option<HashMap<&'static str, Vec<f64>>> {
    let (t, place) = (lines.t, |k: &str| lines.place(k));
    let mut decoded: HashMap<&str, Vec<f64>> = HashMap::new();
    for &(k, element, checked, count) in TREE_KEYS {
        if count == '-' {
            continue;
        }
        let Some((_, v)) = lines.kv.get(k) else {
            continue;
        };
        let n = match count {
            'L' => leaves,
            'I' => leaves - 1,
            'C' => num_cat + 1,
            'T' => decoded
                .get("cat_boundaries")
                .and_then(|b| b.last())
                .map_or(0, |&x| x as i64),
            _ => decoded
                .get("num_features")
                .map_or(0, |f| f.iter().map(|&x| x as i64).sum()),
        };
        if !(0..=1 << 26).contains(&n)
            || (!is_linear
                && matches!(
                    k,
                    "leaf_const" | "num_features" | "leaf_features" | "leaf_coeff"
                ))
        {
            continue;
        }
        let width = match element {
            "F64" => 8,
            "I8" => 1,
            _ => 4,
        };
        if !out.decode(n as u64 * width) {
            out.lead(
                place(k),
                "past the bytes socair decodes (8 times the file): not fingerprinted",
            );
            continue;
        }
        let vals = values(v);
        let mut nums = Vec::with_capacity(vals.len().min(n as usize));
        for s in vals.iter().take(n as usize) {
            match parse_value(s, element) {
                Some(x) => nums.push(x),
                None => {
                    out.fail(place(k), format!("`{s}` is not a value of {element}"));
                    return None;
                }
            }
        }
        if vals.len() as i64 != n {
            let reason = format!("holds {} values where LightGBM reads {n}", vals.len());
            if checked {
                out.fail(
                    place(k),
                    format!("{reason} (StringToArray's CHECK_EQ refuses it)"),
                );
                continue;
            }
            out.lead(
                place(k),
                format!("{reason} (StringToArrayFast pads with zeros or ignores the rest)"),
            );
            nums.resize(n as usize, 0.0);
        }
        if n == 0 {
            continue;
        }
        out.tensors.push(Tensor {
            name: format!("tree.{t}.{k}"),
            dtype: format!("{element} (decoded from text)"),
            element_type: element,
            shape: vec![n as u64],
            bytes: Bytes::Inline(encode(&nums, element)),
            byte_order: ByteOrder::Little,
        });
        if matches!(
            k,
            "left_child" | "right_child" | "split_feature" | "cat_boundaries" | "num_features"
        ) {
            decoded.insert(k, nums);
        }
    }
    Some(decoded)
}

/// Every index stays inside its tree: children name its nodes, split features lie within
/// `max_feature_idx`, and category boundaries rise from 0.
fn check_tree_indices(
    lines: &TreeLines,
    decoded: &HashMap<&'static str, Vec<f64>>,
    leaves: i64,
    max_feature: i64,
    out: &mut ModelRead,
) {
    let place = |k: &str| lines.place(k);
    for k in ["left_child", "right_child"] {
        if let Some(bad) = decoded.get(k).and_then(|c| {
            c.iter()
                .position(|&x| x >= (leaves - 1) as f64 || x < -(leaves as f64))
        }) {
            out.fail(place(k), format!("child {bad} names no node of this tree of {leaves} leaves (LightGBM would index outside it)"));
        }
    }
    if let Some(bad) = decoded
        .get("split_feature")
        .and_then(|f| f.iter().position(|&x| x < 0.0 || x > max_feature as f64))
    {
        out.fail(
            place("split_feature"),
            format!("split {bad} names a feature past max_feature_idx {max_feature}"),
        );
    }
    if let Some(b) = decoded.get("cat_boundaries") {
        if b.first() != Some(&0.0) || b.windows(2).any(|w| w.get(1) < w.first()) {
            out.fail(
                place("cat_boundaries"),
                "not boundaries from 0, rising (LightGBM indexes cat_threshold by them)",
            );
        }
    }
}

fn parse_value(s: &str, element: &str) -> Option<f64> {
    let s = s.trim();
    match element {
        "F64" | "F32" => s.parse::<f64>().ok(),
        "U32" => s.parse::<u32>().ok().map(f64::from),
        "I8" => s.parse::<i8>().ok().map(f64::from),
        _ => s.parse::<i32>().ok().map(f64::from),
    }
}

fn encode(nums: &[f64], element: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(nums.len() * 8);
    for &x in nums {
        match element {
            "F64" => b.extend_from_slice(&x.to_le_bytes()),
            "F32" => b.extend_from_slice(&(x as f32).to_le_bytes()),
            "U32" => b.extend_from_slice(&(x as u32).to_le_bytes()),
            "I8" => b.push(x as i8 as u8),
            _ => b.extend_from_slice(&(x as i32).to_le_bytes()),
        }
    }
    b
}

/// The sections after the trees.
fn check_tail(all: &[Line<'_>], from: usize, _data: &[u8], out: &mut ModelRead) {
    #[derive(PartialEq)]
    enum In {
        Top,
        Importances,
        Parameters,
        Parser,
    }
    let mut state = In::Top;
    for (i, line) in all.iter().enumerate().skip(from) {
        let s = text(line.text);
        let place = format!("line {}", i + 1);
        match (&state, s.as_str()) {
            (_, "") => {}
            (In::Top | In::Importances, "end of trees") => state = In::Top,
            (In::Top | In::Importances, "feature_importances:") => state = In::Importances,
            (In::Top | In::Importances, "parameters:") => state = In::Parameters,
            (In::Parameters, "end of parameters") => state = In::Top,
            (In::Top | In::Importances, "parser:") => state = In::Parser,
            (In::Parser, "end of parser") => state = In::Top,
            (In::Parameters | In::Parser, _) => {}
            (In::Importances, l) if l.contains('=') && !l.starts_with("pandas_categorical:") => {}
            (_, l) if l.starts_with("pandas_categorical:") => {
                let json = l
                    .trim_end()
                    .get("pandas_categorical:".len()..)
                    .unwrap_or("");
                if serde_json::from_str::<serde_json::Value>(json).is_err() {
                    out.fail(place, "pandas_categorical is not JSON (LightGBM's Python package's json.loads refuses it)");
                }
                state = In::Top;
            }
            _ => out.lead(place, "text LightGBM's loader skips unread"),
        }
    }
    if state == In::Parameters {
        out.lead("end", "`parameters:` never ends with `end of parameters`");
    }
}
