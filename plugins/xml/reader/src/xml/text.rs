//! The text of an XML document as the loaders read it: names, characters, references and
//! attribute values.
//!
//! Attribute values are read as pugixml reads them with `parse_default` (pugixml.cpp,
//! `strconv_attribute_impl::parse_wconv` with `parse_escapes` and `parse_eol`), which is what
//! OpenVINO's IR reader uses (`InputModelIRImpl` loads the document with pugixml's defaults):
//! a tab, a line feed or a carriage return becomes a space (`\r\n` one space), the five
//! predefined entities and numeric character references are replaced, and any other `&name;`
//! is kept as it is written. The XML specification (3.3.3, 4.4) does the same for every
//! reference it knows; a reference it does not know is an error for a strict parser and an
//! expansion for one that processes the DTD: each such reference is reported ([`Problem`]), so
//! that no value this reader hands on differs from pugixml's without a finding.

use std::borrow::Cow;

/// Something in an attribute value or a text that XML readers read differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// `&name;` for an entity that is not one of the five predefined ones.
    UnknownEntity(String),
    /// A character reference to no character XML allows (`&#0;`, `&#xD800;`) or not a number.
    BadCharRef(String),
    /// A `&` that starts no reference (no `;` within a reference's length).
    DanglingAmpersand,
    /// A `<` in an attribute value.
    LessThan,
}

impl Problem {
    /// The problem in words.
    pub fn describe(&self) -> String {
        match self {
            Problem::UnknownEntity(name) => format!(
                "refers to the entity &{name};, which is none of XML's five predefined entities: pugixml (OpenVINO's parser) keeps \"&{name};\" as text, a strict XML parser refuses the document, and a reader that processes a DTD replaces it with what the DTD declares (from a file or URL for an external entity)"
            ),
            Problem::BadCharRef(text) => format!(
                "holds the character reference &{text};, which names no character XML allows: readers refuse it or read other text"
            ),
            Problem::DanglingAmpersand => {
                "holds a `&` that starts no reference: pugixml keeps it, XML parsers refuse the document".to_owned()
            }
            Problem::LessThan => {
                "holds a `<` in an attribute value, which XML forbids: pugixml keeps it, XML parsers refuse the document".to_owned()
            }
        }
    }
}

/// The longest reference read (`&#x10FFFF;` is 10 bytes; entity names of more than this are
/// no predefined entity either way).
const MAX_REFERENCE: usize = 64;

/// Whether `c` may appear in an XML 1.0 document (XML 1.0, 2.2 `Char`).
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// Whether `c` may start an XML name (XML 1.0 fifth edition, 2.3 `NameStartChar`).
fn is_name_start(c: char) -> bool {
    matches!(c, ':' | 'A'..='Z' | '_' | 'a'..='z' | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}'
        | '\u{F8}'..='\u{2FF}' | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}'
        | '\u{200C}'..='\u{200D}' | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}'
        | '\u{3001}'..='\u{D7FF}' | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}'
        | '\u{10000}'..='\u{EFFFF}')
}

/// Whether `name` is an XML name (2.3 `Name`).
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    is_name_start(first)
        && chars.all(|c| {
            is_name_start(c)
                || matches!(c, '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
        })
}

/// The replacement of a predefined entity.
fn predefined(name: &str) -> Option<char> {
    Some(match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "apos" => '\'',
        "quot" => '"',
        _ => return None,
    })
}

/// The character a character reference's body (`#65`, `#x41`) names, when XML allows it.
pub fn char_ref(body: &str) -> Option<char> {
    let digits = body.strip_prefix('#')?;
    let value = match digits.strip_prefix('x') {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u32::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<u32>().ok()?
        }
        None => return None,
    };
    char::from_u32(value).filter(|&c| is_xml_char(c))
}

