//! Bounded work on hostile shapes, end to end: no input may drive a reader above 64 MiB + 8x
//! the input's size in resident memory, or past 5 s per 30 MB, and no report may grow past 8x
//! the input.
//!
//! Each shape (`socair_test_support::shapes`) is generated at test time (about 30 MB each;
//! nothing large is committed), and the built `socair scan` and `socair tensors` run on it as
//! children whose peak RSS comes from `wait4` and whose output goes to a file ([`measure`]).
//! The plugin alone is measured on the same shapes by each reader plugin's own
//! `tests/bounds.rs`. Every measurement is printed before it is checked (`-- --nocapture` shows
//! them); the shapes run one at a time.

/// The shared measurement (`socair_test_support::measure`), every command run under this
/// crate's `measure-child` (see [`measure::measure`]); archive.rs and numpy.rs measure with it
/// too, under the same one-shape-at-a-time lock.
pub(crate) mod measure {
    pub use socair_test_support::measure::{check, write_input, Cost, SERIAL, TARGET};
    use std::path::Path;
    use std::process::Command;

    /// Runs `cmd` under `measure-child`, which reports the peak of `cmd` alone (a child of the
    /// test process would carry the test's own peak in its `ru_maxrss`).
    pub fn measure(cmd: Command, dir: &Path, what: &str) -> Cost {
        let trampoline = Path::new(env!("CARGO_BIN_EXE_measure-child"));
        socair_test_support::measure::measure(cmd, dir, what, Some(trampoline))
    }
}

use crate::common::socair;
use measure::{check, measure, write_input, TARGET};
use socair_test_support::shapes::*;

/// Writes the shape to a file and measures `socair scan` and `socair tensors` on it.
fn run_shape(shape: &str, _format: &str, ext: &str, data: Vec<u8>) {
    let _one = measure::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, file, len) = write_input(&format!("{shape}.{ext}"), data);
    for command in ["scan", "tensors"] {
        let mut cmd = socair();
        cmd.arg(command).arg(&file);
        let c = measure(cmd, dir.path(), command);
        check(shape, command, len, &c, dir.path());
    }
}

#[test]
fn gguf_metadata_array_of_millions_of_u8() {
    run_shape("gguf-u8-array", "gguf", "gguf", gguf_u8_array(TARGET));
}

#[test]
fn gguf_metadata_array_of_millions_of_bools() {
    run_shape("gguf-bool-array", "gguf", "gguf", gguf_bool_array(TARGET));
}

#[test]
fn gguf_metadata_array_of_millions_of_strings() {
    run_shape(
        "gguf-string-array",
        "gguf",
        "gguf",
        gguf_string_array(TARGET / 9),
    );
}

#[test]
fn gguf_metadata_nested_empty_arrays() {
    run_shape(
        "gguf-nested-empty",
        "gguf",
        "gguf",
        gguf_nested_empty(TARGET / 12),
    );
}

#[test]
fn gguf_metadata_deeply_nested_arrays() {
    run_shape(
        "gguf-nested-deep",
        "gguf",
        "gguf",
        gguf_nested_deep(TARGET / 84),
    );
}

#[test]
fn gguf_millions_of_metadata_keys() {
    run_shape(
        "gguf-many-keys",
        "gguf",
        "gguf",
        gguf_many_keys(TARGET / 21),
    );
}

#[test]
fn gguf_a_million_zero_size_tensors() {
    run_shape(
        "gguf-zero-tensors",
        "gguf",
        "gguf",
        gguf_zero_tensors(1_000_000, 8),
    );
}

#[test]
fn gguf_tensor_infos_with_long_names() {
    run_shape(
        "gguf-long-names",
        "gguf",
        "gguf",
        gguf_zero_tensors(TARGET / 95, 63),
    );
}

#[test]
fn gguf_tensors_of_removed_types() {
    run_shape(
        "gguf-removed-types",
        "gguf",
        "gguf",
        gguf_removed_types(TARGET / 72),
    );
}

#[test]
fn onnx_millions_of_tiny_nodes() {
    run_shape(
        "onnx-tiny-nodes",
        "onnx",
        "onnx",
        onnx_tiny_nodes(TARGET / 19),
    );
}

#[test]
fn onnx_millions_of_attributes() {
    run_shape(
        "onnx-attributes",
        "onnx",
        "onnx",
        onnx_attributes(TARGET / 10),
    );
}

#[test]
fn onnx_millions_of_initializers() {
    run_shape(
        "onnx-initializers",
        "onnx",
        "onnx",
        onnx_initializers(TARGET / 16),
    );
}

#[test]
fn onnx_millions_of_unnamed_initializers() {
    run_shape(
        "onnx-unnamed-inits",
        "onnx",
        "onnx",
        onnx_unnamed_initializers(TARGET / 8),
    );
}

#[test]
fn onnx_deep_subgraph_nesting() {
    run_shape(
        "onnx-deep-subgraphs",
        "onnx",
        "onnx",
        onnx_deep_subgraphs(30, TARGET / 10),
    );
}

#[test]
fn onnx_huge_repeated_field() {
    run_shape(
        "onnx-repeated-inputs",
        "onnx",
        "onnx",
        onnx_repeated_inputs(TARGET / 8),
    );
}

#[test]
fn onnx_millions_of_metadata_props() {
    run_shape(
        "onnx-metadata-props",
        "onnx",
        "onnx",
        onnx_metadata_props(TARGET / 22),
    );
}

#[test]
fn onnx_millions_of_constant_nodes() {
    run_shape(
        "onnx-constants",
        "onnx",
        "onnx",
        onnx_constants(TARGET / 40),
    );
}

#[test]
fn safetensors_a_million_zero_size_tensors() {
    run_shape(
        "st-zero-tensors",
        "safetensors",
        "safetensors",
        safetensors_zero_tensors(TARGET / 57),
    );
}

#[test]
fn safetensors_huge_metadata() {
    run_shape(
        "st-metadata",
        "safetensors",
        "safetensors",
        safetensors_metadata(TARGET / 14),
    );
}

#[test]
fn safetensors_deeply_nested_json() {
    run_shape(
        "st-deep-json",
        "safetensors",
        "safetensors",
        safetensors_deep_json(TARGET / 2),
    );
}

#[test]
fn safetensors_rank_of_millions() {
    run_shape(
        "st-huge-rank",
        "safetensors",
        "safetensors",
        safetensors_huge_rank(TARGET / 2),
    );
}

#[test]
fn safetensors_unknown_field_with_a_huge_array() {
    run_shape(
        "st-unknown-field",
        "safetensors",
        "safetensors",
        safetensors_unknown_field(TARGET / 2),
    );
}
