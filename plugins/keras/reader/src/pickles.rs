//! The pickles Keras files can carry (a `TorchModuleWrapper`'s `torch.save` output, a pickle
//! among an archive's members), run through the `socair-wo/1` machine (`socair-pickle`).

use socair_hdf5::Severity;
use std::io::Read;

/// Runs a pickle through the `socair-wo/1` machine (`socair-pickle`, the grammar the archive
/// plugin declares for pickles it meets): each finding as its severity, its place in the
/// pickle (`byte N (OP)`) and its reason, and the reviewed globals it used.
pub fn scan_pickle(
    bytes: &[u8],
    reviewed: &[String],
) -> (Vec<(Severity, String, String)>, Vec<String>) {
    let outcome = socair_pickle::pickle::run(
        bytes,
        &socair_pickle::pickle::Options {
            reviewed: reviewed.to_vec(),
            legacy: false,
            input_len: 0,
            grammar: socair_pickle::pickle::Grammar::V1,
            ..Default::default()
        },
    );
    let found = outcome
        .findings
        .iter()
        .map(|f| {
            let severity = match f.severity {
                socair_pickle::pickle::Severity::Fail => Severity::Fail,
                socair_pickle::pickle::Severity::Lead => Severity::Lead,
            };
            (
                severity,
                format!("byte {} ({})", f.offset, f.opcode),
                f.reason.clone(),
            )
        })
        .collect();
    (found, outcome.reviewed_used)
}

/// Adds the reviewed globals `more` to `into`, each once.
pub fn add_reviewed(into: &mut Vec<String>, more: Vec<String>) {
    for g in more {
        if !into.contains(&g) {
            into.push(g);
        }
    }
}

/// The pickles of a `torch.save` output: the `*.pkl` records of its zip (stored or deflated),
/// or the bytes themselves when they are a legacy pickle. Each at most 64 MiB.
pub fn torch_pickles(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    const MAX: u64 = 64 << 20;
    if !bytes.starts_with(b"PK\x03\x04") {
        return vec![("pickle".to_owned(), bytes.to_vec())];
    }
    let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let Ok(f) = zip.by_index(i) else { continue };
        let name = f.name().to_owned();
        if !name.ends_with(".pkl") || f.size() > MAX {
            continue;
        }
        let mut data = Vec::new();
        if f.take(MAX).read_to_end(&mut data).is_ok() {
            out.push((name, data));
        }
    }
    out
}
