//! Protocol Buffers' text format, read as `google.protobuf.text_format.Merge` reads it (Python
//! protobuf's `text_format.py`: the tokenizer, `_MergeField`, `_MergeScalarField`) and written
//! back in the wire format, field by field, with a plugin's message table
//! ([`super::schema`]): a loader that falls back to the text format (TensorFlow's
//! `read_meta_graph_file` for a `.meta` file) is then judged by the same binary reader as a
//! file in the wire format.
//!
//! What is read: fields by name (`name: value`, `name { … }` or `name < … >`, the `:` before a
//! message optional), repeated values as repeated fields or `[a, b]` lists, `,` or `;` after a
//! field, `#` comments, strings in `'` or `"` with C escapes (octal, `\x`, `\n`…), adjacent
//! strings joined, integers (decimal, `0x` hex, leading-`0` octal, signed), floats (`1.5`,
//! `1e3`, `2f`, `inf`, `nan`), `true`/`false`, enum values by number or by name (`resolve`), and
//! a `google.protobuf.Any` written expanded (`[type.googleapis.com/pkg.Type] { … }`). Emitting
//! every occurrence as a wire field gives `Merge`'s meaning when the binary reader decodes it:
//! the last scalar wins, messages merge.
//!
//! What is refused, as `Merge` refuses it (a `ParseError`, which the loader turns into an
//! error): a name the message does not have, an extension, a value of the wrong kind, an enum
//! name nothing resolves, a string that is not UTF-8 where the field is a `string`. Bounded:
//! nesting to [`MAX_DEPTH`], and the wire bytes to [`max_output`] of the text's length.

use super::schema::{Kind, MessageSchema};

/// Messages nested deeper than this are refused (Python's own recursion stops a few hundred
/// deep; no real file nests past a few dozen).
pub const MAX_DEPTH: usize = 100;

/// The most wire bytes written for `text_len` bytes of text: the text format is never
/// shorter than its wire form but for the few bytes each length prefix adds per message. Each
/// byte is counted once, where it is first written; a message's bytes are copied into its
/// parent's when it ends, so the memory held at once stays under twice this.
pub fn max_output(text_len: usize) -> usize {
    text_len.saturating_mul(2).saturating_add(1 << 20)
}

/// Why a text is not a message of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    /// Line of the offending token (1-based).
    pub line: usize,
    /// Its column (1-based, in bytes).
    pub column: usize,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// What the caller's table adds to the schema: enum values by name, and message types by full
/// name (for an expanded `Any`).
pub struct Names<'a> {
    /// The number of the enum value `name` (any enum of the table: names are unique across
    /// them in the formats read so far), or `None`.
    pub enum_value: &'a dyn Fn(&str) -> Option<i64>,
    /// The index in the table of the message type named `full_name` (`tensorflow.VariableDef`).
    pub message: &'a dyn Fn(&str) -> Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(Vec<u8>),
    Num(String),
    Sym(u8),
    End,
}

struct Lexer<'t> {
    text: &'t [u8],
    at: usize,
    line: usize,
    line_start: usize,
    /// The token read last and where it started.
    tok: Tok,
    tok_line: usize,
    tok_column: usize,
}

impl<'t> Lexer<'t> {
    fn new(text: &'t [u8]) -> Result<Self, TextError> {
        let mut lx = Lexer {
            text,
            at: 0,
            line: 1,
            line_start: 0,
            tok: Tok::End,
            tok_line: 1,
            tok_column: 1,
        };
        lx.next()?;
        Ok(lx)
    }

    fn error(&self, message: impl Into<String>) -> TextError {
        TextError {
            line: self.tok_line,
            column: self.tok_column,
            message: message.into(),
        }
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.text.get(self.at) {
            if b == b'#' {
                while self.text.get(self.at).is_some_and(|&c| c != b'\n') {
                    self.at += 1;
                }
            } else if b.is_ascii_whitespace() {
                if b == b'\n' {
                    self.line += 1;
                    self.line_start = self.at + 1;
                }
                self.at += 1;
            } else {
                break;
            }
        }
    }

