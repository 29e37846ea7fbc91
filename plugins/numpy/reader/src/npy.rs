//! The NumPy `.npy` format (format versions 1.0, 2.0 and 3.0), read strictly, as
//! `numpy/lib/_format_impl.py` (numpy 2.4) writes and reads it.
//!
//! ```text
//! \x93NUMPY  major minor  header_len (u16 LE for 1.0; u32 LE for 2.0 and 3.0)  header  data
//! ```
//!
//! The header is a Python dict literal with exactly the keys `descr`, `fortran_order` and
//! `shape` (`EXPECTED_KEYS`), padded with spaces and ended by `\n`, parsed by
//! [`crate::literal`], never evaluated. NumPy's reader checks the same keys and types
//! (`_read_array_header`); it does not check the padding or the newline, which its writer
//! always produces (`_wrap_header`), so a header without them is refused here as not NumPy's.
//!
//! What follows the header:
//!
//! * for an ordinary dtype, exactly `shape` × itemsize bytes to the end of the file (or zip
//!   member): short data is what `read_array` refuses ("Failed to read all data"), trailing
//!   bytes are what `numpy.fromfile` ignores and another reader may not;
//! * for a dtype holding Python objects (`descr` `'|O'`, or a structured dtype with an object
//!   field), a pickle: `read_array` calls `pickle.load(fp, **pickle_kwargs)` on what follows
//!   the header, whatever the shape says (see [`crate::read`]).
//!
//! Deliberately not required: the 64-byte alignment of the data (NumPy 1.x wrote 16; NumPy's
//! reader checks neither, and alignment changes nothing about what the bytes mean).
//!
//! Every function here is pure over [`ReadAt`] and a window (`base`, `len`) of it, so one
//! parser serves a `.npy` file and a member of an archive. Offsets in errors are offsets in the
//! window's source.

use crate::literal::{self, Value};
use socair_plugin_api::{ByteOrder, ReadAt};

/// The first six bytes of every `.npy` file.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The longest header accepted, in characters: NumPy's own default `max_header_size`
/// (`_MAX_HEADER_SIZE`; its reader refuses longer headers unless `allow_pickle=True`).
pub const MAX_HEADER_CHARS: u64 = 10_000;

/// Why a `.npy` header is refused: the byte offset and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {reason}")]
pub struct NpyError {
    /// Offset in the window's source.
    pub offset: u64,
    /// What is wrong there.
    pub reason: String,
}

/// The dtype description as the header gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Descr {
    /// A dtype string such as `<f4`.
    Str(String),
    /// A structured dtype: a list of fields.
    Structured(Vec<Value>),
}

impl Descr {
    /// The descr as a manifest names the dtype.
    pub fn text(&self) -> String {
        match self {
            Descr::Str(s) => s.clone(),
            // As the header gives it (NumPy writes `repr` of `dtype_to_descr`).
            Descr::Structured(f) => Value::List(f.clone()).repr(),
        }
    }
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Format version, major and minor.
    pub version: (u8, u8),
    /// Where the header's dict starts.
    pub header_offset: u64,
    /// Where the data starts.
    pub data_offset: u64,
    /// Where the data ends (the end of the window).
    pub data_end: u64,
    /// The dtype.
    pub descr: Descr,
    /// Where the `descr` key is.
    pub descr_offset: u64,
    /// Whether the data is in column-major order.
    pub fortran_order: bool,
    /// The shape, outermost first.
    pub shape: Vec<u64>,
}

impl Header {
    /// The number of bytes after the header.
    pub fn data_len(&self) -> u64 {
        self.data_end.saturating_sub(self.data_offset)
    }
}

fn err<T>(offset: u64, reason: impl Into<String>) -> Result<T, NpyError> {
    Err(NpyError {
        offset,
        reason: reason.into(),
    })
}

fn read(src: &(impl ReadAt + ?Sized), offset: u64, buf: &mut [u8]) -> Result<(), NpyError> {
    src.read_exact_at(offset, buf).map_err(|e| NpyError {
        offset,
        reason: format!("reading failed: {e}"),
    })
}

