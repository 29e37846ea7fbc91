//! `schema.json` read as skops reads it: `json.loads(zip_file.read("schema.json"))` (skops 0.16
//! `_utils.py` `read_schema`), that is CPython 3.11's `json` module on bytes, not RFC 8259.
//!
//! A reader stricter or looser than Python's would let a schema mean one thing to socair and
//! another to skops (a schema socair cannot parse would not be judged as a skops schema at all),
//! so this mirrors `json/__init__.py` `loads` and `detect_encoding` and the C scanner
//! (`Modules/_json.c` `scan_once_unicode`, `scanstring_unicode`, `_match_number_unicode`):
//!
//! * the bytes are decoded as `detect_encoding` says (UTF-8, UTF-8 with a BOM, UTF-16 and
//!   UTF-32 by BOM or by their NUL bytes), with `surrogatepass`: lone surrogates are kept;
//! * `NaN`, `Infinity` and `-Infinity` are numbers; integers keep every digit (Python's are
//!   exact; more than 4,300 digits raise `ValueError`); floats round as `float()` does;
//! * a key repeated in an object keeps its first place and its last value (`dict` insertion);
//! * control characters inside strings are refused (`strict=True`); `\uXXXX` escapes pair a
//!   high surrogate with a following low one, and keep either alone otherwise.
//!
//! Strings are Rust `String`s, which cannot hold a lone surrogate: one is written as
//! [`ESCAPE`] followed by a private-use character (U+F0000 + its offset from U+D800), and a real
//! U+10FFFF as two [`ESCAPE`]s, an injective spelling, so that names that differ in Python
//! differ here. Nesting and value counts are bounded ([`MAX_DEPTH`], [`MAX_VALUES`]); the
//! parse is iterative, never recursive.

use std::collections::HashMap;

/// Open arrays and objects at most. CPython's scanner enters a recursion level for each, and
/// raises `RecursionError` near 1,000 (994 in a bare `json.loads`, fewer under skops's frames);
/// below that, skops's own tree walk fails much earlier (a few hundred nodes deep).
pub const MAX_DEPTH: usize = 900;

/// Values parsed at most (a schema with more is not read: a LEAD).
pub const MAX_VALUES: usize = 1 << 21;

/// `sys.int_info.default_max_str_digits`: `int()` of a longer literal raises `ValueError`.
const MAX_INT_DIGITS: usize = 4300;

/// Starts the spelling of a lone surrogate (or, doubled, of U+10FFFF itself) in a string.
pub const ESCAPE: char = '\u{10FFFF}';

/// A decoded JSON value, as Python's `json` module builds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// An integer literal's canonical decimal digits (a `-` for negatives; `0` for `-0`).
    Int(Box<str>),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    /// Keys in first-insertion order, each once (the last value wins).
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value under `key` of an object (`None` for a missing key or a non-object).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python's type name for the value (`type(v).__name__`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NoneType",
            Json::Bool(_) => "bool",
            Json::Int(_) => "int",
            Json::Float(_) => "float",
            Json::Str(_) => "str",
            Json::Array(_) => "list",
            Json::Object(_) => "dict",
        }
    }
}

/// Why Python's `json.loads` (or its decode) raises, and where (a byte offset in the decoded
/// text); or, when `bound` is set, where socair's own bounds stopped ([`MAX_DEPTH`],
/// [`MAX_VALUES`]), which Python may read past.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub at: usize,
    pub why: String,
    pub bound: bool,
}

fn err<T>(at: usize, why: impl Into<String>) -> Result<T, JsonError> {
    Err(JsonError {
        at,
        why: why.into(),
        bound: false,
    })
}

fn bound<T>(at: usize, why: String) -> Result<T, JsonError> {
    Err(JsonError {
        at,
        why,
        bound: true,
    })
}

