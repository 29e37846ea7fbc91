//! String arguments decoded as the C unpickler decodes them (STRING's quoted line, Python 2
//! `str` bytes), and the re-decoding of the string an opcode pushed from its offset: pure
//! functions over bytes, shared by the typed model and the abstract machine.

use crate::pickle::reader::Raise;
use crate::pickle::text::{self, Text};

pub(crate) fn truncated_global() -> Raise {
    truncated_name()
}

pub(super) fn truncated_name() -> Raise {
    Raise::Truncated("a global's name has no newline before the pickle ends".into())
}

/// STRING's argument: quoted, escape-decoded, then (as torch.load and pickle.load with an
/// ASCII or UTF-8 encoding read it) text.
pub(super) fn decode_string_line(line: &[u8]) -> Result<Text, Raise> {
    Ok(binstring_text(&string_line_bytes(line)?))
}

/// STRING's argument as bytes, as `load_string` makes them (Modules/_pickle.c): the line less
/// its newline must be quoted with the same quote at both ends, then `PyBytes_DecodeEscape`.
pub(crate) fn string_line_bytes(line: &[u8]) -> Result<Vec<u8>, Raise> {
    let n = line.len();
    if n < 2 || line[0] != line[n - 1] || !matches!(line[0], b'\'' | b'"') {
        return Err(Raise::Invalid(
            "the STRING opcode argument must be quoted".into(),
        ));
    }
    text::escape_decode(&line[1..n - 1])
        .ok_or_else(|| Raise::Invalid("an invalid escape in a STRING argument".into()))
}

/// A Python 2 `str`'s bytes as the name Python 3 sees: ASCII is the same under every
/// encoding a loader passes; anything else depends on it and cannot name a module.
pub(super) fn binstring_text(bytes: &[u8]) -> Text {
    if bytes.is_ascii() {
        Text::Str(String::from_utf8_lossy(bytes).into_owned())
    } else {
        Text::WithSurrogates
    }
}

/// Re-decodes the string the opcode at `at` pushed, read contiguously; `None` when it is not
/// a string that can name anything.
pub(super) fn string_at(data: &[u8], at: usize) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    let op = *data.get(at)?;
    let rest = data.get(at + 1..)?;
    let counted = |width: usize| -> Option<&[u8]> {
        let mut n = 0usize;
        for (i, &b) in rest.get(..width)?.iter().enumerate() {
            n |= usize::from(b).checked_shl(8 * i as u32)?;
        }
        rest.get(width..width.checked_add(n)?)
    };
    let line = || -> Option<&[u8]> {
        let nl = rest.iter().position(|&b| b == b'\n')?;
        Some(&rest[..nl])
    };
    let owned = |t: Option<Text>| match t? {
        Text::Str(s) => Some(Cow::Owned(s)),
        Text::WithSurrogates => None,
    };
    match op {
        b'X' | 0x8c | 0x8d => {
            let width = match op {
                b'X' => 4,
                0x8c => 1,
                _ => 8,
            };
            std::str::from_utf8(counted(width)?).ok().map(Cow::Borrowed)
        }
        b'T' => owned(Some(binstring_text(counted(4)?))),
        b'U' => owned(Some(binstring_text(counted(1)?))),
        b'S' => owned(decode_string_line(line()?).ok()),
        b'V' => owned(text::raw_unicode_escape_decode(line()?)),
        _ => None,
    }
}
