//! A MIL program's values located as tensors (coremltools 9.0, mlmodel/format/MIL.proto): a
//! `Value`'s type (`TensorType`: data type and constant dimensions) sizes it, and its bytes are
//!
//! * a blob of the weights file (`blobFileValue`: `@model_path/weights/weight.bin` and the
//!   offset of the blob's 64-byte metadata). coremltools' `StorageWriter::WriteData`
//!   (mlmodel/src/MILBlob/Blob/StorageWriter.cpp) writes each blob's data right after its
//!   metadata, at a multiple of 64; the data is located there, in the weights file beside the
//!   model (`TensorDescriptor::file`), and the weights file's own reader ([`crate::blob`])
//!   checks that every metadata in it points there, which is what `StorageReader` follows
//!   (`GetDataView`: the data at `metadata.offset`);
//! * or immediate: packed floats and doubles, and the `bytes` field coremltools writes
//!   half-precision and 8-bit values in (`_tensor_field_by_type`,
//!   coremltools/converters/mil/backend/mil/helper.py), as ranges of the model file; varint
//!   integers and bools decoded as `milproto/load.py`'s `_load_value` casts them.
//!
//! A blob file named otherwise than `@model_path/weights/<name>` is not located: an absolute
//! path, or one with `..`, is a file outside the package that Core ML opens (a FAIL); any other
//! is a path coremltools' loader (`_load_file_value`: the last component, in the package's
//! weights directory) and Core ML may resolve differently (a LEAD).

use super::found::{elements, ranges, Located, Placed};
use crate::proto::shallow::{self, Span};
use socair_plugin_kit::protobuf::read_varint;
use socair_plugin_kit::Severity;

/// The deepest tensor rank read.
pub const MAX_RANK: usize = 64;

/// What one `Value` is, as a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Not a tensor this reader locates (text, a list, an empty tensor, an immediate value
    /// outside a constant).
    None,
    /// Located.
    Located(Located),
    /// A tensor not located: why, and the severity of a finding about it (none: only unread).
    Unread(String, Option<Severity>),
}

/// A MIL data type (MIL.proto `DataType`): its name, its element type in socair's
/// vocabulary, its width in bits, and whether a blob may hold it (`BlobDataType`,
/// mlmodel/src/MILBlob/Blob/BlobDataType.hpp).
pub fn data_type(code: u64) -> Option<(&'static str, Option<&'static str>, u64, bool)> {
    Some(match code {
        1 => ("BOOL", Some("BOOL"), 8, false),
        10 => ("F16", Some("F16"), 16, true),
        11 => ("F32", Some("F32"), 32, true),
        12 => ("F64", Some("F64"), 64, false),
        13 => ("BF16", Some("BF16"), 16, true),
        21 => ("I8", Some("I8"), 8, true),
        22 => ("I16", Some("I16"), 16, true),
        23 => ("I32", Some("I32"), 32, true),
        24 => ("I64", Some("I64"), 64, false),
        25 => ("INT4", None, 4, true),
        31 => ("U8", Some("U8"), 8, true),
        32 => ("U16", Some("U16"), 16, true),
        33 => ("U32", Some("U32"), 32, true),
        34 => ("U64", Some("U64"), 64, false),
        35 => ("UINT4", None, 4, true),
        36 => ("UINT2", None, 2, true),
        37 => ("UINT1", None, 1, true),
        38 => ("UINT6", None, 6, true),
        39 => ("UINT3", None, 3, true),
        40 => ("F8_E4M3", Some("F8_E4M3"), 8, true),
        41 => ("F8_E5M2", Some("F8_E5M2"), 8, true),
        _ => return None,
    })
}

