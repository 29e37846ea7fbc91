//! Per block, the largest absolute error the block's format implies between an original value
//! and the value ggml decodes: the "quantization step" a diff of a quantized tensor against its
//! float original may allow.
//!
//! Every bound starts from the levels one block can represent (its grid: the code values times
//! the block's decoded scales). An original value inside the grid's range that a
//! round-to-nearest quantizer maps to this block is at most half the largest gap between two
//! neighbouring levels away from its decoded value. Two more terms make the bound hold for
//! ggml's own reference quantizers (`quantize_row_<type>_ref` in `ggml/src/ggml-quants.c` at
//! llama.cpp commit d3cf1f14a2e16fbd7ebad34b12cb71b8af345c43; gguf-py's `quants.py` copies
//! them):
//!
//! - clamping: Q4_0 and Q5_0 map the block's largest-magnitude value to code -8 (-16), so the
//!   other sign reaches only +7 (+15) and a value near +8d (+16d) is off by up to one full
//!   step d; MXFP4's scale 2^(floor(log2 amax) - 3) has a top level 1.5 * 2^floor(log2 amax),
//!   so values up to 2^(floor+1) clip by up to 4d (d = the halved E8M0 scale);
//! - scale rounding: the codes are chosen for the exact `f32` scale, the block stores it as a
//!   half, off by at most δ = max(|d| * 2^-11, 2^-25) (half an ulp, normal or subnormal), which
//!   moves an element with code q by |q| * δ (and a stored half minimum by δ_m);
//! - `f32` arithmetic: 2^-22 of the largest level magnitude (a few ulps, both sides' products).
//!
//! Per type (d, m: the block's decoded half scale and minimum; `Reference` = proved for the
//! reference quantizer):
//!
//! | type | bound | kind |
//! |---|---|---|
//! | Q4_0 / Q5_0 | d + 8δ / d + 16δ (one step: the clamped side) | Reference |
//! | Q4_1 / Q5_1 | d/2 + 15δ + δ_m / d/2 + 31δ + δ_m | Reference |
//! | Q8_0, Q8_1 | d/2 + 127δ | Reference |
//! | Q8_K | d/2 (an `f32` scale) | Reference |
//! | TQ1_0, TQ2_0, Q2_0 | d/2 + 2δ (codes -1..1, scale = amax) | Reference |
//! | MXFP4 | 4d (the clip above; the scale is a power of two, exact) | Reference |
//! | F16, BF16 | half the spacing above the decoded value (round to nearest even) | Reference |
//! | F32, I8, I16, I32 | 0 (exact) | Reference |
//! | F64, I64 | half an `f32` ulp of the decoded value (this crate's rounding to `f32`) | Reference |
//! | Q2_K..Q6_K | max over sub-blocks of half the sub-block's step (d * sc) | GridOnly |
//! | IQ2_XXS/XS/S | 9 * db (levels ±8, ±25, ±43 times db) | GridOnly |
//! | IQ3_XXS / IQ3_S | 5 * db (levels ±4..±62, gap 10) / 1 * db (odd levels ±1..±15) | GridOnly |
//! | IQ1_S / IQ1_M | dl / 2 (levels dl * (-1, 0, 1 ± 1/8)) | GridOnly |
//! | IQ4_NL / IQ4_XS | 12 * dl (`kvalues_iq4nl`'s largest gap is 24) | GridOnly |
//! | NVFP4 | 2d per 16-element sub-block (levels 0..6 doubled: largest gap 4d) | GridOnly |
//! | Q1_0 | d (levels ±d) | GridOnly |
//!
//! `GridOnly`: ggml's quantizers for these types are not round-to-nearest onto a fixed
//! scale. The k-quants search scale and minimum per sub-block (`make_qkx2_quants`,
//! `make_qx_quants`, `make_q3_quants` with `rmin`/`rdelta` steps), which may clip a sub-block's
//! extreme values by more than half a step; the i-quants choose whole 8-element grid points
//! (IQ2/IQ3/IQ1 grids hold only some code combinations), so one element can be several levels
//! from its original; IQ4_NL/IQ4_XS and NVFP4 search or round their scales; Q1_0 keeps only
//! signs. The number given is then the distance a value inside the block's range can have from
//! the nearest level of its own sub-block: a sound floor for "what the format can express",
//! not a promise about ggml's output. Importance-matrix quantization (llama-quantize
//! `--imatrix`) also uses search for Q4_0..Q5_1 (`quantize_row_q4_0_impl`), so a
//! `Reference` bound holds for files written without one.
//!
//! A scale that is infinite or NaN makes the bound infinite.

