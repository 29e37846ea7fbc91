//! Replays every saved fuzz input (the seed corpus, crashes kept as regressions) and every
//! Core ML fixture through the property the fuzz target checks.

use socair_coreml::fuzzing::check_reader;
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/coreml")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/coreml_reader")));
    let saved = inputs.len();
    inputs.extend(files_under(&repo.join("fixtures/coreml")));
    assert!(inputs.len() > saved + 10, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_reader(&data);
    }
}
