//! The reader alone on the hostile shapes of issue 16, item 4 (`tests/tests/bounds/shapes.rs`):
//! each shape is generated, written to a file, and this test binary re-runs itself as a child
//! (`child`) that reads the file and runs the pure parser and the plugin's `opened_file` glue,
//! the whole plugin side of one `open`. Its peak RSS, time and output are checked against
//! 64 MiB + 8x the input, 5 s per 30 MB and 8x the input (`tests/tests/bounds/measure.rs`).
//! The same shapes run end to end in `tests/tests/bounds.rs`.

#[path = "../../../../tests/tests/bounds/measure.rs"]
mod measure;
#[path = "../../../../tests/tests/bounds/shapes.rs"]
mod shapes;

use measure::{plugin_alone, TARGET};
use shapes::*;

/// In a child run only: reads the file named by `SOCAIR_BOUNDS_CHILD` and opens it.
#[test]
fn child() {
    let Some(data) = measure::child_input() else {
        return;
    };
    let opened = socair_gguf::opened_file(socair_gguf::reader::parse(&data[..], true));
    println!("plugin: {}", socair_plugin_kit::testing::summary(&opened));
    measure::print_own_peak();
}

#[test]
fn gguf_metadata_array_of_millions_of_u8() {
    plugin_alone(
        "gguf-u8-array",
        "gguf-u8-array.gguf",
        gguf_u8_array(TARGET),
        "bounds::child",
    );
}

#[test]
fn gguf_metadata_array_of_millions_of_bools() {
    plugin_alone(
        "gguf-bool-array",
        "gguf-bool-array.gguf",
        gguf_bool_array(TARGET),
        "bounds::child",
    );
}

#[test]
fn gguf_metadata_array_of_millions_of_strings() {
    plugin_alone(
        "gguf-string-array",
        "gguf-string-array.gguf",
        gguf_string_array(TARGET / 9),
        "bounds::child",
    );
}

#[test]
fn gguf_metadata_nested_empty_arrays() {
    plugin_alone(
        "gguf-nested-empty",
        "gguf-nested-empty.gguf",
        gguf_nested_empty(TARGET / 12),
        "bounds::child",
    );
}

#[test]
fn gguf_metadata_deeply_nested_arrays() {
    plugin_alone(
        "gguf-nested-deep",
        "gguf-nested-deep.gguf",
        gguf_nested_deep(TARGET / 84),
        "bounds::child",
    );
}

#[test]
fn gguf_millions_of_metadata_keys() {
    plugin_alone(
        "gguf-many-keys",
        "gguf-many-keys.gguf",
        gguf_many_keys(TARGET / 21),
        "bounds::child",
    );
}

#[test]
fn gguf_a_million_zero_size_tensors() {
    plugin_alone(
        "gguf-zero-tensors",
        "gguf-zero-tensors.gguf",
        gguf_zero_tensors(1_000_000, 8),
        "bounds::child",
    );
}

#[test]
fn gguf_tensor_infos_with_long_names() {
    plugin_alone(
        "gguf-long-names",
        "gguf-long-names.gguf",
        gguf_zero_tensors(TARGET / 95, 63),
        "bounds::child",
    );
}

#[test]
fn gguf_tensors_of_removed_types() {
    plugin_alone(
        "gguf-removed-types",
        "gguf-removed-types.gguf",
        gguf_removed_types(TARGET / 72),
        "bounds::child",
    );
}
