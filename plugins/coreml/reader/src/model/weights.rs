//! A NeuralNetwork `WeightParams` message (coremltools 9.0, mlmodel/format/NeuralNetwork.proto)
//! located as a tensor: `floatValue` (packed little-endian floats, F32), `float16Value` (F16),
//! `rawValue` (unsigned integers of `quantization.numberOfBits` bits, packed), `int8RawValue`
//! (I8). The shape is the number of values: the layer's parameters give the dimensions, which
//! the bytes do not depend on.
//!
//! Core ML's validator takes a weight whose values lie in more than one of those fields as
//! unspecified and refuses the layer (`valueType`, mlmodel/src/Validation/
//! ValidatorUtils-inl.hpp): such a weight is not located.

use super::found::{ranges, Located, Placed};
use crate::proto::shallow::{self, Span};

/// More ranges than this (floats stored unpacked, one range each) are copied instead.
pub const MAX_RANGES: usize = 64;

/// What one `WeightParams` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Weight {
    /// No values (an absent bias).
    Empty,
    /// Its values, located.
    Located(Located),
    /// Values this reader does not locate, and why.
    Refused(String),
}

/// The `WeightParams` message `buf[span]`; values copied (unpacked floats) come out of
/// `inline_left`.
pub fn weight_params(buf: &[u8], span: Span, inline_left: &mut u64) -> Weight {
    let mut floats: Vec<Span> = Vec::new();
    let (mut f16, mut raw, mut int8, mut quant) = (None, None, None, None);
    for f in shallow::fields(buf, span) {
        match (f.number, f.wire) {
            (1, 2) | (1, 5) => floats.push(f.payload),
            (2, 2) => f16 = Some(f.payload),
            (30, 2) => raw = Some(f.payload),
            (31, 2) => int8 = Some(f.payload),
            (40, 2) => quant = Some(f.payload),
            _ => {}
        }
    }
    let len = |s: Option<Span>| s.map_or(0, |(a, b)| b - a);
    let float_bytes: usize = floats.iter().map(|(a, b)| b - a).sum();
    let set: Vec<&str> = [
        ("floatValue", float_bytes),
        ("float16Value", len(f16)),
        ("rawValue", len(raw)),
        ("int8RawValue", len(int8)),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(name, _)| *name)
    .collect();
    match set.as_slice() {
        [] => Weight::Empty,
        [_] => one_field(buf, set[0], &floats, [f16, raw, int8], quant, inline_left),
        _ => Weight::Refused(format!(
            "its values lie in {}: Core ML's validator takes such a weight as unspecified and refuses the layer",
            set.join(" and ")
        )),
    }
}

