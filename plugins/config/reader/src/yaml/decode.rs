//! A YAML file's bytes as the text PyYAML reads (PyYAML 6.0.3, `yaml/reader.py`, `Reader`):
//! UTF-16 when the bytes start with its byte-order mark (`determine_encoding`), else UTF-8; a
//! character outside `Reader.NON_PRINTABLE`'s complement refused (`check_printable`), and
//! U+0085, U+2028 and U+2029 read as line breaks (`Reader.forward` counts them as such, and the
//! scanner breaks lines at them). A YAML 1.2 parser reads those three as text, so before the
//! parse they become `\n` here, character for character (so that every line and column still
//! counts as PyYAML counts it), and the file is noted as one that readers split differently.

/// The text to parse, and what about it a person should know.
#[derive(Debug)]
pub struct Decoded {
    /// The text, with PyYAML's extra line breaks turned into `\n`.
    pub text: String,
    /// The encoding PyYAML would decode the bytes with.
    pub encoding: &'static str,
    /// The first character PyYAML refuses (`ReaderError: unacceptable character`): its code
    /// point, line and column (1-based), when there is one.
    pub unprintable: Option<(u32, usize, usize)>,
    /// How many U+0085, U+2028 or U+2029 were read as line breaks, and where the first was.
    pub extra_breaks: (u64, usize, usize),
}

/// Why the bytes are no text PyYAML decodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotText(pub String);

/// Whether `c` is one PyYAML's `Reader.check_printable` accepts:
/// `[\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]`.
fn printable(c: char) -> bool {
    matches!(c,
        '\t' | '\n' | '\r' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}'
        | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')
}

/// Decodes `bytes` as PyYAML's `Reader` does when it is given bytes.
pub fn decode(bytes: &[u8]) -> Result<Decoded, NotText> {
    let (raw, encoding) = if let Some(rest) = bytes.strip_prefix(b"\xff\xfe") {
        (utf16(rest, false)?, "UTF-16-LE")
    } else if let Some(rest) = bytes.strip_prefix(b"\xfe\xff") {
        (utf16(rest, true)?, "UTF-16-BE")
    } else {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            NotText(format!(
                "not UTF-8 at byte {} (PyYAML decodes bytes without a UTF-16 byte-order mark as UTF-8, and refuses these)",
                e.valid_up_to()
            ))
        })?;
        (text.to_owned(), "UTF-8")
    };
    let mut unprintable = None;
    let mut extra_breaks = (0u64, 0usize, 0usize);
    let (mut line, mut column) = (1usize, 1usize);
    let mut text = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if unprintable.is_none() && !printable(c) {
            unprintable = Some((u32::from(c), line, column));
        }
        let breaks = match c {
            '\n' => true,
            '\r' => chars.peek() != Some(&'\n'),
            '\u{85}' | '\u{2028}' | '\u{2029}' => {
                if extra_breaks.0 == 0 {
                    extra_breaks = (0, line, column);
                }
                extra_breaks.0 += 1;
                text.push('\n');
                line += 1;
                column = 1;
                continue;
            }
            _ => false,
        };
        text.push(c);
        if breaks {
            line += 1;
            column = 1;
        } else if c != '\u{feff}' {
            column += 1;
        }
    }
    Ok(Decoded {
        text,
        encoding,
        unprintable,
        extra_breaks,
    })
}

/// UTF-16 code units in the byte order given, as Python's `codecs.utf_16_le_decode` and
/// `utf_16_be_decode` read them (strictly: a lone surrogate or an odd byte is an error).
fn utf16(bytes: &[u8], big: bool) -> Result<String, NotText> {
    if !bytes.len().is_multiple_of(2) {
        return Err(NotText(
            "UTF-16 by its byte-order mark, but of an odd length (PyYAML refuses it)".into(),
        ));
    }
    let units = bytes.chunks_exact(2).map(|p| {
        let pair = [p[0], p[1]];
        if big {
            u16::from_be_bytes(pair)
        } else {
            u16::from_le_bytes(pair)
        }
    });
    char::decode_utf16(units)
        .collect::<Result<String, _>>()
        .map_err(|e| {
            NotText(format!(
                "UTF-16 by its byte-order mark, but it holds a lone surrogate {:#06x} (PyYAML refuses it)",
                e.unpaired_surrogate()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_utf16_and_what_pyyaml_refuses() {
        let d = decode(b"a: 1\n").unwrap();
        assert_eq!((d.text.as_str(), d.encoding), ("a: 1\n", "UTF-8"));
        assert_eq!((d.unprintable, d.extra_breaks.0), (None, 0));
        let mut le = vec![0xff, 0xfe];
        le.extend("a: é\n".encode_utf16().flat_map(u16::to_le_bytes));
        let d = decode(&le).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), ("a: é\n", "UTF-16-LE"));
        let mut be = vec![0xfe, 0xff];
        be.extend("b: 2".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode(&be).unwrap().text, "b: 2");
        assert!(decode(&[0xff, 0xfe, 0x61]).is_err());
        assert!(decode(&[0xff, 0xfe, 0x00, 0xd8]).is_err());
        assert!(decode(b"a: \xff").is_err());
        // A control character: PyYAML's reader refuses it, at line 2 column 4.
        let d = decode(b"a: 1\nb: \x07\n").unwrap();
        assert_eq!(d.unprintable, Some((7, 2, 4)));
    }

    #[test]
    fn pyyaml_line_breaks_become_newlines() {
        let d =
            decode("# c\u{85}b: !!python/name:os.system ''\r\nc: 1\u{2028}".as_bytes()).unwrap();
        assert_eq!(d.text, "# c\nb: !!python/name:os.system ''\r\nc: 1\n");
        assert_eq!(d.extra_breaks, (2, 1, 4));
    }
}