    /// Reads the next token into `self.tok`.
    fn next(&mut self) -> Result<(), TextError> {
        self.skip_space();
        self.tok_line = self.line;
        self.tok_column = self.at - self.line_start + 1;
        let Some(&b) = self.text.get(self.at) else {
            self.tok = Tok::End;
            return Ok(());
        };
        let start = self.at;
        let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-' | b'.');
        self.tok = if b.is_ascii_alphabetic() || b == b'_' {
            self.at += 1;
            while self
                .text
                .get(self.at)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-'))
            {
                self.at += 1;
            }
            Tok::Ident(String::from_utf8_lossy(&self.text[start..self.at]).into_owned())
        } else if b.is_ascii_digit()
            || ((b == b'-' || b == b'+' || b == b'.')
                && self.text.get(self.at + 1).is_some_and(u8::is_ascii_digit))
        {
            self.at += 1;
            while self.text.get(self.at).is_some_and(|&c| word(c)) {
                self.at += 1;
            }
            Tok::Num(String::from_utf8_lossy(&self.text[start..self.at]).into_owned())
        } else if b == b'"' || b == b'\'' {
            // Adjacent strings are one value (text_format's ConsumeString).
            let mut out = Vec::new();
            loop {
                self.string(&mut out)?;
                let save = (self.at, self.line, self.line_start);
                self.skip_space();
                if !matches!(self.text.get(self.at), Some(b'"' | b'\'')) {
                    (self.at, self.line, self.line_start) = save;
                    break;
                }
            }
            Tok::Str(out)
        } else {
            self.at += 1;
            Tok::Sym(b)
        };
        Ok(())
    }

