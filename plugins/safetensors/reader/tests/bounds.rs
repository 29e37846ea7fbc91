//! The reader alone on the hostile safetensors shapes (`socair_test_support::shapes`): each
//! shape is generated and written to a file, and `bounds-safetensors` (a program of
//! `socair-tests`) reads it and runs the header parser and the plugin's `opened_file` glue,
//! the whole plugin side of one `open`. Its peak RSS, CPU time and output are checked against
//! 64 MiB + 8x the input, 5 s per 30 MB and 8x the input (`socair_test_support::measure`). The
//! same shapes run end to end in `tests/tests/bounds.rs`.

use socair_test_support::measure::{plugin_alone, TARGET};
use socair_test_support::shapes::*;

#[test]
fn safetensors_a_million_zero_size_tensors() {
    plugin_alone(
        "st-zero-tensors",
        "st-zero-tensors.safetensors",
        safetensors_zero_tensors(TARGET / 57),
        "bounds-safetensors",
    );
}

#[test]
fn safetensors_huge_metadata() {
    plugin_alone(
        "st-metadata",
        "st-metadata.safetensors",
        safetensors_metadata(TARGET / 14),
        "bounds-safetensors",
    );
}

#[test]
fn safetensors_deeply_nested_json() {
    plugin_alone(
        "st-deep-json",
        "st-deep-json.safetensors",
        safetensors_deep_json(TARGET / 2),
        "bounds-safetensors",
    );
}

#[test]
fn safetensors_rank_of_millions() {
    plugin_alone(
        "st-huge-rank",
        "st-huge-rank.safetensors",
        safetensors_huge_rank(TARGET / 2),
        "bounds-safetensors",
    );
}

#[test]
fn safetensors_unknown_field_with_a_huge_array() {
    plugin_alone(
        "st-unknown-field",
        "st-unknown-field.safetensors",
        safetensors_unknown_field(TARGET / 2),
        "bounds-safetensors",
    );
}
