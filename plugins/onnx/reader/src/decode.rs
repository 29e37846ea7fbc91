//! The bytes of tensor values that onnx.proto stores as numbers rather than as bytes: the
//! varint-coded `int32_data`, `int64_data` and `uint64_data`, and `float_data`,
//! `double_data` and a Constant's `floats` when no byte range of the file holds them (stored
//! unpacked, one tag per value).
//!
//! A tensor's bytes are defined as the little-endian bytes of its elements, in row-major
//! order, that `onnx.numpy_helper.to_array` returns (onnx 1.23.2, `onnx/numpy_helper.py`),
//! so that the fingerprint of a tensor stored this way equals the fingerprint of the same
//! tensor stored in `raw_data`. The rules, from `to_array`:
//!
//! * FLOAT16, BFLOAT16, INT16, UINT16 in `int32_data`: `np.array(int32_data, np.int32)
//!   .view(np.uint32).astype(np.uint16)`, the low 16 bits, as raw bits;
//! * FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, BOOL: the same with
//!   `np.uint8`, the low 8 bits;
//! * INT8, UINT8, INT32 (the final `np.asarray(data, storage dtype).astype(dtype)`): int32
//!   values cast by numpy, which wraps: the low 8 bits, or the value;
//! * INT64 from `int64_data`; UINT64 from `uint64_data`; UINT32 from `uint64_data` cast by
//!   numpy (`astype(np.uint32)` wraps): the low 32 bits;
//! * FLOAT, COMPLEX64 from `float_data`, DOUBLE from `double_data`: the values' own bits.
//!
//! Where another reader of the same file reads other values, the tensor is refused instead
//! (a FAIL: readers disagree). onnxruntime's `UnpackTensor` (tensorprotoutils.cc) refuses a
//! FLOAT16 or BFLOAT16 value outside 0..=65535 and a float8 value outside 0..=255 ("data
//! overflow") where numpy keeps the low bits, and reads a BOOL value as `static_cast<bool>`
//! (any nonzero value true) where numpy keeps the low byte (256 is false there): so those
//! values are refused. Everywhere else the two agree (onnxruntime copies the low bytes of each
//! little-endian value).
//!
//! A count of values that does not match the shape is refused too: `to_array` cannot reshape
//! it (ValueError) and onnxruntime refuses it ("the pre-allocate size does not match").
//!
//! The 4-bit, 2-bit and 6-bit types are not decoded here: socair has no element type for
//! them (their `raw_data` is packed, their `int32_data` holds two 4-bit elements per value,
//! and `to_array` unpacks either to one byte per element), so they stay unread whatever field
//! holds them.

/// Why values were not decoded: the reason, naming the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// Checks that `n` values fill a shape of `count` elements, as `to_array`'s reshape and
/// onnxruntime's `UnpackTensor` both require.
fn check_count(field: &str, n: usize, count: u64, onnx_name: &str) -> Result<(), Refused> {
    if n as u64 == count {
        return Ok(());
    }
    Err(Refused(format!(
        "{field} holds {n} values but its shape has {count} elements of {onnx_name}: onnx.numpy_helper.to_array cannot reshape them (ValueError) and onnxruntime refuses them (the size does not match)"
    )))
}

/// The bytes of a tensor of ONNX type `code` whose values are in `int32_data`, or why not.
pub fn int32_data(
    code: i32,
    onnx_name: &str,
    values: &[i32],
    count: u64,
) -> Result<Vec<u8>, Refused> {
    check_count("int32_data", values.len(), count, onnx_name)?;
    let bits = |v: i32| v as u32;
    let out_of_range = |i: usize, v: i32, max: u32| {
        Refused(format!(
            "int32_data[{i}] is {v}, not a {onnx_name} bit pattern (0..={max}): onnx.numpy_helper.to_array keeps its low bits, onnxruntime refuses it (\"data overflow\")"
        ))
    };
    match code {
        // FLOAT16, BFLOAT16: 16-bit patterns.
        10 | 16 => {
            let mut out = Vec::with_capacity(values.len() * 2);
            for (i, &v) in values.iter().enumerate() {
                if bits(v) > 0xffff {
                    return Err(out_of_range(i, v, 0xffff));
                }
                out.extend_from_slice(&(bits(v) as u16).to_le_bytes());
            }
            Ok(out)
        }
        // INT16, UINT16: the low 16 bits (numpy and onnxruntime agree).
        4 | 5 => Ok(values
            .iter()
            .flat_map(|&v| (bits(v) as u16).to_le_bytes())
            .collect()),
        // The float8 types: 8-bit patterns.
        17..=20 | 24 => values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                u8::try_from(bits(v)).map_err(|_| out_of_range(i, v, 0xff))
            })
            .collect(),
        // BOOL: 0 or 1, where numpy's low byte and onnxruntime's `static_cast<bool>` agree.
        9 => values
            .iter()
            .enumerate()
            .map(|(i, &v)| match v {
                0 | 1 => Ok(v as u8),
                _ => Err(Refused(format!(
                    "int32_data[{i}] is {v}, not a BOOL 0 or 1: onnx.numpy_helper.to_array keeps its low byte ({:#04x}), onnxruntime reads any nonzero value as true",
                    bits(v) as u8
                ))),
            })
            .collect(),
        // INT8, UINT8: numpy's astype wraps to the low 8 bits (onnxruntime copies the low byte).
        2 | 3 => Ok(values.iter().map(|&v| bits(v) as u8).collect()),
        // INT32.
        6 => Ok(values.iter().flat_map(|&v| v.to_le_bytes()).collect()),
        _ => Err(Refused(format!(
            "{onnx_name} values in int32_data are not decoded by socair"
        ))),
    }
}

