//! The "i-quants" (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, IQ4_XS): 256-element
//! super-blocks whose codes index ggml's lattice grids (`grid_small`, `grid_iq2s`,
//! `grid_iq1s`). Each function mirrors `dequantize_row_<type>` in `ggml/src/ggml-quants.c` at
//! llama.cpp commit d3cf1f14a2e16fbd7ebad34b12cb71b8af345c43 for one block, in the same
//! arithmetic order. A grid entry's bytes are read little-endian, as ggml's
//! `(const uint8_t *)(grid + index)` reads them on the little-endian machines it runs on.
//!
//! Signs: ggml multiplies by `-1.f` or `1.f`, which flips the sign of every number but leaves
//! a NaN as it is (a multiplication returns its NaN operand, quieted); `signed` does exactly
//! that without relying on the compiler keeping the multiplication.

use crate::grid_iq1s::IQ1S_GRID;
use crate::grid_iq2s::IQ2S_GRID;
use crate::grid_small::{
    IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS, KVALUES_IQ4NL,
};
use crate::half::{f16_to_f32, le_f16, le_u16, le_u32};

/// `IQ1S_DELTA` / `IQ1M_DELTA` (ggml-common.h).
const IQ1S_DELTA: f32 = 0.125;

/// `v * (negative ? -1.f : 1.f)` as the hardware computes it.
#[inline]
fn signed(v: f32, negative: bool) -> f32 {
    if negative && !v.is_nan() {
        -v
    } else {
        v
    }
}

/// Byte `j` of a grid entry.
#[inline]
fn grid_byte(entry: u64, j: usize) -> u8 {
    (entry >> (8 * j)) as u8
}

/// Eight elements `db * grid[j] * sign_j`, sign bit j of `signs`.
#[inline]
fn eight(y: &mut [f32], db: f32, entry: u64, signs: u8) {
    for (j, out) in y.iter_mut().enumerate().take(8) {
        *out = signed(db * f32::from(grid_byte(entry, j)), signs & (1 << j) != 0);
    }
}

/// `dequantize_row_iq2_xxs`: `block_iq2_xxs { half d; u16 qs[32]; }`: per 32 elements two
/// words, four 8-bit grid indices and four 7-bit sign indices plus a 4-bit scale.
pub fn iq2_xxs(b: &[u8; 66], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    for ib32 in 0..8 {
        let at = 2 + 8 * ib32;
        let aux1 = le_u32(b, at + 4);
        let db = d * (0.5 + (aux1 >> 28) as f32) * 0.25;
        for l in 0..4 {
            let entry = IQ2XXS_GRID[usize::from(b[at + l])];
            let signs = KSIGNS_IQ2XS[((aux1 >> (7 * l)) & 127) as usize];
            eight(&mut y[32 * ib32 + 8 * l..], db, entry, signs);
        }
    }
}

/// `dequantize_row_iq2_xs`: `block_iq2_xs { half d; u16 qs[32]; u8 scales[8]; }`: 9-bit grid
/// index and 7-bit sign index per word, two 4-bit scales per 32 elements.
pub fn iq2_xs(b: &[u8; 74], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    for ib32 in 0..8 {
        let sc = b[66 + ib32];
        let db = [
            d * (0.5 + f32::from(sc & 0xf)) * 0.25,
            d * (0.5 + f32::from(sc >> 4)) * 0.25,
        ];
        for l in 0..4 {
            let q = le_u16(b, 2 + 2 * (4 * ib32 + l));
            let entry = IQ2XS_GRID[usize::from(q & 511)];
            let signs = KSIGNS_IQ2XS[usize::from(q >> 9)];
            eight(&mut y[32 * ib32 + 8 * l..], db[l / 2], entry, signs);
        }
    }
}

/// `dequantize_row_iq2_s`: `block_iq2_s { half d; u8 qs[64]; u8 qh[8]; u8 scales[8]; }`: the
/// first 32 `qs` are grid indices' low bytes, the last 32 explicit sign bytes.
pub fn iq2_s(b: &[u8; 82], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    for ib32 in 0..8 {
        let sc = b[74 + ib32];
        let qh = u32::from(b[66 + ib32]);
        let db = [
            d * (0.5 + f32::from(sc & 0xf)) * 0.25,
            d * (0.5 + f32::from(sc >> 4)) * 0.25,
        ];
        for l in 0..4 {
            let index = u32::from(b[2 + 4 * ib32 + l]) | ((qh << (8 - 2 * l)) & 0x300);
            let entry = IQ2S_GRID[(index & 1023) as usize];
            let signs = b[34 + 4 * ib32 + l];
            eight(&mut y[32 * ib32 + 8 * l..], db[l / 2], entry, signs);
        }
    }
}

/// `dequantize_row_iq3_xxs`: `block_iq3_xxs { half d; u8 qs[96]; }`: 64 grid indices (four
/// values each), then a word per 32 elements with four 7-bit sign indices and a 4-bit scale.
pub fn iq3_xxs(b: &[u8; 98], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    for ib32 in 0..8 {
        let aux = le_u32(b, 66 + 4 * ib32);
        let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
        for l in 0..4 {
            let signs = KSIGNS_IQ2XS[((aux >> (7 * l)) & 127) as usize];
            let g1 = u64::from(IQ3XXS_GRID[usize::from(b[2 + 8 * ib32 + 2 * l])]);
            let g2 = u64::from(IQ3XXS_GRID[usize::from(b[2 + 8 * ib32 + 2 * l + 1])]);
            eight(&mut y[32 * ib32 + 8 * l..], db, g1 | (g2 << 32), signs);
        }
    }
}

