//! A strict parser for the Python literal that a `.npy` header holds, such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`.
//!
//! NumPy reads this with `ast.literal_eval` (`_read_array_header` in
//! `numpy/lib/_format_impl.py`, numpy 2.4); this parser accepts a small subset of what that
//! accepts, and nothing is ever evaluated. The grammar, with `_` standing for any run of spaces
//! (U+0020 only):
//!
//! ```text
//! dict   = "{" _ [ entry { _ "," _ entry } [ _ "," ] ] _ "}"
//! entry  = string _ ":" _ value
//! value  = string | "True" | "False" | int | tuple | list
//! string = "'" { char } "'" | '"' { char } '"'   ; no backslash, no control character
//! int    = ( "0" | [1-9] { [0-9] } ) [ "L" ]      ; no sign, no "_", fits in a u64; the "L"
//!                                                 ; only where [`Header::python2_longs`] allows
//! tuple  = "(" _ ")" | "(" _ value _ "," _ ")" | "(" _ value { _ "," _ value } [ _ "," ] _ ")"
//! list   = "[" _ [ value { _ "," _ value } [ _ "," ] ] _ "]"
//! ```
//!
//! Two things follow NumPy's reader rather than its writer, because files NumPy wrote elsewhere
//! hold them:
//!
//! * a version 1.0 or 2.0 header is Latin-1 (`_header_size_info`): a byte over 0x7f inside a
//!   string is the Latin-1 character of that code (a structured field named `é`); version 3.0
//!   is UTF-8;
//! * an integer of a version 1.0 or 2.0 header may carry Python 2's `L` suffix (`3L`), which
//!   NumPy drops before parsing again (`_filter_header`, for files written by Python 2).
//!
//! Nesting is bounded by [`MAX_DEPTH`]. Every error names the byte offset (counted from the
//! first byte of the text given) and what was found there.

/// How deeply tuples and lists may nest (a structured dtype nests a few levels; nothing NumPy
/// writes comes close).
pub const MAX_DEPTH: usize = 16;

/// A parsed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string, without its quotes.
    Str(String),
    /// `True` or `False`.
    Bool(bool),
    /// A non-negative integer.
    Int(u64),
    /// A tuple.
    Tuple(Vec<Value>),
    /// A list.
    List(Vec<Value>),
}

impl Value {
    /// The value as Python's `repr` writes it (what `str(np.lib.format.dtype_to_descr(...))`
    /// gives for a structured descr, and so what NumPy's writer put in the header): strings in
    /// single quotes unless they hold a single quote and no double one, a one-element tuple
    /// with its trailing comma. Characters Python's `repr` escapes within Latin-1 (controls,
    /// U+007F to U+00A0, U+00AD) are written `\xNN`; other non-ASCII characters as they are
    /// (header strings hold no backslash and no control byte).
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    fn write_repr(&self, out: &mut String) {
        let seq = |out: &mut String, items: &[Value], open: char, close: char| {
            out.push(open);
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                v.write_repr(out);
            }
            if open == '(' && items.len() == 1 {
                out.push(',');
            }
            out.push(close);
        };
        match self {
            Value::Str(s) => {
                let quote = if s.contains('\'') && !s.contains('"') {
                    '"'
                } else {
                    '\''
                };
                out.push(quote);
                for c in s.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        c if c == quote => {
                            out.push('\\');
                            out.push(c);
                        }
                        '\t' => out.push_str("\\t"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        c if (c as u32) < 0x20
                            || (0x7f..=0xa0).contains(&(c as u32))
                            || c == '\u{ad}' =>
                        {
                            out.push_str(&format!("\\x{:02x}", c as u32));
                        }
                        c => out.push(c),
                    }
                }
                out.push(quote);
            }
            Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Value::Int(n) => out.push_str(&n.to_string()),
            Value::Tuple(items) => seq(out, items, '(', ')'),
            Value::List(items) => seq(out, items, '[', ']'),
        }
    }
}

/// A syntax error: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset in the text.
    pub offset: usize,
    /// What is wrong there.
    pub reason: String,
}

/// How the header's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Strings are UTF-8 (format version 3.0) rather than Latin-1 (1.0 and 2.0).
    pub utf8: bool,
    /// Integers may end in Python 2's `L` (format versions 1.0 and 2.0).
    pub python2_longs: bool,
}

