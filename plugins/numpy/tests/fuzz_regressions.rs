//! Replays every saved fuzz input (crashes kept as regressions), the fuzz corpus and every
//! NumPy fixture through the property the fuzz target checks.

use socair_plugin_numpy::fuzzing::check_reader;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = Vec::new();
    files_under(&repo.join("fuzz/regressions/numpy"), &mut inputs);
    files_under(&repo.join("fuzz/corpus/numpy_reader"), &mut inputs);
    files_under(&repo.join("fixtures/npy"), &mut inputs);
    files_under(&repo.join("fixtures/archives"), &mut inputs);
    assert!(inputs.len() > 60, "fixtures missing: {}", inputs.len());
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap_or_default());
    }
}
