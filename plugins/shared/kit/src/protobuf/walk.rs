//! The wire-level pre-pass: walks a whole message by a generated field table
//! ([`super::schema`]) **before** prost decodes anything, and
//!
//! * refuses what is malformed (truncated varints and lengths, wire types that do not match
//!   the field, groups, field number 0, text that is not UTF-8, nesting deeper than
//!   [`MAX_DEPTH`]), naming the byte offset and the place;
//! * bounds what decoding will allocate: an empty message costs 2 bytes of input but a whole
//!   struct once decoded, a one-byte varint in a packed field becomes 8 bytes, so the walk adds
//!   up the decoded size and refuses a file whose structure would decode to more than
//!   [`overhead_limit`] (raw bytes are zero-copy slices of the input and cost nothing);
//! * reports singular fields that occur twice in one message (protobuf keeps the last and
//!   merges messages, a hand-written reader may keep the first: a file built to be read
//!   differently) and fields the schema does not define (skipped by prost);
//! * hands each message, bytes payload and scalar to a [`Visitor`], which records what its
//!   format needs located (ONNX's initializers, TensorFlow's `tensor_content`) by the role it
//!   gives each message.
//!
//! What the walk says of a schema (its name in messages, the place of the root) is the
//! [`Dialect`]'s; the rules are the same for every format.

use super::read_varint;
use super::schema::{Field, Kind, MessageSchema};
use crate::bounded::{Listing, FINDINGS_PER_KIND};

/// Deepest message nesting accepted: prost's own default recursion limit.
pub const MAX_DEPTH: usize = 100;

/// The structure may decode to at most this many bytes beyond the input itself, by default
/// (the ONNX dialect's bound).
pub fn overhead_limit(file_len: u64) -> u64 {
    overhead_limit_at(file_len, 2)
}

/// The bound on what the structure decodes to, at `factor` bytes per byte of input, plus
/// the 64 MiB of [`crate::model::memory_bound`].
pub fn overhead_limit_at(file_len: u64, factor: u64) -> u64 {
    file_len
        .saturating_mul(factor)
        .saturating_add(crate::model::MEMORY_BASE)
}

/// How a schema is named in what the walk reports.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// The schema's message types (the generated `MESSAGES`).
    pub messages: &'static [MessageSchema],
    /// The schema as a subject: `onnx.proto` ("… which onnx.proto never uses").
    pub schema: &'static str,
    /// The schema with its version: `onnx.proto 1.23` ("not defined … in onnx.proto 1.23").
    pub versioned: &'static str,
    /// The kind of the findings of undefined fields: `fields onnx.proto does not define`.
    pub undefined_kind: &'static str,
    /// The place of the root message: `model`.
    pub root: &'static str,
    /// Bytes of decoded structure allowed per byte of input ([`overhead_limit_at`]): what the
    /// format's other decoded values leave of the 8× the input a read may hold.
    pub overhead_factor: u64,
}

pub use crate::Severity;

/// Something the walk found, with its place (`graph.initializer[2]`, with the byte offset): a
/// finding of the reading model every first-party reader shares.
pub type WireFinding = crate::model::Finding;

/// Why the walk refused the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Malformed protobuf.
    #[error("byte {offset} ({place}): {what}")]
    Malformed {
        /// Byte offset.
        offset: u64,
        /// The message path.
        place: String,
        /// What is wrong.
        what: String,
    },
    /// Decoding would allocate more than the file justifies.
    #[error("its structure would decode to more than {limit} bytes of memory ({place}, byte {offset}): {what}")]
    TooCostly {
        /// Byte offset where the limit was passed.
        offset: u64,
        /// The message path.
        place: String,
        /// The limit.
        limit: u64,
        /// What kind of structure costs.
        what: String,
    },
}

impl WireError {
    /// The place the error names.
    pub fn place(&self) -> String {
        match self {
            WireError::Malformed { offset, place, .. }
            | WireError::TooCostly { offset, place, .. } => format!("{place} (byte {offset})"),
        }
    }
}

