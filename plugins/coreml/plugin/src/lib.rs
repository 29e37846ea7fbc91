//! The `coreml` plugin: the library the host loads at run time. It declares what
//! `socair-coreml` (plugins/coreml/reader) reads, and holds nothing else, so the readers are
//! tested and fuzzed as a normal library.

use socair_coreml::*;

socair_plugin_kit::export_plugin! {
    name: "coreml",
    rule_sets: [],
    readers: [CoremlModelReader, CoremlWeightsReader, CoremlManifestReader],
    writers: [],
    encoders: [],
}
