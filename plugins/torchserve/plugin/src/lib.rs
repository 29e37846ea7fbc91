//! The `torchserve` plugin: the library the host loads at run time. It declares what
//! `socair-torchserve` (plugins/torchserve/reader) reads, and holds nothing else, so the reader
//! is tested, fuzzed and linked as a normal library.

use socair_torchserve::*;

socair_plugin_kit::export_plugin! {
    name: "torchserve",
    rule_sets: [],
    readers: [MarReader],
    writers: [],
    encoders: [],
}
