//! The strict safetensors reader: a pure function from the file's first bytes and its length
//! to a validated list of tensors, or the one reason the file is refused.
//!
//! Stricter than the safetensors crate on purpose: a file that two readers could read
//! differently (duplicate keys, leading whitespace, stray fields, bytes no tensor owns) is
//! refused rather than read one way.

use crate::dtype::Dtype;
use crate::json::{Json, DUPLICATE_KEY};

/// Largest header accepted, as the reference reader's `MAX_HEADER_SIZE`.
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// Bytes before the header: its length, a u64 little-endian.
pub const LEN_PREFIX: u64 = 8;

/// The key of the file-level metadata map.
pub const METADATA_KEY: &str = "__metadata__";

/// Why a file is not a sound safetensors file. Each variant names the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SafetensorsError {
    /// Fewer than the 8 bytes of the header length.
    #[error("file is {file_len} bytes long, shorter than the 8-byte header length")]
    TooShort {
        /// The file's length.
        file_len: u64,
    },
    /// The header length is over [`MAX_HEADER_LEN`].
    #[error("header length {header_len} (bytes 0..8) is over the limit of {MAX_HEADER_LEN} bytes")]
    HeaderTooLarge {
        /// The declared header length.
        header_len: u64,
    },
    /// The header runs past the end of the file.
    #[error(
        "header length {header_len} (bytes 0..8) runs past the end of the {file_len}-byte file"
    )]
    HeaderPastEnd {
        /// The declared header length.
        header_len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// The header is empty or does not start with `{`.
    #[error("header must start with '{{' at byte 8, found {found}")]
    NotAnObject {
        /// What was found there.
        found: String,
    },
    /// The header is not UTF-8.
    #[error("header is not UTF-8: invalid byte at file offset {offset}")]
    NotUtf8 {
        /// File offset of the first invalid byte.
        offset: u64,
    },
    /// The header is not valid JSON.
    #[error("header is not valid JSON near file offset {offset}: {message}")]
    InvalidJson {
        /// File offset near the error.
        offset: u64,
        /// serde_json's description.
        message: String,
    },
    /// A key appears twice in one object.
    #[error(
        "header has a {message} near file offset {offset}; readers disagree on which one counts"
    )]
    DuplicateKey {
        /// File offset near the second occurrence.
        offset: u64,
        /// Which key.
        message: String,
    },
    /// Something other than spaces follows the JSON object.
    #[error("header padding byte at file offset {offset} is {byte:#04x}; only spaces (0x20) may follow the JSON object")]
    BadPadding {
        /// File offset of the byte.
        offset: u64,
        /// The byte.
        byte: u8,
    },
    /// `__metadata__` is not a string-to-string map.
    #[error("`__metadata__` must map strings to strings: {detail}")]
    BadMetadata {
        /// What is wrong.
        detail: String,
    },
    /// A tensor entry is malformed.
    #[error("tensor {name:?}: {detail}")]
    BadEntry {
        /// The tensor's name.
        name: String,
        /// What is wrong.
        detail: String,
    },
    /// Two tensors overlap, or the data has a hole.
    #[error("tensor {name:?}: data_offsets [{begin}, {end}] {detail}")]
    Layout {
        /// The tensor's name.
        name: String,
        /// Its first data offset.
        begin: u64,
        /// Its end data offset.
        end: u64,
        /// What is wrong.
        detail: String,
    },
    /// The data section is longer or shorter than the tensors cover.
    #[error("data section is {data_len} bytes but the tensors cover {covered}: {detail}")]
    Coverage {
        /// Bytes after the header.
        data_len: u64,
        /// Bytes the tensors account for.
        covered: u64,
        /// What that means.
        detail: &'static str,
    },
}