impl Header {
    /// The reading for format version `major`.0.
    pub fn for_version(major: u8) -> Header {
        Header {
            utf8: major >= 3,
            python2_longs: major < 3,
        }
    }
}

/// A parsed dict: its entries in order, with the offset of each key. Duplicate keys are kept
/// (the caller refuses them: Python would silently keep the last one).
pub type Entries = Vec<(usize, String, Value)>;

/// Parses `text` as a dict literal starting at its first byte. Returns the entries and the
/// offset just past the closing `}`.
pub fn parse_dict(text: &[u8], header: Header) -> Result<(Entries, usize), SyntaxError> {
    let mut p = Parser {
        text,
        at: 0,
        header,
    };
    let entries = p.dict()?;
    Ok((entries, p.at))
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    header: Header,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn advance(&mut self) {
        self.at = self.at.saturating_add(1);
    }

    fn error<T>(&self, reason: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            offset: self.at,
            reason: reason.into(),
        })
    }

    /// What is at the cursor, for messages.
    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the header".into(),
            Some(b) if b.is_ascii_graphic() => format!("`{}`", char::from(b)),
            Some(b) => format!("byte 0x{b:02x}"),
        }
    }

    fn spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.advance();
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), SyntaxError> {
        if self.peek() == Some(byte) {
            self.advance();
            Ok(())
        } else {
            self.error(format!("expected {what}, found {}", self.found()))
        }
    }

    fn dict(&mut self) -> Result<Entries, SyntaxError> {
        self.expect(b'{', "`{` (the header must be a dict literal)")?;
        let mut entries = Vec::new();
        loop {
            self.spaces();
            if self.peek() == Some(b'}') {
                self.advance();
                return Ok(entries);
            }
            if !entries.is_empty() {
                self.expect(b',', "`,` or `}`")?;
                self.spaces();
                if self.peek() == Some(b'}') {
                    self.advance();
                    return Ok(entries);
                }
            }
            let key_at = self.at;
            if !matches!(self.peek(), Some(b'\'' | b'"')) {
                return self.error(format!(
                    "expected a quoted key, found {} (keys are strings; nothing is evaluated)",
                    self.found()
                ));
            }
            let key = self.string()?;
            self.spaces();
            self.expect(b':', "`:` after the key")?;
            self.spaces();
            let value = self.value(1)?;
            entries.push((key_at, key, value));
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        if depth > MAX_DEPTH {
            return self.error(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match self.peek() {
            Some(b'\'' | b'"') => self.string().map(Value::Str),
            Some(b'0'..=b'9') => self.int().map(Value::Int),
            Some(b'(') => self
                .sequence(b')', depth)
                .and_then(|(items, trailing)| Ok(Value::Tuple(self.tuple_items(items, trailing)?))),
            Some(b'[') => self
                .sequence(b']', depth)
                .map(|(items, _)| Value::List(items)),
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    self.advance();
                }
                let word = self.text.get(start..self.at).unwrap_or_default();
                match word {
                    b"True" => Ok(Value::Bool(true)),
                    b"False" => Ok(Value::Bool(false)),
                    _ => Err(SyntaxError {
                        offset: start,
                        reason: format!(
                            "`{}` is not a literal (only strings, True, False, integers, tuples and lists are; the header is read as data, never evaluated)",
                            String::from_utf8_lossy(word)
                        ),
                    }),
                }
            }
            Some(b'-' | b'+') => self.error("signed numbers are not accepted"),
            _ => self.error(format!("expected a value, found {}", self.found())),
        }
    }

    /// `(`/`[` items `)`/`]`; returns the items and whether a comma followed the last one.
    fn sequence(&mut self, close: u8, depth: usize) -> Result<(Vec<Value>, bool), SyntaxError> {
        self.advance(); // the opening bracket, which the caller saw
        let mut items = Vec::new();
        let mut trailing = false;
        loop {
            self.spaces();
            if self.peek() == Some(close) {
                self.advance();
                return Ok((items, trailing));
            }
            if !items.is_empty() && !trailing {
                return self.error(format!(
                    "expected `,` or `{}`, found {}",
                    char::from(close),
                    self.found()
                ));
            }
            items.push(self.value(depth.saturating_add(1))?);
            self.spaces();
            trailing = self.peek() == Some(b',');
            if trailing {
                self.advance();
            }
        }
    }

    /// `(x)` is not a tuple in Python but a parenthesised `x`: refused rather than guessed.
    fn tuple_items(&self, items: Vec<Value>, trailing: bool) -> Result<Vec<Value>, SyntaxError> {
        if items.len() == 1 && !trailing {
            return Err(SyntaxError {
                offset: self.at.saturating_sub(1),
                reason: "a parenthesised value without a comma is not a tuple".into(),
            });
        }
        Ok(items)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let quote = self.peek().unwrap_or(b'\'');
        self.advance();
        let start = self.at;
        loop {
            match self.peek() {
                None => {
                    return Err(SyntaxError {
                        offset: start.saturating_sub(1),
                        reason: "string not closed".into(),
                    })
                }
                Some(b) if b == quote => break,
                Some(b'\\') => {
                    return self.error("escape sequences are not accepted in header strings")
                }
                Some(b) if b < 0x20 || b == 0x7f => {
                    return self.error(format!("control byte 0x{b:02x} in a string"))
                }
                Some(_) => self.advance(),
            }
        }
        let raw = self.text.get(start..self.at).unwrap_or_default();
        self.advance(); // the closing quote
        if !self.header.utf8 {
            // Latin-1: every byte is the character of its code.
            return Ok(raw.iter().map(|&b| char::from(b)).collect());
        }
        String::from_utf8(raw.to_vec()).map_err(|_| SyntaxError {
            offset: start,
            reason: "string is not UTF-8".into(),
        })
    }

    fn int(&mut self) -> Result<u64, SyntaxError> {
        let start = self.at;
        let mut n: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            if self.at > start && n == 0 {
                return Err(SyntaxError {
                    offset: start,
                    reason: "integer with a leading zero".into(),
                });
            }
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d.saturating_sub(b'0'))))
                .ok_or_else(|| SyntaxError {
                    offset: start,
                    reason: "integer does not fit in 64 bits".into(),
                })?;
            self.advance();
        }
        if self.header.python2_longs && self.peek() == Some(b'L') {
            self.advance();
        }
        if self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        {
            return self.error(format!(
                "{} inside an integer (only plain decimal digits are accepted)",
                self.found()
            ));
        }
        Ok(n)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    const V3: Header = Header {
        utf8: true,
        python2_longs: false,
    };

    #[test]
    fn repr_is_pythons() {
        // What Python's repr writes for each (checked with CPython 3.11).
        let (e, _) = parse_dict(
            "{'d': [('a', '<f4', (2,)), (\"it's\", [('x', '|u1')]), ('', '|V4', (2, 3)), ('\u{e9}\u{a0}', '<i2', 1)]}"
                .as_bytes(),
            V3,
        )
        .unwrap();
        assert_eq!(
            e[0].2.repr(),
            "[('a', '<f4', (2,)), (\"it's\", [('x', '|u1')]), ('', '|V4', (2, 3)), ('\u{e9}\\xa0', '<i2', 1)]"
        );
        assert_eq!(Value::Tuple(vec![]).repr(), "()");
        assert_eq!(Value::Bool(true).repr(), "True");
        assert_eq!(
            Value::Str("a'b\"c".into()).repr(),
            "'a\\'b\"c'",
            "both quotes: single, the single one escaped"
        );
    }

    fn ok(text: &str) -> Entries {
        parse_dict(text.as_bytes(), V3).unwrap().0
    }

    fn err(text: &str) -> SyntaxError {
        parse_dict(text.as_bytes(), V3).unwrap_err()
    }

    #[test]
    fn what_numpy_writes() {
        let text = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }    \n";
        let (entries, end) = parse_dict(text.as_bytes(), V3).unwrap();
        assert_eq!(&text[end..], "    \n");
        assert_eq!(
            entries,
            vec![
                (1, "descr".into(), Value::Str("<f4".into())),
                (17, "fortran_order".into(), Value::Bool(false)),
                (
                    41,
                    "shape".into(),
                    Value::Tuple(vec![Value::Int(3), Value::Int(4)])
                ),
            ]
        );
    }

    #[test]
    fn tuples_of_every_length() {
        assert_eq!(ok("{'s': ()}")[0].2, Value::Tuple(vec![]));
        assert_eq!(ok("{'s': (7,)}")[0].2, Value::Tuple(vec![Value::Int(7)]));
        assert_eq!(
            ok("{'s': (0, 18446744073709551615)}")[0].2,
            Value::Tuple(vec![Value::Int(0), Value::Int(u64::MAX)])
        );
        assert_eq!(
            err("{'s': (7)}").reason,
            "a parenthesised value without a comma is not a tuple"
        );
    }

    #[test]
    fn structured_descr_is_a_list_of_tuples() {
        let e = ok("{'descr': [('a', '<f4'), ('b', '|O', (2,))]}");
        let Value::List(fields) = &e[0].2 else {
            panic!("{e:?}")
        };
        assert_eq!(fields.len(), 2);
        assert_eq!(
            fields[1],
            Value::Tuple(vec![
                Value::Str("b".into()),
                Value::Str("|O".into()),
                Value::Tuple(vec![Value::Int(2)])
            ])
        );
    }

    #[test]
    fn refusals_name_the_offset() {
        let e = err("{'descr': __import__('os').system('id')}");
        assert_eq!(e.offset, 10);
        assert!(e.reason.contains("`__import__` is not a literal"), "{e:?}");
        assert_eq!(err("{'a': 1_000}").offset, 7);
        assert_eq!(err("{'a': 01}").offset, 6);
        assert_eq!(err("{'a': -1}").offset, 6);
        assert_eq!(err("{'a': 1.5}").offset, 7);
        assert_eq!(
            err("{'a': 18446744073709551616}").reason,
            "integer does not fit in 64 bits"
        );
        assert_eq!(err("{'a': 'x\\'}").offset, 8);
        assert_eq!(err("{'a': 'x").reason, "string not closed");
        assert_eq!(err("{a: 1}").offset, 1);
        assert_eq!(err("{'a' 1}").offset, 5);
        assert_eq!(err("{'a': 1 'b': 2}").offset, 8);
        assert_eq!(err("{'a': 1,, }").offset, 8);
        assert_eq!(err("{'a': (1 2)}").offset, 9);
        assert_eq!(err(" {}").offset, 0);
        assert_eq!(err("{'a': b'x'}").offset, 6);
        assert_eq!(err("{'a': {'b': 1}}").offset, 6);
        assert_eq!(err("{'a': 1").offset, 7);
        assert_eq!(err("{'a':\t1}").offset, 5);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{{'a': {}{}}}", "[".repeat(40), "]".repeat(40));
        let e = err(&deep);
        assert!(e.reason.contains("nested deeper"), "{e:?}");
        let fine = format!(
            "{{'a': {}{}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        ok(&fine);
    }

    #[test]
    fn python2_headers_as_numpy_reads_them() {
        let v1 = Header::for_version(1);
        let (e, _) = parse_dict(b"{'shape': (3L, 4L), 'descr': [('\xe9', '<f4')]}", v1).unwrap();
        assert_eq!(
            e[0].2,
            Value::Tuple(vec![Value::Int(3), Value::Int(4)]),
            "NumPy drops the L of Python 2 longs"
        );
        let Value::List(fields) = &e[1].2 else {
            panic!("{e:?}")
        };
        assert_eq!(
            fields[0],
            Value::Tuple(vec![Value::Str("\u{e9}".into()), Value::Str("<f4".into())]),
            "a version 1.0 header is Latin-1"
        );
        // Not in version 3.0 (UTF-8, and no Python 2 writer made it).
        assert_eq!(err("{'s': (3L,)}").offset, 8);
        assert_eq!(
            parse_dict(b"{'s': '\xe9'}", V3).unwrap_err().reason,
            "string is not UTF-8"
        );
        // Only directly after digits: `L3` or `3 L` is no integer.
        assert!(parse_dict(b"{'s': (3 L,)}", v1).is_err());
        assert!(parse_dict(b"{'s': (3LL,)}", v1).is_err());
    }

    #[test]
    fn duplicate_keys_are_kept_for_the_caller() {
        assert_eq!(ok("{'a': 1, 'a': 2}").len(), 2);
    }
}
