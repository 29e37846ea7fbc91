//! Replays every saved `documents` fuzz input and the DSSE and JSON fixtures through the
//! property the fuzz target checks.

use socair_plugin_kit::testing::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_property() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut inputs = Vec::new();
    for dir in [
        "fuzz/regressions/documents",
        "fuzz/corpus/documents",
        "fixtures/dsse",
    ] {
        inputs.extend(files_under(&repo.join(dir)));
    }
    assert!(inputs.len() >= 4);
    for path in &inputs {
        socair::fuzzing::check_documents(&std::fs::read(path).unwrap());
    }
}