use crate::half::{bf16_to_f32, le_f16, le_u16};
use crate::kquants::{q3_k_scales, scale_min_k4};

/// How far a bound can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundKind {
    /// Proved for ggml's reference quantizer of the type (and gguf-py's copy of it).
    Reference,
    /// Half the largest gap of the block's levels: what a round-to-nearest quantizer onto this
    /// block's grid would make; ggml's own quantizer for the type may exceed it.
    GridOnly,
}

/// The error bound of one block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockBound {
    /// The largest |original - decoded| the format implies for any element of the block.
    pub max_abs_error: f32,
    /// Whether ggml's reference quantizer is proved to stay within it.
    pub kind: BoundKind,
}

/// Half an ulp of a half-rounded scale: how far the stored scale can be from the exact one.
fn half_rounding(d: f32) -> f32 {
    (d.abs() * f32::from_bits(0x3a00_0000)).max(f32::from_bits(0x3300_0000)) // 2^-11, 2^-25
}

/// `f32` arithmetic slack for levels up to `magnitude`.
fn slack(magnitude: f32) -> f32 {
    magnitude.abs() * f32::from_bits(0x3480_0000) // 2^-22
}

/// A bound, infinite when it is not a number.
fn finite_or_inf(v: f32) -> f32 {
    if v.is_nan() {
        f32::INFINITY
    } else {
        v
    }
}

fn reference(v: f32) -> BlockBound {
    BlockBound {
        max_abs_error: finite_or_inf(v),
        kind: BoundKind::Reference,
    }
}

fn grid_only(v: f32) -> BlockBound {
    BlockBound {
        max_abs_error: finite_or_inf(v),
        kind: BoundKind::GridOnly,
    }
}

/// A symmetric-code block: step |d|, codes up to `qmax` in magnitude, error `steps` * |d|.
fn symmetric(d: f32, qmax: f32, steps: f32) -> BlockBound {
    let d = d.abs();
    reference(steps * d + qmax * half_rounding(d) + slack(qmax * d))
}

/// A scale-and-minimum block (Q4_1, Q5_1): codes 0..=qmax.
fn with_min(d: f32, m: f32, qmax: f32) -> BlockBound {
    let d = d.abs();
    reference(d / 2.0 + qmax * half_rounding(d) + half_rounding(m) + slack(qmax * d + m.abs()))
}

/// Half the spacing above |v| for a float with `mant_bits` mantissa bits and minimum normal
/// exponent `min_exp` (unbiased), given the value's biased exponent field `e` and `bias`.
fn half_ulp(v: f32, mant_bits: i32, min_exp: i32) -> f32 {
    if !v.is_finite() {
        return f32::INFINITY;
    }
    let a = v.abs();
    let exp = if a == 0.0 {
        min_exp
    } else {
        ((a.to_bits() >> 23) as i32 - 127).max(min_exp)
    };
    2f32.powi(exp - mant_bits - 1)
}

