//! The `archive` plugin: the library the host loads at run time. It declares what
//! `socair-archive` (plugins/archive/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_archive::*;
use socair_plugin_kit::export::rule_set;

socair_plugin_kit::export_plugin! {
    name: "archive",
    rule_sets: [
        rule_set(GRAMMAR.0, GRAMMAR.1),
        rule_set(socair_pickle::pickle::Profile::DATA_RULE_SET, "1"),
        rule_set(socair_pickle::pickle::Profile::SKLEARN_RULE_SET, "1"),
    ],
    readers: [ZipReader, SevenZReader, TarReader, StreamReader],
    writers: [],
    encoders: [],
}
