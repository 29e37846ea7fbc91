//! XGBoost's UBJSON, parsed as XGBoost's own `UBJReader` does (`src/common/json.cc` and
//! `include/xgboost/json_io.h` at v3.2.0: `UBJReader::Parse`, `ParseObject`, `ParseArray`,
//! `DecodeStr`), bounded: every length and count is checked against the bytes left before
//! anything is reserved (XGBoost checks none of them and reads past its buffer), nesting at
//! most [`MAX_DEPTH`].
//!
//! The grammar XGBoost reads: `{` then entries until `}`, each key `L` + a big-endian int64
//! length + its bytes (no `S`); `[` then either a typed array `$<type>#L<int64 count>` of
//! `d D i U I l L` elements (big-endian, no closing `]`), or `#L<count>` values, or values
//! until `]`; scalars `Z T F d D i U I l L C` and strings `S` + `L` + length. `H` (high
//! precision) and every other marker are refused, as XGBoost refuses them. A key written twice
//! is kept once, as XGBoost keeps it (`results.emplace(str, ...)`: the first), and reported.

use super::value::{typed_element, Duplicate, ParseError, Parsed, State, Value, MAX_DEPTH};

struct Parser<'a> {
    s: State<'a>,
}

/// Parses the UBJSON document at the start of `data`.
pub fn parse(data: &[u8]) -> Result<Parsed, ParseError> {
    let mut p = Parser {
        s: State::new(data),
    };
    let value = p.value(0)?;
    Ok(p.s.finish(value))
}

impl Parser<'_> {
    fn left(&self) -> usize {
        self.s.data.len().saturating_sub(self.s.pos)
    }

    fn take(&mut self, n: usize) -> Result<&[u8], ParseError> {
        if n > self.left() {
            return Err(self.s.err(format!(
                "{n} bytes declared, {} left in the file",
                self.left()
            )));
        }
        let s = self
            .s
            .data
            .get(self.s.pos..self.s.pos + n)
            .unwrap_or_default();
        self.s.pos += n;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, ParseError> {
        let b = self
            .s
            .data
            .get(self.s.pos)
            .copied()
            .ok_or_else(|| self.s.err("the document ends early"))?;
        self.s.pos += 1;
        Ok(b)
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], ParseError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn expect(&mut self, c: u8) -> Result<(), ParseError> {
        let at = self.s.pos;
        let got = self.byte()?;
        if got == c {
            Ok(())
        } else {
            Err(ParseError::at(
                at,
                format!("expected `{}`, found `{}`", c as char, got.escape_ascii()),
            ))
        }
    }

    /// `L` + a big-endian int64 that is a length or count: never negative.
    fn length(&mut self) -> Result<usize, ParseError> {
        self.expect(b'L')?;
        let at = self.s.pos;
        let n = i64::from_be_bytes(self.be::<8>()?);
        usize::try_from(n).map_err(|_| ParseError::at(at, format!("the length {n} is negative")))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let n = self.length()?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.s.err(format!(
                "nested deeper than {MAX_DEPTH} (no XGBoost model nests deeper than 8; XGBoost's recursive parser would overflow its stack)"
            )));
        }
        self.s.node()?;
        let at = self.s.pos;
        Ok(match self.byte()? {
            b'{' => self.object(depth)?,
            b'[' => self.array(depth)?,
            b'Z' => Value::Null,
            b'T' => Value::Bool(true),
            b'F' => Value::Bool(false),
            b'd' => Value::Float(f64::from(f32::from_be_bytes(self.be::<4>()?))),
            b'D' => Value::Float(f64::from_be_bytes(self.be::<8>()?)),
            b'S' => Value::Str(self.string()?),
            b'i' => Value::Int(i64::from(i8::from_be_bytes(self.be::<1>()?))),
            b'U' => Value::Int(i64::from(self.byte()?)),
            b'I' => Value::Int(i64::from(i16::from_be_bytes(self.be::<2>()?))),
            b'l' => Value::Int(i64::from(i32::from_be_bytes(self.be::<4>()?))),
            b'L' => Value::Int(i64::from_be_bytes(self.be::<8>()?)),
            // XGBoost reads `C` as a `char`: signed on the platforms it is built for.
            b'C' => Value::Int(i64::from(i8::from_be_bytes(self.be::<1>()?))),
            b'H' => {
                return Err(ParseError::at(
                    at,
                    "a high-precision number (`H`), which XGBoost refuses",
                ))
            }
            other => {
                return Err(ParseError::at(
                    at,
                    format!("`{}` begins no value XGBoost reads", other.escape_ascii()),
                ))
            }
        })
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.s.data.get(self.s.pos) {
            Some(b'$') => {
                self.s.pos += 1;
                let at = self.s.pos;
                let marker = self.byte()?;
                let Some((_, width, _)) = typed_element(marker) else {
                    return Err(ParseError::at(
                        at,
                        format!(
                            "a typed array of `{}`, which XGBoost does not read",
                            marker.escape_ascii()
                        ),
                    ));
                };
                self.expect(b'#')?;
                let count_at = self.s.pos + 1;
                let count = self.length()?;
                let len = (count as u64).saturating_mul(width);
                if len > self.left() as u64 {
                    return Err(ParseError::at(
                        count_at,
                        format!(
                            "a typed array of {count} elements ({len} bytes) where {} bytes are left",
                            self.left()
                        ),
                    ));
                }
                let offset = self.s.pos as u64;
                self.s.pos += len as usize;
                Ok(Value::Typed {
                    marker,
                    offset,
                    count: count as u64,
                })
            }
            Some(b'#') => {
                self.s.pos += 1;
                let count_at = self.s.pos + 1;
                let count = self.length()?;
                if count > self.left() {
                    return Err(ParseError::at(
                        count_at,
                        format!(
                            "an array of {count} values where {} bytes are left",
                            self.left()
                        ),
                    ));
                }
                let mut values = Vec::with_capacity(count.min(4096));
                for i in 0..count {
                    self.s.path.push(i.to_string());
                    values.push(self.value(depth + 1)?);
                    self.s.path.pop();
                }
                Ok(Value::Array(values))
            }
            _ => {
                let mut values = Vec::new();
                while self.s.data.get(self.s.pos) != Some(&b']') {
                    if self.left() == 0 {
                        return Err(self.s.err("an array that never ends"));
                    }
                    self.s.path.push(values.len().to_string());
                    values.push(self.value(depth + 1)?);
                    self.s.path.pop();
                }
                self.s.pos += 1;
                Ok(Value::Array(values))
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        let mut seen = std::collections::HashSet::<String>::new();
        loop {
            match self.s.data.get(self.s.pos) {
                Some(b'}') => {
                    self.s.pos += 1;
                    break;
                }
                None => return Err(self.s.err("an object that never ends")),
                Some(_) => {}
            }
            let key_at = self.s.pos;
            let key = self.string()?;
            self.s.path.push(key.clone());
            let v = self.value(depth + 1)?;
            let path = self.s.path.join(".");
            self.s.path.pop();
            // XGBoost: `results.emplace(str, ...)` keeps the first occurrence.
            if seen.contains(&key) {
                self.s.duplicates.push(Duplicate {
                    path,
                    offset: key_at as u64,
                });
            } else {
                seen.insert(key.clone());
                entries.push((key, v));
            }
        }
        Ok(Value::Object(entries))
    }
}
