//! The `gguf` plugin: the library the host loads at run time. It declares what
//! `socair-gguf` (plugins/gguf/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_gguf::*;

socair_plugin_kit::export_plugin! {
    name: "gguf",
    rule_sets: [],
    readers: [GgufReader, GgmlLegacyReader],
    writers: [GgufWriter],
    encoders: [],
}
