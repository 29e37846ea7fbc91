//! The strict GGUF reader: a pure function from the file (through [`ReadAt`]) to its metadata
//! and tensor layout, or the reason it is refused.
//!
//! It follows the GGUF spec (ggml `docs/gguf.md`) and, where ggml's own loader
//! (`gguf_init_from_file_impl`) is stricter, ggml: a file other loaders would read
//! differently is refused rather than read one way. Every count and length is checked against
//! the bytes that remain before anything is allocated.

use crate::types::{self, GgmlType};

pub use socair_plugin_api::ReadAt;
pub use value::{Value, ValueType};

mod value;

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
    /// The file's length.
    pub file_len: u64,
}

/// Reads through [`ReadAt`] with a buffer, tracking the position; every read is checked
/// against the file's length first, and none allocates beyond what the file holds.
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

    fn short<T>(&self, n: u64, what: &str) -> Result<T, GgufError> {
        err(
            format!("byte {}", self.pos),
            format!(
                "{what} needs {n} bytes but only {} remain before the end of the file",
                self.remaining()
            ),
        )
    }

    /// Calls `sink` with the next `n` bytes, in pieces, and moves past them.
    fn consume(
        &mut self,
        n: u64,
        what: &str,
        mut sink: impl FnMut(&[u8]),
    ) -> Result<(), GgufError> {
        if n > self.remaining() {
            return self.short(n, what);
        }
        let end = self.pos + n;
        while self.pos < end {
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
            let take = ((end - self.pos) as usize).min(self.buf.len() - at);
            sink(&self.buf[at..at + take]);
            self.pos += take as u64;
        }
        Ok(())
    }

    /// Appends the next `n` bytes to `out`.
    fn append(&mut self, n: u64, out: &mut Vec<u8>, what: &str) -> Result<(), GgufError> {
        if n > self.remaining() {
            return self.short(n, what);
        }
        out.reserve(n as usize);
        self.consume(n, what, |piece| out.extend_from_slice(piece))
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        let mut a = [0u8; N];
        let mut filled = 0;
        self.consume(N as u64, what, |piece| {
            a[filled..filled + piece.len()].copy_from_slice(piece);
            filled += piece.len();
        })?;
        Ok(a)
    }
    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A string's length, checked against the bytes that remain and against `max`.
    fn string_len(&mut self, what: &str, max: u64) -> Result<u64, GgufError> {
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
        Ok(len)
    }

    fn string(&mut self, what: &str, max: u64) -> Result<String, GgufError> {
        let at = self.pos;
        let len = self.string_len(what, max)?;
        let mut bytes = Vec::new();
        self.append(len, &mut bytes, what)?;
        String::from_utf8(bytes)
            .or_else(|_| err(format!("byte {at}"), format!("{what} is not UTF-8")))
    }
}

/// Reads the elements of an array of `elem` (`count` of them) into `out` as the file encodes
/// them, checking each: strings UTF-8, bools 0 or 1, nested arrays no deeper than the limit.
fn read_elements<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    elem: ValueType,
    count: u64,
    out: &mut Vec<u8>,
    key: &str,
    depth: usize,
) -> Result<(), GgufError> {
    let place = || format!("metadata {key:?}");
    // Every element takes at least its minimum width: the count is bounded by the bytes that
    // remain before anything is allocated.
    if count
        .checked_mul(elem.min_width())
        .is_none_or(|need| need > c.remaining())
    {
        return err(
            place(),
            format!(
                "array count {count} of {} cannot fit in the {} bytes that remain",
                elem.name(),
                c.remaining()
            ),
        );
    }
    use ValueType::*;
    match elem {
        U8 | I8 | U16 | I16 | U32 | I32 | F32 | U64 | I64 | F64 => {
            // Fixed width: the count was checked against the bytes that remain.
            c.append(count * elem.min_width(), out, key)
        }
        Bool => {
            let start = out.len();
            c.append(count, out, key)?;
            match out[start..].iter().position(|&b| b > 1) {
                None => Ok(()),
                Some(i) => err(
                    place(),
                    format!("bool element {i} is {}: only 0 and 1 are valid (ggml reads any non-zero as true, other readers refuse it)", out[start + i]),
                ),
            }
        }
        String => {
            for _ in 0..count {
                let at = c.pos;
                let len = c.string_len(&format!("string element of {key:?}"), u64::MAX)?;
                out.extend_from_slice(&len.to_le_bytes());
                let start = out.len();
                c.append(len, out, key)?;
                if std::str::from_utf8(&out[start..]).is_err() {
                    return err(
                        format!("byte {at}"),
                        format!("string element of {key:?} is not UTF-8"),
                    );
                }
            }
            Ok(())
        }
        Array => {
            if count > 0 && depth + 1 >= MAX_ARRAY_DEPTH {
                return err(
                    place(),
                    format!("arrays nested deeper than {MAX_ARRAY_DEPTH} levels"),
                );
            }
            for _ in 0..count {
                let elem_id = c.u32(key)?;
                let inner = ValueType::from_id(elem_id).map_or_else(
                    || {
                        err(
                            place(),
                            format!("unknown array element value type {elem_id}"),
                        )
                    },
                    Ok,
                )?;
                let inner_count = c.u64(key)?;
                out.extend_from_slice(&elem_id.to_le_bytes());
                out.extend_from_slice(&inner_count.to_le_bytes());
                read_elements(c, inner, inner_count, out, key, depth + 1)?;
            }
            Ok(())
        }
    }
}

