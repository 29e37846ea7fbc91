//! What the tests share: the repository, opening a fixture with the reader that claims it.

use socair_plugin_api::OpenedFile;
use std::path::{Path, PathBuf};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

pub fn fixture(rel: &str) -> PathBuf {
    repo().join("fixtures").join(rel)
}

/// Which of this plugin's readers claims `data` (the host asks them in this order).
pub fn claimant(data: &[u8]) -> Option<&'static str> {
    use socair_tensorflow as tf;
    let len = data.len() as u64;
    let head = &data[..data.len().min(4096)];
    if tf::tflite::looks_like_tflite(head, len) {
        Some("tflite")
    } else if tf::bundle::looks_like_index(head, len) {
        Some("tf-checkpoint")
    } else if tf::looks_like_saved_model(head, len)
        || tf::looks_like_fingerprint(head, len)
        || tf::looks_like_keras_metadata(head, len)
    {
        Some("savedmodel")
    } else if tf::looks_like_graph_def(head, len) {
        Some("tf-graphdef")
    } else if tf::looks_like_meta_graph(head, len) || tf::looks_like_meta_graph_text(head) {
        Some("tf-metagraph")
    } else {
        None
    }
}

/// Opens `path` with the reader that claims it, as the plugin's `open` does.
pub fn open(path: &Path) -> OpenedFile {
    use socair_tensorflow as tf;
    let data = std::fs::read(path).unwrap();
    let len = data.len() as u64;
    let head = data[..data.len().min(4096)].to_vec();
    let claim = claimant(&data);
    let bytes = bytes::Bytes::from(data);
    match claim {
        Some("tflite") => tf::tflite::read(bytes, len),
        Some("tf-checkpoint") => tf::bundle::read(bytes),
        Some("savedmodel") if tf::looks_like_fingerprint(&head, len) => {
            tf::parts::fingerprint(bytes)
        }
        Some("savedmodel") if tf::looks_like_keras_metadata(&head, len) => {
            tf::parts::keras_metadata(bytes)
        }
        Some("savedmodel") => tf::savedmodel::read(bytes),
        Some("tf-graphdef") => tf::graphdef::read(bytes),
        Some("tf-metagraph") => tf::metagraph::read(bytes),
        _ => panic!("{}: no reader claims it", path.display()),
    }
}

/// Every file under `fixtures/tensorflow` and `fixtures/tflite` that a reader reads (not the
/// scripts, the expectations, the data shards and assets).
pub fn tensorflow_files() -> Vec<PathBuf> {
    let mut all = socair_test_support::saved::files_under(&fixture("tensorflow"));
    all.extend(socair_test_support::saved::files_under(&fixture("tflite")));
    // The SavedModel the ONNX tests hold to show the ONNX reader does not claim one.
    all.extend(socair_test_support::saved::files_under(&fixture(
        "onnx/tensorflow",
    )));
    // And the TensorFlow files of the fixtures `socair tensors` once listed as unread.
    all.extend(
        socair_test_support::saved::files_under(&fixture("unread"))
            .into_iter()
            .filter(|f| {
                let n = f.file_name().unwrap().to_string_lossy();
                n == "saved_model.pb" || n == "fingerprint.pb" || n.ends_with(".index")
            }),
    );
    all.retain(|f| {
        let n = f.file_name().unwrap().to_string_lossy();
        !(n.ends_with(".py")
            || n.ends_with(".json")
            || n.contains(".data-")
            || n.ends_with(".txt")
            || n.ends_with(".md"))
    });
    all
}