/// `dequantize_row_iq3_s`: `block_iq3_s { half d; u8 qs[64]; u8 qh[8]; u8 signs[32];
/// u8 scales[4]; }`: 9-bit grid indices, explicit signs, a 4-bit odd scale per 32 elements.
pub fn iq3_s(b: &[u8; 110], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    for pair in 0..4 {
        let sc = b[106 + pair];
        let dbs = [
            d * f32::from(1 + 2 * (sc & 0xf)),
            d * f32::from(1 + 2 * u16::from(sc >> 4)),
        ];
        for (half, &db) in dbs.iter().enumerate() {
            let ib32 = 2 * pair + half;
            let qh = u32::from(b[66 + ib32]);
            for l in 0..4 {
                let qs = 2 + 8 * ib32 + 2 * l;
                let i1 = u32::from(b[qs]) | ((qh << (8 - 2 * l)) & 256);
                let i2 = u32::from(b[qs + 1]) | ((qh << (7 - 2 * l)) & 256);
                let g1 = u64::from(IQ3S_GRID[(i1 & 511) as usize]);
                let g2 = u64::from(IQ3S_GRID[(i2 & 511) as usize]);
                let signs = b[74 + 4 * ib32 + l];
                eight(&mut y[32 * ib32 + 8 * l..], db, g1 | (g2 << 32), signs);
            }
        }
    }
}

/// Eight IQ1 elements `dl * (grid[j] + delta)` (grid bytes are -1, 0 or 1).
#[inline]
fn eight_iq1(y: &mut [f32], dl: f32, index: usize, delta: f32) {
    let entry = IQ1S_GRID[index & 2047];
    for (j, out) in y.iter_mut().enumerate().take(8) {
        *out = dl * (f32::from(grid_byte(entry, j) as i8) + delta);
    }
}

/// `dequantize_row_iq1_s`: `block_iq1_s { half d; u8 qs[32]; u16 qh[8]; }`: 11-bit grid
/// indices, a 3-bit odd scale and the delta's sign per 32 elements.
pub fn iq1_s(b: &[u8; 50], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    for ib in 0..8 {
        let qh = le_u16(b, 34 + 2 * ib);
        let dl = d * f32::from(2 * ((qh >> 12) & 7) + 1);
        let delta = if qh & 0x8000 != 0 {
            -IQ1S_DELTA
        } else {
            IQ1S_DELTA
        };
        for l in 0..4 {
            let index = usize::from(b[2 + 4 * ib + l]) | (usize::from((qh >> (3 * l)) & 7) << 8);
            eight_iq1(&mut y[32 * ib + 8 * l..], dl, index, delta);
        }
    }
}

/// `dequantize_row_iq1_m`: `block_iq1_m { u8 qs[32]; u8 qh[16]; u8 scales[8]; }`: the block's
/// half scale is spread over the top nibbles of the four scale words (`iq1m_scale_t`).
pub fn iq1_m(b: &[u8; 56], y: &mut [f32; 256]) {
    let sc = [le_u16(b, 48), le_u16(b, 50), le_u16(b, 52), le_u16(b, 54)];
    let scale =
        (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
    let d = f16_to_f32(scale);
    for ib in 0..8 {
        let s = sc[ib / 2];
        let dl1 = d * f32::from(2 * ((s >> (6 * (ib % 2))) & 7) + 1);
        let dl2 = d * f32::from(2 * ((s >> (6 * (ib % 2) + 3)) & 7) + 1);
        let qs = &b[4 * ib..4 * ib + 4];
        let (h0, h1) = (usize::from(b[32 + 2 * ib]), usize::from(b[33 + 2 * ib]));
        let index = [
            usize::from(qs[0]) | ((h0 << 8) & 0x700),
            usize::from(qs[1]) | ((h0 << 4) & 0x700),
            usize::from(qs[2]) | ((h1 << 8) & 0x700),
            usize::from(qs[3]) | ((h1 << 4) & 0x700),
        ];
        let delta = |h: usize, bit: usize| {
            if h & bit != 0 {
                -IQ1S_DELTA
            } else {
                IQ1S_DELTA
            }
        };
        let deltas = [
            delta(h0, 0x08),
            delta(h0, 0x80),
            delta(h1, 0x08),
            delta(h1, 0x80),
        ];
        for l in 0..4 {
            let dl = if l < 2 { dl1 } else { dl2 };
            eight_iq1(&mut y[32 * ib + 8 * l..], dl, index[l], deltas[l]);
        }
    }
}

/// `dequantize_row_iq4_xs`: `block_iq4_xs { half d; u16 scales_h; u8 scales_l[4];
/// u8 qs[128]; }`: a 6-bit scale per 32 elements, y = d * (ls - 32) * kvalues_iq4nl[q].
pub fn iq4_xs(b: &[u8; 136], y: &mut [f32; 256]) {
    let d = le_f16(b, 0);
    let scales_h = le_u16(b, 2);
    for ib in 0..8 {
        let low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0xf;
        let high = ((scales_h >> (2 * ib)) & 3) as u8;
        let ls = i16::from(low | (high << 4));
        let dl = d * f32::from(ls - 32);
        for j in 0..16 {
            let q = b[8 + 16 * ib + j];
            y[32 * ib + j] = dl * f32::from(KVALUES_IQ4NL[usize::from(q & 0xf)]);
            y[32 * ib + j + 16] = dl * f32::from(KVALUES_IQ4NL[usize::from(q >> 4)]);
        }
    }
}