/// Whether a reference's body (between `&` and `;`) names a predefined entity or a valid
/// character: what every reader replaces alike.
pub fn reference_is_plain(body: &str) -> Result<(), Problem> {
    if body.starts_with('#') {
        return char_ref(body)
            .map(|_| ())
            .ok_or_else(|| Problem::BadCharRef(body.to_owned()));
    }
    match predefined(body) {
        Some(_) => Ok(()),
        None => Err(Problem::UnknownEntity(body.to_owned())),
    }
}

/// An attribute's value as pugixml reads it from its raw (escaped) text, and the problems
/// found in it (each reference pugixml keeps as text, a `<`, a lone `&`).
pub fn attribute_value(raw: &str) -> (Cow<'_, str>, Vec<Problem>) {
    let mut problems = Vec::new();
    if raw.contains('<') {
        problems.push(Problem::LessThan);
    }
    if !raw
        .bytes()
        .any(|b| matches!(b, b'&' | b'\t' | b'\n' | b'\r'))
    {
        return (Cow::Borrowed(raw), problems);
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find(['&', '\t', '\n', '\r']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("\r\n") {
            out.push(' ');
            rest = after;
            continue;
        }
        if !tail.starts_with('&') {
            out.push(' ');
            rest = &tail[1..];
            continue;
        }
        let body_end = tail
            .char_indices()
            .take(MAX_REFERENCE)
            .find(|&(_, c)| c == ';')
            .map(|(i, _)| i);
        let Some(end) = body_end else {
            problems.push(Problem::DanglingAmpersand);
            out.push('&');
            rest = &tail[1..];
            continue;
        };
        let body = &tail[1..end];
        let replaced = if body.starts_with('#') {
            char_ref(body)
        } else {
            predefined(body)
        };
        match replaced {
            Some(c) => out.push(c),
            None => {
                problems.push(match reference_is_plain(body) {
                    Err(p) => p,
                    Ok(()) => Problem::BadCharRef(body.to_owned()),
                });
                out.push_str(&tail[..=end]);
            }
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    (Cow::Owned(out), problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_pugixml_reads_them() {
        assert_eq!(attribute_value("plain").0, "plain");
        assert_eq!(attribute_value("a&lt;b&amp;c&#65;&#x42;").0, "a<b&cAB");
        assert_eq!(attribute_value("1\t2\n3\r\n4\r5").0, "1 2 3 4 5");
        let (v, p) = attribute_value("x&xxe;y");
        assert_eq!(v, "x&xxe;y");
        assert_eq!(p, vec![Problem::UnknownEntity("xxe".into())]);
        let (v, p) = attribute_value("&#0;&#xD800;");
        assert_eq!(v, "&#0;&#xD800;");
        assert_eq!(p.len(), 2);
        let (v, p) = attribute_value("a & b");
        assert_eq!(v, "a & b");
        assert_eq!(p, vec![Problem::DanglingAmpersand]);
        assert_eq!(attribute_value("a<b").1, vec![Problem::LessThan]);
        assert!(Problem::UnknownEntity("e".into())
            .describe()
            .contains("&e;"));
    }

    #[test]
    fn names_and_characters() {
        for ok in ["net", "layer", "xmlns:pmml", "_a", "a-b.c1", "é"] {
            assert!(is_name(ok), "{ok}");
        }
        for bad in ["", "1a", "-a", "a b", "a<", "a\"b"] {
            assert!(!is_name(bad), "{bad}");
        }
        assert_eq!(char_ref("#65"), Some('A'));
        assert_eq!(char_ref("#x1F600"), Some('😀'));
        assert_eq!(char_ref("#x"), None);
        assert_eq!(char_ref("#1114112"), None);
        assert_eq!(char_ref("#xFFFE"), None);
        assert!(reference_is_plain("quot").is_ok());
        assert!(reference_is_plain("nbsp").is_err());
        assert!(!is_xml_char('\u{0}'));
        assert!(is_xml_char('\t'));
    }
}
