//! The `catboost` plugin: the library the host loads at run time. It declares what
//! `socair-catboost` (plugins/catboost/reader) reads, and holds nothing else, so the reader is
//! tested, fuzzed and linked by other plugins as a normal library.

use socair_catboost::CatBoostReader;

socair_plugin_kit::export_plugin! {
    name: "catboost",
    rule_sets: [],
    readers: [CatBoostReader],
    writers: [],
    encoders: [],
}
