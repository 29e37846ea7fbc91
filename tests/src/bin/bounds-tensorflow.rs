//! `bounds-tensorflow FILE`: FILE opened by the TensorFlow plugin's reader that claims it (the
//! host asks them in this order: TFLite, checkpoint index, SavedModel and its parts, frozen
//! GraphDef), then a summary of what it returned and this program's own peak resident memory.
//! `plugins/tensorflow/reader/tests/bounds.rs` runs it on each hostile shape and holds it to
//! the readers' bounds (`socair_test_support::measure`). The same choice as the tests'
//! `common::open`, which the fixtures' tests use.

use socair_tensorflow as tf;
use socair_test_support::{measure, saved};

fn main() {
    let data = measure::child_input();
    let len = data.len() as u64;
    let head = data[..data.len().min(4096)].to_vec();
    let bytes = bytes::Bytes::from(data);
    let opened = if tf::tflite::looks_like_tflite(&head, len) {
        tf::tflite::read(bytes, len)
    } else if tf::bundle::looks_like_index(&head, len) {
        tf::bundle::read(bytes)
    } else if tf::looks_like_fingerprint(&head, len) {
        tf::parts::fingerprint(bytes)
    } else if tf::looks_like_keras_metadata(&head, len) {
        tf::parts::keras_metadata(bytes)
    } else if tf::looks_like_saved_model(&head, len) {
        tf::savedmodel::read(bytes)
    } else if tf::looks_like_graph_def(&head, len) {
        tf::graphdef::read(bytes)
    } else {
        eprintln!("no TensorFlow reader claims the file");
        std::process::exit(2);
    };
    println!("plugin: {}", saved::summary(&opened));
    measure::print_own_peak();
}