/// The `Value` message `buf[span]`; `immediate` says whether an immediate tensor is wanted
/// (a constant's value); decoded values come out of `inline_left`.
pub fn value(buf: &[u8], span: Span, immediate: bool, inline_left: &mut u64) -> Value {
    let ty = shallow::last_bytes(buf, span, 2);
    let mut held = None;
    for f in shallow::fields(buf, span) {
        if f.wire == 2 && (f.number == 3 || f.number == 5) {
            held = Some((f.number, f.payload));
        }
    }
    let Some((which, payload)) = held else {
        return Value::None;
    };
    if which == 3 && !immediate {
        return Value::None;
    }
    let Some(ty) = ty.and_then(|t| shallow::last_bytes(buf, t, 1)) else {
        // Not a tensor (a list, a tuple, a dictionary), or no type at all.
        return Value::None;
    };
    let code = shallow::last_varint(buf, ty, 1).unwrap_or(0);
    if code == 2 {
        return Value::None;
    }
    let Some(dtype) = data_type(code) else {
        return Value::Unread(
            format!("its data type {code} is not one coremltools 9.0's MIL.proto defines"),
            Some(Severity::Lead),
        );
    };
    let shape = match shape(buf, ty) {
        Ok(s) => s,
        Err(why) => return Value::Unread(why, None),
    };
    let Some(size) = elements(&shape)
        .and_then(|n| n.checked_mul(dtype.2))
        .map(|bits| bits.div_ceil(8))
    else {
        return Value::Unread("its shape overflows".into(), Some(Severity::Lead));
    };
    if size == 0 {
        return Value::None;
    }
    if which == 5 {
        blob(buf, payload, dtype, shape, size)
    } else {
        immediate_tensor(buf, payload, dtype, shape, size, inline_left)
    }
}

/// A `TensorType`'s constant dimensions.
fn shape(buf: &[u8], tensor_type: Span) -> Result<Vec<u64>, String> {
    let mut shape = Vec::new();
    for f in shallow::fields(buf, tensor_type).filter(|f| f.number == 3 && f.wire == 2) {
        if shape.len() == MAX_RANK {
            return Err(format!("its rank is over {MAX_RANK}"));
        }
        match shallow::last_bytes(buf, f.payload, 1) {
            Some(constant) => shape.push(shallow::last_varint(buf, constant, 1).unwrap_or(0)),
            None => return Err("a dimension of its type is not a constant".into()),
        }
    }
    Ok(shape)
}

/// The weights file a blob's `fileName` names, relative to the model file's directory.
pub fn blob_file(name: &str) -> Result<String, (String, Severity)> {
    if name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || name.split('/').any(|c| c == "..")
    {
        return Err((
            format!("its blob file {name:?} lies outside the model package: Core ML opens that file when it loads the model"),
            Severity::Fail,
        ));
    }
    match name.strip_prefix("@model_path/weights/") {
        Some(file) if !file.is_empty() && file != "." && !file.contains('/') => {
            Ok(format!("weights/{file}"))
        }
        _ => Err((
            format!("its blob file {name:?} is not `@model_path/weights/<name>`, where coremltools writes weights: coremltools' loader reads the file of that last name in the package's weights directory, Core ML the path as given"),
            Severity::Lead,
        )),
    }
}

fn blob(
    buf: &[u8],
    payload: Span,
    (dtype, element_type, _, in_blobs): (&'static str, Option<&'static str>, u64, bool),
    shape: Vec<u64>,
    size: u64,
) -> Value {
    let name = shallow::last_text(buf, payload, 1).unwrap_or("");
    let offset = shallow::last_varint(buf, payload, 2).unwrap_or(0);
    let file = match blob_file(name) {
        Ok(f) => f,
        Err((why, severity)) => return Value::Unread(why, Some(severity)),
    };
    if !in_blobs {
        return Value::Unread(
            format!("Core ML's blob storage holds no {dtype} values (BlobDataType)"),
            Some(Severity::Lead),
        );
    }
    if offset < 64 || !offset.is_multiple_of(64) {
        return Value::Unread(
            format!("its blob's metadata is at byte {offset} of {name:?}, not at a multiple of 64 past the file's header, where coremltools' StorageWriter puts every blob"),
            Some(Severity::Lead),
        );
    }
    Value::Located(Located {
        dtype,
        element_type,
        shape,
        bytes: Placed::Ranges(vec![(offset + 64, size)]),
        file: Some(file),
    })
}

