//! Replays every saved fuzz input (crashes kept as regressions) and every torch fixture
//! through the properties the fuzz targets check.

use socair_test_support::saved::files_under;
use socair_torch_zip::fuzzing::{check_checkpoint, check_legacy, check_pickle, check_zip};
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/torch")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/torch_zip")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/pickle_machine")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/torch_checkpoint")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/torch_legacy")));
    inputs.extend(files_under(&repo.join("fixtures/torch")));
    // torch.distributed.checkpoint: the .metadata walked for its items (crate::dcp).
    inputs.extend(files_under(&repo.join("fixtures/dcp")));
    assert!(inputs.len() > 30, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_zip(&data);
        check_pickle(&data);
        check_checkpoint(&data);
        check_legacy(&data);
    }
}