/// One step of the path to the message being walked.
#[derive(Debug, Clone, Copy)]
struct Seg {
    name: &'static str,
    index: Option<u64>,
}

/// What the walk keeps while it goes, and what a [`Visitor`] may use: the input, the path
/// (for places), the findings, and the decode budget.
#[derive(Debug)]
pub struct Core<'a> {
    /// The whole input.
    pub buf: &'a [u8],
    dialect: Dialect,
    path: Vec<Seg>,
    findings: Listing<WireFinding>,
    limit: u64,
    overhead: u64,
}

/// What the walk found, besides what its visitor recorded.
#[derive(Debug, Clone, Default)]
pub struct Walked {
    /// Findings: the first [`FINDINGS_PER_KIND`] of each kind.
    pub findings: Vec<WireFinding>,
    /// Findings not kept, by kind.
    pub suppressed: Vec<(&'static str, u64)>,
    /// Estimated bytes decoding allocates beyond the input.
    pub overhead: u64,
}

/// A format's part of the walk: the role of each message, and what it records of payloads.
/// Each method may add to the decode budget through [`Core::cost`].
pub trait Visitor {
    /// Where a message sits, as far as the format cares.
    type Role: Copy;

    /// The role of the message in field `field` (message type `child`, its `index`-th
    /// occurrence in the parent) of a message of role `parent`.
    fn enter(
        &mut self,
        core: &mut Core<'_>,
        parent: Self::Role,
        field: &'static Field,
        child: usize,
        index: u64,
        tag_at: usize,
    ) -> Result<Self::Role, WireError>;

    /// What decoding the message in field `field` (message type `child`, its `index`-th
    /// occurrence) allocates, given the schema's estimate `default` (the decoded struct's size,
    /// twice for a repeated field's growth): a format whose decoded types allocate otherwise
    /// (a map's first entry allocating a whole tree node) says so here.
    fn message_cost(
        &self,
        _field: &'static Field,
        _child: usize,
        _index: u64,
        default: u64,
    ) -> u64 {
        default
    }

    /// A `bytes` field's payload, `buf[p0..p1]`.
    fn bytes(
        &mut self,
        _core: &mut Core<'_>,
        _role: Self::Role,
        _field: &'static Field,
        _payload: (usize, usize),
        _tag_at: usize,
    ) -> Result<(), WireError> {
        Ok(())
    }

    /// A packed payload of fixed-width values `(offset, len)` (`len` a multiple of the width).
    fn packed_fixed(
        &mut self,
        _core: &mut Core<'_>,
        _role: Self::Role,
        _field: &'static Field,
        _span: (u64, u64),
        _tag_at: usize,
    ) -> Result<(), WireError> {
        Ok(())
    }

    /// One element of a repeated scalar field stored unpacked.
    fn unpacked(
        &mut self,
        _core: &mut Core<'_>,
        _role: Self::Role,
        _field: &'static Field,
        _tag_at: usize,
    ) -> Result<(), WireError> {
        Ok(())
    }

    /// A singular scalar field; `payload` is its value's bytes (the tag's too for a varint).
    fn scalar(
        &mut self,
        _core: &mut Core<'_>,
        _role: Self::Role,
        _field: &'static Field,
        _payload: (usize, usize),
        _tag_at: usize,
    ) -> Result<(), WireError> {
        Ok(())
    }
}

/// Walks `buf` as message `root` of `dialect`'s schema, the root message of role `role`.
pub fn walk<V: Visitor>(
    buf: &[u8],
    dialect: Dialect,
    root: usize,
    role: V::Role,
    visitor: &mut V,
) -> Result<Walked, WireError> {
    let mut core = Core {
        buf,
        dialect,
        path: Vec::new(),
        findings: Listing::new(FINDINGS_PER_KIND),
        limit: overhead_limit_at(buf.len() as u64, dialect.overhead_factor),
        overhead: 0,
    };
    core.message(visitor, 0, buf.len(), root, 0, role)?;
    let overhead = core.overhead;
    let (findings, suppressed) = core.findings.finish();
    Ok(Walked {
        findings,
        suppressed,
        overhead,
    })
}

impl Core<'_> {
    /// The path to the message being walked: `graph.node[3].attribute[0]`, or the root's place.
    pub fn place(&self) -> String {
        if self.path.is_empty() {
            return self.dialect.root.into();
        }
        let mut s = String::new();
        for (i, seg) in self.path.iter().enumerate() {
            if i > 0 {
                s.push('.');
            }
            s.push_str(seg.name);
            if let Some(n) = seg.index {
                s.push_str(&format!("[{n}]"));
            }
        }
        s
    }

