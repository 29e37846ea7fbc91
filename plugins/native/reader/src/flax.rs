//! Flax's msgpack state dicts (`flax.serialization.to_bytes` / `msgpack_serialize`, `.msgpack`,
//! transformers' `flax_model.msgpack`), read as `flax.serialization.msgpack_restore` reads them
//! (`flax/serialization.py` of flax 0.12.8 as pip installs it, the same as v0.12.7 but for
//! `strict_map_key=False`: `msgpack.unpackb(encoded, ext_hook=_msgpack_ext_unpack, raw=False,
//! strict_map_key=False)`, msgpack-python 1.2.4), strictly and within bounds.
//!
//! msgpack-python's `unpackb` refuses bytes after the object (`ExtraData`), the reserved marker
//! `0xc1`, unhashable map keys (arrays, maps; Flax allows every other key), strings that are
//! not UTF-8 (`raw=False`) and nesting deeper than its stack (1024); so does socair. A key written
//! twice is kept once (the last: the unpacker stores into a dict) and is a LEAD. Flax's ext
//! types (`_MsgpackExtType`): `1` an ndarray and `3` a NumPy scalar, each a nested msgpack
//! `(shape, dtype name, buffer)` that `_ndarray_from_bytes` reads with `np.frombuffer` in the
//! host's byte order (little-endian) and reshapes (a buffer whose length disagrees is refused);
//! `2` a complex number, a nested `(real, imag)`. msgpack's own timestamp (`-1`) is data; any
//! other ext type is a LEAD (Flax hands it on as an `ExtType`, which no state dict holds). Each
//! array is a tensor named by its path in the state dict (`params.Dense_0.kernel`), its bytes
//! the buffer's range of the file.

use crate::model_read::{Bytes, ModelRead, Tensor};
use socair_plugin_api::ByteOrder;
use std::collections::HashSet;

/// The format's name.
pub const FORMAT: &str = "flax-msgpack";

/// The largest state dict read (msgpack-python's default `max_buffer_size` is 100 MiB for a
/// streaming `Unpacker`; `unpackb` reads any `bytes`: Flax's chunking keeps each leaf under 2
/// GiB).
pub const MAX_FILE: u64 = 4 << 30;

/// msgpack-python's unpacker stack (`_MSGPACK_EMBED_STACK_SIZE`).
const MAX_DEPTH: usize = 1024;

/// Whether `head` begins a Flax state dict: a msgpack map, whose entries (read within `head`)
/// reach a Flax ndarray or scalar ext (type 1 or 3) holding a 3-element array, before anything
/// that is not msgpack.
pub fn looks_like_state(head: &[u8]) -> bool {
    if !matches!(head.first(), Some(0x80..=0x8f | 0xde | 0xdf)) {
        return false;
    }
    let mut p = Cursor { data: head, pos: 0 };
    // Walk items in order without recursion: a stack of remaining counts.
    let mut remaining: Vec<u64> = Vec::new();
    for _ in 0..4096 {
        let Ok(item) = p.header() else { return false };
        match item {
            Header::Ext { code, len } => {
                if (code == 1 || code == 3) && head.get(p.pos) == Some(&0x93) {
                    return true;
                }
                if p.skip(len).is_err() {
                    return false;
                }
            }
            Header::Array(n) => remaining.push(n),
            Header::Map(n) => remaining.push(n.saturating_mul(2)),
            Header::Raw { len, .. } => {
                if p.skip(len).is_err() {
                    return false;
                }
            }
            Header::Scalar(_) => {}
        }
        while remaining.last() == Some(&0) {
            remaining.pop();
        }
        if remaining.is_empty() {
            return false;
        }
        if let Some(n) = remaining.last_mut() {
            *n -= 1;
        }
    }
    false
}

/// A scalar value, as far as socair needs it.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Nil,
    Bool,
    Int(i128),
    Float,
}

#[derive(Debug)]
enum Header {
    Scalar(Scalar),
    /// A string (`str: true`) or bytes, its payload next.
    Raw {
        str: bool,
        len: u64,
    },
    Array(u64),
    Map(u64),
    /// An ext, its payload next.
    Ext {
        code: i8,
        len: u64,
    },
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> u64 {
        self.data.len().saturating_sub(self.pos) as u64
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], String> {
        if n > self.left() {
            return Err(format!("{n} bytes declared, {} left", self.left()));
        }
        let data: &'a [u8] = self.data;
        let s = data
            .get(self.pos..self.pos + n as usize)
            .unwrap_or_default();
        self.pos += n as usize;
        Ok(s)
    }

