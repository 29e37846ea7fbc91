//! Replays every saved fuzz input (crashes kept as regressions, and the seed corpus) and every
//! CatBoost fixture through the property the fuzz target checks.

use socair_catboost::fuzzing::check_reader;
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_property() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/catboost")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/catboost_reader")));
    let saved = inputs.len();
    inputs.extend(files_under(&repo.join("fixtures/catboost")));
    assert!(saved >= 5, "corpus missing");
    assert!(inputs.len() > saved + 10, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_reader(&data);
        // Every prefix of a small input, too: the truncations a fuzzer reaches first.
        if data.len() <= 16384 {
            for cut in (0..data.len()).step_by(97) {
                check_reader(&data[..cut]);
            }
        }
    }
}
