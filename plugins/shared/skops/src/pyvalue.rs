//! What Python does with a decoded schema value when skops's node classes touch it: subscript
//! it (`state["content"]`), iterate it (`[get_tree(v) …] for v in state["content"]`), test it
//! (`if saved_id`), look it up in the memo (`saved_id in load_context.memo`), compare it
//! (`self.module_name != obj.module_name`) and format it (`f"{self.module_name}.{…}"`).
//!
//! A schema's fields may hold any JSON value, not only the strings skops writes, and skops's
//! code reads them without checking their types; each helper here says what CPython 3.11 does
//! with each kind of value (raise, or what it yields), so that the node model raises where
//! skops raises and names what skops names.

use super::json::{Json, ESCAPE};

/// Longest name [`py_str`] spells out; past it, the rest is cut (`…`). Only hand-made schemas
/// reach it (a list or an object as a function's module), never one skops writes.
pub const MAX_STR: usize = 1024;

/// `value[key]`: a dict's value; `KeyError` for a missing key, `TypeError` for anything but a
/// dict (lists and strings take integer indices, the rest are not subscriptable).
pub fn subscript<'j>(value: &'j Json, key: &str) -> Result<&'j Json, String> {
    match value {
        Json::Object(pairs) => pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("KeyError: {key:?}")),
        Json::Array(_) => Err("TypeError: list indices must be integers or slices, not str".into()),
        Json::Str(_) => Err("TypeError: string indices must be integers, not 'str'".into()),
        other => Err(format!(
            "TypeError: '{}' object is not subscriptable",
            other.type_name()
        )),
    }
}

/// The items `for v in value` yields, for a loop that passes each to `get_tree`: a list's
/// items; a dict's keys and a string's characters are strings, on which `get_tree` raises
/// (`'str' object has no attribute 'get'`), so only an empty dict or string passes; anything
/// else is not iterable.
pub fn iterate_states(value: &Json) -> Result<&[Json], String> {
    match value {
        Json::Array(items) => Ok(items),
        Json::Object(pairs) if pairs.is_empty() => Ok(&[]),
        Json::Str(s) if s.is_empty() => Ok(&[]),
        Json::Object(_) | Json::Str(_) => {
            Err("AttributeError: 'str' object has no attribute 'get'".into())
        }
        other => Err(format!(
            "TypeError: '{}' object is not iterable",
            other.type_name()
        )),
    }
}

/// `bool(value)`.
pub fn truthy(value: &Json) -> bool {
    match value {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Int(digits) => &**digits != "0",
        Json::Float(f) => *f != 0.0,
        Json::Str(s) => !s.is_empty(),
        Json::Array(items) => !items.is_empty(),
        Json::Object(pairs) => !pairs.is_empty(),
    }
}

/// A memo key: Python dict keys equal as the values compare (`1 == 1.0 == True`), hashed
/// alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MemoKey {
    /// `None` (falsy: never memoized, so never found).
    None,
    Str(String),
    /// An integral number (int, bool, or float with no fraction), its exact decimal digits.
    Integer(String),
    /// A finite float with a fraction, by its bits (equal floats have equal bits here).
    Fraction(u64),
    /// `inf` or `-inf`.
    Infinite(bool),
    /// A NaN. Python's json parses every `NaN` literal to one object (`json.decoder`'s
    /// `_CONSTANTS['NaN']`), and a dict finds a key by identity before equality: every NaN
    /// id is the same key.
    Nan,
}

/// The key `value` is memoized under (`load_context.memo[saved_id]`), or `Err` when it is
/// unhashable (a list or a dict: `TypeError: unhashable type`).
pub fn memo_key(value: &Json) -> Result<MemoKey, String> {
    Ok(match value {
        Json::Null => MemoKey::None,
        Json::Bool(b) => MemoKey::Integer(if *b { "1" } else { "0" }.into()),
        Json::Int(digits) => MemoKey::Integer(digits.to_string()),
        Json::Float(f) if f.is_nan() => MemoKey::Nan,
        Json::Float(f) if f.is_infinite() => MemoKey::Infinite(*f > 0.0),
        Json::Float(f) if f.fract() == 0.0 => MemoKey::Integer(integral(*f)),
        Json::Float(f) => MemoKey::Fraction(f.to_bits()),
        Json::Str(s) => MemoKey::Str(s.clone()),
        Json::Array(_) => return Err("TypeError: unhashable type: 'list'".into()),
        Json::Object(_) => return Err("TypeError: unhashable type: 'dict'".into()),
    })
}

