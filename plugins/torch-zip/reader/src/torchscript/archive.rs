//! A TorchScript archive's records beside `data.pkl`, read as `torch.jit.load` reads them
//! (torch/csrc/jit/serialization/import.cpp, `ScriptModuleDeserializer::deserialize`): the
//! code under `code/` ([`super::judge`]); `constants.pkl`, the constant table the code's
//! `CONSTANTS.cN` reads, its tensors' storages under `constants/`; `traced_inputs.pkl` and
//! `traced_inputs/` (torch.jit.trace's example inputs, written since torch 2.1); each code
//! file's `.debug_pkl` (its source ranges, unpickled when torch reports an error); `extra/…`
//! (`_extra_files`, handed as bytes to a caller that asks for them, never interpreted).
//!
//! Every pickle among them goes through the pickle machine like `data.pkl`. TorchScript's
//! unpickler (unpickler.cpp, `Unpickler::readGlobal`) accepts fewer globals than Python's:
//! tensor rebuilds and storages, `collections.OrderedDict`, the `torch.jit._pickle` helpers
//! ([`UNPICKLER_HELPERS`]) and classes it resolves by name, which are the archive's own
//! `__torch__` classes (judged by their code) and the TorchBind classes torch registers. Those
//! are accepted here as reviewed globals; anything else keeps its verdict under the grammar.

use super::{judge, ops, CodeFile, Judgment};
use crate::checkpoint::analysis::{Analysis, AnalyzeOptions};
use crate::pickle::{self, Severity};
use crate::zip::{self, ReadAt};

/// The helpers of torch/jit/_pickle.py that TorchScript's writer names and its unpickler
/// resolves itself (each returns its argument: `build_intlist(data): return data`).
pub const UNPICKLER_HELPERS: &[&str] = &[
    "torch.jit._pickle.build_intlist",
    "torch.jit._pickle.build_tensorlist",
    "torch.jit._pickle.build_doublelist",
    "torch.jit._pickle.build_boollist",
    "torch.jit._pickle.build_tensor_from_id",
    "torch.jit._pickle.restore_type_tag",
];

/// Whether the pickle machine's finding is about something TorchScript's unpickler does
/// natively and the grammar, written for Python's unpickler, reads otherwise: a
/// `torch.jit._pickle` helper (the grammar fails `torch.jit.*` as the TorchScript compiler
/// reached from Python; here the unpickler builds a list, unpickler.cpp `readGlobal`), and
/// `MARK APPENDS` and `MARK SETITEMS` with no items, which TorchScript's pickler writes for
/// an empty list and for an object without attributes (torch/csrc/jit/serialization/
/// pickler.cpp, `pushListImpl`, `pushIValueImpl` for objects).
pub fn unpickler_resolves(f: &pickle::OpcodeFinding) -> bool {
    if (f.opcode == "APPENDS" && f.reason.starts_with("APPENDS with no items"))
        || (f.opcode == "SETITEMS" && f.reason.starts_with("SETITEMS with no items"))
    {
        return true;
    }
    UNPICKLER_HELPERS.iter().any(|h| {
        ["global ", "calls "].iter().any(|verb| {
            f.reason
                .strip_prefix(verb)
                .and_then(|r| r.strip_prefix(h))
                .is_some_and(|rest| rest.starts_with([':', ',', ' ']))
        })
    })
}

/// Pickles beside `data.pkl` with their storage directories.
const TABLES: &[(&str, &str)] = &[
    ("constants.pkl", "constants/"),
    ("traced_inputs.pkl", "traced_inputs/"),
];

/// The largest code file or pickle read into memory.
pub const MAX_RECORD: u64 = 64 << 20;

