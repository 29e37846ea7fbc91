//! Replays every saved fuzz input and every TorchServe and TorchScript fixture through the
//! property the fuzz target checks.

use socair_test_support::saved::files_under;
use socair_torchserve::fuzzing::check_reader;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/torchserve")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/torchserve_reader")));
    inputs.extend(files_under(&repo.join("fixtures/torchserve")));
    assert!(inputs.len() >= 5, "fixtures missing");
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap());
    }
}
