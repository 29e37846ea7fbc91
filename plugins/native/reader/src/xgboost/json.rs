//! XGBoost's JSON, parsed as XGBoost's own `JsonReader` does (`src/common/json.cc` at
//! v3.2.0: `JsonReader::Parse`, `ParseObject`, `ParseArray`, `ParseString`, `ParseNumber`),
//! bounded: nesting at most [`MAX_DEPTH`], values at most [`max_nodes`].
//!
//! What XGBoost accepts is accepted: `NaN`, `Infinity`, `-Infinity`, a leading `+`, numbers
//! with a fraction or exponent read as 32-bit floats (`from_chars` into `float`), the escapes
//! `\r \n \\ \t \" \u` (`\u` kept as written) and no others, whitespace ` \n\r\t`. A key
//! written twice is kept once, as XGBoost keeps it (`data[key] = value`: the last), and
//! reported. What follows the document is reported by the caller (XGBoost never reads it).

use super::value::{Duplicate, ParseError, Parsed, State, Value, MAX_DEPTH};

struct Parser<'a> {
    s: State<'a>,
}

/// Parses the JSON document at the start of `data`.
pub fn parse(data: &[u8]) -> Result<Parsed, ParseError> {
    let mut p = Parser {
        s: State::new(data),
    };
    let value = p.value(0)?;
    Ok(p.s.finish(value))
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.data.get(self.s.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.s.pos += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), ParseError> {
        match self.peek() {
            Some(got) if got == c => {
                self.s.pos += 1;
                Ok(())
            }
            Some(got) => Err(self.s.err(format!(
                "expected `{}`, found `{}`",
                c as char,
                got.escape_ascii()
            ))),
            None => Err(self
                .s
                .err(format!("expected `{}`, found the end", c as char))),
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), ParseError> {
        if self.s.data.get(self.s.pos..self.s.pos + word.len()) == Some(word.as_bytes()) {
            self.s.pos += word.len();
            Ok(())
        } else {
            Err(self.s.err(format!("expected `{word}`")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.s.err(format!(
                "nested deeper than {MAX_DEPTH} (no XGBoost model nests deeper than 8; XGBoost's recursive parser would overflow its stack)"
            )));
        }
        self.skip_spaces();
        self.s.node()?;
        match self.peek() {
            None => Err(self.s.err("the document ends where a value was expected")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.literal("true").map(|()| Value::Bool(true)),
            Some(b'f') => self.literal("false").map(|()| Value::Bool(false)),
            Some(b'n') => self.literal("null").map(|()| Value::Null),
            Some(c) if c == b'-' || c == b'+' || c.is_ascii_digit() || c == b'N' || c == b'I' => {
                self.number()
            }
            Some(c) => Err(self
                .s
                .err(format!("`{}` begins no value", c.escape_ascii()))),
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.s.pos;
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::at(start, "a string that never ends"));
            };
            self.s.pos += 1;
            match c {
                b'"' => break,
                b'\r' | b'\n' => {
                    return Err(self
                        .s
                        .err("a line break inside a string (XGBoost refuses it)"))
                }
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(ParseError::at(start, "a string that never ends"));
                    };
                    self.s.pos += 1;
                    match e {
                        b'r' => out.push(b'\r'),
                        b'n' => out.push(b'\n'),
                        b'\\' => out.push(b'\\'),
                        b't' => out.push(b'\t'),
                        b'"' => out.push(b'"'),
                        b'u' => out.extend_from_slice(b"\\u"),
                        other => {
                            return Err(self.s.err(format!(
                                "the escape `\\{}`, which XGBoost refuses",
                                other.escape_ascii()
                            )))
                        }
                    }
                }
                other => out.push(other),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.s.pos;
        let d = self.s.data;
        let at = |i: usize| d.get(i).copied().unwrap_or(0);
        if at(self.s.pos) == b'N' {
            self.literal("NaN")?;
            return Ok(Value::Float(f64::NAN));
        }
        let mut p = self.s.pos;
        let negative = at(p) == b'-';
        if matches!(at(p), b'-' | b'+') {
            p += 1;
        }
        if at(p) == b'I' {
            self.s.pos = p;
            self.literal("Infinity")?;
            return Ok(Value::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        let digits = p;
        while at(p).is_ascii_digit() {
            p += 1;
        }
        let mut is_float = false;
        if at(p) == b'.' {
            is_float = true;
            p += 1;
            while at(p).is_ascii_digit() {
                p += 1;
            }
        }
        if matches!(at(p), b'e' | b'E') {
            is_float = true;
            p += 1;
            if matches!(at(p), b'-' | b'+') {
                p += 1;
            }
            if !at(p).is_ascii_digit() {
                self.s.pos = p;
                return Err(self.s.err("expected a digit of the exponent"));
            }
            while at(p).is_ascii_digit() {
                p += 1;
            }
        }
        self.s.pos = p;
        let text = std::str::from_utf8(d.get(start..p).unwrap_or_default()).unwrap_or("");
        if p == digits {
            return Err(ParseError::at(start, "a sign with no digits"));
        }
        if is_float {
            let t = text.strip_prefix('+').unwrap_or(text);
            let f: f32 = t
                .parse()
                .map_err(|_| ParseError::at(start, format!("`{text}` is no number")))?;
            Ok(Value::Float(f64::from(f)))
        } else {
            let t = text.strip_prefix('+').unwrap_or(text);
            let i: i64 = t.parse().map_err(|_| {
                ParseError::at(
                    start,
                    format!("the integer `{text}` is past 64 bits (XGBoost's parser overflows)"),
                )
            })?;
            Ok(Value::Int(i))
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        let offset = self.s.pos as u64;
        self.expect(b'[')?;
        // XGBoost's ParseArray: a `]` right after the `[` is an empty array; otherwise a value.
        if self.peek() == Some(b']') {
            self.s.pos += 1;
            return Ok(Value::Array(Vec::new()));
        }
        let mut nums: Option<(Vec<f64>, bool)> = Some((Vec::new(), true));
        let mut values: Vec<Value> = Vec::new();
        let mut index = 0usize;
        loop {
            self.s.path.push(index.to_string());
            let v = self.value(depth + 1)?;
            self.s.path.pop();
            index += 1;
            let as_num = match v {
                Value::Int(i) if i.unsigned_abs() <= 1 << 53 => Some((i as f64, true)),
                Value::Float(f) => Some((f, false)),
                _ => None,
            };
            match (&mut nums, as_num) {
                (Some((list, all_int)), Some((n, int))) => {
                    list.push(n);
                    *all_int &= int;
                }
                (Some((list, all_int)), None) => {
                    values = list
                        .iter()
                        .map(|&n| {
                            if *all_int {
                                Value::Int(n as i64)
                            } else {
                                Value::Float(n)
                            }
                        })
                        .collect();
                    values.push(v);
                    nums = None;
                }
                (None, _) => {
                    self.s.node()?;
                    values.push(v);
                }
            }
            self.skip_spaces();
            match self.peek() {
                Some(b']') => {
                    self.s.pos += 1;
                    break;
                }
                Some(b',') => self.s.pos += 1,
                _ => return Err(self.s.err("expected `,` or `]` in an array")),
            }
        }
        Ok(match nums {
            Some((values, all_int)) => Value::Nums {
                values,
                all_int,
                offset,
            },
            None => Value::Array(values),
        })
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.expect(b'{')?;
        let mut entries: Vec<(String, Value)> = Vec::new();
        self.skip_spaces();
        if self.peek() == Some(b'}') {
            self.s.pos += 1;
            return Ok(Value::Object(entries));
        }
        let mut seen = std::collections::HashMap::<String, usize>::new();
        loop {
            self.skip_spaces();
            let key_at = self.s.pos;
            let key = self.string()?;
            self.skip_spaces();
            self.expect(b':')?;
            self.s.path.push(key.clone());
            let v = self.value(depth + 1)?;
            let path = self.s.path.join(".");
            self.s.path.pop();
            // XGBoost: `data[get<String>(key)] = std::move(value)` — the last occurrence wins.
            match seen.get(&key) {
                Some(&i) => {
                    self.s.duplicates.push(Duplicate {
                        path,
                        offset: key_at as u64,
                    });
                    if let Some(slot) = entries.get_mut(i) {
                        slot.1 = v;
                    }
                }
                None => {
                    seen.insert(key.clone(), entries.len());
                    entries.push((key, v));
                }
            }
            self.skip_spaces();
            match self.peek() {
                Some(b'}') => {
                    self.s.pos += 1;
                    break;
                }
                Some(b',') => self.s.pos += 1,
                _ => return Err(self.s.err("expected `,` or `}` in an object")),
            }
        }
        Ok(Value::Object(entries))
    }
}