    fn skip(&mut self, n: u64) -> Result<(), String> {
        self.take(n).map(|_| ())
    }

    fn uint(&mut self, width: u64) -> Result<u64, String> {
        Ok(self
            .take(width)?
            .iter()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b)))
    }

    fn header(&mut self) -> Result<Header, String> {
        let at = self.pos;
        let m = self.take(1)?.first().copied().unwrap_or(0xc1);
        Ok(match m {
            0x00..=0x7f => Header::Scalar(Scalar::Int(i128::from(m))),
            0x80..=0x8f => Header::Map(u64::from(m & 0x0f)),
            0x90..=0x9f => Header::Array(u64::from(m & 0x0f)),
            0xa0..=0xbf => Header::Raw {
                str: true,
                len: u64::from(m & 0x1f),
            },
            0xc0 => Header::Scalar(Scalar::Nil),
            0xc2 | 0xc3 => Header::Scalar(Scalar::Bool),
            0xc4..=0xc6 => Header::Raw {
                str: false,
                len: self.uint(1 << (m - 0xc4))?,
            },
            0xc7..=0xc9 => {
                let len = self.uint(1 << (m - 0xc7))?;
                let code = self.take(1)?.first().copied().unwrap_or(0) as i8;
                Header::Ext { code, len }
            }
            0xca => {
                self.skip(4)?;
                Header::Scalar(Scalar::Float)
            }
            0xcb => {
                self.skip(8)?;
                Header::Scalar(Scalar::Float)
            }
            0xcc..=0xcf => Header::Scalar(Scalar::Int(i128::from(self.uint(1 << (m - 0xcc))?))),
            0xd0..=0xd3 => {
                let w = 1u64 << (m - 0xd0);
                let u = self.uint(w)?;
                let shift = 64 - 8 * w;
                Header::Scalar(Scalar::Int(i128::from(((u << shift) as i64) >> shift)))
            }
            0xd4..=0xd8 => {
                let code = self.take(1)?.first().copied().unwrap_or(0) as i8;
                Header::Ext {
                    code,
                    len: 1 << (m - 0xd4),
                }
            }
            0xd9..=0xdb => Header::Raw {
                str: true,
                len: self.uint(1 << (m - 0xd9))?,
            },
            0xdc | 0xdd => Header::Array(self.uint(2 << (m - 0xdc))?),
            0xde | 0xdf => Header::Map(self.uint(2 << (m - 0xde))?),
            0xe0..=0xff => Header::Scalar(Scalar::Int(i128::from(m as i8))),
            0xc1 => {
                return Err(format!(
                    "the reserved marker 0xc1 at byte {at}, which msgpack refuses"
                ))
            }
        })
    }
}

/// A parsed value, only as deep as the checks need.
enum Parsed {
    Scalar(Scalar),
    Raw { offset: usize, len: u64 },
    Array(Vec<Parsed>),
    Other,
}

struct Reader<'a> {
    cur: Cursor<'a>,
    out: ModelRead,
    path: Vec<String>,
    /// Offset of the whole file the cursor's data starts at (for a nested payload).
    base: usize,
    /// Map entries read, and the most read (each key is held while its map is read).
    entries: usize,
    max_entries: usize,
    /// Stopped at `max_entries`: past socair's bounds, not evidence against the file.
    past_bounds: bool,
}

fn join(path: &[String]) -> String {
    if path.is_empty() {
        "state dict".to_owned()
    } else {
        path.join(".")
    }
}

impl<'a> Reader<'a> {
    /// A reader of `data`, which starts at byte `base` of the file, holding at most
    /// `max_entries` map entries.
    fn new(data: &'a [u8], base: usize, max_entries: usize) -> Self {
        Reader {
            cur: Cursor { data, pos: 0 },
            out: ModelRead::new(FORMAT),
            path: Vec::new(),
            base,
            entries: 0,
            max_entries,
            past_bounds: false,
        }
    }