/// The bound of one block of `type_id` (`block` is exactly one block's bytes; the caller checks
/// its length), or `None` for an id this crate does not decode.
pub fn of_block(type_id: u32, block: &[u8]) -> Option<BlockBound> {
    let d = || le_f16(block, 0);
    Some(match type_id {
        0 | 24 | 25 | 26 => reference(0.0),
        1 => reference(half_ulp(le_f16(block, 0), 10, -14)),
        30 => reference(half_ulp(bf16_to_f32(le_u16(block, 0)), 7, -126)),
        28 => {
            let v = block.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok());
            reference(v.map_or(0.0, |b| half_ulp(f64::from_le_bytes(b) as f32, 23, -126)))
        }
        27 => {
            let v = block.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok());
            reference(v.map_or(0.0, |b| half_ulp(i64::from_le_bytes(b) as f32, 23, -126)))
        }
        2 => symmetric(d(), 8.0, 1.0),
        6 => symmetric(d(), 16.0, 1.0),
        3 => with_min(d(), le_f16(block, 2), 15.0),
        7 => with_min(d(), le_f16(block, 2), 31.0),
        8 | 9 => symmetric(d(), 127.0, 0.5),
        15 => {
            let b = block.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok());
            let d = b.map_or(0.0, f32::from_le_bytes).abs();
            reference(d / 2.0 + slack(127.0 * d))
        }
        34 => symmetric(le_f16(block, 52), 2.0, 0.5),
        35 => symmetric(le_f16(block, 64), 2.0, 0.5),
        42 => symmetric(d(), 2.0, 0.5),
        39 => {
            let d = crate::half::e8m0_to_f32_half(block.first().copied().unwrap_or(0));
            reference(4.0 * d + slack(12.0 * d))
        }
        40 => {
            let d = block
                .iter()
                .take(4)
                .map(|&s| crate::half::ue4m3_to_f32(s))
                .fold(0.0f32, f32::max);
            grid_only(2.0 * d + slack(12.0 * d))
        }
        41 => grid_only(d().abs() + slack(d())),
        _ => return super_block(type_id, block),
    })
}

