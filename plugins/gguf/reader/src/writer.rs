//! The GGUF v3 writer: plans a file the way gguf-py's `GGUFWriter` lays one out: header,
//! metadata in the order given, tensor infos in the order given with offsets the running sum
//! of sizes padded to the alignment, zero padding to the alignment before the data and after
//! every tensor.
//!
//! Metadata values come as typed JSON, the form [`Value::json_text`] produces:
//! `{"type":"UINT32","value":32}`, `{"type":"STRING","value":"llama"}`,
//! `{"type":"ARRAY","element_type":"INT32","value":[1,2]}` (elements of an array of arrays
//! are themselves typed objects); a non-finite float is the string `bits:0x…` of its bits.

use crate::reader::{
    align, Value, ValueType, DEFAULT_ALIGNMENT, MAX_ARRAY_DEPTH, MAX_DIMS, MAX_TENSOR_NAME_LEN,
};
use crate::types;

/// A tensor to lay out (its `dtype` is the ggml type name: `F32`, `F16`, `BF16`, `I32`, …;
/// its shape outermost first, written innermost first), and the planned file (its header runs
/// through the padding before the data section; its length includes the last tensor's
/// padding): the kit's types, which every writer plans with.
pub use socair_plugin_kit::export::{Plan, WriteTensor};

/// Tensors and `(key, typed JSON)` metadata, as [`plan`] takes them.
pub type PlanInputs = (Vec<WriteTensor>, Vec<(String, String)>);

