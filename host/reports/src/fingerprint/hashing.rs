//! Tensor fingerprints: the SHA-256 of a tensor's raw bytes, and of its values in
//! `float32-le-bits/v1`.
//!
//! `float32-le-bits/v1` widens each F32, F16 or BF16 element exactly to IEEE 754 binary32 and
//! writes its four bytes little-endian, in storage order. The widening is done on the bits:
//!
//! * BF16 is the upper half of a binary32: `bits << 16`;
//! * F16 is rebiased; subnormals are normalised exactly; infinities stay infinities;
//! * a NaN keeps its sign, its payload and its quiet bit as they are (`half`'s `to_f32` and
//!   the F16C instruction set the quiet bit, which would map two different F16 NaNs to one
//!   value; this encoding is one to one).
//!
//! For F32 stored little-endian the encoding is the identity, so its values hash is its bytes
//! hash and the bytes are hashed once.

use crate::base::digest::hex;
use crate::read::source::{InputFile, CHUNK};
use sha2::{Digest, Sha256};
use socair_plugin_api::{
    abi_stable::std_types::{ROption, RResult, RSlice, RSliceMut, RString},
    ByteOrder, FingerprintEncoder, PluginError, PluginErrorKind, TensorDescriptor,
};
use std::io;
use std::sync::OnceLock;

/// The name of the values encoding, as manifests record it.
pub const VALUE_ENCODING: &str = "float32-le-bits/v1";

/// The element types the encoding applies to, with their widths in bytes.
pub fn value_width(element_type: &str) -> Option<usize> {
    match element_type {
        "F32" => Some(4),
        "F16" | "BF16" => Some(2),
        _ => None,
    }
}

/// Widens F16 bits to F32 bits exactly, keeping NaN payloads and the quiet bit.
pub const fn f16_to_f32_bits(h: u16) -> u32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x03ff) as u32;
    if exp == 0x1f {
        // Infinity (man = 0) or NaN: all payload bits move up unchanged.
        return sign | 0x7f80_0000 | (man << 13);
    }
    if exp == 0 {
        if man == 0 {
            return sign;
        }
        // Subnormal: value = man * 2^-24. Shift the leading 1 into the implicit position.
        let shift = man.leading_zeros() - 21; // man < 2^10, so 22..=31 leading zeros
        let man = (man << shift) & 0x03ff;
        let exp = 127 - 15 + 1 - shift;
        return sign | (exp << 23) | (man << 13);
    }
    sign | ((exp + 127 - 15) << 23) | (man << 13)
}

/// Widens BF16 bits to F32 bits: they are its upper half.
pub const fn bf16_to_f32_bits(b: u16) -> u32 {
    (b as u32) << 16
}

fn f16_table() -> &'static [u32] {
    static TABLE: OnceLock<Vec<u32>> = OnceLock::new();
    TABLE.get_or_init(|| (0..=u16::MAX).map(f16_to_f32_bits).collect())
}

/// Encodes whole elements of `input` into `out` (which must be `input.len() / width * 4`
/// bytes). An element type outside the encoding is an error.
pub fn encode_values(
    element_type: &str,
    byte_order: ByteOrder,
    input: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let width = value_width(element_type)
        .ok_or_else(|| format!("{VALUE_ENCODING} does not encode {element_type}"))?;
    if !input.len().is_multiple_of(width) || out.len() != input.len() / width * 4 {
        return Err(format!(
            "{} input bytes of {element_type} do not fill {} output bytes",
            input.len(),
            out.len()
        ));
    }
    let big = byte_order == ByteOrder::Big;
    match element_type {
        "F32" => {
            for (src, dst) in input.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
                let mut b = [src[0], src[1], src[2], src[3]];
                if big {
                    b.reverse();
                }
                dst.copy_from_slice(&b);
            }
        }
        "F16" => {
            let table = f16_table();
            for (src, dst) in input.chunks_exact(2).zip(out.chunks_exact_mut(4)) {
                let h = if big {
                    u16::from_be_bytes([src[0], src[1]])
                } else {
                    u16::from_le_bytes([src[0], src[1]])
                };
                dst.copy_from_slice(&table[h as usize].to_le_bytes());
            }
        }
        _ => {
            for (src, dst) in input.chunks_exact(2).zip(out.chunks_exact_mut(4)) {
                let b = if big {
                    u16::from_be_bytes([src[0], src[1]])
                } else {
                    u16::from_le_bytes([src[0], src[1]])
                };
                dst.copy_from_slice(&bf16_to_f32_bits(b).to_le_bytes());
            }
        }
    }
    Ok(())
}

