//! The strict GGUF reader: a pure function from the file (through [`ReadAt`]) to its metadata
//! and tensor layout, or the reason it is refused.
//!
//! It follows the GGUF spec (ggml `docs/gguf.md`) and, where ggml's own loader
//! (`gguf_init_from_file_impl`) is stricter, ggml: a file other loaders would read
//! differently is refused rather than read one way. Every count and length is checked against
//! the bytes that remain before anything is allocated.

use crate::types::{self, GgmlType};

pub use socair_plugin_api::ReadAt;

/// Deepest nesting of arrays in metadata (the spec allows nesting; ggml refuses any, gguf-py
/// recurses without limit).
pub const MAX_ARRAY_DEPTH: usize = 8;
/// Longest metadata key (the spec's limit).
pub const MAX_KEY_LEN: u64 = 65_535;
/// Longest tensor name: ggml refuses names of `GGML_MAX_NAME` (64) bytes or more.
pub const MAX_TENSOR_NAME_LEN: u64 = 63;
/// Most dimensions (`GGML_MAX_DIMS`).
pub const MAX_DIMS: u32 = 4;
/// The alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// Why a file is refused; the place is part of the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {reason}")]
pub struct GgufError {
    /// Where (byte offset, key or tensor).
    pub place: String,
    /// Why.
    pub reason: String,
}

fn err<T>(place: impl Into<String>, reason: impl Into<String>) -> Result<T, GgufError> {
    Err(GgufError {
        place: place.into(),
        reason: reason.into(),
    })
}

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
    /// ARRAY: element type and values.
    Array(ValueType, Vec<Value>),
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
    /// `{"type":"ARRAY","element_type":…,"value":[…]}`. The writer takes the same form.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Value::Array(elem, items) => json!({
                "type": "ARRAY",
                "element_type": elem.name(),
                "value": items.iter().map(|v| match v {
                    Value::Array(..) => v.to_json(),
                    other => other.bare_json(),
                }).collect::<Vec<_>>(),
            }),
            other => json!({"type": other.value_type().name(), "value": other.bare_json()}),
        }
    }

    fn bare_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Value::Unsigned(_, v) => json!(v),
            Value::Signed(_, v) => json!(v),
            // Non-finite floats have no JSON number: write them as strings.
            // Finite floats are JSON numbers (serde_json's `float_roundtrip` parses them back
            // exactly); others are their bits in hex, which no number could carry.
            Value::Float(ValueType::F32, bits) => {
                let f = f32::from_bits(*bits as u32);
                if f.is_finite() {
                    // Its exact value as an f64: no double rounding on the way back.
                    json!(f64::from(f))
                } else {
                    json!(format!("bits:{bits:#010x}"))
                }
            }
            Value::Float(_, bits) => {
                let f = f64::from_bits(*bits);
                if f.is_finite() {
                    json!(f)
                } else {
                    json!(format!("bits:{bits:#018x}"))
                }
            }
            Value::Bool(b) => json!(b),
            Value::String(s) => json!(s),
            Value::Array(..) => self.to_json(),
        }
    }
}

/// One tensor info.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// Its name.
    pub name: String,
    /// Dimensions as stored: innermost first.
    pub ne: Vec<u64>,
    /// The type id.
    pub type_id: u32,
    /// The type, when ggml can size it.
    pub ggml_type: Option<&'static GgmlType>,
    /// Offset relative to the data section.
    pub offset: u64,
    /// Size in bytes, when the type is known.
    pub byte_len: Option<u64>,
}

impl TensorInfo {
    /// The logical shape, outermost first.
    pub fn shape(&self) -> Vec<u64> {
        self.ne.iter().rev().copied().collect()
    }
}

/// A validated GGUF file.
#[derive(Debug, Clone, PartialEq)]
pub struct Gguf {
    /// 2 or 3.
    pub version: u32,
    /// Metadata in file order.
    pub metadata: Vec<(String, Value)>,
    /// Tensor infos in file order.
    pub tensors: Vec<TensorInfo>,
    /// The alignment.
    pub alignment: u64,
    /// Absolute offset of the data section.
    pub data_start: u64,
}

/// Reads through [`ReadAt`] with a buffer, tracking the position; every read is checked
/// against the file's length first.
struct Cursor<'a, R: ReadAt + ?Sized> {
    src: &'a R,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

const BUF: usize = 64 * 1024;

impl<'a, R: ReadAt + ?Sized> Cursor<'a, R> {
    fn new(src: &'a R) -> Self {
        Cursor {
            src,
            pos: 0,
            buf: Vec::new(),
            buf_start: 0,
        }
    }

