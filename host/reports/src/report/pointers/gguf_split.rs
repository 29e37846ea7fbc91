//! GGUF split files (`gguf-split`): a model cut into files named
//! `<prefix>-00001-of-00003.gguf` …, each carrying `split.no` (0-based), `split.count` and, in
//! the first, `split.tensors.count`.
//!
//! What llama.cpp does (src/llama-model-loader.cpp `llama_model_loader::llama_model_loader`
//! and `llama_get_list_splits`, src/llama.cpp `llama_split_prefix` / `llama_split_path`, at
//! commit 00347649deb8): given the first split (`split.no` must be 0), it takes the prefix from
//! that file's own name, opens `<prefix>-%05d-of-%05d.gguf` for every other index beside it,
//! refuses a split whose `split.no` is not its index, a tensor name found twice, and a total
//! other than `split.tensors.count`. So the splits' names cannot leave the directory; what
//! must hold is that every split llama.cpp would open is a file here that the GGUF reader
//! read (a FAIL when it is missing or a link outside, as the other pointers), and what llama.cpp
//! refuses is a LEAD (it does not load; nothing loads other tensors). A split whose first split
//! is not in the directory is a LEAD: llama.cpp loads it only through that file.
//!
//! The keys come from the metadata the GGUF reader passes on (values as JSON text).

use super::targets::{judge_target, tensor_names, Findings, Names, Target};
use crate::read::artifact::FileJob;
use socair_plugin_api::{OpenedFile, ReportRow, RowStatus};
use std::collections::BTreeMap;

const LOADER: &str = "llama.cpp (which opens every split beside the first by name)";

/// An integer metadata value the reader passed on (as `{"type": …, "value": n}`).
fn int_key(o: &OpenedFile, key: &str) -> Option<u64> {
    typed_key(o, key).map(|(_, v)| v)
}

/// An integer metadata value and its GGUF type name.
fn typed_key(o: &OpenedFile, key: &str) -> Option<(String, u64)> {
    let text = o
        .metadata
        .iter()
        .find(|kv| kv.0.as_str() == key)?
        .1
        .as_str();
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    Some((
        v.get("type")?.as_str()?.to_owned(),
        v.get("value")?.as_u64()?,
    ))
}

/// The GGUF type llama.cpp reads each split key as (`GGUFMeta::GKV<T>::get_kv` refuses any
/// other: split.no and split.count are `uint16_t`, split.tensors.count an `int`).
const SPLIT_KEY_TYPES: [(&str, &str); 3] = [
    ("split.no", "uint16"),
    ("split.count", "uint16"),
    ("split.tensors.count", "int32"),
];

/// Findings for split keys of a type llama.cpp refuses.
fn check_types(o: &OpenedFile, place: &str, found: &mut Findings) {
    for (key, want) in SPLIT_KEY_TYPES {
        if let Some((ty, _)) = typed_key(o, key).filter(|(ty, _)| !ty.eq_ignore_ascii_case(want)) {
            found.add(
                RowStatus::Lead,
                format!("{place}metadata {key:?}"),
                format!("is {ty}, not {want}: llama.cpp refuses the model (\"key {key} has wrong type\")"),
            );
        }
    }
}

/// `llama_split_path`: `<prefix>-%05d-of-%05d.gguf` with the 1-based index.
fn split_path(prefix: &str, no: u64, count: u64) -> String {
    format!("{prefix}-{:05}-of-{count:05}.gguf", no + 1)
}

/// `llama_split_prefix`: the name without `-%05d-of-%05d.gguf` for this index and count, when
/// it ends so (and something is left).
fn split_prefix(name: &str, no: u64, count: u64) -> Option<&str> {
    let postfix = format!("-{:05}-of-{count:05}.gguf", no + 1);
    name.strip_suffix(postfix.as_str())
        .filter(|p| !p.is_empty())
}