/// Whether `head` starts with the `.npy` magic.
pub fn has_magic(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// Reads and checks the header of the `.npy` bytes at `base..base + len` of `src`.
pub fn read_header(src: &(impl ReadAt + ?Sized), base: u64, len: u64) -> Result<Header, NpyError> {
    let end = base
        .checked_add(len)
        .filter(|&e| e <= src.size())
        .ok_or_else(|| NpyError {
            offset: base,
            reason: format!("{len} bytes do not lie in the {}-byte source", src.size()),
        })?;
    let (version, len_width, header_len) = read_preamble(src, base, len)?;
    let header_offset = base.saturating_add(8).saturating_add(len_width);
    // A UTF-8 character takes at most 4 bytes: a longer header has too many characters
    // whatever it holds, and is refused before it is read.
    let most_bytes = if version.0 >= 3 {
        MAX_HEADER_CHARS.saturating_mul(4)
    } else {
        MAX_HEADER_CHARS
    };
    let too_long = |n: u64| {
        NpyError {
        offset: base.saturating_add(8),
        reason: format!(
            "header length {n} is over {MAX_HEADER_CHARS} characters (NumPy's own limit, max_header_size)"
        ),
    }
    };
    if header_len > most_bytes {
        return Err(too_long(header_len));
    }
    let data_offset = header_offset
        .checked_add(header_len)
        .filter(|&d| d <= end)
        .ok_or_else(|| NpyError {
            offset: base.saturating_add(8),
            reason: format!(
                "header length {header_len} runs past the end ({} bytes remain)",
                end.saturating_sub(header_offset)
            ),
        })?;
    // header_len is at most 40,000: a small allocation.
    let mut text = vec![0u8; usize::try_from(header_len).unwrap_or(0)];
    read(src, header_offset, &mut text)?;
    let at = |i: usize| header_offset.saturating_add(i as u64);

    if version.0 >= 3 {
        match std::str::from_utf8(&text) {
            Err(e) => return err(at(e.valid_up_to()), "the version 3.0 header is not UTF-8"),
            Ok(s) if s.chars().count() as u64 > MAX_HEADER_CHARS => {
                return Err(too_long(s.chars().count() as u64))
            }
            Ok(_) => {}
        }
    }
    let entries = header_dict(&text, version, at)?;
    let (descr, fortran, shape) = header_keys(entries, at)?;
    let missing = |k: &str| NpyError {
        offset: header_offset,
        reason: format!("the header has no `{k}`"),
    };
    let (descr, descr_offset) = descr.ok_or_else(|| missing("descr"))?;
    Ok(Header {
        version,
        header_offset,
        data_offset,
        data_end: end,
        descr,
        descr_offset,
        fortran_order: fortran.ok_or_else(|| missing("fortran_order"))?,
        shape: shape.ok_or_else(|| missing("shape"))?,
    })
}

/// The magic, the format version, and the header length (its width in bytes, and its value).
fn read_preamble(
    src: &(impl ReadAt + ?Sized),
    base: u64,
    len: u64,
) -> Result<((u8, u8), u64, u64), NpyError> {
    if len < 10 {
        return err(
            base,
            format!("{len} bytes: too short for the .npy magic, version and header length"),
        );
    }
    let mut lead = [0u8; 8];
    read(src, base, &mut lead)?;
    let (magic, version) = lead.split_at(6);
    if magic != MAGIC {
        return err(base, "not the .npy magic \\x93NUMPY");
    }
    let version = match version {
        [major, minor] => (*major, *minor),
        _ => return err(base, "version bytes missing"),
    };
    let version_at = base.saturating_add(6);
    let (len_width, header_len) = match version {
        (1, 0) => {
            let mut b = [0u8; 2];
            read(src, base.saturating_add(8), &mut b)?;
            (2u64, u64::from(u16::from_le_bytes(b)))
        }
        (2, 0) | (3, 0) => {
            if len < 12 {
                return err(
                    base,
                    format!(
                        "{len} bytes: too short for a version {}.0 header length",
                        version.0
                    ),
                );
            }
            let mut b = [0u8; 4];
            read(src, base.saturating_add(8), &mut b)?;
            (4u64, u64::from(u32::from_le_bytes(b)))
        }
        (major, minor) => {
            return err(
                version_at,
                format!("format version {major}.{minor}; NumPy defines 1.0, 2.0 and 3.0"),
            )
        }
    };
    Ok((version, len_width, header_len))
}

/// The header's dict literal, as NumPy's writer ends it: spaces, then `\n`.
fn header_dict(
    text: &[u8],
    version: (u8, u8),
    at: impl Fn(usize) -> u64,
) -> Result<literal::Entries, NpyError> {
    match text.last() {
        Some(b'\n') => {}
        _ => {
            return err(
                at(text.len().saturating_sub(1)),
                "the header does not end with `\\n` (NumPy's writer always ends it so)",
            )
        }
    }
    let (entries, dict_end) = literal::parse_dict(text, literal::Header::for_version(version.0))
        .map_err(|e| NpyError {
            offset: at(e.offset),
            reason: e.reason,
        })?;
    let pad = text
        .get(dict_end..text.len().saturating_sub(1))
        .unwrap_or_default();
    if let Some(i) = pad.iter().position(|&b| b != b' ') {
        return err(
            at(dict_end.saturating_add(i)),
            "only spaces may follow the dict before the final `\\n`",
        );
    }
    Ok(entries)
}

/// `descr` (with where it is), `fortran_order` and `shape`, where the header has them.
type HeaderKeys = (Option<(Descr, u64)>, Option<bool>, Option<Vec<u64>>);

/// The header's keys, each of its type and given once: `descr` (with where it is),
/// `fortran_order` and `shape`, where present.
fn header_keys(
    entries: literal::Entries,
    at: impl Fn(usize) -> u64,
) -> Result<HeaderKeys, NpyError> {
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (key_at, key, value) in entries {
        let place = at(key_at);
        let slot_taken = match key.as_str() {
            "descr" => {
                let d = match value {
                    Value::Str(s) => Descr::Str(s),
                    Value::List(fields) => Descr::Structured(fields),
                    _ => return err(place, "`descr` must be a string or a list of fields"),
                };
                descr.replace((d, place)).is_some()
            }
            "fortran_order" => {
                let Value::Bool(b) = value else {
                    return err(place, "`fortran_order` must be True or False");
                };
                fortran.replace(b).is_some()
            }
            "shape" => {
                let Value::Tuple(items) = value else {
                    return err(place, "`shape` must be a tuple of integers");
                };
                let mut dims = Vec::with_capacity(items.len());
                for item in items {
                    let Value::Int(d) = item else {
                        return err(place, "`shape` must be a tuple of integers");
                    };
                    dims.push(d);
                }
                shape.replace(dims).is_some()
            }
            other => {
                return err(
                    place,
                    format!("unexpected key {other:?}: the header holds exactly `descr`, `fortran_order` and `shape`"),
                )
            }
        };
        if slot_taken {
            return err(
                place,
                format!("key {key:?} given twice (Python would keep the last one)"),
            );
        }
    }
    Ok((descr, fortran, shape))
}

/// What a dtype is to this plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// An element type socair fingerprints.
    Element {
        /// socair's name for it: the safetensors dtype name (`F32`, `I64`, …).
        element_type: &'static str,
        /// The byte order of each element.
        byte_order: ByteOrder,
        /// Bytes per element.
        itemsize: u64,
    },
    /// Python objects: the data is a pickle, which `np.load(allow_pickle=True)` runs.
    Object,
    /// A sound NumPy dtype with no element type the host encodes values of (complex128,
    /// extended precision, strings, datetimes, raw void records, structured records): when
    /// its itemsize is known, fingerprinted by its bytes (the tensor-fingerprint spec's
    /// `sha256`; no `values` hash, which is defined for F32, F16 and BF16 only), never a
    /// finding.
    Other {
        /// Bytes per element, when the descr says it.
        itemsize: Option<u64>,
        /// What it is.
        what: String,
        /// socair's element type when it has one (`C128`, the name the torch readers give
        /// complex128 too); none for the rest, whose elements only NumPy names.
        element_type: Option<&'static str>,
        /// The byte order the descr gives (`|`: little, as for one-byte types).
        byte_order: ByteOrder,
    },
    /// A descr NumPy's writer does not produce; `np.dtype()` may still make something of it.
    Unknown {
        /// Why.
        what: String,
    },
}

