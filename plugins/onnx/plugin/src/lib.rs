//! The `onnx` plugin: the library the host loads at run time. It declares what
//! `socair-onnx` (plugins/onnx/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_onnx::*;

socair_plugin_kit::export_plugin! {
    name: "onnx",
    rule_sets: [],
    readers: [OnnxReader],
    writers: [],
    encoders: [],
}
