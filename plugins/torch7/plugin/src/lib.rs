//! The `torch7` plugin: the library the host loads at run time. It declares what
//! `socair-torch7` (plugins/torch7/reader) reads, and holds nothing else, so the reader is
//! tested and fuzzed as a normal library.

use socair_torch7::Torch7Reader;

socair_plugin_kit::export_plugin! {
    name: "torch7",
    rule_sets: [],
    readers: [Torch7Reader],
    writers: [],
    encoders: [],
}