/// The element types fingerprinted: NumPy's kind and size (the `dtype.str` NumPy writes,
/// without its byte order), and the safetensors dtype name. NumPy has no bfloat16 or float8
/// of its own.
pub const ELEMENTS: &[(&str, &str)] = &[
    ("b1", "BOOL"),
    ("i1", "I8"),
    ("u1", "U8"),
    ("i2", "I16"),
    ("u2", "U16"),
    ("f2", "F16"),
    ("i4", "I32"),
    ("u4", "U32"),
    ("f4", "F32"),
    ("i8", "I64"),
    ("u8", "U64"),
    ("f8", "F64"),
    ("c8", "C64"),
];

/// Classifies a descr.
pub fn classify(descr: &Descr) -> Kind {
    match descr {
        Descr::Str(s) => classify_str(s),
        Descr::Structured(fields) => match structured(fields, 0) {
            Some(Fields { object: true, .. }) => Kind::Object,
            Some(Fields { itemsize, .. }) => Kind::Other {
                itemsize,
                what: format!("a structured dtype of {} fields", fields.len()),
                element_type: None,
                byte_order: ByteOrder::Little,
            },
            None => Kind::Unknown {
                what: "a list `descr` that is not a list of (name, type[, shape]) fields".into(),
            },
        },
    }
}