/// `json.loads(bytes)`: decodes as `json.detect_encoding` says, then parses.
pub fn loads(bytes: &[u8]) -> Result<Json, JsonError> {
    parse(&decode(bytes)?).map(|p| p.doc)
}

/// A parse, with the values a repeated key replaced (Python drops them; other JSON readers
/// keep the first value of a key instead of the last, so they are what those readers see).
pub struct Parsed {
    pub doc: Json,
    /// `(key, the value it first held)`, in the order they were replaced.
    pub shadowed: Vec<(String, Json)>,
    /// For each object that repeats `__module__` or `__class__`, every string either held:
    /// the types the object names to one reader or another.
    pub renamed: Vec<Renamed>,
}

/// The names an object with a repeated `__module__` or `__class__` gives itself.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Renamed {
    pub modules: Vec<String>,
    pub classes: Vec<String>,
}

/// [`loads`], keeping what repeated keys replaced.
pub fn loads_keeping_shadowed(bytes: &[u8]) -> Result<Parsed, JsonError> {
    parse(&decode(bytes)?)
}

/// `json.loads(str)` of a string the schema holds (a `JsonNode`'s content): a leading BOM is
/// refused ("Unexpected UTF-8 BOM").
pub fn loads_str(text: &str) -> Result<Json, JsonError> {
    if text.starts_with('\u{FEFF}') {
        return err(0, "Unexpected UTF-8 BOM (decode using utf-8-sig)");
    }
    parse(text).map(|p| p.doc)
}

/// The text `json.loads` parses: `bytes.decode(detect_encoding(bytes), 'surrogatepass')`.
pub fn decode(b: &[u8]) -> Result<String, JsonError> {
    const UTF32_LE: &[u8] = b"\xff\xfe\x00\x00";
    const UTF32_BE: &[u8] = b"\x00\x00\xfe\xff";
    if b.starts_with(UTF32_LE) || b.starts_with(UTF32_BE) {
        let le = b.starts_with(UTF32_LE);
        return decode_utf32(&b[4..], le);
    }
    if b.starts_with(b"\xff\xfe") || b.starts_with(b"\xfe\xff") {
        let le = b.starts_with(b"\xff\xfe");
        return decode_utf16(&b[2..], le);
    }
    if let Some(rest) = b.strip_prefix(b"\xef\xbb\xbf") {
        return decode_utf8(rest);
    }
    match b {
        [0, b1, ..] if b.len() >= 4 => {
            if *b1 != 0 {
                decode_utf16(b, false)
            } else {
                decode_utf32(b, false)
            }
        }
        [_, 0, b2, b3, ..] if b.len() >= 4 => {
            if *b2 != 0 || *b3 != 0 {
                decode_utf16(b, true)
            } else {
                decode_utf32(b, true)
            }
        }
        [0, _] => decode_utf16(b, false),
        [_, 0] => decode_utf16(b, true),
        _ => decode_utf8(b),
    }
}

/// Appends code point `c` (any value up to U+10FFFF, surrogates included) in this module's
/// spelling.
fn push_code_point(out: &mut String, c: u32) {
    if (0xD800..=0xDFFF).contains(&c) {
        out.push(ESCAPE);
        out.push(char::from_u32(0xF0000 + (c - 0xD800)).unwrap_or(char::REPLACEMENT_CHARACTER));
    } else if c == 0x10FFFF {
        out.push(ESCAPE);
        out.push(ESCAPE);
    } else if let Some(ch) = char::from_u32(c) {
        out.push(ch);
    }
}

/// Appends `s`, already valid UTF-8, in this module's spelling (only U+10FFFF changes).
fn push_str(out: &mut String, s: &str) {
    if s.contains(ESCAPE) {
        for ch in s.chars() {
            push_code_point(out, u32::from(ch));
        }
    } else {
        out.push_str(s);
    }
}