impl SafetensorsError {
    /// Where in the file the problem is, for a report finding.
    pub fn place(&self) -> String {
        match self {
            SafetensorsError::TooShort { .. }
            | SafetensorsError::HeaderTooLarge { .. }
            | SafetensorsError::HeaderPastEnd { .. } => "bytes 0..8 (header length)".into(),
            SafetensorsError::NotAnObject { .. } => "byte 8 (header start)".into(),
            SafetensorsError::NotUtf8 { offset }
            | SafetensorsError::InvalidJson { offset, .. }
            | SafetensorsError::DuplicateKey { offset, .. }
            | SafetensorsError::BadPadding { offset, .. } => format!("byte {offset} (header)"),
            SafetensorsError::BadMetadata { .. } => format!("header key {METADATA_KEY:?}"),
            SafetensorsError::BadEntry { name, .. } | SafetensorsError::Layout { name, .. } => {
                format!("header key {name:?}")
            }
            SafetensorsError::Coverage { .. } => "data section".into(),
        }
    }
}

/// One validated tensor entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorEntry {
    /// Its name.
    pub name: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Start of its bytes, relative to the data section.
    pub begin: u64,
    /// End (exclusive) of its bytes, relative to the data section.
    pub end: u64,
}

/// A validated header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The header's length in bytes (the value of bytes 0..8).
    pub header_len: u64,
    /// `__metadata__`, in file order, if present.
    pub metadata: Option<Vec<(String, String)>>,
    /// The tensors, in the order the header lists them.
    pub tensors: Vec<TensorEntry>,
}

impl Header {
    /// File offset where the data section starts.
    pub fn data_start(&self) -> u64 {
        LEN_PREFIX + self.header_len
    }
}

/// Reads the header length from the first 8 bytes and checks it against the limit and the file
/// length; returns it. `prefix` may be longer than 8 bytes.
pub fn header_len(prefix: &[u8], file_len: u64) -> Result<u64, SafetensorsError> {
    let Some(len_bytes) = prefix.get(..8) else {
        return Err(SafetensorsError::TooShort { file_len });
    };
    if file_len < LEN_PREFIX {
        return Err(SafetensorsError::TooShort { file_len });
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(len_bytes);
    let header_len = u64::from_le_bytes(raw);
    if header_len > MAX_HEADER_LEN {
        return Err(SafetensorsError::HeaderTooLarge { header_len });
    }
    // header_len <= 1e8, so the sum cannot overflow.
    if LEN_PREFIX + header_len > file_len {
        return Err(SafetensorsError::HeaderPastEnd {
            header_len,
            file_len,
        });
    }
    Ok(header_len)
}

/// Parses and validates a safetensors header.
///
/// `prefix` holds at least the file's first `8 + header length` bytes (more is ignored) and
/// `file_len` is the whole file's length; the data section itself is never needed.
pub fn parse_header(prefix: &[u8], file_len: u64) -> Result<Header, SafetensorsError> {
    let header_len = header_len(prefix, file_len)?;
    let end = usize::try_from(LEN_PREFIX + header_len)
        .map_err(|_| SafetensorsError::HeaderTooLarge { header_len })?;
    let Some(bytes) = prefix.get(8..end) else {
        return Err(SafetensorsError::HeaderPastEnd {
            header_len,
            file_len: prefix.len() as u64,
        });
    };
    match bytes.first() {
        Some(b'{') => {}
        Some(&b) => {
            return Err(SafetensorsError::NotAnObject {
                found: format!("byte {b:#04x}"),
            })
        }
        None => {
            return Err(SafetensorsError::NotAnObject {
                found: "an empty header".into(),
            })
        }
    }
    let text = std::str::from_utf8(bytes).map_err(|e| SafetensorsError::NotUtf8 {
        offset: LEN_PREFIX + e.valid_up_to() as u64,
    })?;
    let (root, json_end) = parse_json_prefix(text)?;
    if let Some(pos) = bytes[json_end..].iter().position(|&b| b != b' ') {
        let at = json_end + pos;
        return Err(SafetensorsError::BadPadding {
            offset: LEN_PREFIX + at as u64,
            byte: bytes[at],
        });
    }
    let Json::Object(entries) = root else {
        unreachable!("text starts with '{{', so a successful parse is an object")
    };
    let mut metadata = None;
    let mut tensors = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        if key == METADATA_KEY {
            metadata = Some(parse_metadata(value)?);
        } else {
            tensors.push(parse_entry(key, value)?);
        }
    }
    check_layout(&tensors, file_len - LEN_PREFIX - header_len)?;
    Ok(Header {
        header_len,
        metadata,
        tensors,
    })
}

