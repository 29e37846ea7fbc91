//! Replays every saved fuzz input (crashes kept as regressions) and every XML fixture through
//! the property the fuzz target checks.

use socair_test_support::saved::files_under;
use socair_xml::fuzzing::check_reader;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/xml")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/xml_reader")));
    inputs.extend(files_under(&repo.join("fixtures/openvino")));
    inputs.extend(files_under(&repo.join("fixtures/pmml")));
    inputs.extend(files_under(&repo.join("fixtures/opencv")));
    assert!(inputs.len() > 40, "fixtures missing: {}", inputs.len());
    for path in &inputs {
        check_reader(&std::fs::read(path).unwrap());
    }
}
