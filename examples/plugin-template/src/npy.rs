//! The NumPy `.npy` format (format versions 1.0, 2.0 and 3.0), read strictly.
//!
//! ```text
//! \x93NUMPY  major minor  header_len (u16 LE for 1.0; u32 LE for 2.0 and 3.0)  header  data
//! ```
//!
//! The header is a Python dict literal with exactly the keys `descr`, `fortran_order` and
//! `shape`, padded with spaces and ended by `\n` (see [`crate::literal`] for the grammar
//! accepted). It is ASCII for 1.0 and 2.0 (NumPy writes ASCII; Latin-1 beyond ASCII is
//! refused) and UTF-8 for 3.0. The data follows the header and must fill the rest of the file
//! (or zip member) exactly: no short data, no trailing bytes.
//!
//! Deliberately not required: the 64-byte alignment of the data (NumPy 1.x wrote 16; NumPy's
//! own reader checks neither, and alignment changes nothing about what the bytes mean).
//!
//! Every function here is pure over [`ReadAt`] and a window (`base`, `len`) of it, so one
//! parser serves a `.npy` file (the whole file) and a member of an `.npz` archive (its bytes in
//! the zip). Offsets in errors are offsets in the underlying file.

use crate::literal::{self, Value};
use socair_plugin_api::{ByteOrder, ReadAt};

/// The first six bytes of every `.npy` file.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The longest header accepted: NumPy's own default `max_header_size` (its reader refuses
/// longer headers unless told otherwise).
pub const MAX_HEADER_LEN: u64 = 10_000;

/// Why a `.npy` header is refused: the byte offset in the file and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyError {
    /// Offset in the underlying file.
    pub offset: u64,
    /// What is wrong there.
    pub reason: String,
}

impl std::fmt::Display for NpyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.reason)
    }
}

/// The dtype description as the header gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Descr {
    /// A dtype string such as `<f4`.
    Str(String),
    /// A structured dtype: a list of fields.
    Structured(Vec<Value>),
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Format version, major and minor.
    pub version: (u8, u8),
    /// Where the header's dict starts, in the file.
    pub header_offset: u64,
    /// Where the data starts, in the file.
    pub data_offset: u64,
    /// Where the data ends (the end of the window), in the file.
    pub data_end: u64,
    /// The dtype.
    pub descr: Descr,
    /// Where the `descr` key is, in the file.
    pub descr_offset: u64,
    /// Whether the data is in column-major order.
    pub fortran_order: bool,
    /// The shape, outermost first.
    pub shape: Vec<u64>,
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

