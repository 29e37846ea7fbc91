//! The strict safetensors reader: a pure function from the file's first bytes and its length
//! to a validated list of tensors, or the one reason the file is refused.
//!
//! Stricter than the safetensors crate on purpose: a file that two readers could read
//! differently (duplicate keys, leading whitespace, stray fields, bytes no tensor owns) is
//! refused rather than read one way.

use crate::dtype::Dtype;
use crate::json::DUPLICATE_KEY;
use serde::de;

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
    /// `__metadata__`, in file order, if present: its first [`MAX_METADATA_LISTED`] entries.
    pub metadata: Option<Vec<(String, String)>>,
    /// How many entries `__metadata__` has.
    pub metadata_total: u64,
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
    let (parsed, json_end) = parse_json_prefix(text)?;
    if let Some(pos) = bytes[json_end..].iter().position(|&b| b != b' ') {
        let at = json_end + pos;
        return Err(SafetensorsError::BadPadding {
            offset: LEN_PREFIX + at as u64,
            byte: bytes[at],
        });
    }
    check_layout(&parsed.tensors, file_len - LEN_PREFIX - header_len)?;
    Ok(Header {
        header_len,
        metadata: parsed.metadata,
        metadata_total: parsed.metadata_total,
        tensors: parsed.tensors,
    })
}

/// Most dimensions a tensor may have: numpy's `NPY_MAXDIMS` (64 since numpy 2.0). The
/// safetensors crate reads any rank; numpy, and so the safetensors numpy and torch loaders
/// that go through it, refuse a file with more: readers disagree on such a file.
pub const MAX_RANK: usize = 64;

/// `__metadata__` entries kept in [`Header::metadata`]; the rest are checked and counted.
/// A real file has a handful.
pub const MAX_METADATA_LISTED: usize = 65_536;

/// What the streaming parse of the header object found.
struct Parsed {
    metadata: Option<Vec<(String, String)>>,
    metadata_total: u64,
    tensors: Vec<TensorEntry>,
}

/// Where a visitor leaves the refusal it stopped on, so that the caller returns it rather
/// than serde's message (which only carries a position).
type Slot = std::cell::RefCell<Option<SafetensorsError>>;

/// The message of a serde error that stands for the refusal in the [`Slot`].
const IN_SLOT: &str = "socair: refusal in slot";

fn refuse<E: de::Error>(slot: &Slot, e: SafetensorsError) -> E {
    *slot.borrow_mut() = Some(e);
    E::custom(IN_SLOT)
}

/// Names seen in one JSON object, for refusing a name given twice. Each name is kept as two
/// independently keyed 64-bit hashes (SipHash with random keys, so a file cannot be built to
/// collide them): about 30 bytes a name instead of a copy of it.
struct NameSet {
    a: std::collections::hash_map::RandomState,
    b: std::collections::hash_map::RandomState,
    seen: std::collections::HashSet<(u64, u64)>,
}

impl NameSet {
    fn new() -> Self {
        NameSet {
            a: Default::default(),
            b: Default::default(),
            seen: Default::default(),
        }
    }
    /// False when `name` was seen before.
    fn insert(&mut self, name: &str) -> bool {
        use std::hash::BuildHasher;
        self.seen
            .insert((self.a.hash_one(name), self.b.hash_one(name)))
    }
}

/// Parses the header object from the start of `text`, streaming: every entry is checked as
/// it is read and only what the header says is kept (no tree of JSON values, which would cost
/// dozens of bytes for each byte of `[0,0,0…]`). Returns it and the byte offset just past it.
fn parse_json_prefix(text: &str) -> Result<(Parsed, usize), SafetensorsError> {
    let slot = Slot::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let result = de::Deserializer::deserialize_map(&mut de, HeaderVisitor { slot: &slot })
        .and_then(|parsed| de.end().map(|()| parsed));
    match result {
        // The text starts with '{' and only JSON whitespace follows the object (`end`): the
        // object ends after the last byte that is not whitespace.
        Ok(parsed) => {
            let end = text.trim_end_matches([' ', '\t', '\n', '\r']).len();
            Ok((parsed, end))
        }
        Err(e) => {
            if let Some(refusal) = slot.into_inner() {
                return Err(refusal);
            }
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

fn duplicate<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("{DUPLICATE_KEY}{key:?}"))
}

/// The `visit_*` methods of a visitor for the kinds of JSON value it refuses, each calling
/// `$f(self, kind)` with the kind's name for the message.
macro_rules! wrong_kind {
    ($f:expr, bool) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            $f(self, "a boolean")
        }
    };
    ($f:expr, unit) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            $f(self, "null")
        }
    };
    ($f:expr, numbers) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            $f(self, "a number")
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            $f(self, "a number")
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            $f(self, "a number")
        }
    };
    ($f:expr, str) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            $f(self, "a string")
        }
    };
    ($f:expr, seq) => {
        fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            $f(self, "an array")
        }
    };
    ($f:expr, map) => {
        fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            $f(self, "an object")
        }
    };
    ($f:expr, $($kind:ident),+) => {
        $(wrong_kind!($f, $kind);)+
    };
}

