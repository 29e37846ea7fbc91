//! `cargo run -p socair-tests --bin write-bounds-corpora`: writes a small version of every
//! hostile shape of `socair_test_support::shapes` into the fuzz corpora
//! (`fuzz/corpus/<target>/bounds-*`), where the fuzzers start from them; run it when the
//! shapes change, and commit what it writes.

use socair_test_support::shapes::*;
use std::path::Path;

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let shapes: Vec<(&str, &str, Vec<u8>)> = vec![
        ("gguf_reader", "bounds-u8-array", gguf_u8_array(64)),
        ("gguf_reader", "bounds-bool-array", gguf_bool_array(64)),
        ("gguf_reader", "bounds-string-array", gguf_string_array(16)),
        ("gguf_reader", "bounds-nested-empty", gguf_nested_empty(16)),
        ("gguf_reader", "bounds-nested-deep", gguf_nested_deep(4)),
        ("gguf_reader", "bounds-many-keys", gguf_many_keys(16)),
        (
            "gguf_reader",
            "bounds-zero-tensors",
            gguf_zero_tensors(16, 8),
        ),
        ("gguf_reader", "bounds-long-names", gguf_zero_tensors(8, 63)),
        ("gguf_reader", "bounds-removed-types", gguf_removed_types(8)),
        ("onnx_reader", "bounds-tiny-nodes", onnx_tiny_nodes(16)),
        ("onnx_reader", "bounds-attributes", onnx_attributes(16)),
        ("onnx_reader", "bounds-initializers", onnx_initializers(16)),
        (
            "onnx_reader",
            "bounds-unnamed-inits",
            onnx_unnamed_initializers(16),
        ),
        (
            "onnx_reader",
            "bounds-deep-subgraphs",
            onnx_deep_subgraphs(8, 8),
        ),
        (
            "onnx_reader",
            "bounds-repeated-inputs",
            onnx_repeated_inputs(16),
        ),
        (
            "onnx_reader",
            "bounds-metadata-props",
            onnx_metadata_props(16),
        ),
        ("onnx_reader", "bounds-constants", onnx_constants(16)),
        (
            "safetensors_header",
            "bounds-zero-tensors",
            safetensors_zero_tensors(16),
        ),
        (
            "safetensors_header",
            "bounds-metadata",
            safetensors_metadata(16),
        ),
        (
            "safetensors_header",
            "bounds-deep-json",
            safetensors_deep_json(200),
        ),
        (
            "safetensors_header",
            "bounds-huge-rank",
            safetensors_huge_rank(100),
        ),
        (
            "safetensors_header",
            "bounds-unknown-field",
            safetensors_unknown_field(32),
        ),
    ];
    for (target, name, data) in shapes {
        let path = corpus.join(target).join(name);
        std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{}", path.display());
    }
}
