//! The reader alone on the hostile ONNX shapes (`socair_test_support::shapes`): each shape is
//! generated and written to a file, and `bounds-onnx` (a program of `socair-tests`) reads it
//! and runs the pure parser and the plugin's `opened_file` glue, the whole plugin side of one
//! `open`. Its peak RSS, CPU time and output are checked against 64 MiB + 8x the input, 5 s
//! per 30 MB and 8x the input (`socair_test_support::measure`). The same shapes run end to end
//! in `tests/tests/bounds.rs`.

use socair_test_support::measure::{plugin_alone, TARGET};
use socair_test_support::shapes::*;

#[test]
fn onnx_millions_of_tiny_nodes() {
    plugin_alone(
        "onnx-tiny-nodes",
        "onnx-tiny-nodes.onnx",
        onnx_tiny_nodes(TARGET / 19),
        "bounds-onnx",
    );
}

#[test]
fn onnx_millions_of_attributes() {
    plugin_alone(
        "onnx-attributes",
        "onnx-attributes.onnx",
        onnx_attributes(TARGET / 10),
        "bounds-onnx",
    );
}

#[test]
fn onnx_millions_of_initializers() {
    plugin_alone(
        "onnx-initializers",
        "onnx-initializers.onnx",
        onnx_initializers(TARGET / 16),
        "bounds-onnx",
    );
}

#[test]
fn onnx_millions_of_unnamed_initializers() {
    plugin_alone(
        "onnx-unnamed-inits",
        "onnx-unnamed-inits.onnx",
        onnx_unnamed_initializers(TARGET / 8),
        "bounds-onnx",
    );
}

#[test]
fn onnx_deep_subgraph_nesting() {
    plugin_alone(
        "onnx-deep-subgraphs",
        "onnx-deep-subgraphs.onnx",
        onnx_deep_subgraphs(30, TARGET / 10),
        "bounds-onnx",
    );
}

#[test]
fn onnx_huge_repeated_field() {
    plugin_alone(
        "onnx-repeated-inputs",
        "onnx-repeated-inputs.onnx",
        onnx_repeated_inputs(TARGET / 8),
        "bounds-onnx",
    );
}

#[test]
fn onnx_millions_of_metadata_props() {
    plugin_alone(
        "onnx-metadata-props",
        "onnx-metadata-props.onnx",
        onnx_metadata_props(TARGET / 22),
        "bounds-onnx",
    );
}

#[test]
fn onnx_millions_of_constant_nodes() {
    plugin_alone(
        "onnx-constants",
        "onnx-constants.onnx",
        onnx_constants(TARGET / 40),
        "bounds-onnx",
    );
}