fn read_value<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    t: ValueType,
    key: &str,
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
            let elem_id = c.u32(key)?;
            let elem = ValueType::from_id(elem_id)
                .map_or_else(|| err(place(), format!("unknown array element value type {elem_id}")), Ok)?;
            let count = c.u64(key)?;
            let mut bytes = Vec::new();
            read_elements(c, elem, count, &mut bytes, key, 0)?;
            Value::Array(elem, count, bytes)
        }
    })
}

/// The first name given twice, by sorting indices instead of cloning every name into a set.
fn first_duplicate<'a>(names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut all: Vec<&str> = names.collect();
    all.sort_unstable();
    all.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

/// Why the file is of a GGUF version no current reader reads, if it is: the magic `GGUF`
/// and a version of 1 (the pre-v2 layout, 32-bit counts and lengths; ggml's
/// `gguf_init_from_file_impl` refuses it, and gguf-py 0.19.0's `GGUFReader` raises
/// "Sorry, file appears to be version 1 which we cannot handle") or past 3 (gguf-py's
/// `READER_SUPPORTED_VERSIONS` is `[2, 3]`). A byte-swapped version (a big-endian file) and
/// version 0 are left to [`parse`]: they are other questions.
pub fn unreadable_version(src: &(impl ReadAt + ?Sized)) -> Option<String> {
    let mut head = [0u8; 8];
    if src.size() < 8 {
        return None;
    }
    src.read_exact_at(0, &mut head).ok()?;
    let (magic, version) = head.split_at(4);
    let version = u32::from_le_bytes(version.try_into().ok()?);
    let swapped = version & 0xffff == 0;
    if magic != b"GGUF" || swapped || matches!(version, 2 | 3) {
        return None;
    }
    let layout = if version == 1 {
        "the pre-v2 layout (32-bit counts and lengths), which ggml no longer reads and gguf-py 0.19.0 refuses (\"Sorry, file appears to be version 1 which we cannot handle\")".to_owned()
    } else {
        format!("a version past the 2 and 3 that ggml and gguf-py 0.19.0 read (gguf-py: \"Sorry, file appears to be version {version} which we cannot handle\")")
    };
    Some(format!(
        "byte 4: GGUF version {version}, {layout}: socair cannot read this file, and nothing in it was checked"
    ))
}

