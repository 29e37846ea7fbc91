//! No committed fixture is claimed by two readers: each TensorFlow file by exactly the reader
//! of its format, no other fixture by any TensorFlow reader, and no TensorFlow file by the
//! ONNX reader (a SavedModel starts with field 1 as an ONNX ModelProto does).

use crate::common::{claimant, repo, tensorflow_files};

#[test]
fn each_fixture_is_claimed_once() {
    let tf: std::collections::BTreeSet<_> = tensorflow_files().into_iter().collect();
    let mut counted = 0;
    for f in socair_test_support::saved::files_under(&repo().join("fixtures")) {
        let data = std::fs::read(&f).unwrap();
        let head = &data[..data.len().min(4096)];
        let onnx = socair_onnx::looks_like_onnx(head, data.len() as u64);
        let ours = claimant(&data);
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if tf.contains(&f) {
            let want = if name.ends_with(".tflite") {
                "tflite"
            } else if name.ends_with(".index") {
                "tf-checkpoint"
            } else if name == "frozen.pb" {
                "tf-graphdef"
            } else if name.ends_with(".meta") {
                "tf-metagraph"
            } else {
                "savedmodel"
            };
            assert_eq!(ours, Some(want), "{}", f.display());
            assert!(!onnx, "{}: the ONNX reader claims it too", f.display());
            counted += 1;
        } else {
            assert_eq!(ours, None, "{}: claimed by {ours:?}", f.display());
        }
    }
    assert!(counted >= 40);
}
