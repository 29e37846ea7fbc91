//! TensorFlow's data types (`tensorflow/core/framework/types.proto`): each code's name, and
//! socair's element type and width where it has one.
//!
//! The width is the bytes one element takes in a tensor's memory and in a checkpoint or a
//! `tensor_content` (TensorFlow's `DataTypeSize`): the 4-bit and 2-bit types take a byte each
//! there. Quantized types (`DT_QINT8`, …) and the types socair has no name for keep their
//! width with no element type: their bytes are fingerprinted, never converted.

/// A data type: its name, its width, and socair's element type when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DType {
    /// TensorFlow's name (`DT_FLOAT`).
    pub name: &'static str,
    /// Bytes per element.
    pub width: u64,
    /// socair's element type (`F32`).
    pub element: Option<&'static str>,
}

/// The numeric type of `code`, or none for strings, resources, variants, references and
/// unknown codes.
pub fn dtype(code: i32) -> Option<DType> {
    let (name, width, element) = match code {
        1 => ("DT_FLOAT", 4, Some("F32")),
        2 => ("DT_DOUBLE", 8, Some("F64")),
        3 => ("DT_INT32", 4, Some("I32")),
        4 => ("DT_UINT8", 1, Some("U8")),
        5 => ("DT_INT16", 2, Some("I16")),
        6 => ("DT_INT8", 1, Some("I8")),
        // Two binary32 values, real first: safetensors' C64.
        8 => ("DT_COMPLEX64", 8, Some("C64")),
        9 => ("DT_INT64", 8, Some("I64")),
        10 => ("DT_BOOL", 1, Some("BOOL")),
        11 => ("DT_QINT8", 1, None),
        12 => ("DT_QUINT8", 1, None),
        13 => ("DT_QINT32", 4, None),
        14 => ("DT_BFLOAT16", 2, Some("BF16")),
        15 => ("DT_QINT16", 2, None),
        16 => ("DT_QUINT16", 2, None),
        17 => ("DT_UINT16", 2, Some("U16")),
        18 => ("DT_COMPLEX128", 16, None),
        19 => ("DT_HALF", 2, Some("F16")),
        22 => ("DT_UINT32", 4, Some("U32")),
        23 => ("DT_UINT64", 8, Some("U64")),
        24 => ("DT_FLOAT8_E5M2", 1, Some("F8_E5M2")),
        25 => ("DT_FLOAT8_E4M3FN", 1, Some("F8_E4M3")),
        26 => ("DT_FLOAT8_E4M3FNUZ", 1, Some("F8_E4M3FNUZ")),
        27 => ("DT_FLOAT8_E4M3B11FNUZ", 1, None),
        28 => ("DT_FLOAT8_E5M2FNUZ", 1, Some("F8_E5M2FNUZ")),
        29 => ("DT_INT4", 1, None),
        30 => ("DT_UINT4", 1, None),
        31 => ("DT_INT2", 1, None),
        32 => ("DT_UINT2", 1, None),
        33 => ("DT_FLOAT4_E2M1FN", 1, None),
        _ => return None,
    };
    Some(DType {
        name,
        width,
        element,
    })
}

/// The name of any code, numeric or not, for messages.
pub fn name(code: i32) -> String {
    if let Some(d) = dtype(code) {
        return d.name.into();
    }
    match code {
        0 => "DT_INVALID".into(),
        7 => "DT_STRING".into(),
        20 => "DT_RESOURCE".into(),
        21 => "DT_VARIANT".into(),
        c if c > 100 => format!("{} reference", name(c - 100)),
        c => format!("data type {c}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_match_tensorflow_data_type_size() {
        assert_eq!(dtype(1).unwrap().element, Some("F32"));
        assert_eq!(dtype(14).unwrap().width, 2);
        assert_eq!(dtype(18).unwrap().width, 16);
        assert!(dtype(7).is_none() && dtype(20).is_none() && dtype(101).is_none());
        assert_eq!(name(101), "DT_FLOAT reference");
        assert_eq!(name(7), "DT_STRING");
    }
}