/// Parses one JSON value from the start of `text`; returns it and the byte offset just past it.
fn parse_json_prefix(text: &str) -> Result<(Json, usize), SafetensorsError> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Json>();
    match stream.next() {
        Some(Ok(value)) => Ok((value, stream.byte_offset())),
        Some(Err(e)) => {
            let offset = LEN_PREFIX + line_col_to_offset(text, e.line(), e.column()) as u64;
            let message = e.to_string();
            if let Some(rest) = message.strip_prefix(DUPLICATE_KEY) {
                let key = rest.split(" at line ").next().unwrap_or(rest);
                Err(SafetensorsError::DuplicateKey {
                    offset,
                    message: format!("duplicate key {key}"),
                })
            } else {
                Err(SafetensorsError::InvalidJson { offset, message })
            }
        }
        None => Err(SafetensorsError::InvalidJson {
            offset: LEN_PREFIX,
            message: "no JSON value".into(),
        }),
    }
}

/// serde_json reports errors by line and column (1-based); turn that into a byte offset.
fn line_col_to_offset(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return (offset + column.saturating_sub(1)).min(text.len());
        }
        offset += l.len();
    }
    text.len()
}

fn parse_metadata(value: Json) -> Result<Vec<(String, String)>, SafetensorsError> {
    let Json::Object(entries) = value else {
        return Err(SafetensorsError::BadMetadata {
            detail: format!("it is {}, not an object", value.kind()),
        });
    };
    entries
        .into_iter()
        .map(|(k, v)| match v {
            Json::String(s) => Ok((k, s)),
            other => Err(SafetensorsError::BadMetadata {
                detail: format!("the value of {k:?} is {}, not a string", other.kind()),
            }),
        })
        .collect()
}

fn parse_entry(name: String, value: Json) -> Result<TensorEntry, SafetensorsError> {
    let bad = |detail: String| SafetensorsError::BadEntry {
        name: name.clone(),
        detail,
    };
    let Json::Object(fields) = value else {
        return Err(bad(format!("entry is {}, not an object", value.kind())));
    };
    let (mut dtype, mut shape, mut offsets) = (None, None, None);
    for (field, v) in fields {
        match field.as_str() {
            "dtype" => dtype = Some(v),
            "shape" => shape = Some(v),
            "data_offsets" => offsets = Some(v),
            _ => return Err(bad(format!("unknown field {field:?}"))),
        }
    }
    let dtype = match dtype {
        Some(Json::String(s)) => {
            Dtype::from_name(&s).ok_or_else(|| bad(format!("unknown dtype {s:?}")))?
        }
        Some(other) => return Err(bad(format!("dtype is {}, not a string", other.kind()))),
        None => return Err(bad("missing field \"dtype\"".into())),
    };
    let shape = match shape {
        Some(v) => unsigned_array(v).map_err(|why| bad(format!("shape {why}")))?,
        None => return Err(bad("missing field \"shape\"".into())),
    };
    let offsets = match offsets {
        Some(v) => unsigned_array(v).map_err(|why| bad(format!("data_offsets {why}")))?,
        None => return Err(bad("missing field \"data_offsets\"".into())),
    };
    let [begin, end] = offsets[..] else {
        return Err(bad(format!(
            "data_offsets has {} numbers, not 2",
            offsets.len()
        )));
    };
    if end < begin {
        return Err(bad(format!(
            "data_offsets [{begin}, {end}] end before they begin"
        )));
    }
    let elements = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad(format!("shape {shape:?} has more elements than 2^64")))?;
    let expected = match elements.checked_mul(dtype.bits()) {
        None => {
            return Err(bad(format!(
                "shape {shape:?} of {} takes more than 2^64 bits",
                dtype.name()
            )))
        }
        Some(bits) if bits % 8 != 0 => {
            return Err(bad(format!(
                "shape {shape:?} of {} is not a whole number of bytes",
                dtype.name()
            )))
        }
        Some(bits) => bits / 8,
    };
    if end - begin != expected {
        return Err(bad(format!(
            "data_offsets [{begin}, {end}] span {} bytes but {} {shape:?} takes {expected}",
            end - begin,
            dtype.name()
        )));
    }
    Ok(TensorEntry {
        name,
        dtype,
        shape,
        begin,
        end,
    })
}