    fn remaining(&self) -> u64 {
        self.src.size().saturating_sub(self.pos)
    }

    fn bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>, GgufError> {
        if n > self.remaining() {
            return err(
                format!("byte {}", self.pos),
                format!(
                    "{what} needs {n} bytes but only {} remain before the end of the file",
                    self.remaining()
                ),
            );
        }
        let n = n as usize;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let in_buf =
                self.pos >= self.buf_start && self.pos < self.buf_start + self.buf.len() as u64;
            if !in_buf {
                let len = (self.src.size() - self.pos).min(BUF as u64) as usize;
                self.buf.resize(len, 0);
                self.src
                    .read_exact_at(self.pos, &mut self.buf)
                    .or_else(|e| err(format!("byte {}", self.pos), e))?;
                self.buf_start = self.pos;
            }
            let at = (self.pos - self.buf_start) as usize;
            let take = (n - out.len()).min(self.buf.len() - at);
            out.extend_from_slice(&self.buf[at..at + take]);
            self.pos += take as u64;
        }
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        let v = self.bytes(N as u64, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&v);
        Ok(a)
    }
    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn string(&mut self, what: &str, max: u64) -> Result<String, GgufError> {
        let at = self.pos;
        let len = self.u64(what)?;
        if len > self.remaining() {
            return err(
                format!("byte {at}"),
                format!(
                    "{what} length {len} runs past the end of the file ({} bytes remain)",
                    self.remaining()
                ),
            );
        }
        if len > max {
            return err(
                format!("byte {at}"),
                format!("{what} length {len} is over the limit of {max}"),
            );
        }
        let bytes = self.bytes(len, what)?;
        String::from_utf8(bytes)
            .or_else(|_| err(format!("byte {at}"), format!("{what} is not UTF-8")))
    }
}

fn read_value<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    t: ValueType,
    key: &str,
    depth: usize,
) -> Result<Value, GgufError> {
    let place = || format!("metadata {key:?}");
    use ValueType::*;
    Ok(match t {
        U8 => Value::Unsigned(t, c.array::<1>(key)?[0].into()),
        U16 => Value::Unsigned(t, u16::from_le_bytes(c.array(key)?).into()),
        U32 => Value::Unsigned(t, u32::from_le_bytes(c.array(key)?).into()),
        U64 => Value::Unsigned(t, u64::from_le_bytes(c.array(key)?)),
        I8 => Value::Signed(t, i8::from_le_bytes(c.array(key)?).into()),
        I16 => Value::Signed(t, i16::from_le_bytes(c.array(key)?).into()),
        I32 => Value::Signed(t, i32::from_le_bytes(c.array(key)?).into()),
        I64 => Value::Signed(t, i64::from_le_bytes(c.array(key)?)),
        F32 => Value::Float(t, u32::from_le_bytes(c.array(key)?).into()),
        F64 => Value::Float(t, u64::from_le_bytes(c.array(key)?)),
        Bool => match c.array::<1>(key)?[0] {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            b => {
                return err(
                    place(),
                    format!("bool value {b}: only 0 and 1 are valid (ggml reads any non-zero as true, other readers refuse it)"),
                )
            }
        },
        String => Value::String(c.string(&format!("string value of {key:?}"), u64::MAX)?),
        Array => {
            if depth >= MAX_ARRAY_DEPTH {
                return err(place(), format!("arrays nested deeper than {MAX_ARRAY_DEPTH} levels"));
            }
            let elem_id = c.u32(key)?;
            let elem = ValueType::from_id(elem_id)
                .map_or_else(|| err(place(), format!("unknown array element value type {elem_id}")), Ok)?;
            let count = c.u64(key)?;
            // Every element takes at least its minimum width: the count is bounded by the
            // bytes that remain before anything is allocated.
            if count.checked_mul(elem.min_width()).is_none_or(|need| need > c.remaining()) {
                return err(
                    place(),
                    format!("array count {count} of {} cannot fit in the {} bytes that remain", elem.name(), c.remaining()),
                );
            }
            let mut items = Vec::with_capacity(count as usize);
            for _ in 0..count {
                items.push(read_value(c, elem, key, depth + 1)?);
            }
            Value::Array(elem, items)
        }
    })
}