struct HeaderVisitor<'s> {
    slot: &'s Slot,
}

impl<'de> de::Visitor<'de> for HeaderVisitor<'_> {
    type Value = Parsed;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the header object")
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut names = NameSet::new();
        let mut parsed = Parsed {
            metadata: None,
            metadata_total: 0,
            tensors: Vec::new(),
        };
        while let Some(key) = map.next_key::<String>()? {
            if !names.insert(&key) {
                return Err(duplicate(&key));
            }
            if key == METADATA_KEY {
                let (kept, total) = map.next_value_seed(MetadataSeed { slot: self.slot })?;
                parsed.metadata = Some(kept);
                parsed.metadata_total = total;
            } else {
                let entry = map.next_value_seed(EntrySeed {
                    slot: self.slot,
                    name: key,
                })?;
                parsed.tensors.push(entry);
            }
        }
        Ok(parsed)
    }
}

/// The `__metadata__` entries kept, and how many there were.
type MetadataRead = (Vec<(String, String)>, u64);

/// `__metadata__`: an object of strings, the first [`MAX_METADATA_LISTED`] kept in file
/// order, every one checked; returns them and how many there were.
struct MetadataSeed<'s> {
    slot: &'s Slot,
}

impl<'de> de::DeserializeSeed<'de> for MetadataSeed<'_> {
    type Value = MetadataRead;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for MetadataSeed<'_> {
    type Value = MetadataRead;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object of strings")
    }
    wrong_kind!(
        |v: Self, kind: &str| Err(refuse(
            v.slot,
            SafetensorsError::BadMetadata {
                detail: format!("it is {kind}, not an object"),
            }
        )),
        bool,
        unit,
        numbers,
        str,
        seq
    );
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.entries(map)
    }
}

impl MetadataSeed<'_> {
    fn entries<'de, A: de::MapAccess<'de>>(self, mut map: A) -> Result<MetadataRead, A::Error> {
        let mut names = NameSet::new();
        let mut kept = Vec::new();
        let mut total = 0u64;
        while let Some(key) = map.next_key::<String>()? {
            if !names.insert(&key) {
                return Err(duplicate(&key));
            }
            let value = map.next_value_seed(MetadataValueSeed {
                slot: self.slot,
                key: &key,
            })?;
            total += 1;
            if kept.len() < MAX_METADATA_LISTED {
                kept.push((key, value));
            }
        }
        Ok((kept, total))
    }
}

struct MetadataValueSeed<'s, 'k> {
    slot: &'s Slot,
    key: &'k str,
}

impl<'de> de::DeserializeSeed<'de> for MetadataValueSeed<'_, '_> {
    type Value = String;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for MetadataValueSeed<'_, '_> {
    type Value = String;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }
    wrong_kind!(
        |v: Self, kind: &str| Err(refuse(
            v.slot,
            SafetensorsError::BadMetadata {
                detail: format!("the value of {:?} is {kind}, not a string", v.key),
            },
        )),
        bool,
        unit,
        numbers,
        seq,
        map
    );
    fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
        Ok(s.to_owned())
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<String, E> {
        Ok(s)
    }
}

/// One tensor entry, checked as it is read: an unknown field is refused before its value is
/// parsed, a shape stops at [`MAX_RANK`] dimensions and `data_offsets` at 3 numbers.
struct EntrySeed<'s> {
    slot: &'s Slot,
    name: String,
}

impl<'de> de::DeserializeSeed<'de> for EntrySeed<'_> {
    type Value = TensorEntry;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<TensorEntry, D::Error> {
        d.deserialize_any(self)
    }
}

impl EntrySeed<'_> {
    fn bad<E: de::Error>(&self, detail: String) -> E {
        refuse(
            self.slot,
            SafetensorsError::BadEntry {
                name: self.name.clone(),
                detail,
            },
        )
    }
}