    /// One quoted string at `self.at`, unescaped into `out`.
    fn string(&mut self, out: &mut Vec<u8>) -> Result<(), TextError> {
        let quote = self.text[self.at];
        self.at += 1;
        loop {
            let Some(&c) = self.text.get(self.at) else {
                return Err(self.error("a string runs to the end of the text"));
            };
            self.at += 1;
            match c {
                b'\n' => return Err(self.error("a string runs past the end of its line")),
                c if c == quote => return Ok(()),
                b'\\' => {
                    let Some(&e) = self.text.get(self.at) else {
                        return Err(self.error("a string ends in a backslash"));
                    };
                    self.at += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'a' => out.push(7),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'v' => out.push(11),
                        b'\\' | b'\'' | b'"' | b'?' => out.push(e),
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.text.get(self.at) {
                                    Some(&d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.at += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push((v & 0xff) as u8);
                        }
                        b'x' | b'X' => {
                            let mut v = 0u32;
                            let mut n = 0;
                            while n < 2 {
                                match self
                                    .text
                                    .get(self.at)
                                    .and_then(|d| (*d as char).to_digit(16))
                                {
                                    Some(d) => {
                                        v = v * 16 + d;
                                        self.at += 1;
                                        n += 1;
                                    }
                                    None => break,
                                }
                            }
                            if n == 0 {
                                return Err(self.error("\\x with no hex digit"));
                            }
                            out.push(v as u8);
                        }
                        other => {
                            return Err(
                                self.error(format!("invalid escape sequence \\{}", other as char))
                            )
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn is_sym(&self, s: u8) -> bool {
        self.tok == Tok::Sym(s)
    }

    /// Consumes the symbol `s` when it is next.
    fn try_sym(&mut self, s: u8) -> Result<bool, TextError> {
        if self.is_sym(s) {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect_sym(&mut self, s: u8) -> Result<(), TextError> {
        if !self.try_sym(s)? {
            return Err(self.error(format!("expected \"{}\"", s as char)));
        }
        Ok(())
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_tag(out: &mut Vec<u8>, number: u32, wire: u8) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire));
}

struct Writer<'a> {
    messages: &'a [MessageSchema],
    names: &'a Names<'a>,
    budget: usize,
}

/// Reads `text` as the text format of message `root` of `messages`; returns its wire bytes.
pub fn to_wire(
    text: &[u8],
    messages: &[MessageSchema],
    root: usize,
    names: &Names<'_>,
) -> Result<Vec<u8>, TextError> {
    let mut lx = Lexer::new(text)?;
    let mut w = Writer {
        messages,
        names,
        budget: max_output(text.len()),
    };
    let out = w.message(&mut lx, root, None, 0)?;
    if lx.tok != Tok::End {
        return Err(lx.error("expected a field name"));
    }
    Ok(out)
}

impl Writer<'_> {
    fn spend(&mut self, lx: &Lexer<'_>, n: usize) -> Result<(), TextError> {
        self.budget = self
            .budget
            .checked_sub(n)
            .ok_or_else(|| lx.error("the message is larger than the text could hold: refused"))?;
        Ok(())
    }

    /// The fields of message `index` up to `close` (or the end of the text).
    fn message(
        &mut self,
        lx: &mut Lexer<'_>,
        index: usize,
        close: Option<u8>,
        depth: usize,
    ) -> Result<Vec<u8>, TextError> {
        if depth > MAX_DEPTH {
            return Err(lx.error(format!("messages nested deeper than {MAX_DEPTH}")));
        }
        let schema = self
            .messages
            .get(index)
            .ok_or_else(|| lx.error("a message type the table does not hold"))?;
        let mut out = Vec::new();
        loop {
            match (&lx.tok, close) {
                (Tok::End, None) => return Ok(out),
                (Tok::End, Some(c)) => return Err(lx.error(format!("expected \"{}\"", c as char))),
                (Tok::Sym(s), Some(c)) if *s == c => {
                    lx.next()?;
                    return Ok(out);
                }
                _ => {}
            }
            if lx.is_sym(b'[') && schema.name == "google.protobuf.Any" {
                self.any(lx, depth, &mut out)?;
            } else {
                self.field(lx, schema, depth, &mut out)?;
            }
            if !lx.try_sym(b',')? {
                lx.try_sym(b';')?;
            }
        }
    }

    /// `[type.googleapis.com/pkg.Type] { … }` inside an Any: its `type_url` and `value`.
    fn any(
        &mut self,
        lx: &mut Lexer<'_>,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), TextError> {
        lx.next()?;
        let mut url = String::new();
        while !lx.is_sym(b']') {
            match &lx.tok {
                Tok::Ident(s) | Tok::Num(s) => url.push_str(s),
                Tok::Sym(c @ (b'.' | b'/')) => url.push(*c as char),
                _ => return Err(lx.error("expected a type URL")),
            }
            lx.next()?;
        }
        lx.next()?;
        let full = url.rsplit('/').next().unwrap_or_default();
        let index = (self.names.message)(full)
            .filter(|_| url.contains('/'))
            .ok_or_else(|| lx.error(format!("can not find message type {full:?} for an Any")))?;
        lx.try_sym(b':')?;
        let close = if lx.try_sym(b'{')? {
            b'}'
        } else {
            lx.expect_sym(b'<')?;
            b'>'
        };
        let value = self.message(lx, index, Some(close), depth + 1)?;
        // The value's bytes were counted as they were written: only what wraps them here.
        self.spend(lx, url.len() + 24)?;
        put_tag(out, 1, 2);
        put_varint(out, url.len() as u64);
        out.extend_from_slice(url.as_bytes());
        put_tag(out, 2, 2);
        put_varint(out, value.len() as u64);
        out.extend_from_slice(&value);
        Ok(())
    }

    /// One `name: value`, `name { … }` or `name: [ … ]`.
    fn field(
        &mut self,
        lx: &mut Lexer<'_>,
        schema: &MessageSchema,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), TextError> {
        let name = match &lx.tok {
            Tok::Ident(n) => n.clone(),
            Tok::Sym(b'[') => {
                return Err(lx.error(format!(
                    "an extension or Any in {}, which is not a google.protobuf.Any",
                    schema.name
                )))
            }
            _ => return Err(lx.error("expected a field name")),
        };
        let Some(field) = schema.fields.iter().find(|f| f.name == name) else {
            return Err(lx.error(format!(
                "message type \"{}\" has no field named \"{name}\"",
                schema.name
            )));
        };
        lx.next()?;
        match field.kind {
            Kind::Message(index) => {
                lx.try_sym(b':')?;
                if field.repeated && lx.try_sym(b'[')? {
                    if lx.try_sym(b']')? {
                        return Ok(());
                    }
                    loop {
                        self.one_message(lx, field.number, index, depth, out)?;
                        if lx.try_sym(b']')? {
                            return Ok(());
                        }
                        lx.expect_sym(b',')?;
                    }
                }
                self.one_message(lx, field.number, index, depth, out)
            }
            kind => {
                lx.expect_sym(b':')?;
                if lx.is_sym(b'[') {
                    if !field.repeated {
                        return Err(lx.error(format!(
                            "field \"{name}\" is not repeated: a list is not its value"
                        )));
                    }
                    lx.next()?;
                    if lx.try_sym(b']')? {
                        return Ok(());
                    }
                    loop {
                        self.scalar(lx, field.number, kind, out)?;
                        if lx.try_sym(b']')? {
                            return Ok(());
                        }
                        lx.expect_sym(b',')?;
                    }
                }
                self.scalar(lx, field.number, kind, out)
            }
        }
    }

    fn one_message(
        &mut self,
        lx: &mut Lexer<'_>,
        number: u32,
        index: usize,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), TextError> {
        let close = if lx.try_sym(b'{')? {
            b'}'
        } else if lx.try_sym(b'<')? {
            b'>'
        } else {
            return Err(lx.error("expected \"{\" or \"<\""));
        };
        let body = self.message(lx, index, Some(close), depth + 1)?;
        // The body's bytes were counted as they were written: only its tag and length here.
        self.spend(lx, 16)?;
        put_tag(out, number, 2);
        put_varint(out, body.len() as u64);
        out.extend_from_slice(&body);
        Ok(())
    }

    /// One scalar value of `kind`, as field `number`.
    fn scalar(
        &mut self,
        lx: &mut Lexer<'_>,
        number: u32,
        kind: Kind,
        out: &mut Vec<u8>,
    ) -> Result<(), TextError> {
        let start = out.len();
        match kind {
            Kind::String | Kind::Bytes => {
                let Tok::Str(bytes) = &lx.tok else {
                    return Err(lx.error("expected a string"));
                };
                if matches!(kind, Kind::String) && std::str::from_utf8(bytes).is_err() {
                    return Err(lx.error("a string field's value is not UTF-8"));
                }
                put_tag(out, number, 2);
                put_varint(out, bytes.len() as u64);
                out.extend_from_slice(bytes);
            }
            Kind::Varint => {
                let v = self.integer(lx)?;
                put_tag(out, number, 0);
                put_varint(out, v);
            }
            Kind::Fixed32 => {
                let v = self.float(lx)? as f32;
                put_tag(out, number, 5);
                out.extend_from_slice(&v.to_le_bytes());
            }
            Kind::Fixed64 => {
                let v = self.float(lx)?;
                put_tag(out, number, 1);
                out.extend_from_slice(&v.to_le_bytes());
            }
            Kind::Message(_) => unreachable!("messages are read by one_message"),
        }
        let written = out.len() - start;
        self.spend(lx, written)?;
        lx.next()
    }

    /// An integer, a bool or an enum value, as its varint (a negative value as its 64-bit
    /// two's complement, as an int32 or int64 is written).
    fn integer(&self, lx: &mut Lexer<'_>) -> Result<u64, TextError> {
        let mut negative = false;
        if lx.is_sym(b'-') {
            negative = true;
            lx.next()?;
        }
        let v: i128 = match &lx.tok {
            Tok::Num(s) => {
                let (neg, digits) = match s.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, s.strip_prefix('+').unwrap_or(s)),
                };
                negative ^= neg;
                let parsed = if let Some(hex) = digits
                    .strip_prefix("0x")
                    .or_else(|| digits.strip_prefix("0X"))
                {
                    u64::from_str_radix(hex, 16).ok()
                } else if digits.len() > 1 && digits.starts_with('0') {
                    u64::from_str_radix(&digits[1..], 8).ok()
                } else {
                    digits.parse::<u64>().ok()
                };
                i128::from(
                    parsed.ok_or_else(|| lx.error(format!("expected an integer, not {s:?}")))?,
                )
            }
            Tok::Ident(s) if !negative => match s.as_str() {
                "true" | "True" | "t" => 1,
                "false" | "False" | "f" => 0,
                name => i128::from(
                    (self.names.enum_value)(name)
                        .ok_or_else(|| lx.error(format!("no enum value or bool named {name:?}")))?,
                ),
            },
            _ => return Err(lx.error("expected an integer, a bool or an enum value")),
        };
        let v = if negative { -v } else { v };
        if v < i128::from(i64::MIN) || v > i128::from(u64::MAX) {
            return Err(lx.error("an integer out of range"));
        }
        Ok(if v < 0 { v as i64 as u64 } else { v as u64 })
    }

    /// A float or double (an integer is one too; `inf`, `infinity`, `nan`, a trailing `f`).
    fn float(&self, lx: &mut Lexer<'_>) -> Result<f64, TextError> {
        let mut negative = false;
        if lx.is_sym(b'-') {
            negative = true;
            lx.next()?;
        }
        let text = match &lx.tok {
            Tok::Num(s) | Tok::Ident(s) => s.to_ascii_lowercase(),
            _ => return Err(lx.error("expected a number")),
        };
        let body = text
            .strip_suffix('f')
            .filter(|b| !b.ends_with("in"))
            .unwrap_or(&text);
        let v: f64 = match body.trim_start_matches('+') {
            "inf" | "infinity" => f64::INFINITY,
            "-inf" | "-infinity" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            other => other
                .parse()
                .map_err(|_| lx.error(format!("expected a number, not {text:?}")))?,
        };
        Ok(if negative { -v } else { v })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protobuf::schema::Field;

    static INNER: &[Field] = &[
        Field {
            number: 1,
            name: "name",
            kind: Kind::String,
            repeated: false,
        },
        Field {
            number: 2,
            name: "n",
            kind: Kind::Varint,
            repeated: true,
        },
        Field {
            number: 3,
            name: "child",
            kind: Kind::Message(1),
            repeated: false,
        },
    ];
    static OUTER: &[Field] = &[
        Field {
            number: 1,
            name: "inner",
            kind: Kind::Message(1),
            repeated: true,
        },
        Field {
            number: 2,
            name: "x",
            kind: Kind::Fixed32,
            repeated: false,
        },
        Field {
            number: 3,
            name: "blob",
            kind: Kind::Bytes,
            repeated: false,
        },
        Field {
            number: 4,
            name: "any",
            kind: Kind::Message(2),
            repeated: false,
        },
    ];
    static ANY: &[Field] = &[
        Field {
            number: 1,
            name: "type_url",
            kind: Kind::String,
            repeated: false,
        },
        Field {
            number: 2,
            name: "value",
            kind: Kind::Bytes,
            repeated: false,
        },
    ];
    static MESSAGES: &[MessageSchema] = &[
        MessageSchema {
            name: "t.Outer",
            size: 0,
            fields: OUTER,
        },
        MessageSchema {
            name: "t.Inner",
            size: 0,
            fields: INNER,
        },
        MessageSchema {
            name: "google.protobuf.Any",
            size: 0,
            fields: ANY,
        },
    ];

    fn wire(text: &str) -> Result<Vec<u8>, TextError> {
        let names = Names {
            enum_value: &|n| (n == "SEVEN").then_some(7),
            message: &|n| (n == "t.Inner").then_some(1),
        };
        to_wire(text.as_bytes(), MESSAGES, 0, &names)
    }

    #[test]
    fn fields_lists_strings_numbers_and_any_become_wire_fields() {
        let got = wire(
            "# a comment\ninner { name: \"a\" \"b\" n: [1, -1] n: SEVEN } x: 1.5f\ninner < n: 0x10 >, blob: '\\001\\x02z'\nany { [type.googleapis.com/t.Inner] { n: 3 } }",
        )
        .unwrap();
        let mut want = vec![0x0a, 19, 0x0a, 2, b'a', b'b', 0x10, 1, 0x10];
        want.extend_from_slice(&[0xff; 9]);
        want.extend_from_slice(&[0x01, 0x10, 7]);
        want.push(0x15);
        want.extend_from_slice(&1.5f32.to_le_bytes());
        want.extend_from_slice(&[0x0a, 2, 0x10, 16]);
        want.extend_from_slice(&[0x1a, 3, 1, 2, b'z']);
        let url = b"type.googleapis.com/t.Inner";
        let mut any = vec![0x0a, url.len() as u8];
        any.extend_from_slice(url);
        any.extend_from_slice(&[0x12, 2, 0x10, 3]);
        want.extend_from_slice(&[0x22, any.len() as u8]);
        want.extend_from_slice(&any);
        assert_eq!(got, want);
    }

    #[test]
    fn what_merge_refuses_is_refused_with_its_place() {
        let e = wire("inner { nope: 1 }").unwrap_err();
        assert_eq!((e.line, e.column), (1, 9), "{e}");
        assert!(e.message.contains("no field named \"nope\""), "{e}");
        assert!(wire("x: [1, 2]")
            .unwrap_err()
            .message
            .contains("not repeated"));
        assert!(wire("inner { n: OTHER }").is_err());
        assert!(wire("inner { name: \"\\xff\" }").is_err());
        assert!(wire("inner { name: \"open").is_err());
        assert!(wire("inner {").is_err());
        assert!(wire("[ext] { }").is_err());
        // Nesting costs no budget of its own: a long string 90 messages deep is read (counted
        // at each level, its 64 KiB would pass the bound 90 times over).
        let long = "x".repeat(64 << 10);
        let nested = format!(
            "inner {{ {}name: \"{long}\" {}}}",
            "child { ".repeat(90),
            "} ".repeat(90)
        );
        assert!(wire(&nested).unwrap().len() > 64 << 10);
        let deep = format!("inner {{ {}", "child { ".repeat(MAX_DEPTH + 2));
        assert!(wire(&deep).unwrap_err().message.contains("nested deeper"));
    }
}
