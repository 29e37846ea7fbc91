//! The `torch-zip` plugin: the library the host loads at run time. It declares what
//! `socair-torch-zip` (plugins/torch-zip/reader) reads, and holds nothing else, so the readers are tested,
//! fuzzed and linked by other plugins as a normal library.

use socair_plugin_kit::export::rule_set;
use socair_torch_zip::*;

socair_plugin_kit::export_plugin! {
    name: "torch-zip",
    rule_sets: Grammar::ALL
        .iter()
        .map(|g| rule_set(Grammar::RULE_SET, g.version()))
        .chain([
            rule_set(pickle::Profile::DATA_RULE_SET, "1"),
            rule_set(pickle::Profile::SKLEARN_RULE_SET, "1"),
        ]),
    readers: [TorchZipReader, TorchLegacyReader, Pt2Reader],
    writers: [],
    encoders: [],
}