fn classify_str(s: &str) -> Kind {
    // `O` in any position (`|O`, `O`, `O8`, `object`…) may be read by np.dtype() as objects.
    if s.contains('O') || s.contains("object") {
        return Kind::Object;
    }
    let unknown = || Kind::Unknown {
        what: format!(
            "descr {s:?} is not of the form NumPy's writer produces (such as `<f4` or `|u1`)"
        ),
    };
    let mut chars = s.chars();
    let order = match chars.next() {
        Some('<') => Some(ByteOrder::Little),
        Some('>') => Some(ByteOrder::Big),
        Some('|') => None,
        _ => return unknown(),
    };
    let code = chars.as_str();
    if let Some((_, element_type)) = ELEMENTS.iter().find(|(c, _)| *c == code) {
        let itemsize = code
            .get(1..)
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        let byte_order = match order {
            Some(o) => o,
            None if itemsize == 1 => ByteOrder::Little,
            None => {
                return Kind::Unknown {
                    what: format!("descr {s:?} gives no byte order for a {itemsize}-byte type"),
                }
            }
        };
        return Kind::Element {
            element_type,
            byte_order,
            itemsize,
        };
    }
    let kind = code.get(..1).unwrap_or_default();
    let rest = code.get(1..).unwrap_or_default();
    let digits = rest.split('[').next().unwrap_or_default();
    let Ok(n) = digits.parse::<u64>() else {
        return unknown();
    };
    if digits.starts_with('+') || (digits.len() > 1 && digits.starts_with('0')) {
        return unknown();
    }
    let unit = rest.get(digits.len()..).unwrap_or_default();
    let simple = unit.is_empty();
    let time_unit = simple
        || (unit.starts_with('[')
            && unit.ends_with(']')
            && unit.len() <= 12
            && unit
                .get(1..unit.len().saturating_sub(1))
                .is_some_and(|u| !u.is_empty() && u.bytes().all(|b| b.is_ascii_alphanumeric())));
    let (itemsize, what) = match kind {
        "S" if simple => (Some(n), "byte strings"),
        "U" if simple => (n.checked_mul(4), "unicode strings"),
        "V" if simple => (Some(n), "raw void records"),
        "M" if n == 8 && time_unit => (Some(8), "datetimes"),
        "m" if n == 8 && time_unit => (Some(8), "timedeltas"),
        "c" if simple && n == 16 => (Some(16), "complex128"),
        "c" if simple && (n == 24 || n == 32) => (Some(n), "extended-precision complex numbers"),
        "f" if simple && (n == 12 || n == 16) => (Some(n), "extended-precision floats"),
        _ => return unknown(),
    };
    if order.is_none() && !matches!(kind, "S" | "V") {
        return Kind::Unknown {
            what: format!("descr {s:?} gives no byte order for a multi-byte type"),
        };
    }
    Kind::Other {
        itemsize,
        what: format!("dtype {s:?} ({what})"),
        element_type: (kind == "c" && n == 16).then_some("C128"),
        byte_order: order.unwrap_or(ByteOrder::Little),
    }
}

/// What a structured descr holds.
struct Fields {
    /// Whether a field (at any depth) holds objects.
    object: bool,
    /// Bytes per record (`descr_to_dtype` packs the fields one after another), when every
    /// field's size is known.
    itemsize: Option<u64>,
}