/// The host's built-in `float32-le-bits/v1`, exposed through the plugin API's encoder trait so
/// it sits in one registry with encoders that plugins provide.
#[derive(Debug, Clone, Copy)]
pub struct Float32LeBits;

impl FingerprintEncoder for Float32LeBits {
    fn name(&self) -> RString {
        VALUE_ENCODING.into()
    }

    fn output_width(&self, element_type: RString) -> ROption<u32> {
        value_width(element_type.as_str()).map(|_| 4).into()
    }

    fn encode(
        &self,
        element_type: RString,
        byte_order: ByteOrder,
        input: RSlice<'_, u8>,
        mut output: RSliceMut<'_, u8>,
    ) -> RResult<(), PluginError> {
        encode_values(
            element_type.as_str(),
            byte_order,
            input.as_slice(),
            output.as_mut_slice(),
        )
        .map_err(|e| PluginError::new(PluginErrorKind::InvalidInput, e))
        .into()
    }
}

/// A tensor's two hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorHashes {
    /// Hex SHA-256 of the raw bytes.
    pub sha256: String,
    /// Hex SHA-256 of the values in `float32-le-bits/v1`, for F32, F16 and BF16.
    pub values: Option<String>,
}

/// Hashes one tensor's bytes, streaming in chunks so that a huge tensor is never widened whole.
pub fn hash_tensor(
    file: &InputFile,
    tensor: &TensorDescriptor,
    progress: &crate::base::progress::Progress,
) -> io::Result<TensorHashes> {
    let element = tensor
        .element_type
        .as_ref()
        .map(|s| s.as_str())
        .into_option();
    let width = element.and_then(value_width);
    let identity = element == Some("F32") && tensor.byte_order == ByteOrder::Little;
    let mut raw = Sha256::new();
    let mut values = (width.is_some() && !identity).then(Sha256::new);
    let mut widened = Vec::new();
    if let Some(w) = width {
        if let Some(range) = tensor.ranges.iter().find(|r| r.len % w as u64 != 0) {
            if tensor.strides.is_none() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a byte range of {} bytes does not hold whole {}-byte elements",
                        range.len, w
                    ),
                ));
            }
        }
    }
    let mut failure = None;
    crate::read::layout::for_each_row_major_chunk(file, tensor, |chunk| {
        raw.update(chunk);
        progress.add(chunk.len() as u64);
        if let (Some(hasher), Some(w), Some(el)) = (values.as_mut(), width, element) {
            // Chunks are at most CHUNK bytes of whole elements.
            widened.resize(chunk.len() / w * 4, 0);
            match encode_values(el, tensor.byte_order, chunk, &mut widened) {
                Ok(()) => hasher.update(&widened),
                Err(e) => failure = Some(e),
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
    }
    let sha256 = hex(&raw.finalize());
    let values = match (values, identity) {
        (Some(h), _) => Some(hex(&h.finalize())),
        (None, true) => Some(sha256.clone()),
        (None, false) => None,
    };
    Ok(TensorHashes { sha256, values })
}

const _: () = assert!(CHUNK.is_multiple_of(4));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_widening_matches_f32_arithmetic_on_every_non_nan() {
        for h in 0..=u16::MAX {
            let bits = f16_to_f32_bits(h);
            let exp = (h >> 10) & 0x1f;
            let man = f64::from(h & 0x3ff);
            let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
            let expected = match exp {
                0x1f if h & 0x3ff == 0 => sign * f64::INFINITY,
                0x1f => continue,
                0 => sign * man * 2f64.powi(-24),
                e => sign * (1.0 + man / 1024.0) * 2f64.powi(i32::from(e) - 15),
            };
            assert_eq!(f32::from_bits(bits) as f64, expected, "f16 bits {h:#06x}");
            // Signed zero keeps its sign.
            if expected == 0.0 {
                assert_eq!(bits, u32::from(h & 0x8000) << 16);
            }
        }
    }

    #[test]
    fn nan_payload_and_quiet_bit_are_kept() {
        // Signalling NaN with payload 1: the quiet bit stays clear.
        assert_eq!(f16_to_f32_bits(0x7c01), 0x7f80_2000);
        // Quiet NaN with payload 1.
        assert_eq!(f16_to_f32_bits(0x7e01), 0x7fc0_2000);
        // Negative NaN, all payload bits.
        assert_eq!(f16_to_f32_bits(0xffff), 0xffff_e000);
        // BF16 signalling NaN stays signalling.
        assert_eq!(bf16_to_f32_bits(0x7f81), 0x7f81_0000);
        // Smallest and largest subnormals.
        assert_eq!(f32::from_bits(f16_to_f32_bits(0x0001)), 2f32.powi(-24));
        assert_eq!(
            f32::from_bits(f16_to_f32_bits(0x03ff)),
            1023.0 * 2f32.powi(-24)
        );
    }

    #[test]
    fn encoding_is_one_to_one() {
        let mut seen = std::collections::HashSet::new();
        for h in 0..=u16::MAX {
            assert!(seen.insert(f16_to_f32_bits(h)));
        }
    }

    #[test]
    fn big_endian_elements_encode_like_little_endian_ones() {
        let le = [0x00, 0x3c, 0x01, 0x7c]; // 1.0, sNaN(1) as F16 LE
        let be = [0x3c, 0x00, 0x7c, 0x01];
        let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
        encode_values("F16", ByteOrder::Little, &le, &mut a).unwrap();
        encode_values("F16", ByteOrder::Big, &be, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(&a[..4], &1.0f32.to_le_bytes());
        assert!(encode_values("I8", ByteOrder::Little, &[1], &mut [0u8; 4]).is_err());
    }
}

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "float32-le-bits",
        version: "1",
        id: VALUE_ENCODING,
        summary: "F32/F16/BF16 values widened exactly to binary32, little-endian, NaN payloads kept",
    }
}