impl<'de> de::Visitor<'de> for EntrySeed<'_> {
    type Value = TensorEntry;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tensor entry")
    }
    wrong_kind!(
        |v: Self, kind: &str| Err(v.bad(format!("entry is {kind}, not an object"))),
        bool,
        unit,
        numbers,
        str,
        seq
    );
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<TensorEntry, A::Error> {
        self.fields(map)
    }
}

impl EntrySeed<'_> {
    fn fields<'de, A: de::MapAccess<'de>>(self, mut map: A) -> Result<TensorEntry, A::Error> {
        let (mut dtype, mut shape, mut offsets) = (None, None, None);
        while let Some(field) = map.next_key::<String>()? {
            let (seen, max, what) = match field.as_str() {
                "dtype" => {
                    if dtype.is_some() {
                        return Err(duplicate(&field));
                    }
                    dtype = Some(map.next_value_seed(DtypeSeed { entry: &self })?);
                    continue;
                }
                "shape" => (&mut shape, MAX_RANK, "shape"),
                "data_offsets" => (&mut offsets, 3, "data_offsets"),
                _ => return Err(self.bad(format!("unknown field {field:?}"))),
            };
            if seen.is_some() {
                return Err(duplicate(&field));
            }
            *seen = Some(map.next_value_seed(NumbersSeed {
                entry: &self,
                what,
                max,
            })?);
        }
        let bad = |detail: String| SafetensorsError::BadEntry {
            name: self.name.clone(),
            detail,
        };
        let finish = || -> Result<TensorEntry, SafetensorsError> {
            let dtype = dtype.ok_or_else(|| bad("missing field \"dtype\"".into()))?;
            let shape: Vec<u64> = shape
                .ok_or_else(|| bad("missing field \"shape\"".into()))?
                .0;
            let (offsets, count) =
                offsets.ok_or_else(|| bad("missing field \"data_offsets\"".into()))?;
            let [begin, end] = offsets[..] else {
                return Err(bad(format!("data_offsets has {count} numbers, not 2")));
            };
            finish_entry(self.name.clone(), dtype, shape, begin, end)
        };
        finish().map_err(|e| refuse(self.slot, e))
    }
}

struct DtypeSeed<'e, 's> {
    entry: &'e EntrySeed<'s>,
}

impl<'de> de::DeserializeSeed<'de> for DtypeSeed<'_, '_> {
    type Value = Dtype;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Dtype, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for DtypeSeed<'_, '_> {
    type Value = Dtype;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a dtype")
    }
    wrong_kind!(
        |v: Self, kind: &str| Err(v.entry.bad(format!("dtype is {kind}, not a string"))),
        bool,
        unit,
        numbers,
        seq,
        map
    );
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Dtype, E> {
        Dtype::from_name(s).ok_or_else(|| self.entry.bad(format!("unknown dtype {s:?}")))
    }
}

/// An array of non-negative integers below 2^64; at most `max` are kept, and all are
/// counted. A shape past `max` is refused at once.
struct NumbersSeed<'e, 's> {
    entry: &'e EntrySeed<'s>,
    what: &'static str,
    max: usize,
}

impl<'de> de::DeserializeSeed<'de> for NumbersSeed<'_, '_> {
    type Value = (Vec<u64>, u64);
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for NumbersSeed<'_, '_> {
    type Value = (Vec<u64>, u64);
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of integers")
    }
    wrong_kind!(
        |v: Self, kind: &str| Err(v.entry.bad(format!("{} is {kind}, not an array", v.what))),
        bool,
        unit,
        numbers,
        str,
        map
    );
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.elements(seq)
    }
}

impl NumbersSeed<'_, '_> {
    fn elements<'de, A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(Vec<u64>, u64), A::Error> {
        let mut kept = Vec::new();
        let mut count = 0u64;
        while let Some(n) = seq.next_element_seed(NumberSeed {
            entry: self.entry,
            what: self.what,
        })? {
            count += 1;
            if kept.len() < self.max {
                kept.push(n);
            } else if self.what == "shape" {
                return Err(self.entry.bad(format!(
                    "shape has more than {MAX_RANK} dimensions; numpy (NPY_MAXDIMS) holds at most {MAX_RANK}, so the numpy and torch loaders refuse the file that the safetensors crate reads"
                )));
            }
        }
        Ok((kept, count))
    }
}

struct NumberSeed<'e, 's> {
    entry: &'e EntrySeed<'s>,
    what: &'static str,
}

