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
    let opened = socair_onnx::opened_file(socair_onnx::model::parse(bytes::Bytes::from(data)));
    println!("plugin: {}", socair_plugin_kit::testing::summary(&opened));
    measure::print_own_peak();
}

#[test]
fn onnx_millions_of_tiny_nodes() {
    plugin_alone(
        "onnx-tiny-nodes",
        "onnx-tiny-nodes.onnx",
        onnx_tiny_nodes(TARGET / 19),
        "bounds::child",
    );
}

#[test]
fn onnx_millions_of_attributes() {
    plugin_alone(
        "onnx-attributes",
        "onnx-attributes.onnx",
        onnx_attributes(TARGET / 10),
        "bounds::child",
    );
}

#[test]
fn onnx_millions_of_initializers() {
    plugin_alone(
        "onnx-initializers",
        "onnx-initializers.onnx",
        onnx_initializers(TARGET / 16),
        "bounds::child",
    );
}

#[test]
fn onnx_millions_of_unnamed_initializers() {
    plugin_alone(
        "onnx-unnamed-inits",
        "onnx-unnamed-inits.onnx",
        onnx_unnamed_initializers(TARGET / 8),
        "bounds::child",
    );
}

#[test]
fn onnx_deep_subgraph_nesting() {
    plugin_alone(
        "onnx-deep-subgraphs",
        "onnx-deep-subgraphs.onnx",
        onnx_deep_subgraphs(30, TARGET / 10),
        "bounds::child",
    );
}

#[test]
fn onnx_huge_repeated_field() {
    plugin_alone(
        "onnx-repeated-inputs",
        "onnx-repeated-inputs.onnx",
        onnx_repeated_inputs(TARGET / 8),
        "bounds::child",
    );
}

#[test]
fn onnx_millions_of_metadata_props() {
    plugin_alone(
        "onnx-metadata-props",
        "onnx-metadata-props.onnx",
        onnx_metadata_props(TARGET / 22),
        "bounds::child",
    );
}

#[test]
fn onnx_millions_of_constant_nodes() {
    plugin_alone(
        "onnx-constants",
        "onnx-constants.onnx",
        onnx_constants(TARGET / 40),
        "bounds::child",
    );
}