/// What the writer needs to lay out again the tensors and metadata a parsed file holds, or
/// none when a tensor's type cannot be sized: re-planning an accepted file reproduces its
/// layout.
pub fn inputs_of(g: &crate::reader::Gguf) -> Option<PlanInputs> {
    let tensors = g
        .tensors
        .iter()
        .map(|t| {
            Some(WriteTensor {
                name: t.name.clone(),
                dtype: t.ggml_type?.name.to_owned(),
                shape: t.shape(),
                byte_len: t.byte_len?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let metadata = g
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.json_text()))
        .collect();
    Some((tensors, metadata))
}

/// Parses one typed-JSON metadata value.
pub fn parse_value(text: &str) -> Result<Value, String> {
    let json: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    value_from_json(&json, 0)
}

fn value_from_json(json: &serde_json::Value, depth: usize) -> Result<Value, String> {
    let obj = json
        .as_object()
        .ok_or("a value must be {\"type\":…,\"value\":…}")?;
    let type_name = obj
        .get("type")
        .and_then(|t| t.as_str())
        .ok_or("missing \"type\"")?;
    let t = ValueType::from_name(type_name)
        .ok_or_else(|| format!("unknown value type {type_name:?}"))?;
    let v = obj.get("value").ok_or("missing \"value\"")?;
    if t == ValueType::Array {
        if depth >= MAX_ARRAY_DEPTH {
            return Err(format!("arrays nested deeper than {MAX_ARRAY_DEPTH}"));
        }
        let elem_name = obj
            .get("element_type")
            .and_then(|t| t.as_str())
            .ok_or("an array needs \"element_type\"")?;
        let elem = ValueType::from_name(elem_name)
            .ok_or_else(|| format!("unknown element type {elem_name:?}"))?;
        let items = v.as_array().ok_or("an array's value must be a list")?;
        // Encoded as GGUF encodes elements, the form the reader keeps arrays in.
        let mut bytes = Vec::new();
        for item in items {
            let v = if elem == ValueType::Array {
                value_from_json(item, depth + 1)?
            } else {
                scalar(elem, item)?
            };
            put_value(&mut bytes, &v);
        }
        return Ok(Value::Array(elem, items.len() as u64, bytes));
    }
    scalar(t, v)
}

fn scalar(t: ValueType, v: &serde_json::Value) -> Result<Value, String> {
    use ValueType::*;
    let bad = || format!("{v} is not a valid {}", t.name());
    let unsigned = |max: u64| {
        v.as_u64()
            .filter(|&n| n <= max)
            .map(|n| Value::Unsigned(t, n))
            .ok_or_else(bad)
    };
    let signed = |min: i64, max: i64| {
        v.as_i64()
            .filter(|&n| n >= min && n <= max)
            .map(|n| Value::Signed(t, n))
            .ok_or_else(bad)
    };
    match t {
        U8 => unsigned(u8::MAX.into()),
        U16 => unsigned(u16::MAX.into()),
        U32 => unsigned(u32::MAX.into()),
        U64 => unsigned(u64::MAX),
        I8 => signed(i8::MIN.into(), i8::MAX.into()),
        I16 => signed(i16::MIN.into(), i16::MAX.into()),
        I32 => signed(i32::MIN.into(), i32::MAX.into()),
        I64 => signed(i64::MIN, i64::MAX),
        F32 | F64 => {
            let bits = match v {
                serde_json::Value::String(s) => {
                    let hex = s.strip_prefix("bits:0x").ok_or_else(bad)?;
                    u64::from_str_radix(hex, 16).map_err(|_| bad())?
                }
                other => {
                    let f = other.as_f64().ok_or_else(bad)?;
                    if t == F32 {
                        let narrow = f as f32;
                        if f64::from(narrow) != f {
                            return Err(format!("{v} is not exactly a FLOAT32"));
                        }
                        narrow.to_bits().into()
                    } else {
                        f.to_bits()
                    }
                }
            };
            if t == F32 && bits > u64::from(u32::MAX) {
                return Err(bad());
            }
            Ok(Value::Float(t, bits))
        }
        Bool => v.as_bool().map(Value::Bool).ok_or_else(bad),
        String => v
            .as_str()
            .map(|s| Value::String(s.to_owned()))
            .ok_or_else(bad),
        Array => Err(bad()),
    }
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Unsigned(t, n) => match t {
            ValueType::U8 => out.push(*n as u8),
            ValueType::U16 => out.extend_from_slice(&(*n as u16).to_le_bytes()),
            ValueType::U32 => out.extend_from_slice(&(*n as u32).to_le_bytes()),
            _ => out.extend_from_slice(&n.to_le_bytes()),
        },
        Value::Signed(t, n) => match t {
            ValueType::I8 => out.extend_from_slice(&(*n as i8).to_le_bytes()),
            ValueType::I16 => out.extend_from_slice(&(*n as i16).to_le_bytes()),
            ValueType::I32 => out.extend_from_slice(&(*n as i32).to_le_bytes()),
            _ => out.extend_from_slice(&n.to_le_bytes()),
        },
        Value::Float(t, bits) => match t {
            ValueType::F32 => out.extend_from_slice(&(*bits as u32).to_le_bytes()),
            _ => out.extend_from_slice(&bits.to_le_bytes()),
        },
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::String(s) => put_string(out, s),
        Value::Array(elem, count, bytes) => {
            out.extend_from_slice(&elem.id().to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(bytes);
        }
    }
}

/// Plans a GGUF v3 file. `metadata` is `(key, typed JSON)` in the order to write.
pub fn plan(tensors: &[WriteTensor], metadata: &[(String, String)]) -> Result<Plan, String> {
    let mut values = Vec::with_capacity(metadata.len());
    let mut keys = std::collections::HashSet::new();
    for (k, text) in metadata {
        if k.is_empty() || !keys.insert(k.as_str()) {
            return Err(format!("metadata key {k:?} is empty or given twice"));
        }
        let v = parse_value(text).map_err(|e| format!("metadata {k:?}: {e}"))?;
        values.push((k, v));
    }
    let alignment = match values.iter().find(|(k, _)| *k == "general.alignment") {
        None => DEFAULT_ALIGNMENT,
        Some((_, Value::Unsigned(ValueType::U32, a))) if *a != 0 && a.is_power_of_two() => *a,
        Some(_) => return Err("general.alignment must be a UINT32 power of two".into()),
    };

    let mut names = std::collections::HashSet::new();
    let mut infos = Vec::with_capacity(tensors.len());
    let mut offset = 0u64;
    for t in tensors {
        let place = format!("tensor {:?}", t.name);
        if t.name.len() as u64 > MAX_TENSOR_NAME_LEN || !names.insert(t.name.as_str()) {
            return Err(format!(
                "{place}: name is longer than 63 bytes or given twice"
            ));
        }
        if t.shape.len() > MAX_DIMS as usize {
            return Err(format!(
                "{place}: {} dims; GGUF allows {MAX_DIMS}",
                t.shape.len()
            ));
        }
        let ty = types::by_name(&t.dtype)
            .ok_or_else(|| format!("{place}: ggml has no type {:?}", t.dtype))?;
        let ne: Vec<u64> = t.shape.iter().rev().copied().collect();
        let len = ty.byte_len(&ne).map_err(|e| format!("{place}: {e}"))?;
        if len != t.byte_len {
            return Err(format!(
                "{place}: {} bytes do not hold {} {:?} ({len} bytes)",
                t.byte_len, ty.name, t.shape
            ));
        }
        infos.push((t, ty, ne, offset));
        offset = offset
            .checked_add(len)
            .and_then(|e| align(e, alignment))
            .ok_or_else(|| format!("{place}: total size overflows"))?;
    }

    let mut header = Vec::new();
    header.extend_from_slice(b"GGUF");
    header.extend_from_slice(&3u32.to_le_bytes());
    header.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    header.extend_from_slice(&(values.len() as u64).to_le_bytes());
    for (k, v) in &values {
        put_string(&mut header, k);
        header.extend_from_slice(&v.value_type().id().to_le_bytes());
        put_value(&mut header, v);
    }
    for (t, ty, ne, off) in &infos {
        put_string(&mut header, &t.name);
        header.extend_from_slice(&(ne.len() as u32).to_le_bytes());
        for d in ne {
            header.extend_from_slice(&d.to_le_bytes());
        }
        header.extend_from_slice(&ty.id.to_le_bytes());
        header.extend_from_slice(&off.to_le_bytes());
    }
    let data_start = align(header.len() as u64, alignment).ok_or("header size overflows")?;
    header.resize(data_start as usize, 0);
    Ok(Plan {
        placements: infos
            .iter()
            .enumerate()
            .map(|(i, (_, _, _, off))| (i, data_start + off))
            .collect(),
        total_len: data_start + offset,
        header,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_metadata_round_trips_bit_for_bit() {
        for v in [
            Value::Float(ValueType::F32, u64::from(0.1f32.to_bits())),
            Value::Float(ValueType::F32, 0x7fc0_0001),
            Value::Float(ValueType::F32, 0x7f80_0001),
            Value::Float(ValueType::F64, (-1.2776431773768935e-172f64).to_bits()),
            Value::Float(ValueType::F64, 0xfff8_0000_0000_0abc),
            Value::Float(ValueType::F64, 5e-324f64.to_bits()),
        ] {
            let text = v.json_text();
            assert_eq!(parse_value(&text).unwrap(), v, "{text}");
        }
        assert!(
            parse_value(r#"{"type":"FLOAT32","value":0.1}"#).is_err(),
            "0.1 is not an f32"
        );
    }
}
