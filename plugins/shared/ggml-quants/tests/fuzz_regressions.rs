//! Replays every saved fuzz input of the `ggml_dequant` target (the seed corpus and any crash
//! kept as a regression) and every fixture tensor through the property the target checks.

use socair_ggml_quants::fuzzing::check;
use socair_test_support::saved::files_under;
use std::path::PathBuf;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/corpus/ggml_dequant")));
    inputs.extend(files_under(&repo.join("fuzz/regressions/ggml_dequant")));
    assert!(inputs.len() >= 30, "corpus missing: {}", inputs.len());
    for path in &inputs {
        check(&std::fs::read(path).unwrap());
    }
}

#[test]
fn every_type_byte_and_cut_keeps_the_properties() {
    // Each selector byte with data cut at every length up to two of the largest blocks.
    let data: Vec<u8> = (0..600u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for selector in 0..=255u8 {
        for len in [0, 1, 17, 18, 34, 36, 50, 66, 110, 144, 210, 292, 584, 599] {
            let mut input = vec![selector];
            input.extend_from_slice(&data[..len]);
            check(&input);
        }
    }
}
