//! The ONNX data types: each code's name, and socair's element type and width where it has
//! one. Apart from the readers of tensors, which only look them up.

/// An ONNX data type: its name, and socair's element type and width when it has one.
pub fn data_type(code: i32) -> Option<(&'static str, Option<(&'static str, u64)>)> {
    Some(match code {
        0 => ("UNDEFINED", None),
        1 => ("FLOAT", Some(("F32", 4))),
        2 => ("UINT8", Some(("U8", 1))),
        3 => ("INT8", Some(("I8", 1))),
        4 => ("UINT16", Some(("U16", 2))),
        5 => ("INT16", Some(("I16", 2))),
        6 => ("INT32", Some(("I32", 4))),
        7 => ("INT64", Some(("I64", 8))),
        8 => ("STRING", None),
        9 => ("BOOL", Some(("BOOL", 1))),
        10 => ("FLOAT16", Some(("F16", 2))),
        11 => ("DOUBLE", Some(("F64", 8))),
        12 => ("UINT32", Some(("U32", 4))),
        13 => ("UINT64", Some(("U64", 8))),
        // Two little-endian binary32 values, real first: safetensors' C64 exactly.
        14 => ("COMPLEX64", Some(("C64", 8))),
        15 => ("COMPLEX128", None),
        16 => ("BFLOAT16", Some(("BF16", 2))),
        17 => ("FLOAT8E4M3FN", Some(("F8_E4M3", 1))),
        18 => ("FLOAT8E4M3FNUZ", Some(("F8_E4M3FNUZ", 1))),
        19 => ("FLOAT8E5M2", Some(("F8_E5M2", 1))),
        20 => ("FLOAT8E5M2FNUZ", Some(("F8_E5M2FNUZ", 1))),
        21 => ("UINT4", None),
        22 => ("INT4", None),
        23 => ("FLOAT4E2M1", None),
        24 => ("FLOAT8E8M0", Some(("F8_E8M0", 1))),
        25 => ("UINT2", None),
        26 => ("INT2", None),
        27 => ("FLOAT6E2M3", None),
        28 => ("FLOAT6E3M2", None),
        _ => return None,
    })
}

/// The width of one of socair's element types this reader emits.
pub fn data_type_width(element: &str) -> Option<(i32, u64)> {
    (0..=28).find_map(|code| match data_type(code) {
        Some((_, Some((e, w)))) if e == element => Some((code, w)),
        _ => None,
    })
}

/// Types onnx.proto allows in `int32_data`.
pub(super) const INT32_DATA_TYPES: &[i32] = &[
    2, 3, 4, 5, 6, 9, 10, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
];
