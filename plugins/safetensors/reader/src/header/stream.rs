//! The streaming parse of the header object with serde: every entry checked as it is read,
//! names given twice refused, and only what the header says kept, with the refusal a visitor
//! stopped on returned in place of serde's message. Apart from the checks on what it keeps.

use super::entry::{finish_entry, TensorEntry, MAX_METADATA_LISTED, MAX_RANK};
use super::error::SafetensorsError;
use super::limits::{LEN_PREFIX, METADATA_KEY};
use crate::dtype::Dtype;
use crate::json::DUPLICATE_KEY;
use serde::de;

/// What the streaming parse of the header object found.
pub(super) struct Parsed {
    pub(super) metadata: Option<Vec<(String, String)>>,
    pub(super) metadata_total: u64,
    /// `"__metadata__": null`, which the library reads as no metadata.
    pub(super) metadata_null: bool,
    pub(super) tensors: Vec<TensorEntry>,
    /// Fields of tensor entries the format does not define: `(tensor, field)`, the first
    /// [`MAX_EXTRA_LISTED`], and how many there were.
    pub(super) extra_fields: Vec<(String, String)>,
    pub(super) extra_fields_total: u64,
}

/// Extra fields listed by name; the rest are counted.
pub const MAX_EXTRA_LISTED: usize = 16;
/// Longest extra field name quoted.
const MAX_EXTRA_NAME: usize = 64;

/// The extra fields seen so far (listed, total).
type Extras = std::cell::RefCell<(Vec<(String, String)>, u64)>;

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
pub(super) fn parse_json_prefix(text: &str) -> Result<(Parsed, usize), SafetensorsError> {
    let slot = Slot::default();
    let extras = Extras::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let result = de::Deserializer::deserialize_map(
        &mut de,
        HeaderVisitor {
            slot: &slot,
            extras: &extras,
        },
    )
    .and_then(|parsed| de.end().map(|()| parsed));
    let result = result.map(|mut parsed| {
        let (listed, total) = extras.into_inner();
        parsed.extra_fields = listed;
        parsed.extra_fields_total = total;
        parsed
    });
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
    extras: &'s Extras,
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
            metadata_null: false,
            tensors: Vec::new(),
            extra_fields: Vec::new(),
            extra_fields_total: 0,
        };
        while let Some(key) = map.next_key::<String>()? {
            if !names.insert(&key) {
                return Err(duplicate(&key));
            }
            if key == METADATA_KEY {
                // `HashMetadata.metadata` is an `Option` (safetensors 0.8.0 src/tensor.rs):
                // `null` is read as no metadata.
                match map.next_value_seed(MetadataSeed { slot: self.slot })? {
                    Some((kept, total)) => {
                        parsed.metadata = Some(kept);
                        parsed.metadata_total = total;
                    }
                    None => parsed.metadata_null = true,
                }
            } else {
                let entry = map.next_value_seed(EntrySeed {
                    slot: self.slot,
                    extras: self.extras,
                    name: key,
                })?;
                parsed.tensors.push(entry);
            }
        }
        Ok(parsed)
    }
}

/// The `__metadata__` entries kept, and how many there were.
type MetadataEntries = (Vec<(String, String)>, u64);
/// [`MetadataEntries`], or `None` for `null`.
type MetadataRead = Option<MetadataEntries>;

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
        numbers,
        str,
        seq
    );
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.entries(map).map(Some)
    }
}

impl MetadataSeed<'_> {
    fn entries<'de, A: de::MapAccess<'de>>(self, mut map: A) -> Result<MetadataEntries, A::Error> {
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

/// One tensor entry, checked as it is read: a field the format does not define is skipped as
/// the safetensors library skips it (`TensorInfo` has no `deny_unknown_fields`) and listed, a
/// shape stops at [`MAX_RANK`] dimensions and `data_offsets` at 3 numbers.
struct EntrySeed<'s> {
    slot: &'s Slot,
    extras: &'s Extras,
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
                _ => {
                    // serde's derive skips it, whatever it holds (`IgnoredAny`, streaming).
                    map.next_value::<de::IgnoredAny>()?;
                    let mut extras = self.extras.borrow_mut();
                    extras.1 += 1;
                    if extras.0.len() < MAX_EXTRA_LISTED {
                        let shown: String = field.chars().take(MAX_EXTRA_NAME).collect();
                        extras.0.push((self.name.clone(), shown));
                    }
                    continue;
                }
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