fn decimal_under(rel: &str, dir: &str) -> bool {
    rel.strip_prefix(dir)
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a record (relative to the prefix) is one this module reads: a code file or its
/// source map, a constant or traced-input table and their storages, an extra file.
pub fn judged_record(rel: &str) -> bool {
    (rel.starts_with("code/") && (rel.ends_with(".py") || rel.ends_with(".py.debug_pkl")))
        || TABLES
            .iter()
            .any(|(pkl, dir)| rel == *pkl || decimal_under(rel, dir))
        || rel.starts_with("extra/")
}

/// Reads and judges everything but `data.pkl`; returns the globals `data.pkl` may name as
/// TorchScript's unpickler resolves them (the archive's classes, torch's TorchBind classes,
/// the helpers).
pub fn judge_archive(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
    options: &AnalyzeOptions,
) -> Vec<String> {
    let mut budget = socair_plugin_kit::model::memory_bound(src.size());
    let mut files = Vec::new();
    let mut unread = Vec::new();
    for r in &archive.records {
        let rel = archive.relative(r);
        if !(rel.starts_with("code/") && rel.ends_with(".py")) {
            continue;
        }
        if r.len > budget.min(MAX_RECORD) {
            unread.push(format!(
                "{rel}: {} bytes, past what socair reads into memory for this file",
                r.len
            ));
            continue;
        }
        budget -= r.len;
        match zip::bytes::read_bytes(src, r, MAX_RECORD) {
            Ok(text) => files.push(CodeFile {
                name: rel.to_string(),
                text,
            }),
            Err(e) => unread.push(format!("{rel}: {e}")),
        }
    }
    let mut judgment: Judgment = judge(&files);
    for why in unread {
        judgment
            .findings
            .push(socair_plugin_kit::model::Finding::new(
                Severity::Lead,
                why.split(':').next().unwrap_or_default().to_string(),
                format!("a code file socair did not read ({why}): its calls are unjudged"),
            ));
    }
    let mut reviewed: Vec<String> = judgment.classes.clone();
    reviewed.extend(ops::torchbind_classes().map(String::from));
    reviewed.extend(UNPICKLER_HELPERS.iter().map(|s| s.to_string()));
    a.torchscript_code = Some(judgment);

    let mut with_reviewed = options.reviewed.clone();
    with_reviewed.extend(reviewed.iter().cloned());
    for r in &archive.records {
        let rel = archive.relative(r);
        let table = TABLES.iter().find(|(pkl, _)| *pkl == rel);
        if table.is_none() && !(rel.starts_with("code/") && rel.ends_with(".py.debug_pkl")) {
            continue;
        }
        let bytes = match zip::bytes::read_bytes(src, r, MAX_RECORD.min(budget)) {
            Ok(b) => b,
            Err(e) => {
                a.add(
                    Severity::Lead,
                    format!("zip record {:?}", r.name),
                    format!("a TorchScript pickle socair did not read: {e}"),
                );
                continue;
            }
        };
        budget = budget.saturating_sub(bytes.len() as u64);
        let outcome = pickle::run(
            &bytes,
            &pickle::Options {
                reviewed: with_reviewed.clone(),
                legacy: false,
                input_len: src.size(),
                grammar: options.grammar,
                ..Default::default()
            },
        );
        for f in outcome.findings.iter().filter(|f| !unpickler_resolves(f)) {
            a.add(
                f.severity,
                format!("{rel} byte {} ({})", f.offset, f.opcode),
                f.reason.clone(),
            );
        }
        if let Some((_, dir)) = table {
            check_storages(a, archive, dir, &outcome.storages);
        }
        for used in outcome.reviewed_used {
            if !reviewed.contains(&used) && !a.reviewed_used.contains(&used) {
                a.reviewed_used.push(used);
            }
        }
    }
    reviewed
}

/// Every storage a table's pickle names must be a record `<dir><key>` of exactly its size,
/// as for `data.pkl`.
fn check_storages(
    a: &mut Analysis,
    archive: &zip::Archive,
    dir: &str,
    storages: &[std::rc::Rc<pickle::StorageRef>],
) {
    for s in storages {
        let rel = format!("{dir}{}", s.key);
        match archive.find(&rel).map(|i| &archive.records[i]) {
            None => a.add(
                Severity::Fail,
                format!("storage {:?}", s.key),
                format!(
                    "the pickle names storage {:?} but there is no record {}/{rel}",
                    s.key, archive.prefix
                ),
            ),
            // traced_inputs are written without their bytes (torch/csrc/jit/serialization/
            // export_module.cpp, `writeArchive(..., skip_tensor_data=true)`): empty records.
            Some(r) if r.len == 0 && dir == "traced_inputs/" => {}
            Some(r) if s.byte_len() != Some(r.len) => a.add(
                Severity::Fail,
                format!("zip record {:?}", r.name),
                format!(
                    "the pickle declares storage {:?} as {} bytes but its record holds {}",
                    s.key,
                    s.byte_len()
                        .map_or("more than 2^64".into(), |n| n.to_string()),
                    r.len
                ),
            ),
            Some(_) => {}
        }
    }
}
