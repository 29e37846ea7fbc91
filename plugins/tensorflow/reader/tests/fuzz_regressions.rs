//! Replays every saved fuzz input (crashes kept as regressions, and the seed corpus) and every
//! TensorFlow and TFLite fixture through the property the fuzz target checks.

use socair_tensorflow::fuzzing::check_readers;
use socair_test_support::saved::files_under;

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = crate::common::repo();
    let mut inputs = Vec::new();
    inputs.extend(files_under(&repo.join("fuzz/regressions/tensorflow")));
    inputs.extend(files_under(&repo.join("fuzz/corpus/tensorflow_readers")));
    let saved = inputs.len();
    inputs.extend(crate::common::tensorflow_files());
    assert!(inputs.len() > saved + 40, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_readers(&data);
        // Every prefix of a small file, too: truncation anywhere is refused, never a panic.
        if data.len() < 2048 {
            for cut in (0..data.len()).step_by(97) {
                check_readers(&data[..cut]);
            }
        }
    }
}
