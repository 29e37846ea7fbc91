//! The 256-element super-block formats ("k-quants" Q2_K..Q8_K and the ternary TQ1_0/TQ2_0):
//! one or two `half` super-block scales and 16 or 8 small sub-block scales. Each function
//! mirrors `dequantize_row_<type>` in `ggml/src/ggml-quants.c` at llama.cpp commit
//! d3cf1f14a2e16fbd7ebad34b12cb71b8af345c43 for one block, in the same element order and the
//! same arithmetic order (no fused multiply-add). Layouts: `block_<type>` in
//! `ggml/src/ggml-common.h` at the same commit.

use crate::half::le_f16;

/// `get_scale_min_k4` (ggml-quants.c): the 6-bit scale and minimum of sub-block `j` (0..8)
/// packed in Q4_K/Q5_K's 12 scale bytes.
#[inline]
pub fn scale_min_k4(j: usize, q: &[u8; 12]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

/// The 12 scale bytes at `at`.
#[inline]
fn scale_bytes(b: &[u8], at: usize) -> [u8; 12] {
    let mut s = [0u8; 12];
    if let Some(src) = b.get(at..at + 12) {
        s.copy_from_slice(src);
    }
    s
}

/// `dequantize_row_q2_K`: `block_q2_K { u8 scales[16]; u8 qs[64]; half d; half dmin; }`,
/// y = d * (sc & 15) * q - dmin * (sc >> 4) with 2-bit q.
pub fn q2_k(b: &[u8; 84], y: &mut [f32; 256]) {
    let d = le_f16(b, 80);
    let min = le_f16(b, 82);
    let mut out = 0;
    let mut is = 0;
    for n in 0..2 {
        let q = &b[16 + 32 * n..16 + 32 * n + 32];
        for shift in [0u32, 2, 4, 6] {
            for half in 0..2 {
                let sc = b[is];
                is += 1;
                let dl = d * f32::from(sc & 0xf);
                let ml = min * f32::from(sc >> 4);
                for &ql in &q[16 * half..16 * half + 16] {
                    y[out] = dl * f32::from((ql >> shift) & 3) - ml;
                    out += 1;
                }
            }
        }
    }
}

/// Q3_K's 16 six-bit scales, unpacked from 12 bytes as `dequantize_row_q3_K` does with
/// `kmask1`/`kmask2` on four little-endian words.
pub fn q3_k_scales(s: &[u8; 12]) -> [i8; 16] {
    let word = |i: usize| u32::from_le_bytes([s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]]);
    let (kmask1, kmask2) = (0x0303_0303u32, 0x0f0f_0f0fu32);
    let (a0, a1, tmp) = (word(0), word(1), word(2));
    let aux = [
        (a0 & kmask2) | ((tmp & kmask1) << 4),
        (a1 & kmask2) | (((tmp >> 2) & kmask1) << 4),
        ((a0 >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4),
        ((a1 >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4),
    ];
    let mut out = [0i8; 16];
    for (i, w) in aux.iter().enumerate() {
        for (k, byte) in w.to_le_bytes().iter().enumerate() {
            out[4 * i + k] = *byte as i8;
        }
    }
    out
}

/// `dequantize_row_q3_K`: `block_q3_K { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }`,
/// y = d * (sc - 32) * (q - (high bit ? 0 : 4)).
pub fn q3_k(b: &[u8; 110], y: &mut [f32; 256]) {
    let d_all = le_f16(b, 108);
    let scales = q3_k_scales(&scale_bytes(b, 96));
    let mut out = 0;
    let mut is = 0;
    let mut m = 1u8;
    for n in 0..2 {
        let q = &b[32 + 32 * n..32 + 32 * n + 32];
        for shift in [0u32, 2, 4, 6] {
            for half in 0..2 {
                let dl = d_all * f32::from(i16::from(scales[is]) - 32);
                is += 1;
                for l in 16 * half..16 * half + 16 {
                    let low = i16::from((q[l] >> shift) & 3);
                    let high = if b[l] & m != 0 { 0 } else { 4 };
                    y[out] = dl * f32::from(low - high);
                    out += 1;
                }
            }
            m <<= 1;
        }
    }
}

/// `dequantize_row_q4_K`: `block_q4_K { half d; half dmin; u8 scales[12]; u8 qs[128]; }`,
/// y = d * sc * q - dmin * m with 4-bit q, eight sub-blocks of 32.
pub fn q4_k(b: &[u8; 144], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    let min = le_f16(b, 2);
    let scales = scale_bytes(b, 4);
    for chunk in 0..4 {
        let q = &b[16 + 32 * chunk..16 + 32 * chunk + 32];
        let (sc1, m1) = scale_min_k4(2 * chunk, &scales);
        let (sc2, m2) = scale_min_k4(2 * chunk + 1, &scales);
        let (d1, m1) = (d * f32::from(sc1), min * f32::from(m1));
        let (d2, m2) = (d * f32::from(sc2), min * f32::from(m2));
        for l in 0..32 {
            y[64 * chunk + l] = d1 * f32::from(q[l] & 0xf) - m1;
            y[64 * chunk + 32 + l] = d2 * f32::from(q[l] >> 4) - m2;
        }
    }
}

/// `dequantize_row_q5_K`: `block_q5_K { half d; half dmin; u8 scales[12]; u8 qh[32];
/// u8 qs[128]; }`, as Q4_K with a fifth bit from `qh`.
pub fn q5_k(b: &[u8; 176], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    let min = le_f16(b, 2);
    let scales = scale_bytes(b, 4);
    let qh = &b[16..48];
    for chunk in 0..4 {
        let ql = &b[48 + 32 * chunk..48 + 32 * chunk + 32];
        let (u1, u2) = (1u8 << (2 * chunk), 2u8 << (2 * chunk));
        let (sc1, m1) = scale_min_k4(2 * chunk, &scales);
        let (sc2, m2) = scale_min_k4(2 * chunk + 1, &scales);
        let (d1, m1) = (d * f32::from(sc1), min * f32::from(m1));
        let (d2, m2) = (d * f32::from(sc2), min * f32::from(m2));
        for l in 0..32 {
            let h1 = if qh[l] & u1 != 0 { 16 } else { 0 };
            let h2 = if qh[l] & u2 != 0 { 16 } else { 0 };
            y[64 * chunk + l] = d1 * f32::from((ql[l] & 0xf) + h1) - m1;
            y[64 * chunk + 32 + l] = d2 * f32::from((ql[l] >> 4) + h2) - m2;
        }
    }
}

/// `dequantize_row_q6_K`: `block_q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; half d; }`,
/// y = d * sc * (q - 32) with 6-bit q, sixteen sub-blocks of 16.
pub fn q6_k(b: &[u8; 210], y: &mut [f32; 256]) {
    let d = le_f16(b, 208);
    for n in 0..2 {
        let ql = &b[64 * n..64 * n + 64];
        let qh = &b[128 + 32 * n..128 + 32 * n + 32];
        let sc = &b[192 + 8 * n..192 + 8 * n + 8];
        let out = &mut y[128 * n..128 * n + 128];
        for l in 0..32 {
            let is = l / 16;
            let code = |low: u8, high: u8| f32::from(((low | (high << 4)) as i8).wrapping_sub(32));
            let q1 = code(ql[l] & 0xf, qh[l] & 3);
            let q2 = code(ql[l + 32] & 0xf, (qh[l] >> 2) & 3);
            let q3 = code(ql[l] >> 4, (qh[l] >> 4) & 3);
            let q4 = code(ql[l + 32] >> 4, (qh[l] >> 6) & 3);
            let s = |k: usize| f32::from(sc[is + k] as i8);
            out[l] = d * s(0) * q1;
            out[l + 32] = d * s(2) * q2;
            out[l + 64] = d * s(4) * q3;
            out[l + 96] = d * s(6) * q4;
        }
    }
}

/// `dequantize_row_q8_K`: `block_q8_K { f32 d; i8 qs[256]; i16 bsums[16]; }`, y = d * q (the
/// sums are not elements). ggml's `type_traits` give Q8_K no `to_float`; the function exists.
pub fn q8_k(b: &[u8; 292], y: &mut [f32; 256]) {
    let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    for j in 0..256 {
        y[j] = d * f32::from(b[4 + j] as i8);
    }
}

/// One base-3 digit of a TQ1_0 byte, as ggml extracts it: `((u8)(q * 3^n) * 3) >> 8`.
#[inline]
fn trit(q: u8, pow3: u8) -> i16 {
    ((u16::from(q.wrapping_mul(pow3)) * 3) >> 8) as i16
}

/// `dequantize_row_tq1_0`: `block_tq1_0 { u8 qs[48]; u8 qh[4]; half d; }`, five ternary
/// digits a byte in `qs`, four in `qh`, y = (t - 1) * d.
pub fn tq1_0(b: &[u8; 54], y: &mut [f32; 256]) {
    const POW3: [u8; 6] = [1, 3, 9, 27, 81, 243];
    let d = le_f16(b, 52);
    let mut out = 0;
    for (start, width) in [(0usize, 32usize), (32, 16)] {
        for &p in &POW3[..5] {
            for m in 0..width {
                y[out] = f32::from(trit(b[start + m], p) - 1) * d;
                out += 1;
            }
        }
    }
    for &p in &POW3[..4] {
        for j in 0..4 {
            y[out] = f32::from(trit(b[48 + j], p) - 1) * d;
            out += 1;
        }
    }
}

/// `dequantize_row_tq2_0`: `block_tq2_0 { u8 qs[64]; half d; }`, y = (q - 1) * d with 2-bit q.
pub fn tq2_0(b: &[u8; 66], y: &mut [f32; 256]) {
    let d = le_f16(b, 64);
    let mut out = 0;
    for j in [0usize, 32] {
        for l in 0..4 {
            for m in 0..32 {
                let q = (b[j + m] >> (l * 2)) & 3;
                y[out] = f32::from(i16::from(q) - 1) * d;
                out += 1;
            }
        }
    }
}