/// The fields of a structured descr, or `None` when the list is not one of fields as NumPy
/// writes them.
fn structured(fields: &[Value], depth: usize) -> Option<Fields> {
    if depth > literal::MAX_DEPTH {
        return None;
    }
    let mut object = false;
    let mut itemsize = Some(0u64);
    for field in fields {
        let Value::Tuple(parts) = field else {
            return None;
        };
        let (name, ty, shape) = match parts.as_slice() {
            [name, ty] => (name, ty, None),
            [name, ty, shape] => (name, ty, Some(shape)),
            _ => return None,
        };
        match name {
            Value::Str(_) => {}
            Value::Tuple(t) if t.len() == 2 && t.iter().all(|v| matches!(v, Value::Str(_))) => {}
            _ => return None,
        }
        let count = match shape {
            None => Some(1),
            Some(Value::Int(n)) => Some(*n),
            Some(Value::Tuple(dims)) => dims.iter().try_fold(Some(1u64), |acc, d| match d {
                Value::Int(n) => Some(acc.and_then(|a| a.checked_mul(*n))),
                _ => None,
            })?,
            Some(_) => return None,
        };
        let size = match ty {
            Value::Str(s) => match classify_str(s) {
                Kind::Object => {
                    object = true;
                    Some(8)
                }
                Kind::Element { itemsize, .. } => Some(itemsize),
                Kind::Other { itemsize, .. } => itemsize,
                Kind::Unknown { .. } => None,
            },
            Value::List(inner) => {
                let f = structured(inner, depth.saturating_add(1))?;
                object |= f.object;
                f.itemsize
            }
            _ => return None,
        };
        itemsize = match (itemsize, size, count) {
            (Some(total), Some(size), Some(count)) => {
                size.checked_mul(count).and_then(|s| total.checked_add(s))
            }
            _ => None,
        };
    }
    Some(Fields { object, itemsize })
}

/// The number of bytes `shape` of `itemsize`-byte elements needs, if it fits in a u64.
pub fn data_len(shape: &[u64], itemsize: u64) -> Option<u64> {
    shape
        .iter()
        .try_fold(itemsize, |acc, &d| acc.checked_mul(d))
}

/// Checks that the data after the header is exactly `shape` of `itemsize`-byte elements.
pub fn check_data_len(h: &Header, itemsize: u64) -> Result<u64, NpyError> {
    let need = data_len(&h.shape, itemsize).ok_or_else(|| NpyError {
        offset: h.descr_offset,
        reason: format!(
            "shape {:?} of {itemsize}-byte elements overflows 64 bits",
            h.shape
        ),
    })?;
    let have = h.data_len();
    if have < need {
        return err(
            h.data_offset,
            format!(
                "shape {:?} needs {need} data bytes but {have} follow the header (truncated)",
                h.shape
            ),
        );
    }
    if have > need {
        return err(
            h.data_offset.saturating_add(need),
            format!(
                "{} trailing bytes after the {need} data bytes of shape {:?}",
                have.saturating_sub(need),
                h.shape
            ),
        );
    }
    Ok(need)
}

/// Element strides, outermost first, of column-major (`fortran_order: True`) data of `shape`,
/// or none when column-major and row-major order coincide (at most one dimension over 1).
pub fn fortran_strides(shape: &[u64]) -> Option<Vec<u64>> {
    if shape.iter().filter(|&&d| d > 1).count() < 2 {
        return None;
    }
    let mut strides = Vec::with_capacity(shape.len());
    let mut step: u64 = 1;
    for &d in shape {
        strides.push(step);
        // Cannot overflow: the product of the shape was checked against the data length.
        step = step.saturating_mul(d);
    }
    Some(strides)
}

