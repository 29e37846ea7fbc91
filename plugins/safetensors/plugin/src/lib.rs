//! The `safetensors` plugin: the library the host loads at run time. It declares what
//! `socair-safetensors` (plugins/safetensors/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_safetensors::*;

socair_plugin_kit::export_plugin! {
    name: "safetensors",
    rule_sets: [],
    readers: [SafetensorsReader],
    writers: [SafetensorsWriter],
    encoders: [],
}
