//! Replays every saved fuzz input (crashes kept as regressions, and the seed corpus) and every
//! safetensors fixture through the properties the fuzz targets check.

use socair_plugin_safetensors::fuzzing::{check_reader, check_writer_round_trip};
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
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = Vec::new();
    files_under(&repo.join("fuzz/regressions/safetensors"), &mut inputs);
    files_under(&repo.join("fuzz/corpus/safetensors_header"), &mut inputs);
    files_under(&repo.join("fuzz/corpus/safetensors_writer"), &mut inputs);
    let regressions = inputs.len();
    files_under(&repo.join("fixtures/safetensors"), &mut inputs);
    assert!(inputs.len() > regressions + 30, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_reader(&data);
        check_writer_round_trip(&data);
    }
}