    /// A refusal at byte `offset`, with the current place.
    pub fn malformed(&self, offset: usize, what: impl Into<String>) -> WireError {
        WireError::Malformed {
            offset: offset as u64,
            place: self.place(),
            what: what.into(),
        }
    }

    /// Adds `bytes` to what decoding will allocate; refuses past the limit.
    pub fn cost(&mut self, at: usize, bytes: u64, what: &str) -> Result<(), WireError> {
        self.overhead = self.overhead.saturating_add(bytes);
        if self.overhead > self.limit {
            return Err(WireError::TooCostly {
                offset: at as u64,
                place: self.place(),
                limit: self.limit,
                what: what.into(),
            });
        }
        Ok(())
    }

    /// Records a finding of `kind`; its place and reason are only written when it is one of
    /// the first of its kind.
    pub fn finding(
        &mut self,
        kind: &'static str,
        severity: Severity,
        at: usize,
        reason: impl FnOnce() -> String,
    ) {
        let item = self.findings.would_keep(kind).then(|| WireFinding {
            severity,
            place: format!("{} (byte {at})", self.place()),
            reason: reason(),
            file: None,
        });
        self.findings.add(kind, item);
    }

    fn varint(&self, at: &mut usize, end: usize) -> Result<u64, WireError> {
        let start = *at;
        read_varint(self.buf, at, end)
            .ok_or_else(|| self.malformed(start, "a varint is truncated or longer than 10 bytes"))
    }

