//! The `paddle` plugin: the library the host loads at run time. It declares what
//! `socair-paddle` (plugins/paddle/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_paddle::*;

socair_plugin_kit::export_plugin! {
    name: "paddle",
    rule_sets: [],
    readers: [ProgramReader, PirReader, ParamsReader],
    writers: [],
    encoders: [],
}