fn immediate_tensor(
    buf: &[u8],
    immediate: Span,
    (dtype, element_type, bits, _): (&'static str, Option<&'static str>, u64, bool),
    shape: Vec<u64>,
    size: u64,
    inline_left: &mut u64,
) -> Value {
    let Some(tensor) = shallow::last_bytes(buf, immediate, 1) else {
        return Value::None;
    };
    let mut member = None;
    for f in shallow::fields(buf, tensor) {
        if f.wire == 2 && (1..=7).contains(&f.number) {
            member = Some((f.number, f.payload));
        }
    }
    let Some((which, repeated)) = member else {
        return Value::None;
    };
    let count = elements(&shape).unwrap_or(0);
    let mismatch = |what: &str| {
        Value::Unread(
            format!("its immediate value holds {what}, its type says {count} {dtype} values"),
            None,
        )
    };
    let located = |bytes| {
        Value::Located(Located {
            dtype,
            element_type,
            shape: shape.clone(),
            bytes,
            file: None,
        })
    };
    let spans: Vec<Span> = shallow::fields(buf, repeated)
        .filter(|f| f.number == 1)
        .map(|f| f.payload)
        .collect();
    let held: u64 = spans.iter().map(|(a, b)| (b - a) as u64).sum();
    match which {
        // floats (F32), doubles (F64), bytes (F16, 8-bit and packed sub-byte values).
        1 | 6 | 7 => {
            let ok = match which {
                1 => dtype == "F32",
                6 => dtype == "F64",
                _ => bits <= 16,
            };
            if !ok || held != size {
                return mismatch(&format!("{held} bytes of {}", member_name(which)));
            }
            let r = ranges(&spans);
            if r.len() <= super::weights::MAX_RANGES {
                return located(Placed::Ranges(r));
            }
            if size > *inline_left {
                return Value::Unread("its values are stored one by one, past what this reader copies for a file of this size".into(), None);
            }
            *inline_left -= size;
            let mut out = Vec::with_capacity(size as usize);
            for &(a, b) in &spans {
                out.extend_from_slice(buf.get(a..b).unwrap_or_default());
            }
            located(Placed::Inline(out))
        }
        // ints, longInts, bools: varints, decoded.
        2 | 3 | 5 => {
            let width = bits / 8;
            let fits = matches!(
                (which, dtype),
                (2, "I32" | "U32" | "I16" | "U16" | "I8" | "U8") | (5, "I64" | "U64") | (3, "BOOL")
            );
            if !fits || size > *inline_left {
                return mismatch(member_name(which));
            }
            let mut out = Vec::with_capacity(size as usize);
            for f in shallow::fields(buf, repeated).filter(|f| f.number == 1) {
                let mut put = |v: u64| {
                    let v = if which == 3 { u64::from(v != 0) } else { v };
                    out.extend_from_slice(&v.to_le_bytes()[..width as usize]);
                };
                if f.wire == 0 {
                    put(f.varint);
                } else if f.wire == 2 {
                    let mut at = f.payload.0;
                    while at < f.payload.1 {
                        match read_varint(buf, &mut at, f.payload.1) {
                            Some(v) => put(v),
                            None => break,
                        }
                    }
                }
                if out.len() as u64 > size {
                    break;
                }
            }
            if out.len() as u64 != size {
                return mismatch(&format!("{} values", out.len() as u64 / width.max(1)));
            }
            *inline_left -= size;
            located(Placed::Inline(out))
        }
        _ => Value::None,
    }
}

/// The name of `TensorValue`'s member `which`.
fn member_name(which: u32) -> &'static str {
    match which {
        1 => "floats",
        2 => "ints",
        3 => "bools",
        4 => "strings",
        5 => "longInts",
        6 => "doubles",
        _ => "bytes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_files_inside_the_package_outside_it_and_elsewhere() {
        assert_eq!(
            blob_file("@model_path/weights/weight.bin"),
            Ok("weights/weight.bin".into())
        );
        for outside in [
            "/etc/passwd",
            "@model_path/weights/../../x.bin",
            "..\\x",
            "@model_path/../weights/weight.bin",
        ] {
            assert_eq!(
                blob_file(outside).unwrap_err().1,
                Severity::Fail,
                "{outside}"
            );
        }
        for other in [
            "weights/weight.bin",
            "@model_path/other/w.bin",
            "@model_path/weights/",
        ] {
            assert_eq!(blob_file(other).unwrap_err().1, Severity::Lead, "{other}");
        }
    }
}
