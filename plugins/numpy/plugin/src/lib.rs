//! The `numpy` plugin: the library the host loads at run time. It declares what
//! `socair-numpy` (plugins/numpy/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_numpy::*;

socair_plugin_kit::export_plugin! {
    name: PLUGIN_NAME,
    rule_sets: [],
    readers: [NpyReader, NpzReader],
    writers: [],
    encoders: [],
}