/// A row per first split in a model directory, and one per split whose first is not there.
pub(super) fn rows(
    opened: &[(&FileJob<'_>, OpenedFile)],
    names: &Names<'_, '_>,
) -> Vec<(String, ReportRow)> {
    let mut out = Vec::new();
    let ggufs: Vec<&(&FileJob<'_>, OpenedFile)> = opened
        .iter()
        .filter(|(_, o)| {
            o.format.as_str() == "gguf" && int_key(o, "split.count").is_some_and(|c| c > 1)
        })
        .collect();
    // Splits some first split in the directory accounts for.
    let mut covered: Vec<String> = Vec::new();
    for (job, o) in &ggufs {
        let (Some(count), no) = (int_key(o, "split.count"), int_key(o, "split.no")) else {
            continue;
        };
        if no != Some(0) {
            continue;
        }
        out.push((
            job.rel.clone(),
            judge_first(names, job, o, count, &mut covered),
        ));
    }
    for (job, o) in &ggufs {
        if covered.contains(&job.rel) || int_key(o, "split.no") == Some(0) {
            continue;
        }
        let count = int_key(o, "split.count").unwrap_or_default();
        let mut found = Findings::default();
        match int_key(o, "split.no") {
            None => found.add(
                RowStatus::Lead,
                "metadata \"split.no\"",
                format!("a GGUF split (split.count {count}) without split.no: llama.cpp refuses it"),
            ),
            Some(no) => found.add(
                RowStatus::Lead,
                "metadata \"split.no\"",
                format!(
                    "split {} of {count} of a GGUF model whose first split (split.no 0, named as llama.cpp derives it) is not in the directory: llama.cpp loads splits only through the first, so what loads with this one was not scanned",
                    no + 1
                ),
            ),
        }
        out.push((job.rel.clone(), found.row("a GGUF split", String::new())));
    }
    out
}

fn judge_first(
    names: &Names<'_, '_>,
    job: &FileJob<'_>,
    first: &OpenedFile,
    count: u64,
    covered: &mut Vec<String>,
) -> ReportRow {
    let mut found = Findings::default();
    let what = "the first split of a GGUF model";
    // llama.cpp reads the count as a uint16: a larger one is refused, and is not walked.
    if count > u64::from(u16::MAX) {
        found.add(
            RowStatus::Lead,
            "metadata \"split.count\"",
            format!("is {count}, more than the uint16 llama.cpp reads it as: llama.cpp refuses the model, and socair does not look for that many splits"),
        );
        return found.row(what, String::new());
    }
    let (dir, name) = match job.rel.rsplit_once('/') {
        Some((d, n)) => (format!("{d}/"), n),
        None => (String::new(), job.rel.as_str()),
    };
    let Some(prefix) = split_prefix(name, 0, count) else {
        found.add(
            RowStatus::Lead,
            "file name",
            format!(
                "split.count is {count} but the name does not end in {:?}: llama.cpp refuses it (\"invalid split file name\"), as it derives the other splits' names from this one",
                format!("-00001-of-{count:05}.gguf")
            ),
        );
        return found.row(what, String::new());
    };
    check_types(first, "", &mut found);
    // A split missing or unread: its tensors are not counted, so neither is the total.
    let mut incomplete = false;
    let mut total = tensor_names(first).count() as u64;
    let mut holders: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in tensor_names(first) {
        holders
            .entry(n.to_owned())
            .or_default()
            .push(job.rel.clone());
    }
    for no in 1..count {
        let rel = format!("{dir}{}", split_path(prefix, no, count));
        let place = format!("split {} of {count}", no + 1);
        let t = names.target(&rel);
        if let Some((status, why)) = judge_target(&t, &rel, LOADER) {
            found.add(status, place, why);
            incomplete = true;
            continue;
        }
        let Target::Read(split_job) = t else { continue };
        covered.push(split_job.rel.clone());
        let Some(o) = names
            .opened(&split_job.rel)
            .filter(|o| o.format.as_str() == "gguf")
        else {
            found.add(
                RowStatus::Lead,
                place,
                format!("names {rel:?}, which was not read as GGUF"),
            );
            incomplete = true;
            continue;
        };
        match int_key(o, "split.no") {
            Some(n) if n == no => {}
            other => found.add(
                RowStatus::Lead,
                format!("{place}: metadata \"split.no\""),
                format!(
                    "{rel:?} says split.no {}, not {no}: llama.cpp refuses it (\"invalid split file idx\")",
                    other.map_or("(none)".to_owned(), |n| n.to_string())
                ),
            ),
        }
        check_types(o, &format!("{place}: "), &mut found);
        total += tensor_names(o).count() as u64;
        for n in tensor_names(o) {
            holders.entry(n.to_owned()).or_default().push(rel.clone());
        }
    }
    for (name, held_by) in holders.iter().filter(|(_, h)| h.len() > 1) {
        found.add(
            RowStatus::Lead,
            format!("tensor {name:?}"),
            format!(
                "is in {} splits ({}): llama.cpp refuses the model (\"tensor '…' is duplicated\")",
                held_by.len(),
                held_by.join(", ")
            ),
        );
    }
    match int_key(first, "split.tensors.count") {
        Some(n) if n == total || incomplete => {}
        n => found.add(
            RowStatus::Lead,
            "metadata \"split.tensors.count\"",
            format!(
                "says {}, the splits hold {total} tensors: llama.cpp refuses the model (\"corrupted model\")",
                n.map_or("nothing".to_owned(), |n| n.to_string())
            ),
        ),
    }
    let clean = format!(
        "the first of {count} GGUF splits: every split llama.cpp would open beside it is here and read as GGUF, numbered as it expects, {total} tensors in all as split.tensors.count says, none in two splits"
    );
    found.row(what, clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_llama_split_path() {
        assert_eq!(split_path("m", 1, 3), "m-00002-of-00003.gguf");
        assert_eq!(split_prefix("m-00001-of-00003.gguf", 0, 3), Some("m"));
        assert_eq!(split_prefix("m-00002-of-00003.gguf", 0, 3), None);
        assert_eq!(split_prefix("-00001-of-00003.gguf", 0, 3), None);
    }
}