fn one_field(
    buf: &[u8],
    field: &str,
    floats: &[Span],
    [f16, raw, int8]: [Option<Span>; 3],
    quant: Option<Span>,
    inline_left: &mut u64,
) -> Weight {
    let located = |dtype, element_type, count: usize, bytes| {
        Weight::Located(Located {
            dtype,
            element_type,
            shape: vec![count as u64],
            bytes,
            file: None,
        })
    };
    let span_bytes = |s: Span| Placed::Ranges(ranges(&[s]));
    match (field, f16, raw, int8) {
        ("floatValue", ..) => {
            let merged = ranges(floats);
            let total: u64 = merged.iter().map(|r| r.1).sum();
            let bytes = if merged.len() <= MAX_RANGES {
                Placed::Ranges(merged)
            } else if total <= *inline_left {
                *inline_left -= total;
                let mut out = Vec::with_capacity(total as usize);
                for &(a, b) in floats {
                    out.extend_from_slice(buf.get(a..b).unwrap_or_default());
                }
                Placed::Inline(out)
            } else {
                return Weight::Refused(
                    "its floats are stored one by one, past what this reader copies for a file of this size".into(),
                );
            };
            located("F32", Some("F32"), (total / 4) as usize, bytes)
        }
        ("float16Value", Some(s), ..) => {
            if (s.1 - s.0) % 2 != 0 {
                return Weight::Refused(format!(
                    "float16Value holds {} bytes, not a whole number of half-precision values",
                    s.1 - s.0
                ));
            }
            located("F16", Some("F16"), (s.1 - s.0) / 2, span_bytes(s))
        }
        ("int8RawValue", _, _, Some(s)) => located("I8", Some("I8"), s.1 - s.0, span_bytes(s)),
        ("rawValue", _, Some(s), _) => {
            let n = s.1 - s.0;
            let bits = quant.and_then(|q| shallow::last_varint(buf, q, 1));
            match bits {
                None | Some(0) => located("RAW", Some("U8"), n, span_bytes(s)),
                Some(8) => located("U8", Some("U8"), n, span_bytes(s)),
                Some(b @ 1..=7) => {
                    let dtype = [
                        "UINT1", "UINT2", "UINT3", "UINT4", "UINT5", "UINT6", "UINT7",
                    ][(b - 1) as usize];
                    located(dtype, None, n * 8 / b as usize, span_bytes(s))
                }
                Some(b) => Weight::Refused(format!(
                    "rawValue is quantized to {b} bits; Core ML quantizes weights to 1 to 8 bits"
                )),
            }
        }
        _ => Weight::Empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(fields: &[(u8, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (tag, payload) in fields {
            out.push(*tag);
            out.push(payload.len() as u8);
            out.extend_from_slice(payload);
        }
        out
    }

    #[test]
    fn each_value_field_is_located_and_two_are_refused() {
        let mut budget = 1000;
        // floatValue: two packed floats at bytes 2..10.
        let m = message(&[(0x0a, &[0, 0, 128, 63, 0, 0, 0, 64])]);
        let Weight::Located(t) = weight_params(&m, (0, m.len()), &mut budget) else {
            panic!()
        };
        assert_eq!((t.dtype, t.shape.clone()), ("F32", vec![2]));
        assert_eq!(t.bytes, Placed::Ranges(vec![(2, 8)]));
        // float16Value.
        let m = message(&[(0x12, &[1, 2, 3, 4])]);
        let Weight::Located(t) = weight_params(&m, (0, m.len()), &mut budget) else {
            panic!()
        };
        assert_eq!((t.dtype, t.shape), ("F16", vec![2]));
        // rawValue quantized to 4 bits: two values per byte.
        let mut m = vec![0xf2, 0x01, 3, 9, 9, 9];
        m.extend([0xc2, 0x02, 2, 0x08, 4]);
        let Weight::Located(t) = weight_params(&m, (0, m.len()), &mut budget) else {
            panic!()
        };
        assert_eq!((t.dtype, t.element_type, t.shape), ("UINT4", None, vec![6]));
        // Two fields: refused, as Core ML's validator refuses it.
        let m = message(&[(0x0a, &[0, 0, 128, 63]), (0x12, &[1, 2])]);
        assert!(matches!(
            weight_params(&m, (0, m.len()), &mut budget),
            Weight::Refused(r) if r.contains("floatValue and float16Value")
        ));
        assert_eq!(weight_params(&[], (0, 0), &mut budget), Weight::Empty);
    }

    #[test]
    fn unpacked_floats_are_copied_within_the_budget() {
        let mut m = Vec::new();
        for i in 0..(MAX_RANGES + 1) {
            m.push(0x0d);
            m.extend((i as f32).to_le_bytes());
        }
        let mut budget = 10_000;
        let Weight::Located(t) = weight_params(&m, (0, m.len()), &mut budget) else {
            panic!()
        };
        let Placed::Inline(b) = &t.bytes else {
            panic!()
        };
        assert_eq!(b.len(), 4 * (MAX_RANGES + 1));
        assert_eq!(&b[4..8], &1f32.to_le_bytes());
        assert_eq!(budget, 10_000 - 4 * (MAX_RANGES as u64 + 1));
        let mut none = 0;
        assert!(matches!(
            weight_params(&m, (0, m.len()), &mut none),
            Weight::Refused(_)
        ));
    }
}
