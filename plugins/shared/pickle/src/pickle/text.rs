//! The text forms pickle's protocol-0 opcodes carry, decoded as CPython decodes them, so that a
//! memo index or a string that names a global is read as Python reads it (or found to make
//! Python raise).

/// `PyLong_FromString(s, NULL, 10)` then `PyLong_AsSsize_t`, as `load_get` and `load_put`
/// parse a memo index: the C string ends at the first NUL; leading and trailing ASCII
/// whitespace (the line's own newline among it), an optional sign, then decimal digits with
/// single underscores only between digits. `None` where CPython raises (not a number, or out
/// of the range of `Py_ssize_t`).
pub fn memo_index(line: &[u8]) -> Option<i64> {
    let line = match line.iter().position(|&b| b == 0) {
        Some(nul) => &line[..nul],
        None => line,
    };
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let start = line.iter().position(|b| !is_space(b))?;
    let end = line.iter().rposition(|b| !is_space(b))? + 1;
    let mut s = &line[start..end];
    let negative = match s.first() {
        Some(b'-') => {
            s = &s[1..];
            true
        }
        Some(b'+') => {
            s = &s[1..];
            false
        }
        _ => false,
    };
    if s.is_empty() || !s[0].is_ascii_digit() || !s[s.len() - 1].is_ascii_digit() {
        return None;
    }
    let mut value: i128 = 0;
    let mut previous_underscore = false;
    for &b in s {
        match b {
            b'0'..=b'9' => {
                value = value * 10 + i128::from(b - b'0');
                if value > i128::from(i64::MAX) + 1 {
                    return None;
                }
                previous_underscore = false;
            }
            b'_' if !previous_underscore => previous_underscore = true,
            _ => return None,
        }
    }
    let value = if negative { -value } else { value };
    i64::try_from(value).ok()
}

/// `PyBytes_DecodeEscape`, as `load_string` decodes the quoted argument of STRING: `\\`,
/// `\'`, `\"`, `\a \b \f \n \r \t \v`, one to three octal digits, `\x` with exactly two hex
/// digits (else CPython raises), a backslash before a newline drops both, and any other
/// escape keeps its backslash. `None` where CPython raises.
pub fn escape_decode(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' {
            out.push(s[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = *s.get(i)?;
        i += 1;
        match c {
            b'\n' => {}
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(11),
            b'a' => out.push(7),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match s.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                // CPython keeps the low byte of an octal escape above \377.
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let hi = (*s.get(i)? as char).to_digit(16)?;
                let lo = (*s.get(i + 1)? as char).to_digit(16)?;
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// A decoded string argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    /// The string.
    Str(String),
    /// A string Python accepts that holds a lone surrogate: no Rust string holds it, and it
    /// cannot name a module.
    WithSurrogates,
}

/// `PyUnicode_DecodeRawUnicodeEscape`, as `load_unicode` decodes UNICODE: `\uXXXX` and
/// `\UXXXXXXXX` (exactly 4 or 8 hex digits, at most U+10FFFF, after an odd run of
/// backslashes) are escapes, every other byte a Latin-1 character. `None` where CPython
/// raises.
pub fn raw_unicode_escape_decode(s: &[u8]) -> Option<Text> {
    let mut out = String::with_capacity(s.len());
    let mut surrogates = false;
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b == b'\\' && matches!(s.get(i + 1), Some(b'u' | b'U')) {
            let digits = if s[i + 1] == b'u' { 4 } else { 8 };
            let hex = s.get(i + 2..i + 2 + digits)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let v = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            if v > 0x10ffff {
                return None;
            }
            match char::from_u32(v) {
                Some(c) => out.push(c),
                None => surrogates = true,
            }
            i += 2 + digits;
        } else if b == b'\\' && s.get(i + 1) == Some(&b'\\') {
            // A pair of backslashes: neither starts an escape.
            out.push_str("\\\\");
            i += 2;
        } else {
            out.push(char::from(b));
            i += 1;
        }
    }
    Some(if surrogates {
        Text::WithSurrogates
    } else {
        Text::Str(out)
    })
}

/// UTF-8 as `PyUnicode_DecodeUTF8(…, "surrogatepass")` accepts it (BINUNICODE and its kin):
/// well-formed UTF-8, plus the three-byte forms of surrogates. `None` where CPython raises.
pub fn utf8_surrogatepass(bytes: &[u8]) -> Option<Text> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Some(Text::Str(s.to_owned()));
    }
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(_) => break,
            Err(e) => match &rest[e.valid_up_to()..] {
                // A surrogate: ED A0..BF 80..BF.
                [0xed, 0xa0..=0xbf, 0x80..=0xbf, tail @ ..] => rest = tail,
                _ => return None,
            },
        }
    }
    Some(Text::WithSurrogates)
}