    fn message<V: Visitor>(
        &mut self,
        v: &mut V,
        start: usize,
        end: usize,
        msg: usize,
        depth: usize,
        role: V::Role,
    ) -> Result<(), WireError> {
        let schema = &self.dialect.messages[msg];
        let mut counts = [0u64; 64];
        let mut at = start;
        while at < end {
            let tag_at = at;
            let key = self.varint(&mut at, end)?;
            let number = key >> 3;
            let wire = (key & 7) as u8;
            if number == 0 || number > (1 << 29) - 1 {
                return Err(self.malformed(tag_at, format!("field number {number} is not valid")));
            }
            let number = number as u32;
            // The payload: (start, end) of a length-delimited field, or the scalar's bytes.
            let payload = match wire {
                0 => {
                    self.varint(&mut at, end)?;
                    (tag_at, at)
                }
                1 | 5 => {
                    let n = if wire == 1 { 8 } else { 4 };
                    if end - at < n {
                        return Err(self.malformed(tag_at, "a fixed-width value is truncated"));
                    }
                    at += n;
                    (at - n, at)
                }
                2 => {
                    let len = self.varint(&mut at, end)?;
                    if len > (end - at) as u64 {
                        return Err(self.malformed(
                            tag_at,
                            format!(
                                "field {number} says it holds {len} bytes but only {} remain in its message",
                                end - at
                            ),
                        ));
                    }
                    let p = (at, at + len as usize);
                    at = p.1;
                    p
                }
                3 | 4 => {
                    return Err(self.malformed(
                        tag_at,
                        format!(
                            "field {number} uses wire type {wire} (a group), which {} never uses",
                            self.dialect.schema
                        ),
                    ))
                }
                _ => {
                    return Err(self.malformed(
                        tag_at,
                        format!("field {number} has invalid wire type {wire}"),
                    ))
                }
            };
            let Some(field) = schema.field(number) else {
                let versioned = self.dialect.versioned;
                self.finding(self.dialect.undefined_kind, Severity::Lead, tag_at, || {
                    format!(
                        "field {number} (wire type {wire}) is not defined for {} in {versioned}: this reader skips it; a runtime that knows it may not",
                        schema.name
                    )
                });
                continue;
            };
            let index = counts.get_mut(number as usize).map(|c| {
                *c += 1;
                *c - 1
            });
            if !field.repeated && index.is_some_and(|i| i > 0) {
                self.finding("singular fields given twice", Severity::Fail, tag_at, || {
                    format!(
                        "singular field `{}` of {} occurs more than once: protobuf keeps the last occurrence (merging messages), a reader that keeps the first sees another model",
                        field.name, schema.name
                    )
                });
            }
            self.field(
                v,
                field,
                wire,
                payload,
                tag_at,
                index.unwrap_or(0),
                depth,
                role,
            )?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn field<V: Visitor>(
        &mut self,
        v: &mut V,
        field: &'static Field,
        wire: u8,
        (p0, p1): (usize, usize),
        tag_at: usize,
        index: u64,
        depth: usize,
        role: V::Role,
    ) -> Result<(), WireError> {
        let expected = field.kind.wire_type();
        let packed = field.repeated && wire == 2 && expected != 2;
        if wire != expected && !packed {
            return Err(self.malformed(
                tag_at,
                format!(
                    "field `{}` has wire type {wire}; {} defines it with wire type {expected}",
                    field.name, self.dialect.schema
                ),
            ));
        }
        let len = (p1 - p0) as u64;
        let slack = if field.repeated { 2 } else { 1 };
        match field.kind {
            Kind::Message(child) => {
                let child_depth = depth + 1;
                if child_depth >= MAX_DEPTH {
                    return Err(self.malformed(
                        tag_at,
                        format!("messages are nested {child_depth} deep; the limit is {MAX_DEPTH}"),
                    ));
                }
                let size = self.dialect.messages[child].size as u64;
                let cost = v.message_cost(field, child, index, size * slack);
                self.cost(tag_at, cost, "messages")?;
                let child_role = v.enter(self, role, field, child, index, tag_at)?;
                self.path.push(Seg {
                    name: field.name,
                    index: field.repeated.then_some(index),
                });
                let r = self.message(v, p0, p1, child, child_depth, child_role);
                self.path.pop();
                r?;
            }
            Kind::String => {
                if std::str::from_utf8(&self.buf[p0..p1]).is_err() {
                    return Err(
                        self.malformed(tag_at, format!("text field `{}` is not UTF-8", field.name))
                    );
                }
                self.cost(tag_at, len + if field.repeated { 48 } else { 0 }, "text")?;
            }
            Kind::Bytes => {
                if field.repeated {
                    self.cost(tag_at, 64, "byte strings")?;
                }
                v.bytes(self, role, field, (p0, p1), tag_at)?;
            }
            Kind::Varint if packed => {
                let mut at = p0;
                let mut n = 0u64;
                while at < p1 {
                    self.varint(&mut at, p1)?;
                    n += 1;
                }
                self.cost(tag_at, n.saturating_mul(16), "packed varints")?;
            }
            Kind::Fixed32 | Kind::Fixed64 if packed => {
                let width = if field.kind == Kind::Fixed32 { 4 } else { 8 };
                if !len.is_multiple_of(width) {
                    return Err(self.malformed(
                        tag_at,
                        format!(
                            "packed field `{}` holds {len} bytes, not a whole number of {width}-byte values",
                            field.name
                        ),
                    ));
                }
                self.cost(tag_at, len * 2, "packed values")?;
                v.packed_fixed(self, role, field, (p0 as u64, len), tag_at)?;
            }
            _ => {
                if field.repeated {
                    self.cost(tag_at, 16, "repeated values")?;
                    v.unpacked(self, role, field, tag_at)?;
                } else {
                    v.scalar(self, role, field, (p0, p1), tag_at)?;
                }
            }
        }
        Ok(())
    }
}