/// UTF-8 with `surrogatepass`: CPython's strict decoder, which also takes the three-byte
/// encodings of surrogates (`ED A0..BF 80..BF`).
fn decode_utf8(b: &[u8]) -> Result<String, JsonError> {
    if let Ok(s) = std::str::from_utf8(b) {
        let mut out = String::with_capacity(s.len());
        push_str(&mut out, s);
        return Ok(out);
    }
    let mut out = String::with_capacity(b.len());
    let mut rest = b;
    let mut at = 0usize;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                push_str(&mut out, s);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                // The prefix is valid by construction.
                if let Ok(s) = std::str::from_utf8(&rest[..good]) {
                    push_str(&mut out, s);
                }
                at += good;
                let bad = &rest[good..];
                match bad {
                    [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => {
                        let c = 0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F);
                        push_code_point(&mut out, c);
                        rest = &bad[3..];
                        at += 3;
                    }
                    _ => {
                        return err(
                            at,
                            format!("'utf-8' codec can't decode byte 0x{:02x}", bad[0]),
                        )
                    }
                }
            }
        }
    }
    Ok(out)
}

/// UTF-16 with `surrogatepass`: pairs join, lone surrogates stay; an odd length is refused.
fn decode_utf16(b: &[u8], le: bool) -> Result<String, JsonError> {
    if !b.len().is_multiple_of(2) {
        return err(b.len(), "'utf-16' codec can't decode: truncated data");
    }
    let units: Vec<u32> = b
        .chunks_exact(2)
        .map(|c| {
            let pair = [c[0], c[1]];
            u32::from(if le {
                u16::from_le_bytes(pair)
            } else {
                u16::from_be_bytes(pair)
            })
        })
        .collect();
    let mut out = String::with_capacity(units.len());
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        if (0xD800..0xDC00).contains(&u) {
            if let Some(&low) = units.get(i + 1).filter(|l| (0xDC00..0xE000).contains(*l)) {
                push_code_point(&mut out, 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00));
                i += 2;
                continue;
            }
        }
        push_code_point(&mut out, u);
        i += 1;
    }
    Ok(out)
}

/// UTF-32 with `surrogatepass`: code points up to U+10FFFF, surrogates kept.
fn decode_utf32(b: &[u8], le: bool) -> Result<String, JsonError> {
    if !b.len().is_multiple_of(4) {
        return err(b.len(), "'utf-32' codec can't decode: truncated data");
    }
    let mut out = String::with_capacity(b.len() / 4);
    for (i, c) in b.chunks_exact(4).enumerate() {
        let quad = [c[0], c[1], c[2], c[3]];
        let c = if le {
            u32::from_le_bytes(quad)
        } else {
            u32::from_be_bytes(quad)
        };
        if c > 0x10FFFF {
            return err(
                i * 4,
                "'utf-32' codec can't decode: code point not in range",
            );
        }
        push_code_point(&mut out, c);
    }
    Ok(out)
}

/// An open container while parsing.
enum Open {
    Array(Vec<Json>),
    Object {
        pairs: Vec<(String, Json)>,
        /// Key to index, once the object has more keys than a scan is worth.
        index: Option<HashMap<String, usize>>,
        key: String,
        /// The names a repeated `__module__` or `__class__` replaced.
        renamed: Renamed,
    },
}

/// Inserts as `dict` does: a repeated key keeps its place and takes the new value; the value
/// it replaces is returned.
fn insert(
    pairs: &mut Vec<(String, Json)>,
    index: &mut Option<HashMap<String, usize>>,
    key: String,
    value: Json,
) -> Option<(String, Json)> {
    const INDEX_FROM: usize = 16;
    let found = match index {
        Some(map) => map.get(&key).copied(),
        None => pairs.iter().position(|(k, _)| *k == key),
    };
    if let Some(i) = found {
        return pairs
            .get_mut(i)
            .map(|slot| (key, std::mem::replace(&mut slot.1, value)));
    }
    if let Some(map) = index {
        map.insert(key.clone(), pairs.len());
    }
    pairs.push((key, value));
    if index.is_none() && pairs.len() >= INDEX_FROM {
        *index = Some(
            pairs
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect(),
        );
    }
    None
}

