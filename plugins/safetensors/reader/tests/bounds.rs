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
    let opened = socair_safetensors::opened_file(socair_safetensors::header::parse_header(
        &data,
        data.len() as u64,
    ));
    println!("plugin: {}", socair_plugin_kit::testing::summary(&opened));
    measure::print_own_peak();
}

#[test]
fn safetensors_a_million_zero_size_tensors() {
    plugin_alone(
        "st-zero-tensors",
        "st-zero-tensors.safetensors",
        safetensors_zero_tensors(TARGET / 57),
        "bounds::child",
    );
}

#[test]
fn safetensors_huge_metadata() {
    plugin_alone(
        "st-metadata",
        "st-metadata.safetensors",
        safetensors_metadata(TARGET / 14),
        "bounds::child",
    );
}

#[test]
fn safetensors_deeply_nested_json() {
    plugin_alone(
        "st-deep-json",
        "st-deep-json.safetensors",
        safetensors_deep_json(TARGET / 2),
        "bounds::child",
    );
}

#[test]
fn safetensors_rank_of_millions() {
    plugin_alone(
        "st-huge-rank",
        "st-huge-rank.safetensors",
        safetensors_huge_rank(TARGET / 2),
        "bounds::child",
    );
}

#[test]
fn safetensors_unknown_field_with_a_huge_array() {
    plugin_alone(
        "st-unknown-field",
        "st-unknown-field.safetensors",
        safetensors_unknown_field(TARGET / 2),
        "bounds::child",
    );
}