/// Reads and checks the header of the `.npy` bytes at `base..base + len` of `src`.
pub fn read_header(src: &(impl ReadAt + ?Sized), base: u64, len: u64) -> Result<Header, NpyError> {
    let end = base
        .checked_add(len)
        .filter(|&e| e <= src.size())
        .ok_or_else(|| NpyError {
            offset: base,
            reason: format!("{len} bytes do not lie in the {}-byte file", src.size()),
        })?;
    let mut lead = [0u8; 8];
    if len < 10 {
        return err(
            base,
            format!("{len} bytes: too short for the .npy magic, version and header length"),
        );
    }
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
    let header_offset = base.saturating_add(8).saturating_add(len_width);
    if header_len > MAX_HEADER_LEN {
        return err(
            base.saturating_add(8),
            format!("header length {header_len} is over {MAX_HEADER_LEN} (NumPy's own limit)"),
        );
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
    // header_len <= MAX_HEADER_LEN, so this allocation is small.
    let mut text = vec![0u8; usize::try_from(header_len).unwrap_or(0)];
    read(src, header_offset, &mut text)?;
    let at = |i: usize| header_offset.saturating_add(i as u64);

    if version.0 < 3 {
        if let Some(i) = text.iter().position(|b| !b.is_ascii()) {
            return err(
                at(i),
                format!(
                    "non-ASCII byte 0x{:02x} in a version {}.0 header",
                    text.get(i).copied().unwrap_or(0),
                    version.0
                ),
            );
        }
    } else if let Err(e) = std::str::from_utf8(&text) {
        return err(at(e.valid_up_to()), "the version 3.0 header is not UTF-8");
    }
    match text.last() {
        Some(b'\n') => {}
        _ => {
            return err(
                at(text.len().saturating_sub(1)),
                "the header does not end with `\\n`",
            )
        }
    }
    let (entries, dict_end) = literal::parse_dict(&text).map_err(|e| NpyError {
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

/// What a dtype is to this plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// An element type socair reads.
    Element {
        /// socair's name for it (`F32`, `I64`, …).
        element_type: &'static str,
        /// The byte order of each element.
        byte_order: ByteOrder,
        /// Bytes per element.
        itemsize: u64,
    },
    /// Python objects: the data is a pickle, which `np.load(allow_pickle=True)` runs.
    Object,
    /// A sound NumPy dtype with no socair element type (strings, datetimes, complex128,
    /// structured records): not read, not a finding.
    Other {
        /// Bytes per element, when the descr says it simply.
        itemsize: Option<u64>,
        /// What it is.
        what: String,
    },
    /// A descr NumPy's writer does not produce; `np.dtype()` may still make something of it.
    Unknown {
        /// Why.
        what: String,
    },
}

/// The element types read: NumPy's kind and size, socair's name.
const ELEMENTS: &[(&str, &str)] = &[
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
        Descr::Structured(fields) => match structured_has_object(fields, 0) {
            Some(true) => Kind::Object,
            Some(false) => Kind::Other {
                itemsize: None,
                what: format!("a structured dtype of {} fields", fields.len()),
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
    let unit = rest.get(digits.len()..).unwrap_or_default();
    let simple = unit.is_empty();
    let (itemsize, what) = match kind {
        "S" if simple => (Some(n), "byte strings"),
        "U" if simple => (n.checked_mul(4), "unicode strings"),
        "V" if simple => (Some(n), "raw void records"),
        "M" if n == 8 && unit.starts_with('[') && unit.ends_with(']') => (Some(8), "datetimes"),
        "m" if n == 8 && unit.starts_with('[') && unit.ends_with(']') => (Some(8), "timedeltas"),
        "c" if simple && (n == 16 || n == 32) => (Some(n), "complex numbers"),
        "f" if simple && (n == 12 || n == 16) => (Some(n), "extended-precision floats"),
        _ => return unknown(),
    };
    Kind::Other {
        itemsize,
        what: format!("dtype {s:?} ({what})"),
    }
}

/// Whether a structured descr's fields include an object type; `None` when the list is not
/// one of fields as NumPy writes them.
fn structured_has_object(fields: &[Value], depth: usize) -> Option<bool> {
    if depth > literal::MAX_DEPTH {
        return None;
    }
    let mut any = false;
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
        match shape {
            None | Some(Value::Int(_)) => {}
            Some(Value::Tuple(dims)) if dims.iter().all(|d| matches!(d, Value::Int(_))) => {}
            Some(_) => return None,
        }
        any |= match ty {
            Value::Str(s) => classify_str(s) == Kind::Object,
            Value::List(inner) => structured_has_object(inner, depth.saturating_add(1))?,
            _ => return None,
        };
    }
    Some(any)
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
    let have = h.data_end.saturating_sub(h.data_offset);
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

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
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
        let e = header(&npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",
            &[],
        ))
        .unwrap_err();
        assert!(e.reason.contains("tuple of integers"), "{e}");

        let mut tab = good.clone();
        tab[100] = b'\t';
        let e = header(&tab).unwrap_err();
        assert_eq!(e.offset, 100);
        let mut no_newline = good.clone();
        no_newline[127] = b' ';
        assert_eq!(header(&no_newline).unwrap_err().offset, 127);
        let mut latin1 = good.clone();
        latin1[90] = 0xE9;
        assert_eq!(header(&latin1).unwrap_err().offset, 90);
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
        assert_eq!(
            s("<f4"),
            Kind::Element {
                element_type: "F32",
                byte_order: ByteOrder::Little,
                itemsize: 4
            }
        );
        assert_eq!(
            s(">f4"),
            Kind::Element {
                element_type: "F32",
                byte_order: ByteOrder::Big,
                itemsize: 4
            }
        );
        assert_eq!(
            s("<f2"),
            Kind::Element {
                element_type: "F16",
                byte_order: ByteOrder::Little,
                itemsize: 2
            }
        );
        assert_eq!(
            s(">i8"),
            Kind::Element {
                element_type: "I64",
                byte_order: ByteOrder::Big,
                itemsize: 8
            }
        );
        assert_eq!(
            s("|b1"),
            Kind::Element {
                element_type: "BOOL",
                byte_order: ByteOrder::Little,
                itemsize: 1
            }
        );
        assert_eq!(
            s("|u1"),
            Kind::Element {
                element_type: "U8",
                byte_order: ByteOrder::Little,
                itemsize: 1
            }
        );
        assert_eq!(
            s("<c8"),
            Kind::Element {
                element_type: "C64",
                byte_order: ByteOrder::Little,
                itemsize: 8
            }
        );
        for o in ["|O", "O", "<O8", "object", "O4"] {
            assert_eq!(s(o), Kind::Object, "{o}");
        }
        assert!(matches!(s("|f4"), Kind::Unknown { .. }));
        assert!(matches!(s("=f4"), Kind::Unknown { .. }));
        assert!(matches!(s("float32"), Kind::Unknown { .. }));
        assert!(matches!(s("<f4,<i4"), Kind::Unknown { .. }));
        assert!(matches!(s("<f3"), Kind::Unknown { .. }));
        assert_eq!(
            s("<U3"),
            Kind::Other {
                itemsize: Some(12),
                what: "dtype \"<U3\" (unicode strings)".into()
            }
        );
        assert!(matches!(
            s("<M8[ns]"),
            Kind::Other {
                itemsize: Some(8),
                ..
            }
        ));
        assert!(matches!(
            s("<c16"),
            Kind::Other {
                itemsize: Some(16),
                ..
            }
        ));
        assert!(matches!(
            s("|S5"),
            Kind::Other {
                itemsize: Some(5),
                ..
            }
        ));
        assert!(matches!(s("<U99999999999999999999"), Kind::Unknown { .. }));

        let fields = |t: &str| {
            let text = format!("{{'descr': {t}}}");
            let (e, _) = literal::parse_dict(text.as_bytes()).unwrap();
            let Value::List(f) = e[0].2.clone() else {
                unreachable!()
            };
            classify(&Descr::Structured(f))
        };
        assert!(matches!(
            fields("[('a', '<f4'), ('b', '<i8', (2, 3))]"),
            Kind::Other { itemsize: None, .. }
        ));
        assert_eq!(fields("[('a', '<f4'), ('b', '|O')]"), Kind::Object);
        assert_eq!(
            fields("[('a', [('x', '<f4'), (('t', 'y'), '|O', 2)])]"),
            Kind::Object
        );
        assert!(matches!(fields("[('a',)]"), Kind::Unknown { .. }));
        assert!(matches!(fields("['a']"), Kind::Unknown { .. }));
    }

    #[test]
    fn fortran_order_strides() {
        assert_eq!(fortran_strides(&[3, 4]), Some(vec![1, 3]));
        assert_eq!(fortran_strides(&[2, 3, 4]), Some(vec![1, 2, 6]));
        assert_eq!(fortran_strides(&[1, 4]), None);
        assert_eq!(fortran_strides(&[5]), None);
        assert_eq!(fortran_strides(&[]), None);
    }
}