/// The bytes of an INT64 tensor whose values are in `int64_data`.
pub fn int64_data(onnx_name: &str, values: &[i64], count: u64) -> Result<Vec<u8>, Refused> {
    check_count("int64_data", values.len(), count, onnx_name)?;
    Ok(values.iter().flat_map(|&v| v.to_le_bytes()).collect())
}

/// The bytes of a UINT32 (`code` 12: the low 32 bits) or UINT64 (13) tensor whose values are
/// in `uint64_data`.
pub fn uint64_data(
    code: i32,
    onnx_name: &str,
    values: &[u64],
    count: u64,
) -> Result<Vec<u8>, Refused> {
    check_count("uint64_data", values.len(), count, onnx_name)?;
    Ok(if code == 12 {
        values
            .iter()
            .flat_map(|&v| (v as u32).to_le_bytes())
            .collect()
    } else {
        values.iter().flat_map(|&v| v.to_le_bytes()).collect()
    })
}

/// The bytes of float32 values (`float_data`, a Constant's `floats`): their own bits.
pub fn floats(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .collect()
}

/// The bytes of float64 values (`double_data`): their own bits.
pub fn doubles(values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .collect()
}

/// The bytes of int64 values (a Constant's `value_int` or `value_ints`).
pub fn int64s(values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_bits_numpy_keeps() {
        // INT8 300 wraps to 44, -1 to 0xff; UINT8 likewise.
        assert_eq!(
            int32_data(3, "INT8", &[300, -1, 5], 3).unwrap(),
            [44, 0xff, 5]
        );
        // INT16 -5 is 0xfffb.
        assert_eq!(int32_data(5, "INT16", &[-5], 1).unwrap(), [0xfb, 0xff]);
        // FLOAT16 1.0 is 0x3c00.
        assert_eq!(
            int32_data(10, "FLOAT16", &[0x3c00], 1).unwrap(),
            [0x00, 0x3c]
        );
        assert_eq!(int32_data(9, "BOOL", &[1, 0], 2).unwrap(), [1, 0]);
        assert_eq!(
            int32_data(6, "INT32", &[-2], 1).unwrap(),
            (-2i32).to_le_bytes()
        );
        assert_eq!(
            uint64_data(12, "UINT32", &[(1 << 32) + 7], 1).unwrap(),
            [7, 0, 0, 0]
        );
        assert_eq!(
            uint64_data(13, "UINT64", &[u64::MAX], 1).unwrap(),
            [0xff; 8]
        );
        assert_eq!(int64_data("INT64", &[-1], 1).unwrap(), [0xff; 8]);
        // A signalling NaN keeps its bits.
        assert_eq!(
            floats(&[f32::from_bits(0x7f80_0001)]),
            0x7f80_0001u32.to_le_bytes()
        );
    }

    #[test]
    fn refuses_what_readers_read_differently() {
        for (code, name, v) in [
            (10, "FLOAT16", -1),
            (16, "BFLOAT16", 0x1_0000),
            (17, "FLOAT8E4M3FN", 256),
            (24, "FLOAT8E8M0", -3),
        ] {
            let e = int32_data(code, name, &[v], 1).unwrap_err();
            assert!(e.0.contains("data overflow"), "{}", e.0);
        }
        let e = int32_data(9, "BOOL", &[256], 1).unwrap_err();
        assert!(e.0.contains("nonzero"), "{}", e.0);
        // Counts that do not fill the shape, either way.
        assert!(int32_data(3, "INT8", &[1, 2, 3], 4).is_err());
        assert!(int64_data("INT64", &[1, 2, 3], 2).is_err());
        assert!(uint64_data(13, "UINT64", &[], 1).is_err());
        // Types socair does not decode.
        assert!(int32_data(22, "INT4", &[1], 1).is_err());
    }
}