    fn value(&mut self, depth: usize) -> Result<Parsed, (usize, String)> {
        let at = self.cur.pos;
        let err = |reason: String| (at, reason);
        if depth > MAX_DEPTH {
            return Err(err(format!(
                "nested deeper than {MAX_DEPTH}, msgpack's unpacker stack"
            )));
        }
        let h = self.cur.header().map_err(err)?;
        Ok(match h {
            Header::Scalar(s) => Parsed::Scalar(s),
            Header::Raw { str, len } => {
                let offset = self.cur.pos;
                let bytes = self.cur.take(len).map_err(err)?;
                if str && std::str::from_utf8(bytes).is_err() && self.base == 0 {
                    return Err(err(
                        "a string that is not UTF-8 (msgpack's unpackb, raw=False, refuses it)"
                            .into(),
                    ));
                }
                Parsed::Raw { offset, len }
            }
            Header::Array(n) => {
                if n > self.cur.left() {
                    return Err(err(format!(
                        "an array of {n} items where {} bytes are left",
                        self.cur.left()
                    )));
                }
                let mut items = Vec::new();
                for i in 0..n {
                    self.path.push(i.to_string());
                    let v = self.value(depth + 1)?;
                    self.path.pop();
                    // Only small arrays are kept (shapes, the ndarray triple).
                    if n <= 64 {
                        items.push(v);
                    }
                }
                if n <= 64 {
                    Parsed::Array(items)
                } else {
                    Parsed::Other
                }
            }
            Header::Map(n) => {
                if n.saturating_mul(2) > self.cur.left() {
                    return Err(err(format!(
                        "a map of {n} entries where {} bytes are left",
                        self.cur.left()
                    )));
                }
                let mut seen = HashSet::new();
                for _ in 0..n {
                    self.entries += 1;
                    if self.entries > self.max_entries {
                        self.past_bounds = true;
                        return Err(err(format!("more than {} map entries", self.max_entries)));
                    }
                    let key_at = self.cur.pos;
                    let key = match self.value(depth + 1)? {
                        Parsed::Raw { offset, len, .. } => {
                            String::from_utf8_lossy(self.cur.data.get(offset..offset + len as usize).unwrap_or_default()).into_owned()
                        }
                        // flax 0.12.8 unpacks with `strict_map_key=False`: any hashable key.
                        Parsed::Scalar(Scalar::Int(n)) => n.to_string(),
                        Parsed::Scalar(Scalar::Nil) => "None".to_owned(),
                        Parsed::Scalar(_) => format!("<key at byte {}>", self.base + key_at),
                        _ => {
                            return Err((key_at, "a map key that is an array, map or ext (unhashable: msgpack's unpackb refuses it)".into()))
                        }
                    };
                    if !seen.insert(key.clone()) {
                        let mut p = self.path.clone();
                        p.push(key.clone());
                        self.out.lead(
                            join(&p),
                            format!("the key is written twice; msgpack keeps the last, at byte {}; another reader may keep the first", self.base + key_at),
                        );
                    }
                    self.path.push(key);
                    self.value(depth + 1)?;
                    self.path.pop();
                }
                Parsed::Other
            }
            Header::Ext { code, len } => {
                let start = self.cur.pos;
                let payload = self.cur.take(len).map_err(err)?;
                self.ext(code, payload, self.base + start, at);
                Parsed::Other
            }
        })
    }

    fn ext(&mut self, code: i8, payload: &[u8], file_offset: usize, at: usize) {
        let place = join(&self.path);
        match code {
            1 | 3 => match ndarray(payload, file_offset) {
                Ok(Some(mut t)) => {
                    t.name = place;
                    self.out.tensors.push(t);
                }
                Ok(None) => self.out.lead(
                    format!("{place} (byte {})", self.base + at),
                    "an array of a dtype socair does not fingerprint (NumPy reads it once JAX registers ml_dtypes' types): its bytes are data, not fingerprinted",
                ),
                Err(reason) => self
                    .out
                    .fail(format!("{place} (byte {})", self.base + at), reason),
            },
            2 => {
                let mut r = Reader::new(payload, file_offset, 64);
                let ok = matches!(r.value(1), Ok(Parsed::Array(ref v)) if v.len() == 2 && v.iter().all(|x| matches!(x, Parsed::Scalar(Scalar::Int(_) | Scalar::Float))))
                    && r.cur.pos == payload.len();
                if !ok {
                    self.out.fail(
                        format!("{place} (byte {})", self.base + at),
                        "a complex number (Flax ext 2) that is not a msgpack (real, imag) pair",
                    );
                }
            }
            -1 if matches!(payload.len(), 4 | 8 | 12) => {}
            other => self.out.lead(
                format!("{place} (byte {})", self.base + at),
                format!(
                    "msgpack ext type {other}, which Flax does not write (it hands it on unread)"
                ),
            ),
        }
    }
}