/// Column-major `data` of `shape` (elements of `itemsize` bytes) in row-major order: what
/// `read_array` gives back (`array.reshape(shape[::-1]).transpose()`). `data` holds exactly
/// the shape's elements.
pub fn fortran_to_row_major(data: &[u8], shape: &[u64], itemsize: usize) -> Vec<u8> {
    let Some(strides) = fortran_strides(shape) else {
        return data.to_vec();
    };
    let mut out = Vec::with_capacity(data.len());
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let strides: Vec<usize> = strides.iter().map(|&s| s as usize).collect();
    let numel = data.len().checked_div(itemsize).unwrap_or(0);
    let mut index = vec![0usize; dims.len()];
    for _ in 0..numel {
        let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        if let Some(e) = data.get(at * itemsize..at * itemsize + itemsize) {
            out.extend_from_slice(e);
        }
        // The odometer, last dimension fastest (row-major).
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A `.npy` file as NumPy writes it: header padded with spaces to a multiple of 64.
    pub fn npy(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
        let prefix = if version == 1 { 10 } else { 12 };
        let mut text = dict.as_bytes().to_vec();
        while !(prefix + text.len() + 1).is_multiple_of(64) {
            text.push(b' ');
        }
        text.push(b'\n');
        let mut out = MAGIC.to_vec();
        out.extend([version, 0]);
        if version == 1 {
            out.extend((text.len() as u16).to_le_bytes());
        } else {
            out.extend((text.len() as u32).to_le_bytes());
        }
        out.extend(text);
        out.extend(data);
        out
    }

    fn header(bytes: &[u8]) -> Result<Header, NpyError> {
        read_header(bytes, 0, bytes.len() as u64)
    }

    #[test]
    fn a_numpy_header() {
        let f = npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
            &[0; 24],
        );
        let h = header(&f).unwrap();
        assert_eq!(h.version, (1, 0));
        assert_eq!(h.header_offset, 10);
        assert_eq!(h.data_offset, 128);
        assert_eq!(h.descr, Descr::Str("<f4".into()));
        assert_eq!(h.descr_offset, 11);
        assert!(!h.fortran_order);
        assert_eq!(h.shape, vec![2, 3]);
        assert_eq!(check_data_len(&h, 4), Ok(24));
        let h3 = header(&npy(
            3,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
            &[0; 4],
        ))
        .unwrap();
        assert_eq!(
            (h3.version, h3.header_offset, h3.data_offset),
            ((3, 0), 12, 128)
        );
        assert_eq!(check_data_len(&h3, 4), Ok(4), "0-d: one element");
    }

    #[test]
    fn a_window_inside_a_larger_file() {
        let mut file = vec![0xAA; 100];
        file.extend(npy(
            2,
            "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }",
            b"hello",
        ));
        let len = file.len() as u64 - 100;
        let h = read_header(file.as_slice(), 100, len).unwrap();
        assert_eq!(
            (h.header_offset, h.data_offset, h.data_end),
            (112, 228, 233)
        );
        let e = read_header(file.as_slice(), 0, 50).unwrap_err();
        assert_eq!(e.offset, 0);
    }

    #[test]
    fn latin1_and_python2_headers_as_numpy_reads_them() {
        let mut f = npy(
            1,
            "{'descr': [('X', '<f4')], 'fortran_order': False, 'shape': (2L,), }",
            &[0; 8],
        );
        let x = f.iter().position(|&b| b == b'X').unwrap();
        f[x] = 0xE9;
        let h = header(&f).unwrap();
        assert_eq!(h.shape, vec![2]);
        let Descr::Structured(fields) = &h.descr else {
            panic!("{h:?}")
        };
        assert_eq!(
            fields[0],
            Value::Tuple(vec![Value::Str("\u{e9}".into()), Value::Str("<f4".into())])
        );
        assert_eq!(
            classify(&h.descr),
            Kind::Other {
                itemsize: Some(4),
                what: "a structured dtype of 1 fields".into(),
                element_type: None,
                byte_order: ByteOrder::Little,
            }
        );
        // A Latin-1 byte outside a string is no literal.
        let mut g = npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
            &[0; 8],
        );
        // The space after `'descr':` (byte 10 + 9).
        g[19] = 0xE9;
        assert_eq!(header(&g).unwrap_err().offset, 19);
    }

    #[test]
    fn refusals_name_the_byte() {
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
        let good = npy(1, dict, &[0; 8]);
        let mut bad_magic = good.clone();
        bad_magic[5] = b'Z';
        assert_eq!(header(&bad_magic).unwrap_err().offset, 0);
        let mut bad_version = good.clone();
        bad_version[6] = 4;
        let e = header(&bad_version).unwrap_err();
        assert_eq!(
            (e.offset, e.reason.as_str()),
            (6, "format version 4.0; NumPy defines 1.0, 2.0 and 3.0")
        );
        let mut long = good.clone();
        long[8..10].copy_from_slice(&60000u16.to_le_bytes());
        assert!(header(&long).unwrap_err().reason.contains("over 10000"));
        let mut past = good.clone();
        past[8..10].copy_from_slice(&9000u16.to_le_bytes());
        assert!(header(&past)
            .unwrap_err()
            .reason
            .contains("runs past the end"));
        assert!(header(&good[..9]).unwrap_err().reason.contains("too short"));

        let e = header(&npy(1, "{'descr': __import__('os').system('sh'), }", &[])).unwrap_err();
        assert_eq!(e.offset, 10 + 10);
        assert!(e.reason.contains("`__import__` is not a literal"), "{e}");
        let e = header(&npy(1, "['descr', '<f4']", &[])).unwrap_err();
        assert_eq!(e.offset, 10);
        let e = header(&npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
            &[],
        ))
        .unwrap_err();
        assert!(e.reason.contains("unexpected key \"x\""), "{e}");
        let e = header(&npy(
            1,
            "{'descr': '<f4', 'descr': '|O', 'fortran_order': False, 'shape': ()}",
            &[],
        ))
        .unwrap_err();
        assert_eq!(e.offset, 10 + 17);
        assert!(e.reason.contains("given twice"), "{e}");
        let e = header(&npy(1, "{'descr': '<f4', 'shape': ()}", &[])).unwrap_err();
        assert_eq!(e.reason, "the header has no `fortran_order`");
        let e = header(&npy(
            1,
            "{'descr': '<f4', 'fortran_order': 0, 'shape': ()}",
            &[],
        ))
        .unwrap_err();
        assert!(e.reason.contains("True or False"), "{e}");
        let e = header(&npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'x')}",
            &[],
        ))
        .unwrap_err();
        assert!(e.reason.contains("tuple of integers"), "{e}");
        let mut tab = good.clone();
        tab[100] = b'\t';
        assert_eq!(header(&tab).unwrap_err().offset, 100);
        let mut no_newline = good.clone();
        no_newline[127] = b' ';
        assert_eq!(header(&no_newline).unwrap_err().offset, 127);
        // A version 3.0 header is counted in characters, as NumPy counts it.
        let wide = format!(
            "{{'descr': [('{}', '<f4')], 'fortran_order': False, 'shape': (1,), }}",
            "\u{e9}".repeat(4000)
        );
        assert!(header(&npy(3, &wide, &[0; 16000])).is_ok());
        let wider = wide.replace('\u{e9}', "\u{e9}\u{e9}\u{e9}");
        assert!(header(&npy(3, &wider, &[0; 48000]))
            .unwrap_err()
            .reason
            .contains("characters"));
    }

    #[test]
    fn data_length_must_be_exact() {
        let dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }";
        let h = header(&npy(1, dict, &[0; 23])).unwrap();
        let e = check_data_len(&h, 8).unwrap_err();
        assert_eq!(e.offset, 128);
        assert!(e.reason.contains("needs 24 data bytes but 23"), "{e}");
        let h = header(&npy(1, dict, &[0; 25])).unwrap();
        let e = check_data_len(&h, 8).unwrap_err();
        assert_eq!(e.offset, 128 + 24);
        assert!(e.reason.starts_with("1 trailing bytes"), "{e}");
        let huge = "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }";
        let h = header(&npy(1, huge, &[])).unwrap();
        assert!(check_data_len(&h, 8)
            .unwrap_err()
            .reason
            .contains("overflows"));
        let empty =
            "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 18446744073709551615), }";
        assert_eq!(
            check_data_len(&header(&npy(1, empty, &[])).unwrap(), 8),
            Ok(0)
        );
    }

    #[test]
    fn dtypes() {
        let s = |t: &str| classify(&Descr::Str(t.into()));
        let el = |element_type, byte_order, itemsize| Kind::Element {
            element_type,
            byte_order,
            itemsize,
        };
        assert_eq!(s("<f4"), el("F32", ByteOrder::Little, 4));
        assert_eq!(s(">f4"), el("F32", ByteOrder::Big, 4));
        assert_eq!(s("<f2"), el("F16", ByteOrder::Little, 2));
        assert_eq!(s(">i8"), el("I64", ByteOrder::Big, 8));
        assert_eq!(s("<u4"), el("U32", ByteOrder::Little, 4));
        assert_eq!(s("|b1"), el("BOOL", ByteOrder::Little, 1));
        assert_eq!(s("|u1"), el("U8", ByteOrder::Little, 1));
        assert_eq!(s("|i1"), el("I8", ByteOrder::Little, 1));
        assert_eq!(s("<c8"), el("C64", ByteOrder::Little, 8));
        for o in ["|O", "O", "<O8", "object", "O4"] {
            assert_eq!(s(o), Kind::Object, "{o}");
        }
        for u in [
            "|f4", "=f4", "float32", "<f4,<i4", "<f3", "<u16", "<f016", "<U+3", "|U3",
        ] {
            assert!(matches!(s(u), Kind::Unknown { .. }), "{u}");
        }
        assert_eq!(
            s("<U3"),
            Kind::Other {
                itemsize: Some(12),
                what: "dtype \"<U3\" (unicode strings)".into(),
                element_type: None,
                byte_order: ByteOrder::Little,
            }
        );
        for (d, size) in [
            ("<M8[ns]", 8),
            ("<M8", 8),
            (">m8[s]", 8),
            ("<c16", 16),
            ("<c32", 32),
            ("<f16", 16),
            ("|S5", 5),
            ("|S0", 0),
            ("|V12", 12),
        ] {
            assert!(
                matches!(s(d), Kind::Other { itemsize: Some(n), .. } if n == size),
                "{d}: {:?}",
                s(d)
            );
        }
        assert!(matches!(s("<U99999999999999999999"), Kind::Unknown { .. }));
        // complex128 has socair's torch name; the byte order is the descr's.
        assert!(matches!(
            s(">c16"),
            Kind::Other {
                element_type: Some("C128"),
                byte_order: ByteOrder::Big,
                ..
            }
        ));
        assert!(matches!(
            s("<f16"),
            Kind::Other {
                element_type: None,
                byte_order: ByteOrder::Little,
                ..
            }
        ));

        let fields = |t: &str| {
            let text = format!("{{'descr': {t}}}");
            let (e, _) =
                literal::parse_dict(text.as_bytes(), literal::Header::for_version(3)).unwrap();
            let Value::List(f) = e[0].2.clone() else {
                unreachable!()
            };
            classify(&Descr::Structured(f))
        };
        assert_eq!(
            fields("[('a', '<f4'), ('b', '<i8', (2, 3))]"),
            Kind::Other {
                itemsize: Some(52),
                what: "a structured dtype of 2 fields".into(),
                element_type: None,
                byte_order: ByteOrder::Little,
            }
        );
        assert_eq!(
            fields("[('a', '<f4'), ('', '|V4'), ('c', [('x', '<i2'), ('y', '|u1', 3)])]"),
            Kind::Other {
                itemsize: Some(13),
                what: "a structured dtype of 3 fields".into(),
                element_type: None,
                byte_order: ByteOrder::Little,
            }
        );
        assert_eq!(fields("[('a', '<f4'), ('b', '|O')]"), Kind::Object);
        assert_eq!(
            fields("[('a', [('x', '<f4'), (('t', 'y'), '|O', 2)])]"),
            Kind::Object
        );
        assert!(matches!(fields("[('a',)]"), Kind::Unknown { .. }));
        assert!(matches!(fields("['a']"), Kind::Unknown { .. }));
    }

    #[test]
    fn fortran_order() {
        assert_eq!(fortran_strides(&[3, 4]), Some(vec![1, 3]));
        assert_eq!(fortran_strides(&[2, 3, 4]), Some(vec![1, 2, 6]));
        assert_eq!(fortran_strides(&[1, 4]), None);
        assert_eq!(fortran_strides(&[5]), None);
        assert_eq!(fortran_strides(&[]), None);
        // [[0, 1, 2], [3, 4, 5]] stored column-major: 0 3 1 4 2 5.
        let col: Vec<u8> = [0u16, 3, 1, 4, 2, 5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let row: Vec<u8> = (0u16..6).flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(fortran_to_row_major(&col, &[2, 3], 2), row);
        assert_eq!(fortran_to_row_major(&row, &[6], 2), row);
        assert_eq!(fortran_to_row_major(&[], &[0, 3], 2), Vec::<u8>::new());
    }
}
