//! Differential test against gguf-py 0.19.0 (`gguf/quants.py`), whose numpy dequantizers copy
//! ggml's `dequantize_row_*`: every fixture tensor of `fixtures/gguf-quants/` (written by
//! `make_quants.py`) must dequantize to gguf-py's float32 values bit for bit, NaNs included;
//! the float originals of the quantized prefixes must lie within `block_bound` of the decoded
//! values where the bound is `Reference`.
//!
//! One documented exception, where ggml's C is followed rather than numpy: an F16 signaling
//! NaN. ggml's `ggml_compute_fp16_to_fp32` (`ggml/src/ggml-impl.h`, llama.cpp commit
//! d3cf1f14a2e1) multiplies the widened bits by 2^-112, which returns the NaN quiet; numpy's
//! `astype(np.float32)` keeps the quiet bit clear. `expected.json` lists those elements
//! (`gguf_py_differs_from_ggml`), and for them socair must give gguf-py's bits with bit 22 set.

use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_ggml_quants::{block_bounds, dequantize, format, BoundKind};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/gguf-quants")
}

fn read(name: &str, sha: &Value) -> Vec<u8> {
    let bytes = std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        Some(hex(&Sha256::digest(&bytes))).as_deref(),
        sha.as_str(),
        "{name}: not the file make_quants.py wrote"
    );
    bytes
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(dir().join("expected.json")).unwrap()).unwrap()
}

#[test]
fn every_type_matches_gguf_py_bit_for_bit() {
    let expected = expected();
    let types = expected["types"].as_object().unwrap();
    assert!(types.len() >= 25, "fixtures missing: {}", types.len());
    let mut compared = 0usize;
    let mut failures = Vec::new();
    for (name, entry) in types {
        let id = entry["id"].as_u64().unwrap() as u32;
        assert_eq!(format(id).map(|f| f.name), Some(name.as_str()));
        let bytes = read(&format!("{name}.bin"), &entry["bin_sha256"]);
        let want = floats(&read(&format!("{name}.f32"), &entry["f32_sha256"]));
        let n = entry["n_elements"].as_u64().unwrap();
        let got = dequantize(id, &bytes, n).unwrap();
        assert_eq!(got.len(), want.len(), "{name}");
        let fmt = format(id).unwrap();
        let quieted: Vec<usize> = entry["gguf_py_differs_from_ggml"]["elements"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_u64().unwrap() as usize).collect())
            .unwrap_or_default();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let want_bits = if quieted.contains(&i) {
                assert!(w.is_nan() && w.to_bits() & 0x0040_0000 == 0, "{name} {i}");
                w.to_bits() | 0x0040_0000
            } else {
                w.to_bits()
            };
            if g.to_bits() != want_bits {
                failures.push(format!(
                    "{name} element {i} (block {}): socair {g:e} ({:#010x}), gguf-py {w:e} ({:#010x})",
                    i / fmt.block_size,
                    g.to_bits(),
                    w.to_bits()
                ));
            }
        }
        compared += got.len();
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} differ:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn reference_bounds_hold_for_gguf_py_quantizations() {
    let expected = expected();
    let mut checked = 0usize;
    for (name, entry) in expected["types"].as_object().unwrap() {
        let Some(blocks) = entry["quantized_blocks"].as_u64() else {
            continue;
        };
        let id = entry["id"].as_u64().unwrap() as u32;
        let fmt = format(id).unwrap();
        let bytes = read(&format!("{name}.bin"), &entry["bin_sha256"]);
        let orig = floats(&read(&format!("{name}.orig.f32"), &entry["orig_sha256"]));
        let quantized = &bytes[..blocks as usize * fmt.type_size];
        let decoded = dequantize(id, quantized, blocks * fmt.block_size as u64).unwrap();
        let bounds = block_bounds(id, quantized).unwrap();
        for (i, (o, d)) in orig.iter().zip(&decoded).enumerate() {
            let bound = bounds[i / fmt.block_size];
            assert_eq!(bound.kind, BoundKind::Reference, "{name}");
            if !o.is_finite() || !d.is_finite() {
                continue;
            }
            let err = (f64::from(*o) - f64::from(*d)).abs();
            assert!(
                err <= f64::from(bound.max_abs_error),
                "{name} element {i}: original {o:e}, decoded {d:e}, error {err:e} > bound {:e}",
                bound.max_abs_error
            );
            checked += 1;
        }
    }
    assert!(checked > 3000, "{checked}");
}