/// The k-quant and i-quant bounds (see the module table).
fn super_block(type_id: u32, block: &[u8]) -> Option<BlockBound> {
    let max_of = |it: &mut dyn Iterator<Item = f32>| {
        it.map(f32::abs).fold(0.0f32, |a, b| {
            if b.is_nan() || a.is_nan() {
                f32::NAN
            } else {
                a.max(b)
            }
        })
    };
    let byte = |i: usize| block.get(i).copied().unwrap_or(0);
    let scales12 = |at: usize| {
        let mut s = [0u8; 12];
        if let Some(src) = block.get(at..at + 12) {
            s.copy_from_slice(src);
        }
        s
    };
    let d0 = le_f16(block, 0);
    let step = match type_id {
        10 => {
            let d = le_f16(block, 80);
            max_of(&mut (0..16).map(|i| d * f32::from(byte(i) & 0xf))) / 2.0
        }
        11 => {
            let d = le_f16(block, 108);
            let sc = q3_k_scales(&scales12(96));
            max_of(&mut sc.iter().map(|&s| d * f32::from(i16::from(s) - 32))) / 2.0
        }
        12 | 13 => {
            let sc = scales12(4);
            max_of(&mut (0..8).map(|j| d0 * f32::from(scale_min_k4(j, &sc).0))) / 2.0
        }
        14 => {
            let d = le_f16(block, 208);
            max_of(&mut (0..16).map(|i| d * f32::from(byte(192 + i) as i8))) / 2.0
        }
        16 => {
            let top = (0..8)
                .map(|ib| byte(2 + 8 * ib + 7) >> 4)
                .max()
                .unwrap_or(0);
            9.0 * d0.abs() * (0.5 + f32::from(top)) * 0.25
        }
        17 | 22 => {
            let at = if type_id == 17 { 66 } else { 74 };
            let top = (0..8)
                .map(|i| byte(at + i))
                .map(|s| (s & 0xf).max(s >> 4))
                .max()
                .unwrap_or(0);
            9.0 * d0.abs() * (0.5 + f32::from(top)) * 0.25
        }
        18 => {
            let top = (0..8)
                .map(|ib| byte(66 + 4 * ib + 3) >> 4)
                .max()
                .unwrap_or(0);
            5.0 * d0.abs() * (0.5 + f32::from(top)) * 0.5
        }
        21 => {
            let top = (0..4)
                .map(|i| byte(106 + i))
                .map(|s| (s & 0xf).max(s >> 4))
                .max()
                .unwrap_or(0);
            d0.abs() * f32::from(1 + 2 * top)
        }
        19 => {
            let top = (0..8)
                .map(|ib| (le_u16(block, 34 + 2 * ib) >> 12) & 7)
                .max()
                .unwrap_or(0);
            d0.abs() * f32::from(2 * top + 1) / 2.0
        }
        29 => {
            let sc = [48, 50, 52, 54].map(|at| le_u16(block, at));
            let scale =
                (sc[0] >> 12) | ((sc[1] >> 8) & 0xf0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
            let d = crate::half::f16_to_f32(scale);
            let top = (0..16)
                .map(|k| (sc[k / 4] >> (3 * (k % 4))) & 7)
                .max()
                .unwrap_or(0);
            d.abs() * f32::from(2 * top + 1) / 2.0
        }
        20 => 12.0 * d0.abs(),
        23 => {
            let scales_h = le_u16(block, 2);
            let ls = (0..8).map(|ib| {
                let low = (byte(4 + ib / 2) >> (4 * (ib % 2))) & 0xf;
                let high = ((scales_h >> (2 * ib)) & 3) as u8;
                f32::from(i16::from(low | (high << 4)) - 32)
            });
            12.0 * max_of(&mut ls.map(|l| d0 * l))
        }
        _ => return None,
    };
    Some(grid_only(step + slack(step * 128.0)))
}

#[cfg(test)]
mod tests {
    use crate::grid_iq1s::IQ1S_GRID;
    use crate::grid_iq2s::IQ2S_GRID;
    use crate::grid_small::{IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KVALUES_IQ4NL};
    use std::collections::BTreeSet;

    fn bytes_of(entries: impl Iterator<Item = u64>, width: usize) -> BTreeSet<i32> {
        entries
            .flat_map(|e| (0..width).map(move |j| i32::from((e >> (8 * j)) as u8 as i8)))
            .collect()
    }

    /// Half the largest gap between neighbouring levels ±v (v > 0) or v (signed grids).
    fn half_gap(values: &BTreeSet<i32>, mirrored: bool) -> f32 {
        let mut levels: Vec<i32> = values.iter().copied().collect();
        if mirrored {
            levels.extend(values.iter().map(|v| -v));
        }
        levels.sort_unstable();
        levels.dedup();
        levels
            .windows(2)
            .map(|w| (w[1] - w[0]) as f32 / 2.0)
            .fold(0.0, f32::max)
    }

    #[test]
    fn the_constants_of_the_module_table_are_the_grids_half_gaps() {
        let iq2 = bytes_of(
            IQ2XXS_GRID
                .iter()
                .chain(&IQ2XS_GRID)
                .chain(&IQ2S_GRID)
                .copied(),
            8,
        );
        assert_eq!(iq2, BTreeSet::from([8, 25, 43]));
        assert_eq!(half_gap(&iq2, true), 9.0);
        let iq3xxs = bytes_of(IQ3XXS_GRID.iter().map(|&v| u64::from(v)), 4);
        assert_eq!(half_gap(&iq3xxs, true), 5.0);
        let iq3s = bytes_of(IQ3S_GRID.iter().map(|&v| u64::from(v)), 4);
        assert_eq!(iq3s, (1..=15).step_by(2).collect());
        assert_eq!(half_gap(&iq3s, true), 1.0);
        let iq1 = bytes_of(IQ1S_GRID.iter().copied(), 8);
        assert_eq!(iq1, BTreeSet::from([-1, 0, 1]));
        assert_eq!(half_gap(&iq1, false), 0.5);
        let iq4: BTreeSet<i32> = KVALUES_IQ4NL.iter().map(|&v| i32::from(v)).collect();
        assert_eq!(half_gap(&iq4, false), 12.0);
        // Spot checks against ggml-common.h's text: first and last entries.
        assert_eq!(IQ2XXS_GRID[0], 0x0808080808080808);
        assert_eq!(IQ2S_GRID[1023], 0x2b2b2b2b2b2b2b2b);
        assert_eq!(IQ1S_GRID[2047], 0x0101010101010101);
        assert_eq!(IQ3XXS_GRID[0], 0x04040404);
    }
}
