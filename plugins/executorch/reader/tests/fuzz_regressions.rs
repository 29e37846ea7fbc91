//! Replays every saved fuzz input (crashes kept as regressions, and the seed corpus) and every
//! ExecuTorch fixture through the properties the fuzz target checks.

use socair_executorch::fuzzing::check_reader;
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/executorch")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/executorch_reader")));
    let saved = inputs.len();
    inputs.extend(files_under(&repo.join("fixtures/executorch")));
    assert!(inputs.len() >= saved + 10, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_reader(&data);
    }
}