/// An integer read from text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    /// It fits in 64 bits.
    Small(i64),
    /// It does not.
    Big,
}

/// A decimal integer exactly as Python 2's `repr` writes an `int` or a `long` (less the
/// `long`'s `L`): an optional `-`, then `0` or digits without a leading zero (never `-0`).
/// `None` for any other text, which Python 2 never wrote (CPython's `strtol(s, &end, 0)` and
/// `PyLong_FromString(s, NULL, 0)` accept more, and refuse some of it: such text is left to
/// the abstract machine).
pub fn python2_decimal(s: &[u8]) -> Option<Number> {
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    let negative = digits.len() != s.len();
    let canonical = match digits {
        [] => false,
        [b'0'] => !negative,
        [first, ..] => *first != b'0' && digits.iter().all(u8::is_ascii_digit),
    };
    if !canonical {
        return None;
    }
    let mut value: i128 = 0;
    for &d in digits {
        value = value * 10 + i128::from(d - b'0');
        if value > i128::from(i64::MAX) + 1 {
            return Some(Number::Big);
        }
    }
    let value = if negative { -value } else { value };
    Some(i64::try_from(value).map_or(Number::Big, Number::Small))
}

/// Why CPython's C unpickler and its pure-Python one read the text argument of INT, LONG or
/// FLOAT (`op`, the line less its newline) differently, if they do (PickleFuzzer;
/// `fixtures/pickle-data/unpickler-differential.json` records each case under 3.11, 3.12 and
/// 3.13):
///
/// * a NUL: `pickle.py` hands the bytes to `int(x, 0)` / `float(x)`, which refuse it;
///   `_pickle.c` parses a C string, which ends there (`load_int`'s `strtol` takes `\0` as the
///   end, `load_long`'s `PyLong_FromString`, `load_float`'s `PyOS_string_to_double`);
/// * INT: `_pickle.c` `load_int` makes a bool of any two characters `strtol(s, &end, 0)` reads
///   as 0 or 1 (`+1`, `-0`, ` 1`), `pickle.py` `load_int` only of `00` and `01`; and `strtol`
///   reads a leading `0` as octal (`010` is 8), where `int(x, 0)` refuses a leading zero;
/// * FLOAT: `float(x)` strips whitespace and takes `_` between digits;
///   `PyOS_string_to_double` takes neither (`load_float` raises).
///
/// Everything else goes through the same parser in both (`PyLong_FromString`, `_Py_dg_strtod`).
pub fn unpicklers_disagree_on_number(op: u8, text: &[u8]) -> Option<&'static str> {
    if text.contains(&0) {
        return Some(
            "a NUL, where the C unpickler's C string ends and pickle.py's int()/float() raises",
        );
    }
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r');
    match op {
        b'I' => {
            // `load_int` in both: exactly `00` and `01` are False and True.
            if text == b"00" || text == b"01" {
                return None;
            }
            if let [a, b] = text {
                let strtol_bit = matches!(b, b'0' | b'1')
                    && (space(*a) || *a == b'+' || (*a == b'-' && *b == b'0'));
                if strtol_bit {
                    return Some("two characters the C unpickler's load_int reads as a bool and pickle.py's as an int");
                }
            }
            let mut rest = text;
            while let [c, tail @ ..] = rest {
                if space(*c) {
                    rest = tail;
                } else {
                    break;
                }
            }
            let rest = rest
                .strip_prefix(b"-")
                .or_else(|| rest.strip_prefix(b"+"))
                .unwrap_or(rest);
            if let [b'0', octal @ ..] = rest {
                let digits = octal.iter().take_while(|d| d.is_ascii_digit()).count();
                let whole = octal
                    .get(digits..)
                    .is_some_and(|t| t.iter().all(|&c| space(c)));
                if digits > 0
                    && whole
                    && octal[..digits].iter().all(|d| (b'0'..=b'7').contains(d))
                    && octal[..digits].iter().any(|&d| d != b'0')
                {
                    return Some("a leading zero, which the C unpickler's strtol reads as octal and pickle.py's int(x, 0) refuses");
                }
            }
            None
        }
        b'F' => {
            let trimmed = text.trim_ascii();
            if !trimmed.is_empty() && trimmed.len() != text.len() {
                return Some("whitespace around the number, which pickle.py's float() strips and the C unpickler's PyOS_string_to_double refuses");
            }
            let between_digits = text.iter().enumerate().any(|(i, &c)| {
                c == b'_'
                    && i > 0
                    && text[i - 1].is_ascii_digit()
                    && text.get(i + 1).is_some_and(u8::is_ascii_digit)
            });
            between_digits.then_some("an underscore between digits, which pickle.py's float() takes and the C unpickler's PyOS_string_to_double refuses")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memo_indices_parse_as_pylong_from_string_does() {
        assert_eq!(memo_index(b"12\n"), Some(12));
        assert_eq!(memo_index(b"  1_0 \n"), Some(10));
        assert_eq!(memo_index(b"007\n"), Some(7));
        assert_eq!(memo_index(b"-3\n"), Some(-3));
        assert_eq!(memo_index(b"5\x00junk\n"), Some(5));
        assert_eq!(memo_index(b"1__0\n"), None);
        assert_eq!(memo_index(b"_1\n"), None);
        assert_eq!(memo_index(b"1_\n"), None);
        assert_eq!(memo_index(b"0x10\n"), None);
        assert_eq!(memo_index(b"\n"), None);
        assert_eq!(memo_index(b"99999999999999999999\n"), None);
    }

    #[test]
    fn number_texts_the_two_unpicklers_read_differently() {
        for (op, t) in [
            (b'I', &b"010"[..]),
            (b'I', b"+1"),
            (b'I', b"-0"),
            (b'I', b" 1"),
            (b'I', b"1\x00"),
            (b'I', b" 01"),
            (b'L', b"1\x002"),
            (b'F', b"1_0"),
            (b'F', b" 1"),
        ] {
            assert!(unpicklers_disagree_on_number(op, t).is_some(), "{t:?}");
        }
        for (op, t) in [
            (b'I', &b"00"[..]),
            (b'I', b"01"),
            (b'I', b"42"),
            (b'I', b"-1"),
            (b'I', b"0x10"),
            (b'I', b"1_0"),
            (b'I', b"000"),
            (b'I', b"08"),
            (b'L', b"010"),
            (b'F', b"1.5"),
            (b'F', b"-inf"),
            (b'F', b"1e5"),
        ] {
            assert!(unpicklers_disagree_on_number(op, t).is_none(), "{t:?}");
        }
    }

    #[test]
    fn python2_decimals_are_what_repr_writes() {
        assert_eq!(python2_decimal(b"0"), Some(Number::Small(0)));
        assert_eq!(python2_decimal(b"4294967296"), Some(Number::Small(1 << 32)));
        assert_eq!(python2_decimal(b"-17"), Some(Number::Small(-17)));
        assert_eq!(
            python2_decimal(b"-9223372036854775808"),
            Some(Number::Small(i64::MIN))
        );
        assert_eq!(python2_decimal(b"9223372036854775808"), Some(Number::Big));
        assert_eq!(
            python2_decimal(b"123456789012345678901234567890"),
            Some(Number::Big)
        );
        for odd in [
            &b""[..],
            b"-",
            b"-0",
            b"007",
            b"0x10",
            b" 1",
            b"+1",
            b"1_0",
            b"1L",
            b"1\x00",
        ] {
            assert_eq!(python2_decimal(odd), None, "{odd:?}");
        }
    }

    #[test]
    fn escapes_decode_as_python_does() {
        assert_eq!(escape_decode(br"os").unwrap(), b"os");
        assert_eq!(escape_decode(br"\x6fs").unwrap(), b"os");
        assert_eq!(escape_decode(br"\157s").unwrap(), b"os");
        assert_eq!(escape_decode(br"a\q").unwrap(), br"a\q");
        assert_eq!(escape_decode(br"\x6"), None);
        assert_eq!(
            raw_unicode_escape_decode(br"\u006fs"),
            Some(Text::Str("os".into()))
        );
        assert_eq!(
            raw_unicode_escape_decode(br"\\u006fs"),
            Some(Text::Str(r"\\u006fs".into()))
        );
        assert_eq!(
            raw_unicode_escape_decode(br"\ud800"),
            Some(Text::WithSurrogates)
        );
        assert_eq!(raw_unicode_escape_decode(br"\u006"), None);
        assert_eq!(
            utf8_surrogatepass(b"a\xed\xa0\x80b"),
            Some(Text::WithSurrogates)
        );
        assert_eq!(utf8_surrogatepass(b"\xff"), None);
    }
}
