//! Replays every saved fuzz input (crashes kept as regressions, and the seed corpus) and every
//! safetensors fixture through the properties the fuzz targets check.

use socair_safetensors::fuzzing::{check_reader, check_writer_round_trip};
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/safetensors")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/safetensors_header")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/safetensors_writer")));
    let regressions = inputs.len();
    inputs.extend(files_under(&repo.join("fixtures/safetensors")));
    assert!(inputs.len() > regressions + 30, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_reader(&data);
        check_writer_round_trip(&data);
    }
}