#[cfg(test)]
mod encoder_trait_tests {
    use super::*;
    use socair_plugin_api::{abi_stable::sabi_trait::TD_Opaque, FingerprintEncoder_TO};

    #[test]
    fn built_in_encoder_works_through_the_plugin_trait_object() {
        let encoder = FingerprintEncoder_TO::from_value(Float32LeBits, TD_Opaque);
        assert_eq!(encoder.name().as_str(), VALUE_ENCODING);
        assert_eq!(encoder.output_width("BF16".into()).into_option(), Some(4));
        assert_eq!(encoder.output_width("I8".into()).into_option(), None);
        let input = 0x3f80u16.to_le_bytes(); // BF16 1.0
        let mut out = [0u8; 4];
        encoder
            .encode(
                "BF16".into(),
                ByteOrder::Little,
                input.as_slice().into(),
                out.as_mut_slice().into(),
            )
            .into_result()
            .unwrap();
        assert_eq!(out, 1.0f32.to_le_bytes());
        let err = encoder
            .encode(
                "U8".into(),
                ByteOrder::Little,
                [1u8].as_slice().into(),
                out.as_mut_slice().into(),
            )
            .into_result()
            .unwrap_err();
        assert_eq!(err.kind, PluginErrorKind::InvalidInput);
    }
}
