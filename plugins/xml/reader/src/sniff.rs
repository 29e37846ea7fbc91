//! The root element of an XML file, found in its first bytes (the host shows a reader 4096):
//! past a UTF-8 byte order mark, whitespace, the XML declaration, comments and processing
//! instructions. A DOCTYPE names the root too (`<!DOCTYPE net [...]>`), and a file with one is
//! claimed by that name even when its internal subset runs past the head, so that a model file
//! carrying a DTD is read, and judged, rather than passed over.

/// What the head says of the root element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root<'a> {
    /// The root's qualified name (from its start tag, or from the DOCTYPE).
    pub name: &'a str,
    /// The start tag's text after the name, up to its `>` or the end of the head; none when
    /// the name came from a DOCTYPE.
    pub tag: Option<&'a [u8]>,
    /// Whether the start tag ends within the head.
    pub tag_complete: bool,
}

impl Root<'_> {
    /// The name without its namespace prefix.
    pub fn local_name(&self) -> &str {
        self.name.rsplit(':').next().unwrap_or(self.name)
    }

    /// Whether the start tag, as far as the head shows it, has an attribute `name`.
    pub fn has_attribute(&self, name: &str) -> bool {
        let Some(tag) = self.tag else {
            return false;
        };
        let mut at = 0;
        while let Some(i) = find(&tag[at..], name.as_bytes()) {
            let start = at + i;
            let before = start.checked_sub(1).and_then(|b| tag.get(b));
            let after = &tag[start + name.len()..];
            let rest = after.trim_ascii_start();
            if before.is_some_and(|b| b.is_ascii_whitespace()) && rest.first() == Some(&b'=') {
                return true;
            }
            at = start + 1;
        }
        false
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Whether `b` may be part of an XML name (ASCII approximation; any non-ASCII byte counts).
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'-' | b'.') || b >= 0x80
}

/// The root element `head` shows, or none when it does not start like an XML document.
pub fn root(head: &[u8]) -> Option<Root<'_>> {
    let mut rest = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    loop {
        rest = rest.trim_ascii_start();
        if rest.starts_with(b"<?") {
            rest = &rest[find(rest, b"?>")? + 2..];
        } else if rest.starts_with(b"<!--") {
            rest = &rest[find(rest, b"-->")? + 3..];
        } else if let Some(after) = rest.strip_prefix(b"<!DOCTYPE") {
            let after = after.trim_ascii_start();
            let len = after.iter().take_while(|&&b| name_byte(b)).count();
            let name = std::str::from_utf8(after.get(..len)?).ok()?;
            return (!name.is_empty()).then_some(Root {
                name,
                tag: None,
                tag_complete: false,
            });
        } else if let Some(after) = rest.strip_prefix(b"<") {
            let len = after.iter().take_while(|&&b| name_byte(b)).count();
            let name = std::str::from_utf8(after.get(..len)?).ok()?;
            if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
                return None;
            }
            let tail = &after[len..];
            if !tail.is_empty() && !matches!(tail[0], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r') {
                return None;
            }
            let end = tail.iter().position(|&b| b == b'>');
            return Some(Root {
                name,
                tag: Some(&tail[..end.unwrap_or(tail.len())]),
                tag_complete: end.is_some(),
            });
        } else {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_found_past_the_prolog() {
        let r = root(b"\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- hi -->\n<net name=\"m\" version=\"11\">\n<layers>").unwrap();
        assert_eq!(r.name, "net");
        assert!(r.tag_complete);
        assert!(r.has_attribute("version"));
        assert!(r.has_attribute("name"));
        assert!(!r.has_attribute("ersion"));
        let r =
            root(b"<pmml:PMML xmlns:pmml=\"http://www.dmg.org/PMML-4_4\" version=\"4.4\"").unwrap();
        assert_eq!(
            (r.name, r.local_name(), r.tag_complete),
            ("pmml:PMML", "PMML", false)
        );
        let r = root(
            b"<?xml version=\"1.0\"?><!DOCTYPE net [ <!ENTITY x SYSTEM \"file:///etc/passwd\">",
        )
        .unwrap();
        assert_eq!((r.name, r.tag), ("net", None));
        assert!(!r.has_attribute("version"));
        let r = root(b"<net/>").unwrap();
        assert_eq!((r.name, r.tag_complete), ("net", true));
    }

    #[test]
    fn other_files_have_no_root() {
        for head in [
            &b""[..],
            b"PK\x03\x04",
            b"\x80\x02}q\x00.",
            b"{\"a\": 1}",
            b"<?xml version=\"1.0\"",
            b"<!-- never closed",
            b"<1a>",
            b"<a\x00>",
            b"<!DOCTYPE>",
            b"< a>",
        ] {
            assert_eq!(root(head), None, "{head:?}");
        }
    }
}