impl<'de> de::DeserializeSeed<'de> for NumberSeed<'_, '_> {
    type Value = u64;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_any(self)
    }
}

impl NumberSeed<'_, '_> {
    fn holds<E: de::Error>(&self, what: String) -> E {
        self.entry.bad(format!(
            "{} holds {what}, not a non-negative integer below 2^64",
            self.what
        ))
    }
}

impl<'de> de::Visitor<'de> for NumberSeed<'_, '_> {
    type Value = u64;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a non-negative integer")
    }
    wrong_kind!(
        |v: Self, kind: &str| Err(v.holds(kind.to_owned())),
        bool,
        unit,
        str,
        seq,
        map
    );
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<u64, E> {
        Ok(n)
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<u64, E> {
        u64::try_from(n).map_err(|_| self.holds(format!("the negative number {n}")))
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<u64, E> {
        Err(self.holds(format!("the number {f:?}")))
    }
}

/// The checks on one entry once its fields are read: offsets in order, and a size that its
/// dtype and shape give exactly.
fn finish_entry(
    name: String,
    dtype: Dtype,
    shape: Vec<u64>,
    begin: u64,
    end: u64,
) -> Result<TensorEntry, SafetensorsError> {
    let bad = |detail: String| SafetensorsError::BadEntry {
        name: name.clone(),
        detail,
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
        // Refused at the first level that is not what the header allows, before the nesting
        // is walked: no recursion, no tree of values.
        let deep =
            |inner: &str| format!("{{{inner}{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        for (inner, expected) in [
            ("\"__metadata__\":", "not an object"),
            ("\"a\":", "entry is an array"),
            ("\"a\":{\"shape\":", "holds an array"),
        ] {
            let err = parse(&file(&deep(inner), 0)).unwrap_err();
            assert!(err.to_string().contains(expected), "{inner}: {err}");
        }
        // Nesting the header allows nowhere (a JSON syntax error inside it) is still refused.
        let err = parse(&file(&format!("{{\"a\":{}", "[".repeat(1000)), 0)).unwrap_err();
        assert!(
            matches!(
                err,
                SafetensorsError::BadEntry { .. } | SafetensorsError::InvalidJson { .. }
            ),
            "{err}"
        );
    }

    #[test]
    fn shapes_past_numpy_rank_and_long_offsets_are_refused_as_read() {
        let ones = vec!["1"; 65].join(",");
        let text = format!(r#"{{"a":{{"dtype":"U8","shape":[{ones}],"data_offsets":[0,1]}}}}"#);
        let err = parse(&file(&text, 1)).unwrap_err();
        assert!(err.to_string().contains("more than 64 dimensions"), "{err}");
        let ones = vec!["1"; 64].join(",");
        let text = format!(r#"{{"a":{{"dtype":"U8","shape":[{ones}],"data_offsets":[0,1]}}}}"#);
        assert_eq!(parse(&file(&text, 1)).unwrap().tensors[0].shape.len(), 64);
        let many = vec!["0"; 1000].join(",");
        let text = format!(r#"{{"a":{{"dtype":"U8","shape":[0],"data_offsets":[{many}]}}}}"#);
        let err = parse(&file(&text, 0)).unwrap_err();
        assert!(err.to_string().contains("has 1000 numbers"), "{err}");
    }

    #[test]
    fn metadata_past_the_listing_limit_is_checked_and_counted() {
        let n = MAX_METADATA_LISTED + 10;
        let entries: Vec<String> = (0..n).map(|i| format!("\"k{i}\":\"v\"")).collect();
        let text = format!("{{\"__metadata__\":{{{}}}}}", entries.join(","));
        let h = parse(&file(&text, 0)).unwrap();
        assert_eq!(h.metadata.as_ref().unwrap().len(), MAX_METADATA_LISTED);
        assert_eq!(h.metadata_total, n as u64);
        // A duplicate past the limit is still a duplicate; so is a non-string value.
        let text = format!(
            "{{\"__metadata__\":{{{},\"k5\":\"w\"}}}}",
            entries.join(",")
        );
        let err = parse(&file(&text, 0)).unwrap_err();
        assert!(err.to_string().contains("duplicate key \"k5\""), "{err}");
        let text = format!("{{\"__metadata__\":{{{},\"z\":1}}}}", entries.join(","));
        let err = parse(&file(&text, 0)).unwrap_err();
        assert!(err.to_string().contains("not a string"), "{err}");
    }
}
