//! Replays every saved fuzz input (crashes kept as regressions, and the seed corpus) and every
//! archive fixture through the property the fuzz target checks.

use socair_archive::fuzzing::{check_containers, check_reader};
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/archive")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/archive_reader")));
    inputs.extend(files_under(&repo.join("fixtures/archive")));
    assert!(inputs.len() > 15, "fixtures missing");
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap());
    }
}

#[test]
fn every_saved_container_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/corpus/container_readers")));
    inputs.extend(files_under(&repo.join("fixtures/containers")));
    assert!(inputs.len() > 30, "fixtures missing");
    for path in &inputs {
        check_containers(&std::fs::read(path).unwrap());
    }
}
