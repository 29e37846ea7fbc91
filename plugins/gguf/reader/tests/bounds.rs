//! The reader alone on the hostile GGUF shapes (`socair_test_support::shapes`): each shape is
//! generated and written to a file, and `bounds-gguf` (a program of `socair-tests`) reads it
//! and runs the pure parser and the plugin's `opened_file` glue, the whole plugin side of one
//! `open`. Its peak RSS, CPU time and output are checked against 64 MiB + 8x the input, 5 s
//! per 30 MB and 8x the input (`socair_test_support::measure`). The same shapes run end to end
//! in `tests/tests/bounds.rs`.

use socair_test_support::measure::{plugin_alone, TARGET};
use socair_test_support::shapes::*;

#[test]
fn gguf_metadata_array_of_millions_of_u8() {
    plugin_alone(
        "gguf-u8-array",
        "gguf-u8-array.gguf",
        gguf_u8_array(TARGET),
        "bounds-gguf",
    );
}

#[test]
fn gguf_metadata_array_of_millions_of_bools() {
    plugin_alone(
        "gguf-bool-array",
        "gguf-bool-array.gguf",
        gguf_bool_array(TARGET),
        "bounds-gguf",
    );
}

#[test]
fn gguf_metadata_array_of_millions_of_strings() {
    plugin_alone(
        "gguf-string-array",
        "gguf-string-array.gguf",
        gguf_string_array(TARGET / 9),
        "bounds-gguf",
    );
}

#[test]
fn gguf_metadata_nested_empty_arrays() {
    plugin_alone(
        "gguf-nested-empty",
        "gguf-nested-empty.gguf",
        gguf_nested_empty(TARGET / 12),
        "bounds-gguf",
    );
}

#[test]
fn gguf_metadata_deeply_nested_arrays() {
    plugin_alone(
        "gguf-nested-deep",
        "gguf-nested-deep.gguf",
        gguf_nested_deep(TARGET / 84),
        "bounds-gguf",
    );
}

#[test]
fn gguf_millions_of_metadata_keys() {
    plugin_alone(
        "gguf-many-keys",
        "gguf-many-keys.gguf",
        gguf_many_keys(TARGET / 21),
        "bounds-gguf",
    );
}

#[test]
fn gguf_a_million_zero_size_tensors() {
    plugin_alone(
        "gguf-zero-tensors",
        "gguf-zero-tensors.gguf",
        gguf_zero_tensors(1_000_000, 8),
        "bounds-gguf",
    );
}

#[test]
fn gguf_tensor_infos_with_long_names() {
    plugin_alone(
        "gguf-long-names",
        "gguf-long-names.gguf",
        gguf_zero_tensors(TARGET / 95, 63),
        "bounds-gguf",
    );
}

#[test]
fn gguf_tensors_of_removed_types() {
    plugin_alone(
        "gguf-removed-types",
        "gguf-removed-types.gguf",
        gguf_removed_types(TARGET / 72),
        "bounds-gguf",
    );
}