/// NumPy dtype names Flax writes (`arr.dtype.name`) that socair fingerprints: element type and
/// width.
fn dtype(name: &str) -> Option<(&'static str, u64)> {
    Some(match name {
        "float32" => ("F32", 4),
        "float64" => ("F64", 8),
        "float16" => ("F16", 2),
        "bfloat16" => ("BF16", 2),
        "int8" => ("I8", 1),
        "int16" => ("I16", 2),
        "int32" => ("I32", 4),
        "int64" => ("I64", 8),
        "uint8" => ("U8", 1),
        "uint16" => ("U16", 2),
        "uint32" => ("U32", 4),
        "uint64" => ("U64", 8),
        "bool" => ("BOOL", 1),
        "complex64" => ("C64", 8),
        "complex128" => ("C128", 16),
        _ => return None,
    })
}

/// `_ndarray_from_bytes`: the payload is `(shape, dtype name, buffer)` and nothing after.
fn ndarray(payload: &[u8], file_offset: usize) -> Result<Option<Tensor>, String> {
    let mut r = Reader::new(payload, file_offset, 64);
    let v = r.value(1).map_err(|(at, reason)| {
        format!("the array's payload at byte {}: {reason}", file_offset + at)
    })?;
    if r.cur.pos != payload.len() {
        return Err(format!(
            "{} bytes follow the array's payload (msgpack's unpackb refuses them)",
            payload.len() - r.cur.pos
        ));
    }
    let Parsed::Array(items) = v else {
        return Err("the array's payload is not (shape, dtype, buffer)".into());
    };
    let [Parsed::Array(shape), Parsed::Raw {
        offset: noff,
        len: nlen,
        ..
    }, Parsed::Raw { offset, len, .. }] = items.as_slice()
    else {
        return Err("the array's payload is not (shape, dtype, buffer)".into());
    };
    let mut dims = Vec::new();
    for d in shape {
        match d {
            Parsed::Scalar(Scalar::Int(n)) if *n >= 0 && *n <= i128::from(u32::MAX) => {
                dims.push(*n as u64)
            }
            _ => return Err("a shape that is not non-negative integers".into()),
        }
    }
    let name = String::from_utf8_lossy(
        payload
            .get(*noff..noff + *nlen as usize)
            .unwrap_or_default(),
    )
    .into_owned();
    let Some((element, width)) = dtype(&name) else {
        if name == "object" || name.starts_with('O') {
            return Err(format!(
                "the dtype `{name}`: np.frombuffer refuses object arrays"
            ));
        }
        // np.dtype reads more names once JAX has registered ml_dtypes' (float8_e4m3fn, int4):
        // their bytes are data, but socair does not fingerprint them.
        return Ok(None);
    };
    let elements = dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or("a shape past 64 bits")?;
    if elements.checked_mul(width) != Some(*len) {
        return Err(format!("the buffer holds {len} bytes, where shape {dims:?} of {name} needs {} (NumPy's reshape refuses it)", elements.saturating_mul(width)));
    }
    Ok(Some(Tensor {
        name: String::new(),
        dtype: name,
        element_type: element,
        shape: dims,
        bytes: Bytes::Range {
            offset: (file_offset + offset) as u64,
            len: *len,
        },
        byte_order: ByteOrder::Little,
    }))
}

/// Reads a Flax msgpack state dict.
pub fn read(data: &[u8]) -> ModelRead {
    let mut r = Reader::new(data, 0, 1_000_000 + data.len() / 16);
    let result = r.value(0);
    let end = r.cur.pos;
    let past_bounds = r.past_bounds;
    let mut out = r.out;
    if let Err((at, reason)) = result {
        if past_bounds {
            out.what = socair_plugin_kit::report::PAST_BOUNDS.into();
            out.lead(format!("byte {at}"), reason);
            return out;
        }
        return out.refuse(format!("byte {at}"), reason);
    }
    if end != data.len() {
        return out.refuse(
            format!("byte {end}"),
            format!(
                "{} bytes follow the state dict (msgpack's unpackb refuses them: ExtraData)",
                data.len() - end
            ),
        );
    }
    if !matches!(data.first(), Some(0x80..=0x8f | 0xde | 0xdf)) {
        out.fail(
            "state dict",
            "is not a msgpack map (Flax's from_bytes restores a state dict)",
        );
    }
    let n = out.tensors.len();
    out.what = format!(
        "a Flax state dict of {n} array{}",
        if n == 1 { "" } else { "s" }
    );
    out
}
