//! Python as far as the tar model needs it: the exceptions `tarfile` raises or lets through,
//! ints saturated past ±2^120, and `int()` of bytes and of text as each CPython parses them
//! (`PyLong_FromString`, the digit limit, Unicode digits and spaces). Apart from the tar
//! structures, which only call them.

use super::profile::Profile;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HeaderKind {
    Empty,
    Truncated,
    Eof,
    Invalid,
    Subsequent,
}

/// A Python exception: a `tarfile.HeaderError` subclass, or anything else by class name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PyErr {
    Header(HeaderKind, String),
    Other(&'static str, String),
}

pub(super) fn invalid(why: impl Into<String>) -> PyErr {
    PyErr::Header(HeaderKind::Invalid, why.into())
}

pub(super) fn value_error(why: impl Into<String>) -> PyErr {
    PyErr::Other("ValueError", why.into())
}

/// A Python int as far as the model needs it: exact within ±2^120, saturated beyond (such
/// values only ever overflow a read's size or move an offset away from 0).
pub(super) type PyInt = i128;
pub(super) const SATURATE: i128 = 1 << 120;

pub(super) fn saturate(v: i128) -> i128 {
    v.clamp(-SATURATE, SATURATE)
}

/// `Py_ISSPACE`: the whitespace `PyLong_FromString` skips (not 0x1c-0x1f).
fn py_isspace(b: u8) -> bool {
    matches!(b, b' ' | 0x09..=0x0d)
}

/// `PyLong_FromString(s, base)` on ASCII that must be consumed whole (what `int(str)` and
/// `int(bytes)` reach): whitespace, a sign, the base's prefix for base 8, digits with single
/// underscores between them, whitespace. Returns the value (saturated) and how many digits it
/// had, or `None` for `ValueError`; `limit` is `sys.get_int_max_str_digits()` for base 10.
pub(super) fn long_from_ascii(s: &[u8], base: u32, limit: Option<usize>) -> Option<(PyInt, usize)> {
    let mut i = 0;
    while i < s.len() && py_isspace(s[i]) {
        i += 1;
    }
    let mut negative = false;
    match s.get(i) {
        Some(b'+') => i += 1,
        Some(b'-') => {
            negative = true;
            i += 1;
        }
        _ => {}
    }
    if base == 8 && s.get(i) == Some(&b'0') && matches!(s.get(i + 1), Some(b'o' | b'O')) {
        i += 2;
        if s.get(i) == Some(&b'_') {
            i += 1;
        }
    }
    if s.get(i) == Some(&b'_') {
        return None;
    }
    let mut value: i128 = 0;
    let mut digits = 0usize;
    let mut prev_underscore = false;
    while let Some(&c) = s.get(i) {
        let d = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'_' => {
                if prev_underscore {
                    return None;
                }
                prev_underscore = true;
                i += 1;
                continue;
            }
            _ => break,
        };
        if d >= base {
            break;
        }
        prev_underscore = false;
        digits += 1;
        value = saturate(value * i128::from(base) + i128::from(d));
        i += 1;
    }
    if prev_underscore || digits == 0 {
        return None;
    }
    while i < s.len() && py_isspace(s[i]) {
        i += 1;
    }
    if i != s.len() {
        return None;
    }
    // The digit limit applies to bases that are not powers of two.
    if let Some(limit) = limit {
        if base == 10 && digits > 640 && digits > limit {
            return None;
        }
    }
    Some((if negative { -value } else { value }, digits))
}

/// `int(bytes)` in base 10 under CPython's default digit limit (what torch's
/// `int(zip_file.get_record(".storage_alignment"))` does), saturated past ±2^120.
pub fn python_int_of_bytes(s: &[u8]) -> Option<i128> {
    long_from_ascii(s, 10, Some(4300)).map(|(n, _)| n)
}

/// `int(bytes)` in base 10.
pub(super) fn py_int_bytes(s: &[u8], profile: Profile) -> Option<PyInt> {
    long_from_ascii(s, 10, profile.int_max_str_digits).map(|(n, _)| n)
}

/// `int(value)` where `value` is a pax field decoded from UTF-8 (undecodable bytes become lone
/// surrogates, which no int accepts). Non-ASCII characters count as Python counts them:
/// Unicode whitespace becomes a space and a Unicode decimal digit its ASCII digit
/// (`_PyUnicode_TransformDecimalAndSpaceToASCII`); ASCII is left as it is.
pub(super) fn py_int_str(raw: &[u8], profile: Profile) -> Option<PyInt> {
    let text = std::str::from_utf8(raw).ok()?;
    if text.is_ascii() {
        return long_from_ascii(raw, 10, profile.int_max_str_digits).map(|(n, _)| n);
    }
    let mut ascii = Vec::with_capacity(text.len());
    for c in text.chars() {
        let c = c as u32;
        if c < 127 {
            ascii.push(c as u8);
        } else if UNICODE_SPACES.contains(&c) {
            ascii.push(b' ');
        } else {
            ascii.push(b'0' + unicode_decimal(c)?);
        }
    }
    long_from_ascii(&ascii, 10, profile.int_max_str_digits).map(|(n, _)| n)
}

/// Non-ASCII characters `str.isspace()` accepts (the same in Unicode 12.1 to 15.1).
const UNICODE_SPACES: &[u32] = &[
    0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
    0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
];

/// The zero of every run of ten Unicode decimal digits outside ASCII (general category Nd),
/// as Python 3.13's `unicodedata` (Unicode 15.1) lists them. Python 3.8 (Unicode 12.1) lacks
/// the runs added in Unicode 13 to 15 (0x11950, 0x11F50, 0x16AC0, 0x1E4F0, 0x1FBF0): for those
/// a newer Python accepts a number an older one refuses, which only moves an outcome between
/// `ValueError` and an opened archive (both refuse the file).
const DECIMAL_ZEROS: &[u32] = &[
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50,
    0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950,
    0x1FBF0,
];

fn unicode_decimal(c: u32) -> Option<u8> {
    DECIMAL_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&c))
        .map(|&zero| (c - zero) as u8)
}
