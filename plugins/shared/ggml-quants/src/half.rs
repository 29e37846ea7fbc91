//! The scalar decodings ggml's dequantizers start from: IEEE half (`ggml_compute_fp16_to_fp32`),
//! bfloat16 (`ggml_compute_bf16_to_fp32`), E8M0 (`ggml_e8m0_to_fp32_half`) and UE4M3
//! (`ggml_ue4m3_to_fp32`), all in `ggml/src/ggml-impl.h` at llama.cpp commit
//! d3cf1f14a2e16fbd7ebad34b12cb71b8af345c43.
//!
//! Each is written on the bits so the result is the same on every machine and at every
//! optimisation level. ggml's half conversion is the exact value for every finite half; for a
//! NaN it builds the float NaN with the half's payload and multiplies it by 2^-112, and that
//! multiplication sets the quiet bit (IEEE 754 §6.2: an operation on a signaling NaN delivers a
//! quiet one) while keeping sign and payload: `f16_to_f32` does the same without the multiply.

/// `ggml_compute_fp16_to_fp32`: the half with bits `h` as an `f32`.
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    let bits = match exp {
        // Zero and subnormals: mant * 2^-24, exact in f32.
        0 => (mant as f32 * f32::from_bits(0x3380_0000)).to_bits(),
        // Infinity, or a NaN made quiet with its payload kept.
        0x1f if mant == 0 => 0x7f80_0000,
        0x1f => 0x7fc0_0000 | (mant << 13),
        _ => ((exp + 112) << 23) | (mant << 13),
    };
    f32::from_bits(sign | bits)
}

/// `ggml_compute_bf16_to_fp32`: the top half of an `f32`'s bits, as they are (NaNs kept).
#[inline]
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// `ggml_e8m0_to_fp32_half`: 2^(e-128), MXFP4's block scale halved (its value table is doubled).
/// e = 0 and 1 give the subnormals 2^-128 and 2^-127; e = 255 gives 2^127 (ggml has no NaN).
#[inline]
pub fn e8m0_to_f32_half(e: u8) -> f32 {
    let bits = if e < 2 {
        0x0020_0000u32 << e
    } else {
        u32::from(e - 1) << 23
    };
    f32::from_bits(bits)
}

/// `ggml_ue4m3_to_fp32`: an unsigned E4M3 scale (bias 7) halved, 0x00 and 0x7f read as 0. The
/// top bit is ignored, as ggml's masks ignore it. Every result is exact in `f32`.
#[inline]
pub fn ue4m3_to_f32(x: u8) -> f32 {
    if x == 0 || x == 0x7f {
        return 0.0;
    }
    let exp = i32::from((x >> 3) & 0xf);
    let man = f32::from(x & 0x7);
    let raw = if exp == 0 {
        man * f32::from_bits(0x3b00_0000) // 2^-9
    } else {
        (1.0 + man / 8.0) * pow2(exp - 7)
    };
    raw * 0.5
}

/// 2^e for -126 <= e <= 127.
#[inline]
fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// The little-endian `u16` at `at` of a fixed-size block (the caller's offsets are constants).
#[inline]
pub fn le_u16(bytes: &[u8], at: usize) -> u16 {
    match bytes.get(at..at + 2) {
        Some(&[a, b]) => u16::from_le_bytes([a, b]),
        _ => 0,
    }
}

/// The little-endian `u32` at `at` of a fixed-size block.
#[inline]
pub fn le_u32(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}

/// The half at `at` of a fixed-size block, as an `f32`.
#[inline]
pub fn le_f16(bytes: &[u8], at: usize) -> f32 {
    f16_to_f32(le_u16(bytes, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_decode_to_their_exact_values() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert_eq!(f16_to_f32(0xfc00), f32::NEG_INFINITY);
        // A signaling NaN comes back quiet with its payload; a quiet one as it was.
        assert_eq!(f16_to_f32(0x7c01).to_bits(), 0x7fc0_2000);
        assert_eq!(f16_to_f32(0xfe00).to_bits(), 0xffc0_0000);
        // Every finite half agrees with the widening the standard library would do.
        for h in 0..=u16::MAX {
            let v = f16_to_f32(h);
            if (h >> 10) & 0x1f != 0x1f {
                let back = (v.to_bits() >> 13) as u16 & 0x3ff;
                assert!(v.is_finite());
                if (h >> 10) & 0x1f != 0 {
                    assert_eq!(back, h & 0x3ff, "{h:#x}");
                }
            }
        }
    }

    #[test]
    fn scales_decode_as_ggml_defines_them() {
        assert_eq!(e8m0_to_f32_half(0).to_bits(), 0x0020_0000);
        assert_eq!(e8m0_to_f32_half(1).to_bits(), 0x0040_0000);
        assert_eq!(e8m0_to_f32_half(127), 0.5);
        assert_eq!(e8m0_to_f32_half(128), 1.0);
        assert_eq!(e8m0_to_f32_half(255), 2f32.powi(127));
        assert_eq!(ue4m3_to_f32(0x38), 0.5); // 1.0 * 2^0, halved
        assert_eq!(ue4m3_to_f32(0x7e), 224.0); // 1.75 * 2^8, halved
        assert_eq!(ue4m3_to_f32(0x01), 2f32.powi(-10));
        assert_eq!(ue4m3_to_f32(0x7f), 0.0);
        assert_eq!(ue4m3_to_f32(0xb8), 0.5);
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
        assert_eq!(bf16_to_f32(0x7f81).to_bits(), 0x7f81_0000);
    }
}