fn unsigned_array(value: Json) -> Result<Vec<u64>, String> {
    let Json::Array(items) = value else {
        return Err(format!("is {}, not an array", value.kind()));
    };
    items
        .into_iter()
        .map(|item| match item {
            Json::Unsigned(n) => Ok(n),
            other => Err(format!(
                "holds {}, not a non-negative integer below 2^64",
                match other {
                    Json::Negative(n) => format!("the negative number {n}"),
                    Json::Float(f) => format!("the number {f:?}"),
                    o => o.kind().to_owned(),
                }
            )),
        })
        .collect()
}

/// The data section must be owned exactly: tensors in offset order start at 0, each begins
/// where the previous ended, and the last ends at the end of the file.
fn check_layout(tensors: &[TensorEntry], data_len: u64) -> Result<(), SafetensorsError> {
    let mut order: Vec<&TensorEntry> = tensors.iter().collect();
    order.sort_by(|a, b| (a.begin, a.end, &a.name).cmp(&(b.begin, b.end, &b.name)));
    let mut covered = 0u64;
    let mut previous: Option<&TensorEntry> = None;
    for t in order {
        if t.begin != covered {
            let detail = match (t.begin > covered, previous) {
                (true, None) => format!("leave bytes [0, {}) owned by no tensor", t.begin),
                (true, Some(p)) => format!(
                    "leave a hole of {} bytes after {:?}, which ends at {covered}",
                    t.begin - covered,
                    p.name
                ),
                (false, Some(p)) => {
                    format!("overlap {:?}, which spans [{}, {}]", p.name, p.begin, p.end)
                }
                (false, None) => unreachable!("begin < 0 is impossible"),
            };
            return Err(SafetensorsError::Layout {
                name: t.name.clone(),
                begin: t.begin,
                end: t.end,
                detail,
            });
        }
        covered = t.end;
        previous = Some(t);
    }
    if covered != data_len {
        let detail = if covered < data_len {
            "bytes after the last tensor belong to no tensor (a polyglot file can hide there)"
        } else {
            "the file is truncated"
        };
        return Err(SafetensorsError::Coverage {
            data_len,
            covered,
            detail,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file from a header text and a data section length.
    fn file(header: &str, data_len: usize) -> Vec<u8> {
        let mut f = (header.len() as u64).to_le_bytes().to_vec();
        f.extend_from_slice(header.as_bytes());
        f.resize(f.len() + data_len, 0);
        f
    }

    fn parse(f: &[u8]) -> Result<Header, SafetensorsError> {
        parse_header(f, f.len() as u64)
    }

    #[test]
    fn accepts_reference_cases() {
        // Scalar, zero-sized and several zero-sized at one offset are all valid.
        let h = parse(&file(
            r#"{"s":{"dtype":"I32","shape":[],"data_offsets":[0,4]},"z":{"dtype":"F32","shape":[2,0],"data_offsets":[4,4]},"y":{"dtype":"F16","shape":[0],"data_offsets":[4,4]}}  "#,
            4,
        ))
        .unwrap();
        assert_eq!(h.tensors.len(), 3);
        assert_eq!(h.tensors[0].shape, Vec::<u64>::new());
        // A header length that is not a multiple of 8 is valid (data unaligned).
        let text = r#"{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}"#;
        assert_ne!(text.len() % 8, 0);
        assert_eq!(parse(&file(text, 3)).unwrap().header_len, text.len() as u64);
        // Metadata keeps its order.
        let h = parse(&file(r#"{"__metadata__":{"z":"1","a":"2"}}"#, 0)).unwrap();
        assert_eq!(
            h.metadata.unwrap(),
            vec![("z".into(), "1".into()), ("a".into(), "2".into())]
        );
    }

    #[test]
    fn refuses_bad_lengths() {
        assert_eq!(
            parse(b"\x01\0\0"),
            Err(SafetensorsError::TooShort { file_len: 3 })
        );
        assert!(matches!(
            parse(b"<\0\0\0\0\xff\xff\xff"),
            Err(SafetensorsError::HeaderTooLarge { .. })
        ));
        assert!(matches!(
            parse(b"\x10\0\0\0\0\0\0\0{}"),
            Err(SafetensorsError::HeaderPastEnd { .. })
        ));
    }

    #[test]
    fn refuses_what_readers_could_read_differently() {
        let cases: &[(&str, usize, &str)] = &[
            (" {}", 0, "must start with '{'"),
            ("\n{}", 0, "must start with '{'"),
            ("{}\t", 0, "padding byte at file offset 10 is 0x09"),
            ("{}\n  ", 0, "padding byte"),
            ("{\"a\":", 0, "not valid JSON"),
            ("[]", 0, "must start with '{'"),
            (r#"{"__metadata__":{"k":1}}"#, 0, "not a string"),
            (
                r#"{"__metadata__":{"k":"1","k":"2"}}"#,
                0,
                "duplicate key \"k\"",
            ),
            (r#"{"__metadata__":"x"}"#, 0, "not an object"),
            (
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
                2,
                "duplicate key \"a\"",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":1}}"#,
                1,
                "unknown field \"extra\"",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1]}}"#,
                1,
                "missing field \"data_offsets\"",
            ),
            (
                r#"{"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}"#,
                4,
                "unknown dtype \"f32\"",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}"#,
                1,
                "has 3 numbers",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}"#,
                1,
                "negative number -1",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}"#,
                1,
                "the number 1.0",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}}"#,
                1,
                "end before they begin",
            ),
            (
                r#"{"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0,4]}}"#,
                4,
                "span 4 bytes but I32 [2, 2] takes 16",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[2,18446744073709551614],"data_offsets":[0,4]}}"#,
                4,
                "more elements than 2^64",
            ),
            (
                r#"{"a":{"dtype":"I64","shape":[9223372036854775807],"data_offsets":[0,4]}}"#,
                4,
                "more than 2^64 bits",
            ),
            (
                r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#,
                2,
                "not a whole number of bytes",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
                2,
                "leave bytes [0, 1) owned by no tensor",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}"#,
                3,
                "hole of 1 bytes after \"a\"",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
                2,
                "overlap \"a\"",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
                5,
                "polyglot",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#,
                2,
                "truncated",
            ),
        ];
        for (header, data_len, expected) in cases {
            let err = parse(&file(header, *data_len)).expect_err(header);
            assert!(
                err.to_string().contains(expected),
                "{header}: expected {expected:?} in {err}"
            );
        }
    }

    #[test]
    fn refuses_non_utf8_with_offset() {
        let mut f = file("{\"a\":\"xy\"}", 0);
        f[14] = 0xff;
        assert_eq!(parse(&f), Err(SafetensorsError::NotUtf8 { offset: 14 }));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!(
            "{{\"__metadata__\":{}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(matches!(
            parse(&file(&deep, 0)),
            Err(SafetensorsError::InvalidJson { .. })
        ));
    }
}
