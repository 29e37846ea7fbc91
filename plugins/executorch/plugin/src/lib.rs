//! The `executorch` plugin: the library the host loads at run time. It declares what
//! `socair-executorch` (plugins/executorch/reader) reads, and holds nothing else, so the reader
//! is tested, fuzzed and linked by other plugins as a normal library.

use socair_executorch::*;

socair_plugin_kit::export_plugin! {
    name: "executorch",
    rule_sets: [],
    readers: [ExecutorchReader],
    writers: [],
    encoders: [],
}