/// Parses and validates a GGUF file's header and layout. The tensor data is not read, except
/// the padding bytes between tensors when `check_padding` is set (they must be zero).
pub fn parse(src: &(impl ReadAt + ?Sized), check_padding: bool) -> Result<Gguf, GgufError> {
    let mut c = Cursor::new(src);
    let magic = c.array::<4>("magic")?;
    match &magic {
        b"GGUF" => {}
        b"FUGG" => {
            return err(
                "byte 0",
                "magic FUGG: a big-endian GGUF file; socair reads little-endian only",
            )
        }
        other => return err("byte 0", format!("bad magic {other:?}: not a GGUF file")),
    }
    let version = c.u32("version")?;
    match version {
        2 | 3 => {}
        1 => return err("byte 4", "GGUF version 1 is no longer supported (ggml refuses it)"),
        v if v & 0xffff == 0 && v != 0 => {
            return err("byte 4", format!("version {v:#010x} reads as byte-swapped: a big-endian GGUF file; socair reads little-endian only"))
        }
        v => return err("byte 4", format!("unsupported GGUF version {v}")),
    }
    let tensor_count = c.u64("tensor count")?;
    let kv_count = c.u64("metadata count")?;
    // Minimum bytes per item: key (8 + 1) + type (4) + value (1); name (8 + 1) + n_dims (4) +
    // type (4) + offset (8).
    let needed = kv_count
        .checked_mul(14)
        .and_then(|a| tensor_count.checked_mul(25).and_then(|b| a.checked_add(b)));
    if needed.is_none_or(|n| n > c.remaining()) {
        return err(
            "byte 8",
            format!(
                "tensor count {tensor_count} and metadata count {kv_count} cannot fit in the {} bytes that remain",
                c.remaining()
            ),
        );
    }

    let mut metadata: Vec<(String, Value)> = Vec::with_capacity(kv_count as usize);
    let mut keys = std::collections::HashSet::new();
    for _ in 0..kv_count {
        let at = c.pos;
        let key = c.string("metadata key", MAX_KEY_LEN)?;
        if key.is_empty() {
            return err(format!("byte {at}"), "empty metadata key");
        }
        if !keys.insert(key.clone()) {
            return err(
                format!("metadata {key:?}"),
                "duplicate metadata key (readers keep different copies)",
            );
        }
        let type_id = c.u32(&key)?;
        let t = ValueType::from_id(type_id).map_or_else(
            || {
                err(
                    format!("metadata {key:?}"),
                    format!("unknown value type {type_id}"),
                )
            },
            Ok,
        )?;
        let value = read_value(&mut c, t, &key, 0)?;
        metadata.push((key, value));
    }

    let alignment = match metadata.iter().find(|(k, _)| k == "general.alignment") {
        None => DEFAULT_ALIGNMENT,
        Some((_, Value::Unsigned(ValueType::U32, a))) if *a != 0 && a.is_power_of_two() => *a,
        Some((_, v)) => {
            return err(
                "metadata \"general.alignment\"",
                format!(
                    "alignment must be a UINT32 power of two; found {:?}",
                    v.to_json().to_string()
                ),
            )
        }
    };

    let mut tensors = Vec::with_capacity(tensor_count as usize);
    let mut names = std::collections::HashSet::new();
    for i in 0..tensor_count {
        let at = c.pos;
        let name = c.string(&format!("name of tensor {i}"), u64::MAX)?;
        let place = format!("tensor {name:?}");
        if name.len() as u64 > MAX_TENSOR_NAME_LEN {
            return err(
                place,
                format!(
                    "name is {} bytes; ggml refuses names of 64 bytes or more",
                    name.len()
                ),
            );
        }
        if !names.insert(name.clone()) {
            return err(place, format!("duplicate tensor name at byte {at}"));
        }
        let n_dims = c.u32(&name)?;
        if n_dims > MAX_DIMS {
            return err(
                place,
                format!("{n_dims} dims; ggml allows at most {MAX_DIMS}"),
            );
        }
        let mut ne = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            let d = c.u64(&name)?;
            if d > i64::MAX as u64 {
                return err(
                    place,
                    format!("dimension {d} overflows int64, as ggml reads dimensions (it would be negative)"),
                );
            }
            ne.push(d);
        }
        let type_id = c.u32(&name)?;
        let offset = c.u64(&name)?;
        let ggml_type = types::by_id(type_id);
        let byte_len = match ggml_type {
            Some(t) => Some(t.byte_len(&ne).or_else(|why| err(&place, why))?),
            None => {
                // Still check the element count: the tensor may be skipped, not the checks.
                if ne
                    .iter()
                    .try_fold(1u64, |a, &d| a.checked_mul(d))
                    .is_none_or(|n| n > i64::MAX as u64)
                {
                    return err(place, format!("dimensions {ne:?} overflow"));
                }
                None
            }
        };
        tensors.push(TensorInfo {
            name,
            ne,
            type_id,
            ggml_type,
            offset,
            byte_len,
        });
    }

    let header_end = c.pos;
    let data_start = if tensor_count == 0 {
        header_end
    } else {
        align(header_end, alignment)
            .map_or_else(|| err("data section", "alignment overflows"), Ok)?
    };
    let file_len = src.size();
    if data_start > file_len {
        return err(
            "data section",
            format!("starts at byte {data_start}, past the end of the {file_len}-byte file"),
        );
    }
    let data_len = file_len - data_start;

    // ggml's layout: in tensor-info order, each offset is the running sum of padded sizes.
    // A tensor of unknown size stops the running sum; later offsets must still increase,
    // be aligned, and not overlap.
    let mut expected: Option<u64> = Some(0);
    let mut previous_end = 0u64;
    let mut gaps: Vec<(u64, u64)> = vec![(header_end, data_start)];
    for t in &tensors {
        let place = format!("tensor {:?}", t.name);
        if t.offset % alignment != 0 {
            return err(
                place,
                format!(
                    "offset {} is not a multiple of the alignment {alignment}",
                    t.offset
                ),
            );
        }
        if t.offset < previous_end {
            return err(
                place,
                format!(
                    "offset {} overlaps the previous tensor, which ends at {previous_end}",
                    t.offset
                ),
            );
        }
        if let Some(e) = expected {
            if t.offset != e {
                return err(
                    place,
                    format!("offset {} is not where ggml requires it ({e}: the running padded sum in tensor-info order); loaders would disagree", t.offset),
                );
            }
        }
        match t.byte_len {
            Some(len) => {
                let disputed = t.ggml_type.is_some_and(|ty| ty.disputed.is_some());
                let end = t.offset.checked_add(len).filter(|&e| e <= data_len).map_or_else(
                    || err(&place, format!("{len} bytes at data offset {} run past the end of the file (data section is {data_len} bytes)", t.offset)),
                    Ok,
                )?;
                previous_end = end;
                let padded =
                    align(end, alignment).map_or_else(|| err(&place, "size overflows"), Ok)?;
                if expected.is_some() {
                    expected = Some(padded);
                }
                // A type whose size gguf-py and ggml disagree on leaves bytes after it that
                // one of them counts as data: they are not checked as padding.
                if !disputed {
                    gaps.push((data_start + end, data_start + padded.min(data_len)));
                }
            }
            None => {
                expected = None;
                previous_end = t
                    .offset
                    .checked_add(1)
                    .map_or_else(|| err(&place, "offset overflows"), Ok)?;
                if t.offset >= data_len && data_len > 0 {
                    return err(
                        place,
                        format!("offset {} is past the end of the data section", t.offset),
                    );
                }
            }
        }
    }
    // Nothing may follow the data: its end, or its end padded to the alignment (gguf-py pads
    // the last tensor; llama.cpp does not need it). With no tensors, gguf-py still pads the
    // header to the alignment.
    if tensors.is_empty() {
        let padded = align(header_end, alignment)
            .map_or_else(|| err("data section", "alignment overflows"), Ok)?;
        if file_len != header_end && file_len != padded {
            return err(
                "end of file",
                format!(
                    "{} trailing bytes after the header of a file with no tensors",
                    file_len - header_end
                ),
            );
        }
        gaps = vec![(header_end, file_len)];
    } else if let Some(end) = expected {
        let unpadded = previous_end;
        if data_len != end && data_len != unpadded {
            return err(
                "end of file",
                format!(
                    "the data section is {data_len} bytes but the tensors end at {unpadded} (padded: {end}): trailing bytes belong to no tensor"
                ),
            );
        }
    }
    if check_padding {
        for (from, to) in gaps {
            if to > from {
                let mut pad = vec![0u8; (to - from) as usize];
                src.read_exact_at(from, &mut pad)
                    .or_else(|e| err(format!("byte {from}"), e))?;
                if let Some(i) = pad.iter().position(|&b| b != 0) {
                    return err(
                        format!("byte {}", from + i as u64),
                        "padding byte is not zero",
                    );
                }
            }
        }
    }
    Ok(Gguf {
        version,
        metadata,
        tensors,
        alignment,
        data_start,
    })
}

/// `o` rounded up to a multiple of `a` (a power of two).
pub fn align(o: u64, a: u64) -> Option<u64> {
    o.checked_add(a - 1).map(|x| x & !(a - 1))
}
