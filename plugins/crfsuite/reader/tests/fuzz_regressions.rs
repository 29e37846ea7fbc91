//! Replays every saved fuzz input and every CRFsuite fixture through the property the fuzz
//! target checks.

use socair_crfsuite::fuzzing::check_reader;
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/corpus/crfsuite_reader")));
    inputs.extend(files_under(&repo.join("fixtures/crfsuite")));
    assert!(inputs.len() >= 12, "fixtures missing: {}", inputs.len());
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap());
    }
}
