//! Replays every saved fuzz input (crashes kept as regressions), the fuzz corpus and every
//! NumPy fixture through the property the fuzz target checks.

use socair_numpy::fuzzing::check_reader;
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/numpy")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/numpy_reader")));
    inputs.extend(files_under(&repo.join("fixtures/npy")));
    inputs.extend(files_under(&repo.join("fixtures/archives")));
    // equinox files: consecutive records (crate::records).
    inputs.extend(files_under(&repo.join("fixtures/equinox")));
    assert!(inputs.len() > 60, "fixtures missing: {}", inputs.len());
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap_or_default());
    }
}
