//! Metadata value types and values: what each GGUF value type decodes to, and the JSON
//! socair reports of them (apart from the reader's walk over the file).

/// A GGUF metadata value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// 0
    U8,
    /// 1
    I8,
    /// 2
    U16,
    /// 3
    I16,
    /// 4
    U32,
    /// 5
    I32,
    /// 6
    F32,
    /// 7
    Bool,
    /// 8
    String,
    /// 9
    Array,
    /// 10
    U64,
    /// 11
    I64,
    /// 12
    F64,
}

impl ValueType {
    /// The type with id `id`.
    pub fn from_id(id: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match id {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// Its id.
    pub fn id(self) -> u32 {
        use ValueType::*;
        match self {
            U8 => 0,
            I8 => 1,
            U16 => 2,
            I16 => 3,
            U32 => 4,
            I32 => 5,
            F32 => 6,
            Bool => 7,
            String => 8,
            Array => 9,
            U64 => 10,
            I64 => 11,
            F64 => 12,
        }
    }

    /// gguf-py's name (`UINT32`, …).
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "UINT8",
            I8 => "INT8",
            U16 => "UINT16",
            I16 => "INT16",
            U32 => "UINT32",
            I32 => "INT32",
            F32 => "FLOAT32",
            Bool => "BOOL",
            String => "STRING",
            Array => "ARRAY",
            U64 => "UINT64",
            I64 => "INT64",
            F64 => "FLOAT64",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<ValueType> {
        (0..13)
            .filter_map(ValueType::from_id)
            .find(|t| t.name() == name)
    }

    /// Fixed width in bytes (strings and arrays are variable; their minimum is given).
    pub fn min_width(self) -> u64 {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => 1,
            U16 | I16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 | String => 8,
            Array => 12,
        }
    }
}

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An unsigned integer (UINT8/16/32/64).
    Unsigned(ValueType, u64),
    /// A signed integer (INT8/16/32/64).
    Signed(ValueType, i64),
    /// A float (FLOAT32/64), as its exact bits (an f32's bits zero-extended), so that NaN
    /// payloads and every other value survive a round trip unchanged.
    Float(ValueType, u64),
    /// BOOL.
    Bool(bool),
    /// STRING.
    String(String),
    /// ARRAY: element type, element count, and the elements' bytes exactly as GGUF encodes
    /// them (checked when read: strings UTF-8, bools 0 or 1, nested arrays well formed and at
    /// most [`MAX_ARRAY_DEPTH`] deep). Kept encoded because a decoded element costs dozens of
    /// bytes where the file spends one: an array of millions stays the size it has in the file.
    Array(ValueType, u64, Vec<u8>),
}

impl Value {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Unsigned(t, _) | Value::Signed(t, _) | Value::Float(t, _) => *t,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(..) => ValueType::Array,
        }
    }

    /// JSON with its type: `{"type":"UINT32","value":32}`, arrays as
    /// `{"type":"ARRAY","element_type":…,"value":[…]}` (elements of an array of arrays are
    /// themselves typed objects). The writer takes the same form. Written straight into text,
    /// never as a tree of JSON values: at most 6 bytes of text per byte of the value (a BOOL
    /// element, `false,`; a string's control byte, `\u0001`).
    pub fn json_text(&self) -> String {
        let mut out = Vec::new();
        self.write_json(&mut out);
        // Every piece written is UTF-8 (numbers, ASCII, serde_json's escaped strings).
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends [`Value::json_text`] to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Value::Array(elem, count, bytes) => {
                write_array_json(*elem, *count, bytes, out);
            }
            other => {
                out.extend_from_slice(b"{\"type\":\"");
                out.extend_from_slice(other.value_type().name().as_bytes());
                out.extend_from_slice(b"\",\"value\":");
                other.write_bare_json(out);
                out.push(b'}');
            }
        }
    }

    fn write_bare_json(&self, out: &mut Vec<u8>) {
        use std::io::Write;
        // Writing into a Vec cannot fail.
        let _ = match self {
            Value::Unsigned(_, v) => write!(out, "{v}"),
            Value::Signed(_, v) => write!(out, "{v}"),
            // Finite floats are JSON numbers (serde_json's `float_roundtrip` parses them back
            // exactly); others are their bits in hex, which no number could carry.
            Value::Float(ValueType::F32, bits) => {
                let f = f32::from_bits(*bits as u32);
                if f.is_finite() {
                    // Its exact value as an f64: no double rounding on the way back.
                    serde_json::to_writer(&mut *out, &f64::from(f)).map_err(std::io::Error::other)
                } else {
                    write!(out, "\"bits:{bits:#010x}\"")
                }
            }
            Value::Float(_, bits) => {
                let f = f64::from_bits(*bits);
                if f.is_finite() {
                    serde_json::to_writer(&mut *out, &f).map_err(std::io::Error::other)
                } else {
                    write!(out, "\"bits:{bits:#018x}\"")
                }
            }
            Value::Bool(b) => write!(out, "{b}"),
            Value::String(s) => serde_json::to_writer(&mut *out, s).map_err(std::io::Error::other),
            Value::Array(..) => {
                self.write_json(out);
                Ok(())
            }
        };
    }

    /// The elements of an array, decoded one at a time (none for other values).
    pub fn items(&self) -> impl Iterator<Item = Value> + '_ {
        let (elem, count, bytes) = match self {
            Value::Array(elem, count, bytes) => (*elem, *count, &bytes[..]),
            _ => (ValueType::U8, 0, &[][..]),
        };
        let mut at = 0usize;
        (0..count).map_while(move |_| decode_element(elem, bytes, &mut at))
    }
}

