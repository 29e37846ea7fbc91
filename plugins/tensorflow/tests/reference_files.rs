//! The readers on the fixtures TensorFlow wrote (fixtures/tensorflow, fixtures/tflite).

use socair_plugin_api::OpenedFile;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Opens `path` with the reader of the plugin that claims it.
pub fn open(path: &Path) -> OpenedFile {
    let data = std::fs::read(path).unwrap();
    let len = data.len() as u64;
    let head = &data[..data.len().min(4096)];
    let bytes = bytes::Bytes::from(data.clone());
    use socair_plugin_tensorflow as tf;
    if tf::tflite::looks_like_tflite(head, len) {
        tf::tflite::read(bytes, len)
    } else if tf::bundle::looks_like_index(head, len) {
        tf::bundle::read(bytes)
    } else if tf::looks_like_fingerprint(head, len) {
        tf::parts::fingerprint(bytes)
    } else if tf::looks_like_keras_metadata(head, len) {
        tf::parts::keras_metadata(bytes)
    } else if tf::looks_like_saved_model(head, len) {
        tf::savedmodel::read(bytes)
    } else if tf::looks_like_graph_def(head, len) {
        tf::graphdef::read(bytes)
    } else {
        panic!("{}: no reader claims it", path.display())
    }
}

#[test]
fn print_all() {
    let mut all = socair_plugin_kit::testing::files_under(&repo().join("fixtures/tensorflow"));
    all.extend(socair_plugin_kit::testing::files_under(
        &repo().join("fixtures/tflite"),
    ));
    for f in all {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".py")
            || name.ends_with(".json")
            || name.contains(".data-")
            || name.ends_with(".txt")
        {
            continue;
        }
        let o = open(&f);
        println!(
            "== {} [{}] tensors {} unread {}",
            f.display(),
            o.format,
            o.tensors.len(),
            o.unread.len()
        );
        for r in o.rows.iter() {
            println!("  {:?} {}", r.status, r.summary);
            for x in r.findings.iter() {
                println!("     - {}: {}", x.place, x.reason);
            }
        }
        for u in o.unread.iter().take(5) {
            println!("  unread {:?}: {}", u.tensor, u.reason);
        }
    }
}
