//! The `crfsuite` plugin: the library the host loads at run time. It declares what
//! `socair-crfsuite` (plugins/crfsuite/reader) reads, and holds nothing else, so the reader is
//! tested and fuzzed as a normal library.

use socair_crfsuite::CrfsuiteReader;

socair_plugin_kit::export_plugin! {
    name: "crfsuite",
    rule_sets: [],
    readers: [CrfsuiteReader],
    writers: [],
    encoders: [],
}