/// The parser's cursor over the text's bytes (JSON's syntax is ASCII: multi-byte characters
/// only ever lie inside strings, copied whole).
struct Cursor<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// `[ \t\n\r]*`, json's WHITESPACE.
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn starts_with(&self, word: &[u8]) -> bool {
        self.bytes
            .get(self.at..)
            .is_some_and(|rest| rest.starts_with(word))
    }

    /// The string whose opening quote was just consumed (`scanstring_unicode`, strict).
    fn string(&mut self) -> Result<String, JsonError> {
        let mut out = String::new();
        loop {
            // A run of plain characters, copied whole: it ends at an ASCII byte, so it is
            // valid UTF-8 on its own.
            let run = self.bytes[self.at..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(self.bytes.len() - self.at);
            if let Ok(s) = std::str::from_utf8(&self.bytes[self.at..self.at + run]) {
                out.push_str(s);
            }
            self.at += run;
            let Some(c) = self.peek() else {
                return err(self.at, "Unterminated string");
            };
            self.at += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return err(self.at, "Unterminated string");
                    };
                    self.at += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut c = self.hex4()?;
                            if (0xD800..0xDC00).contains(&c) && self.starts_with(b"\\u") {
                                let back = self.at;
                                self.at += 2;
                                let c2 = self.hex4()?;
                                if (0xDC00..0xE000).contains(&c2) {
                                    c = 0x10000 + ((c - 0xD800) << 10) + (c2 - 0xDC00);
                                } else {
                                    self.at = back;
                                }
                            }
                            push_code_point(&mut out, c);
                        }
                        _ => return err(self.at - 2, "Invalid \\escape"),
                    }
                }
                _ => return err(self.at - 1, "Invalid control character"),
            }
        }
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut c = 0u32;
        for _ in 0..4 {
            let Some(d) = self.peek().and_then(|h| char::from(h).to_digit(16)) else {
                return err(self.at, "Invalid \\uXXXX escape");
            };
            c = (c << 4) | d;
            self.at += 1;
        }
        Ok(c)
    }

    /// A number at the cursor (`_match_number_unicode`), or `None` when none starts here.
    fn number(&mut self) -> Result<Option<Json>, JsonError> {
        let start = self.at;
        let mut i = self.at;
        let digit = |i: usize| self.bytes.get(i).is_some_and(u8::is_ascii_digit);
        if self.bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        match self.bytes.get(i) {
            Some(b'1'..=b'9') => {
                i += 1;
                while digit(i) {
                    i += 1;
                }
            }
            Some(b'0') => i += 1,
            _ => return Ok(None),
        }
        let int_end = i;
        let mut is_float = false;
        if self.bytes.get(i) == Some(&b'.') && digit(i + 1) {
            is_float = true;
            i += 2;
            while digit(i) {
                i += 1;
            }
        }
        if matches!(self.bytes.get(i), Some(b'e' | b'E')) {
            let e_start = i;
            i += 1;
            if matches!(self.bytes.get(i), Some(b'-' | b'+')) {
                i += 1;
            }
            let digits_from = i;
            while digit(i) {
                i += 1;
            }
            if i > digits_from {
                is_float = true;
            } else {
                i = e_start;
            }
        }
        // ASCII by construction.
        let literal = std::str::from_utf8(&self.bytes[start..i]).unwrap_or_default();
        self.at = i;
        if is_float {
            // `float()` rounds correctly, as Rust's parse does; overflow gives inf.
            return match literal.parse::<f64>() {
                Ok(f) => Ok(Some(Json::Float(f))),
                Err(_) => err(start, "could not convert string to float"),
            };
        }
        let negative = literal.starts_with('-');
        let digits = literal
            .get(usize::from(negative)..int_end - start)
            .unwrap_or_default();
        if digits.len() > MAX_INT_DIGITS {
            return err(
                start,
                format!(
                    "Exceeds the limit ({MAX_INT_DIGITS} digits) for integer string conversion"
                ),
            );
        }
        let canonical = if digits == "0" || !negative {
            digits.to_owned()
        } else {
            format!("-{digits}")
        };
        Ok(Some(Json::Int(canonical.into_boxed_str())))
    }
}

