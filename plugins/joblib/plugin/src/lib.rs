//! The `joblib` plugin: the library the host loads at run time. It declares what
//! `socair-joblib` (plugins/joblib/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_joblib::*;
use socair_pickle::pickle::{Grammar, Profile};
use socair_plugin_kit::export::rule_set;

socair_plugin_kit::export_plugin! {
    name: "joblib",
    // Every socair-wo version (the host may pin any; the pickle machine runs it), and the two
    // library profiles.
    rule_sets: Grammar::ALL
        .iter()
        .map(|g| rule_set(Grammar::RULE_SET, g.version()))
        .chain([
            rule_set(Profile::DATA_RULE_SET, "1"),
            rule_set(Profile::SKLEARN_RULE_SET, "1"),
        ]),
    readers: [JoblibReader],
    writers: [],
    encoders: [],
}