/// Writes the JSON of an encoded array. Fixed-width elements are written straight from their
/// bytes (an array may hold tens of millions); others are decoded one at a time.
fn write_array_json(elem: ValueType, count: u64, bytes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":\"ARRAY\",\"element_type\":\"");
    out.extend_from_slice(elem.name().as_bytes());
    out.extend_from_slice(b"\",\"value\":[");
    let width = elem.min_width() as usize;
    let fixed = !matches!(elem, ValueType::String | ValueType::Array);
    if fixed && bytes.len() as u64 == count.saturating_mul(width as u64) {
        write_fixed_elements(elem, bytes, out);
    } else {
        let mut at = 0usize;
        for i in 0..count {
            if i > 0 {
                out.push(b',');
            }
            // The bytes were checked when read (or written by the writer): an element that
            // does not decode cannot occur; stop rather than write something else.
            let Some(v) = decode_element(elem, bytes, &mut at) else {
                break;
            };
            v.write_bare_json(out);
        }
    }
    out.extend_from_slice(b"]}");
}

/// The JSON of fixed-width elements, comma-separated, as [`Value::write_bare_json`] writes
/// each one.
fn write_fixed_elements(elem: ValueType, bytes: &[u8], out: &mut Vec<u8>) {
    use ValueType::*;
    fn number(out: &mut Vec<u8>, first: bool, n: impl serde::Serialize) {
        if !first {
            out.push(b',');
        }
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, &n);
    }
    match elem {
        Bool => {
            out.reserve(bytes.len() * 6);
            for (i, &b) in bytes.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(if b != 0 { b"true" } else { b"false" });
            }
        }
        U8 => bytes
            .iter()
            .enumerate()
            .for_each(|(i, &b)| number(out, i == 0, b)),
        I8 => bytes
            .iter()
            .enumerate()
            .for_each(|(i, &b)| number(out, i == 0, b as i8)),
        U16 | I16 => bytes.chunks_exact(2).enumerate().for_each(|(i, c)| {
            let v = u16::from_le_bytes([c[0], c[1]]);
            if elem == U16 {
                number(out, i == 0, v)
            } else {
                number(out, i == 0, v as i16)
            }
        }),
        U32 | I32 => bytes.chunks_exact(4).enumerate().for_each(|(i, c)| {
            let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if elem == U32 {
                number(out, i == 0, v)
            } else {
                number(out, i == 0, v as i32)
            }
        }),
        U64 | I64 => bytes.chunks_exact(8).enumerate().for_each(|(i, c)| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            let v = u64::from_le_bytes(a);
            if elem == U64 {
                number(out, i == 0, v)
            } else {
                number(out, i == 0, v as i64)
            }
        }),
        F32 | F64 => {
            let mut at = 0usize;
            let mut first = true;
            while let Some(v) = decode_element(elem, bytes, &mut at) {
                if !first {
                    out.push(b',');
                }
                first = false;
                v.write_bare_json(out);
            }
        }
        String | Array => {}
    }
}

/// Decodes one element of type `elem` at `*at` in `bytes` (encoded as GGUF does), moving
/// `*at` past it; none when the bytes do not hold one.
fn decode_element(elem: ValueType, bytes: &[u8], at: &mut usize) -> Option<Value> {
    fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize) -> Option<&'a [u8]> {
        let s = bytes.get(*at..at.checked_add(n)?)?;
        *at += n;
        Some(s)
    }
    fn fixed<const N: usize>(bytes: &[u8], at: &mut usize) -> Option<[u8; N]> {
        take(bytes, at, N)?.try_into().ok()
    }
    use ValueType::*;
    Some(match elem {
        U8 => Value::Unsigned(elem, fixed::<1>(bytes, at)?[0].into()),
        U16 => Value::Unsigned(elem, u16::from_le_bytes(fixed(bytes, at)?).into()),
        U32 => Value::Unsigned(elem, u32::from_le_bytes(fixed(bytes, at)?).into()),
        U64 => Value::Unsigned(elem, u64::from_le_bytes(fixed(bytes, at)?)),
        I8 => Value::Signed(elem, i8::from_le_bytes(fixed(bytes, at)?).into()),
        I16 => Value::Signed(elem, i16::from_le_bytes(fixed(bytes, at)?).into()),
        I32 => Value::Signed(elem, i32::from_le_bytes(fixed(bytes, at)?).into()),
        I64 => Value::Signed(elem, i64::from_le_bytes(fixed(bytes, at)?)),
        F32 => Value::Float(elem, u32::from_le_bytes(fixed(bytes, at)?).into()),
        F64 => Value::Float(elem, u64::from_le_bytes(fixed(bytes, at)?)),
        Bool => Value::Bool(fixed::<1>(bytes, at)?[0] != 0),
        String => {
            let len = usize::try_from(u64::from_le_bytes(fixed(bytes, at)?)).ok()?;
            let s = std::str::from_utf8(take(bytes, at, len)?).ok()?;
            Value::String(s.to_owned())
        }
        Array => {
            let inner = ValueType::from_id(u32::from_le_bytes(fixed(bytes, at)?))?;
            let count = u64::from_le_bytes(fixed(bytes, at)?);
            let start = *at;
            for _ in 0..count {
                decode_element(inner, bytes, at)?;
            }
            Value::Array(inner, count, bytes[start..*at].to_vec())
        }
    })
}