/// Parses `text` (already decoded) as `json.loads` does.
pub fn parse(text: &str) -> Result<Parsed, JsonError> {
    let mut p = Parser {
        c: Cursor {
            bytes: text.as_bytes(),
            at: 0,
        },
        stack: Vec::new(),
        values: 0,
        shadowed: Vec::new(),
        renamed: Vec::new(),
    };
    p.c.skip_ws();
    // One value at a time, never a call per level: an open container waits on `stack`.
    loop {
        // A value starts at the cursor.
        let Some(done) = p.value()? else {
            // It opened a container: its first value starts at the cursor.
            continue;
        };
        if let Some(doc) = p.close(done)? {
            return Ok(Parsed {
                doc,
                shadowed: p.shadowed,
                renamed: p.renamed,
            });
        }
    }
}

/// The parse's state: the cursor, the containers open around it, and what it has counted and
/// kept so far.
struct Parser<'t> {
    c: Cursor<'t>,
    stack: Vec<Open>,
    values: usize,
    shadowed: Vec<(String, Json)>,
    renamed: Vec<Renamed>,
}

impl Parser<'_> {
    /// The value starting at the cursor: `Some` when it is whole (a scalar, or an empty array
    /// or object), `None` when it opened a container whose first value comes next.
    fn value(&mut self) -> Result<Option<Json>, JsonError> {
        let c = &mut self.c;
        self.values += 1;
        if self.values > MAX_VALUES {
            return bound(
                c.at,
                format!("more than {MAX_VALUES} values: past what socair reads"),
            );
        }
        let value = match c.peek() {
            Some(b'"') => {
                c.at += 1;
                Json::Str(c.string()?)
            }
            Some(b'{') => return self.open_object(),
            Some(b'[') => return self.open_array(),
            Some(b'n') if c.starts_with(b"null") => {
                c.at += 4;
                Json::Null
            }
            Some(b't') if c.starts_with(b"true") => {
                c.at += 4;
                Json::Bool(true)
            }
            Some(b'f') if c.starts_with(b"false") => {
                c.at += 5;
                Json::Bool(false)
            }
            Some(b'N') if c.starts_with(b"NaN") => {
                c.at += 3;
                Json::Float(f64::NAN)
            }
            Some(b'I') if c.starts_with(b"Infinity") => {
                c.at += 8;
                Json::Float(f64::INFINITY)
            }
            Some(b'-') if c.starts_with(b"-Infinity") => {
                c.at += 9;
                Json::Float(f64::NEG_INFINITY)
            }
            _ => match c.number()? {
                Some(n) => n,
                None => return err(c.at, "Expecting value"),
            },
        };
        Ok(Some(value))
    }

    /// The object whose `{` is at the cursor: `{}` whole, or opened with its first key read.
    fn open_object(&mut self) -> Result<Option<Json>, JsonError> {
        let c = &mut self.c;
        c.at += 1;
        c.skip_ws();
        if c.peek() == Some(b'}') {
            c.at += 1;
            return Ok(Some(Json::Object(Vec::new())));
        }
        if self.stack.len() >= MAX_DEPTH {
            return too_deep(c.at);
        }
        let key = object_key(c)?;
        self.stack.push(Open::Object {
            pairs: Vec::new(),
            index: None,
            key,
            renamed: Renamed::default(),
        });
        Ok(None)
    }

    /// The array whose `[` is at the cursor: `[]` whole, or opened.
    fn open_array(&mut self) -> Result<Option<Json>, JsonError> {
        let c = &mut self.c;
        c.at += 1;
        c.skip_ws();
        if c.peek() == Some(b']') {
            c.at += 1;
            return Ok(Some(Json::Array(Vec::new())));
        }
        if self.stack.len() >= MAX_DEPTH {
            return too_deep(c.at);
        }
        self.stack.push(Open::Array(Vec::new()));
        Ok(None)
    }

    /// Puts the whole value `done` in the innermost open container, and closes every container
    /// that completes: `None` when another value starts at the cursor, `Some` with the whole
    /// document when none is open any more (and nothing follows it).
    fn close(&mut self, mut done: Json) -> Result<Option<Json>, JsonError> {
        loop {
            let c = &mut self.c;
            let Some(top) = self.stack.last_mut() else {
                c.skip_ws();
                if c.at != c.bytes.len() {
                    return err(c.at, "Extra data");
                }
                return Ok(Some(done));
            };
            c.skip_ws();
            match top {
                Open::Array(items) => {
                    items.push(done);
                    match c.peek() {
                        Some(b']') => {}
                        Some(b',') => {
                            c.at += 1;
                            c.skip_ws();
                            return Ok(None);
                        }
                        _ => return err(c.at, "Expecting ',' delimiter"),
                    }
                }
                Open::Object {
                    pairs,
                    index,
                    key,
                    renamed,
                } => {
                    if let Some(old) = insert(pairs, index, std::mem::take(key), done) {
                        match (old.0.as_str(), &old.1) {
                            ("__module__", Json::Str(m)) => renamed.modules.push(m.clone()),
                            ("__class__", Json::Str(c)) => renamed.classes.push(c.clone()),
                            _ => {}
                        }
                        self.shadowed.push(old);
                    }
                    match c.peek() {
                        Some(b'}') => {}
                        Some(b',') => {
                            c.at += 1;
                            c.skip_ws();
                            *key = object_key(c)?;
                            return Ok(None);
                        }
                        _ => return err(c.at, "Expecting ',' delimiter"),
                    }
                }
            }
            c.at += 1;
            done = self.pop()?;
        }
    }

    /// The innermost open container, closed: its value (keeping the names an object's
    /// repeated `__module__` or `__class__` gave it).
    fn pop(&mut self) -> Result<Json, JsonError> {
        match self.stack.pop() {
            Some(Open::Array(items)) => Ok(Json::Array(items)),
            Some(Open::Object {
                pairs, mut renamed, ..
            }) => {
                let value = Json::Object(pairs);
                if !renamed.modules.is_empty() || !renamed.classes.is_empty() {
                    for (list, k) in [
                        (&mut renamed.modules, "__module__"),
                        (&mut renamed.classes, "__class__"),
                    ] {
                        if let Some(Json::Str(last)) = value.get(k) {
                            list.push(last.clone());
                        }
                    }
                    self.renamed.push(renamed);
                }
                Ok(value)
            }
            None => err(self.c.at, "Expecting value"),
        }
    }
}

/// socair's bound on nesting, met at `at`.
fn too_deep<T>(at: usize) -> Result<T, JsonError> {
    bound(at, format!("nested deeper than {MAX_DEPTH} levels: past what socair reads (Python's json raises RecursionError near 1,000)"))
}

/// A key, its colon and the whitespace before the value (`_parse_object_unicode`).
fn object_key(c: &mut Cursor<'_>) -> Result<String, JsonError> {
    if c.peek() != Some(b'"') {
        return err(c.at, "Expecting property name enclosed in double quotes");
    }
    c.at += 1;
    let key = c.string()?;
    c.skip_ws();
    if c.peek() != Some(b':') {
        return err(c.at, "Expecting ':' delimiter");
    }
    c.at += 1;
    c.skip_ws();
    Ok(key)
}
