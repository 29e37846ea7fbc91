//! The 32-element (and Q1_0/Q2_0/NVFP4) block formats: one scale (and for Q4_1/Q5_1 a minimum)
//! per block and small integer or table codes. Each function mirrors `dequantize_row_<type>` in
//! `ggml/src/ggml-quants.c` at llama.cpp commit d3cf1f14a2e16fbd7ebad34b12cb71b8af345c43 for one
//! block, in the same arithmetic order (each product and sum rounded to `f32` on its own: no
//! fused multiply-add, as x86-64 builds of ggml-base compute and as gguf-py's numpy computes).
//! Block layouts: the `block_<type>` structs of `ggml/src/ggml-common.h` at the same commit.

use crate::grid_small::{KVALUES_FP4, KVALUES_IQ4NL};
use crate::half::{e8m0_to_f32_half, le_f16, le_u32, ue4m3_to_f32};

/// `dequantize_row_q4_0`: `block_q4_0 { half d; u8 qs[16]; }`, y = (q - 8) * d, low nibbles
/// first.
pub fn q4_0(b: &[u8; 18], y: &mut [f32; 32]) {
    let d = le_f16(b, 0);
    for j in 0..16 {
        let q = b[2 + j];
        y[j] = (i32::from(q & 0x0f) - 8) as f32 * d;
        y[j + 16] = (i32::from(q >> 4) - 8) as f32 * d;
    }
}

/// `dequantize_row_q4_1`: `block_q4_1 { half d; half m; u8 qs[16]; }`, y = q * d + m.
pub fn q4_1(b: &[u8; 20], y: &mut [f32; 32]) {
    let d = le_f16(b, 0);
    let m = le_f16(b, 2);
    for j in 0..16 {
        let q = b[4 + j];
        y[j] = f32::from(q & 0x0f) * d + m;
        y[j + 16] = f32::from(q >> 4) * d + m;
    }
}

/// The fifth bits of Q5_0/Q5_1 element `j` and `j + 16`, as ggml extracts them.
#[inline]
fn fifth_bits(qh: u32, j: usize) -> (u8, u8) {
    (
        (((qh >> j) << 4) & 0x10) as u8,
        ((qh >> (j + 12)) & 0x10) as u8,
    )
}

/// `dequantize_row_q5_0`: `block_q5_0 { half d; u8 qh[4]; u8 qs[16]; }`, y = (q - 16) * d.
pub fn q5_0(b: &[u8; 22], y: &mut [f32; 32]) {
    let d = le_f16(b, 0);
    let qh = le_u32(b, 2);
    for j in 0..16 {
        let q = b[6 + j];
        let (h0, h1) = fifth_bits(qh, j);
        y[j] = (i32::from((q & 0x0f) | h0) - 16) as f32 * d;
        y[j + 16] = (i32::from((q >> 4) | h1) - 16) as f32 * d;
    }
}

/// `dequantize_row_q5_1`: `block_q5_1 { half d; half m; u8 qh[4]; u8 qs[16]; }`, y = q * d + m.
pub fn q5_1(b: &[u8; 24], y: &mut [f32; 32]) {
    let d = le_f16(b, 0);
    let m = le_f16(b, 2);
    let qh = le_u32(b, 4);
    for j in 0..16 {
        let q = b[8 + j];
        let (h0, h1) = fifth_bits(qh, j);
        y[j] = f32::from((q & 0x0f) | h0) * d + m;
        y[j + 16] = f32::from((q >> 4) | h1) * d + m;
    }
}

/// `dequantize_row_q8_0`: `block_q8_0 { half d; i8 qs[32]; }`, y = q * d.
pub fn q8_0(b: &[u8; 34], y: &mut [f32; 32]) {
    let d = le_f16(b, 0);
    for j in 0..32 {
        y[j] = f32::from(b[2 + j] as i8) * d;
    }
}

/// Q8_1: `block_q8_1 { half d; half s; i8 qs[32]; }` (36 bytes). ggml has no `to_float` for
/// it (`type_traits[GGML_TYPE_Q8_1]` in `ggml/src/ggml.c` sets none: it is only the CPU
/// backend's dot-product partner); the values are what `quantize_row_q8_1_ref` encodes,
/// y = q * d as in Q8_0, and `s` (d times the sum of the codes) is not an element.
pub fn q8_1(b: &[u8; 36], y: &mut [f32; 32]) {
    let d = le_f16(b, 0);
    for j in 0..32 {
        y[j] = f32::from(b[4 + j] as i8) * d;
    }
}

/// `dequantize_row_mxfp4`: `block_mxfp4 { u8 e; u8 qs[16]; }`, y = kvalues_fp4[q] * 2^(e-128).
pub fn mxfp4(b: &[u8; 17], y: &mut [f32; 32]) {
    let d = e8m0_to_f32_half(b[0]);
    for j in 0..16 {
        let q = b[1 + j];
        y[j] = f32::from(KVALUES_FP4[usize::from(q & 0x0f)]) * d;
        y[j + 16] = f32::from(KVALUES_FP4[usize::from(q >> 4)]) * d;
    }
}

/// `dequantize_row_nvfp4`: `block_nvfp4 { u8 d[4]; u8 qs[32]; }`, four sub-blocks of 16 with a
/// UE4M3 scale each, y = kvalues_fp4[q] * d.
pub fn nvfp4(b: &[u8; 36], y: &mut [f32; 64]) {
    for s in 0..4 {
        let d = ue4m3_to_f32(b[s]);
        for j in 0..8 {
            let q = b[4 + s * 8 + j];
            y[s * 16 + j] = f32::from(KVALUES_FP4[usize::from(q & 0x0f)]) * d;
            y[s * 16 + j + 8] = f32::from(KVALUES_FP4[usize::from(q >> 4)]) * d;
        }
    }
}

/// `dequantize_row_q1_0`: `block_q1_0 { half d; u8 qs[16]; }` (128 elements), y = bit ? d : -d.
pub fn q1_0(b: &[u8; 18], y: &mut [f32; 128]) {
    let d = le_f16(b, 0);
    for j in 0..128 {
        let bit = (b[2 + j / 8] >> (j % 8)) & 1;
        y[j] = if bit != 0 { d } else { -d };
    }
}

/// `dequantize_row_q2_0`: `block_q2_0 { half d; u8 qs[16]; }` (64 elements), y = (q - 1) * d.
pub fn q2_0(b: &[u8; 18], y: &mut [f32; 64]) {
    let d = le_f16(b, 0);
    for j in 0..64 {
        let q = (b[2 + j / 4] >> ((j % 4) * 2)) & 3;
        y[j] = (i32::from(q) - 1) as f32 * d;
    }
}

/// `dequantize_row_iq4_nl`: `block_iq4_nl { half d; u8 qs[16]; }`, y = d * kvalues_iq4nl[q].
pub fn iq4_nl(b: &[u8; 18], y: &mut [f32; 32]) {
    let d = le_f16(b, 0);
    for j in 0..16 {
        let q = b[2 + j];
        y[j] = d * f32::from(KVALUES_IQ4NL[usize::from(q & 0x0f)]);
        y[j + 16] = d * f32::from(KVALUES_IQ4NL[usize::from(q >> 4)]);
    }
}
