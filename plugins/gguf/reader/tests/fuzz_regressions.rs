//! Replays every saved fuzz input (crashes kept as regressions) and every GGUF fixture
//! through the property the fuzz target checks.

use socair_gguf::fuzzing::check_reader;
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/gguf")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/gguf_reader")));
    inputs.extend(files_under(&repo.join("fixtures/gguf")));
    assert!(inputs.len() > 20, "fixtures missing");
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap());
    }
}
