//! Replays every saved fuzz input and every torch7 fixture through the property the fuzz
//! target checks.

use socair_test_support::saved::files_under;
use socair_torch7::fuzzing::check_reader;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/corpus/torch7_reader")));
    inputs.extend(files_under(&repo.join("fixtures/torch7")));
    assert!(inputs.len() >= 18, "fixtures missing: {}", inputs.len());
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap());
    }
}
