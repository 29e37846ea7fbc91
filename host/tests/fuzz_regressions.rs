//! Replays every saved `documents` fuzz input and the DSSE and JSON fixtures through the
//! property the fuzz target checks.

use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_saved_input_keeps_the_property() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut inputs = Vec::new();
    for dir in [
        "fuzz/regressions/documents",
        "fuzz/corpus/documents",
        "fixtures/dsse",
    ] {
        files_under(&repo.join(dir), &mut inputs);
    }
    assert!(inputs.len() >= 4);
    for path in &inputs {
        socair::fuzzing::check_documents(&std::fs::read(path).unwrap());
    }
}