/// Parses and validates a GGUF file's header and layout. The tensor data is not read, except
/// the padding bytes between tensors when `check_padding` is set (they must be zero).
pub fn parse(src: &(impl ReadAt + ?Sized), check_padding: bool) -> Result<Gguf, GgufError> {
    let mut c = Cursor::new(src);
    let (version, tensor_count, kv_count) = read_preamble(&mut c)?;
    let metadata = read_metadata(&mut c, kv_count)?;
    let alignment = alignment_of(&metadata)?;

    let mut tensors = Vec::with_capacity(tensor_count as usize);
    for i in 0..tensor_count {
        tensors.push(read_tensor_info(&mut c, i)?);
    }
    if let Some(name) = first_duplicate(tensors.iter().map(|t| t.name.as_str())) {
        return err(
            format!("tensor {name:?}"),
            "duplicate tensor name (ggml and gguf-py refuse it; other readers keep either)",
        );
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
    let layout = check_offsets(&tensors, alignment, header_end, data_start, data_len)?;
    let gaps = check_end(&tensors, alignment, header_end, file_len, data_len, layout)?;
    if check_padding {
        check_zero_padding(src, gaps)?;
    }
    Ok(Gguf {
        version,
        metadata,
        tensors,
        alignment,
        data_start,
        file_len,
    })
}

/// The magic, the version and the two counts, each checked: the version, the tensor count
/// and the metadata count.
fn read_preamble<R: ReadAt + ?Sized>(c: &mut Cursor<'_, R>) -> Result<(u32, u64, u64), GgufError> {
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
    Ok((version, tensor_count, kv_count))
}

/// The `kv_count` metadata entries, keys non-empty and unique.
fn read_metadata<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    kv_count: u64,
) -> Result<Vec<(String, Value)>, GgufError> {
    let mut metadata: Vec<(String, Value)> = Vec::with_capacity(kv_count as usize);
    for _ in 0..kv_count {
        let at = c.pos;
        let key = c.string("metadata key", MAX_KEY_LEN)?;
        if key.is_empty() {
            return err(format!("byte {at}"), "empty metadata key");
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
        let value = read_value(c, t, &key)?;
        metadata.push((key, value));
    }
    if let Some(key) = first_duplicate(metadata.iter().map(|(k, _)| k.as_str())) {
        return err(
            format!("metadata {key:?}"),
            "duplicate metadata key (readers keep different copies)",
        );
    }
    Ok(metadata)
}

/// `general.alignment`: a UINT32 power of two, [`DEFAULT_ALIGNMENT`] when absent.
fn alignment_of(metadata: &[(String, Value)]) -> Result<u64, GgufError> {
    match metadata.iter().find(|(k, _)| k == "general.alignment") {
        None => Ok(DEFAULT_ALIGNMENT),
        Some((_, Value::Unsigned(ValueType::U32, a))) if *a != 0 && a.is_power_of_two() => Ok(*a),
        Some((_, v)) => err(
            "metadata \"general.alignment\"",
            format!(
                "alignment must be a UINT32 power of two; found {:?}",
                v.json_text()
            ),
        ),
    }
}

/// Tensor info `i`: its name, dimensions, type and offset, each checked as ggml checks it.
fn read_tensor_info<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    i: u64,
) -> Result<TensorInfo, GgufError> {
    let at = c.pos;
    let len = c.string_len("tensor name", u64::MAX)?;
    if len > MAX_TENSOR_NAME_LEN {
        return err(
            format!("tensor {i} (byte {at})"),
            format!("name is {len} bytes; ggml refuses names of 64 bytes or more"),
        );
    }
    let mut bytes = Vec::with_capacity(len as usize);
    c.append(len, &mut bytes, "tensor name")?;
    let name = String::from_utf8(bytes).or_else(|_| {
        err(
            format!("byte {at}"),
            format!("name of tensor {i} is not UTF-8"),
        )
    })?;
    let place = || format!("tensor {name:?}");
    let n_dims = c.u32(&name)?;
    if n_dims > MAX_DIMS {
        return err(
            place(),
            format!("{n_dims} dims; ggml allows at most {MAX_DIMS}"),
        );
    }
    let mut ne = Vec::with_capacity(n_dims as usize);
    for _ in 0..n_dims {
        let d = c.u64(&name)?;
        if d > i64::MAX as u64 {
            return err(
                place(),
                format!("dimension {d} overflows int64, as ggml reads dimensions (it would be negative)"),
            );
        }
        ne.push(d);
    }
    let type_id = c.u32(&name)?;
    let offset = c.u64(&name)?;
    let ggml_type = types::by_id(type_id);
    let byte_len = match ggml_type {
        Some(t) => Some(t.byte_len(&ne).or_else(|why| err(place(), why))?),
        None => {
            // Still check the element count: the tensor may be skipped, not the checks.
            if ne
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .is_none_or(|n| n > i64::MAX as u64)
            {
                return err(place(), format!("dimensions {ne:?} overflow"));
            }
            None
        }
    };
    Ok(TensorInfo {
        name,
        ne,
        type_id,
        ggml_type,
        offset,
        byte_len,
    })
}

/// Where the tensors' offsets led: the running padded sum (until a tensor of unknown size),
/// the end of the last tensor, and the gaps that must hold zero padding.
struct Layout {
    expected: Option<u64>,
    previous_end: u64,
    gaps: Vec<(u64, u64)>,
}

/// Checks every tensor's offset against ggml's layout.
fn check_offsets(
    tensors: &[TensorInfo],
    alignment: u64,
    header_end: u64,
    data_start: u64,
    data_len: u64,
) -> Result<Layout, GgufError> {
    // ggml's layout: in tensor-info order, each offset is the running sum of padded sizes.
    // A tensor of unknown size stops the running sum; later offsets must still increase,
    // be aligned, and not overlap.
    let mut expected: Option<u64> = Some(0);
    let mut previous_end = 0u64;
    let mut gaps: Vec<(u64, u64)> = vec![(header_end, data_start)];
    for t in tensors {
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
    Ok(Layout {
        expected,
        previous_end,
        gaps,
    })
}

/// Nothing may follow the data; the gaps that must hold zero padding.
fn check_end(
    tensors: &[TensorInfo],
    alignment: u64,
    header_end: u64,
    file_len: u64,
    data_len: u64,
    layout: Layout,
) -> Result<Vec<(u64, u64)>, GgufError> {
    let Layout {
        expected,
        previous_end,
        mut gaps,
    } = layout;
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
    Ok(gaps)
}

/// Every padding byte in `gaps` must be zero.
fn check_zero_padding(
    src: &(impl ReadAt + ?Sized),
    gaps: Vec<(u64, u64)>,
) -> Result<(), GgufError> {
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
    Ok(())
}

/// `o` rounded up to a multiple of `a` (a power of two).
pub fn align(o: u64, a: u64) -> Option<u64> {
    o.checked_add(a - 1).map(|x| x & !(a - 1))
}
