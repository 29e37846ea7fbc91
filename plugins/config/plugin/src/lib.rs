//! The `config` plugin: the library the host loads at run time. It declares what
//! `socair-config` (plugins/config/reader) reads, native executables by their magic and YAML
//! configs, and holds nothing else, so the readers are tested, fuzzed and linked by other
//! plugins as a normal library.

use socair_config::{ExecutableReader, YamlReader};

socair_plugin_kit::export_plugin! {
    name: "config",
    rule_sets: [],
    readers: [ExecutableReader, YamlReader],
    writers: [],
    encoders: [],
}