/// The exact decimal digits of an integral finite float (`-0.0` is `0`).
fn integral(f: f64) -> String {
    let s = format!("{f:.0}");
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// `a == b` (`PyObject_RichCompare`), for the values skops compares: numbers by value across
/// int, float and bool; containers item by item, where an item is equal to itself
/// (`PyObject_RichCompareBool`'s identity shortcut). Every `NaN` literal is one object
/// ([`MemoKey::Nan`]), so a NaN inside a container equals any other NaN there, while a NaN
/// compared alone is unequal even to itself.
pub fn py_eq(a: &Json, b: &Json) -> bool {
    fn item_eq(a: &Json, b: &Json) -> bool {
        let nan = |v: &Json| matches!(v, Json::Float(f) if f.is_nan());
        std::ptr::eq(a, b) || (nan(a) && nan(b)) || py_eq(a, b)
    }
    match (a, b) {
        (Json::Null, Json::Null) => true,
        (Json::Str(x), Json::Str(y)) => x == y,
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| item_eq(p, q))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter()
                        .find(|(k2, _)| k2 == k)
                        .is_some_and(|(_, w)| item_eq(v, w))
                })
        }
        (Json::Float(x), Json::Float(y)) => x == y,
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// A number as an exact key for comparison across int, float and bool.
fn number(v: &Json) -> Option<MemoKey> {
    match v {
        Json::Bool(_) | Json::Int(_) => memo_key(v).ok(),
        Json::Float(f) if f.is_nan() => None,
        Json::Float(_) => memo_key(v).ok(),
        _ => None,
    }
}

/// `str(value)`, as an f-string formats it (`f"{module}.{name}"`), cut at [`MAX_STR`].
pub fn py_str(value: &Json) -> String {
    let mut out = String::new();
    match value {
        Json::Str(s) => out.push_str(s),
        other => write_repr(other, &mut out, 0),
    }
    cut(out)
}

/// `repr(value)`, cut at [`MAX_STR`].
pub fn py_repr(value: &Json) -> String {
    let mut out = String::new();
    write_repr(value, &mut out, 0);
    cut(out)
}

fn cut(mut s: String) -> String {
    if s.len() > MAX_STR {
        let mut end = MAX_STR;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// Containers nested deeper than this are written `...` (Python would write them all; only a
/// hand-made schema has them, and their name is cut at [`MAX_STR`] anyway).
const MAX_REPR_DEPTH: usize = 32;

fn write_repr(value: &Json, out: &mut String, depth: usize) {
    if out.len() > MAX_STR {
        return;
    }
    match value {
        Json::Null => out.push_str("None"),
        Json::Bool(true) => out.push_str("True"),
        Json::Bool(false) => out.push_str("False"),
        Json::Int(digits) => out.push_str(digits),
        Json::Float(f) => out.push_str(&float_repr(*f)),
        Json::Str(s) => str_repr(s, out),
        Json::Array(items) => {
            if depth >= MAX_REPR_DEPTH {
                out.push_str("[...]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out, depth + 1);
                if out.len() > MAX_STR {
                    return;
                }
            }
            out.push(']');
        }
        Json::Object(pairs) => {
            if depth >= MAX_REPR_DEPTH {
                out.push_str("{...}");
                return;
            }
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                str_repr(k, out);
                out.push_str(": ");
                write_repr(v, out, depth + 1);
                if out.len() > MAX_STR {
                    return;
                }
            }
            out.push('}');
        }
    }
}

/// `repr(float)`: the shortest digits that round-trip (Rust's `{:e}` finds the same ones),
/// in fixed notation when the decimal point falls within 16 digits, scientific otherwise
/// (CPython `format_float_short`: `decpt <= -4 || decpt > 16`).
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let decpt = exp + 1;
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let n = digits.len() as i64;
    if decpt <= -4 || decpt > 16 {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    if decpt <= 0 {
        format!(
            "{sign}0.{}{digits}",
            "0".repeat(decpt.unsigned_abs() as usize)
        )
    } else if decpt >= n {
        format!("{sign}{digits}{}.0", "0".repeat((decpt - n) as usize))
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{sign}{int}.{frac}")
    }
}

/// `repr(str)`: single quotes unless the text holds one and no double quote; backslash,
/// the quote, `\t\n\r` and non-printable characters escaped (`\xNN`, `\uNNNN`,
/// `\UNNNNNNNN`). Printability outside ASCII follows the Unicode categories CPython treats
/// as non-printable for the common ranges (C1 controls, separators, format characters,
/// private use, surrogates); rarer unassigned code points are written as they are.
fn str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        let code = if c == ESCAPE {
            match chars.next() {
                Some(ESCAPE) => 0x10FFFF,
                Some(p) => 0xD800 + (u32::from(p).saturating_sub(0xF0000)),
                None => 0x10FFFF,
            }
        } else {
            u32::from(c)
        };
        match code {
            0x5C => out.push_str("\\\\"),
            0x09 => out.push_str("\\t"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            q if q == u32::from(quote) => {
                out.push('\\');
                out.push(quote);
            }
            q if !printable(q) => {
                if q < 0x100 {
                    out.push_str(&format!("\\x{q:02x}"));
                } else if q < 0x10000 {
                    out.push_str(&format!("\\u{q:04x}"));
                } else {
                    out.push_str(&format!("\\U{q:08x}"));
                }
            }
            q => {
                if let Some(ch) = char::from_u32(q) {
                    out.push(ch);
                }
            }
        }
    }
    out.push(quote);
}

fn printable(c: u32) -> bool {
    !matches!(c,
        0x00..=0x1F | 0x7F..=0xA0 | 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F
        | 0x1680 | 0x180E | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x206F
        | 0x3000 | 0xD800..=0xDFFF | 0xE000..=0xF8FF | 0xFEFF | 0xFFF9..=0xFFFB
        | 0xFFFE | 0xFFFF | 0xF0000..=0x10FFFF)
}
