//! The wire-level pre-pass: walks the whole `ModelProto` by the field table generated from
//! onnx.proto ([`crate::proto::schema`]) **before** prost decodes anything, and
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
//!   differently) and fields onnx.proto does not define (skipped by prost);
//! * locates, for each initializer of the main graph and each tensor in an attribute of a
//!   main-graph node (a Constant's `value`), the packed `float_data` and `double_data`
//!   payloads (fixed-width little-endian, so their bytes are the tensor's) and the `raw_data`
//!   payload, which the reader cross-checks against what prost decoded; and for the
//!   attributes of main-graph nodes, the 4 bytes of `f` and the packed `floats` payloads (a
//!   Constant's `value_float` and `value_floats`).

use crate::proto::schema::{
    ATTRIBUTE_PROTO, GRAPH_PROTO, MESSAGES, MODEL_PROTO, NODE_PROTO, TENSOR_PROTO,
};
use crate::proto::schema_types::{Field, Kind};

/// Deepest message nesting accepted: prost's own default recursion limit.
pub const MAX_DEPTH: usize = 100;

/// The structure may decode to at most this many bytes beyond the input itself.
pub fn overhead_limit(file_len: u64) -> u64 {
    file_len.saturating_mul(2).saturating_add(64 << 20)
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Evidence of a file built to be read differently by different readers.
    Fail,
    /// Outside what this reader proves, worth a look.
    Lead,
}

/// Something the walk found, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireFinding {
    /// How serious.
    pub severity: Severity,
    /// Where (`graph.initializer[2]`, with the byte offset).
    pub place: String,
    /// What.
    pub reason: String,
}

/// Where one tensor's values lie, as the wire has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TensorSpans {
    /// The packed `float_data` payloads, in order (`(offset, len)`).
    pub float_data: Vec<(u64, u64)>,
    /// The packed `double_data` payloads, in order.
    pub double_data: Vec<(u64, u64)>,
    /// `float_data` or `double_data` elements stored unpacked (one tag per element).
    pub unpacked: bool,
    /// The last `raw_data` payload (protobuf keeps the last).
    pub raw_data: Option<(u64, u64)>,
}

/// Where the values of one attribute of a main-graph node lie, as the wire has them: kept
/// only for attributes that hold a tensor (`t`), a float (`f`) or floats (`floats`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttributeSpans {
    /// The node's index among all main-graph nodes (prost's index in `graph.node`).
    pub node: usize,
    /// The attribute's index in the node's `attribute`.
    pub attribute: usize,
    /// The 4 bytes of the last `f` (protobuf keeps the last).
    pub f: Option<(u64, u64)>,
    /// The packed `floats` payloads, in order.
    pub floats: Vec<(u64, u64)>,
    /// `floats` elements stored unpacked (one tag per element: what proto2 writes, since
    /// onnx.proto does not mark `floats` packed).
    pub floats_unpacked: bool,
    /// The tensor `t`, when there is one (every occurrence merged, as protobuf merges them).
    pub t: Option<TensorSpans>,
}

/// Bytes the walk's own record of one attribute costs, counted against the decode limit.
const ATTRIBUTE_SPANS_COST: u64 = 160;

/// What the walk found.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// Findings: the first [`crate::bounded::FINDINGS_PER_KIND`] of each kind.
    pub findings: Vec<WireFinding>,
    /// Findings not kept, by kind.
    pub suppressed: Vec<(&'static str, u64)>,
    /// Estimated bytes decoding allocates beyond the input.
    pub overhead: u64,
    /// One per `graph.initializer`, in wire order (prost's order).
    pub initializers: Vec<TensorSpans>,
    /// Attributes of main-graph nodes holding a tensor, a float or floats, ordered by
    /// `(node, attribute)`.
    pub attributes: Vec<AttributeSpans>,
    /// Main-graph nodes walked (all occurrences of `graph`, as prost merges them).
    pub main_nodes: usize,
}

impl Walk {
    /// The spans of attribute `attribute` of main-graph node `node`, when it holds a tensor,
    /// a float or floats.
    pub fn attribute(&self, node: usize, attribute: usize) -> Option<&AttributeSpans> {
        self.attributes
            .binary_search_by_key(&(node, attribute), |a| (a.node, a.attribute))
            .ok()
            .map(|i| &self.attributes[i])
    }
}

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

/// Where a message sits in the model, as far as the reader cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Model,
    MainGraph,
    /// A node of the main graph (its index among all main-graph nodes).
    MainNode(usize),
    /// An attribute of a main-graph node: `(node, attribute)`.
    MainAttribute(usize, usize),
    /// A tensor whose spans are recorded.
    Tensor(TensorSlot),
    Other,
}

/// Which recorded tensor a `TensorProto` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TensorSlot {
    /// `walk.initializers[i]`.
    Initializer(usize),
    /// `walk.attributes[i].t`.
    Attribute(usize),
}

#[derive(Debug, Clone, Copy)]
struct Seg {
    name: &'static str,
    index: Option<u64>,
}

struct Walker<'a> {
    buf: &'a [u8],
    path: Vec<Seg>,
    walk: Walk,
    findings: crate::bounded::Listing<WireFinding>,
    limit: u64,
}

/// Walks `buf` as an `onnx.ModelProto`.
pub fn walk(buf: &[u8]) -> Result<Walk, WireError> {
    let mut w = Walker {
        buf,
        path: Vec::new(),
        walk: Walk::default(),
        findings: crate::bounded::Listing::new(crate::bounded::FINDINGS_PER_KIND),
        limit: overhead_limit(buf.len() as u64),
    };
    w.message(0, buf.len(), MODEL_PROTO, 0, Role::Model)?;
    let (findings, suppressed) = w.findings.finish();
    w.walk.findings = findings;
    w.walk.suppressed = suppressed;
    Ok(w.walk)
}

/// Reads a varint at `*at` (before `end`), as protobuf does: at most 10 bytes, the tenth
/// holding only the top bit.
pub fn read_varint(buf: &[u8], at: &mut usize, end: usize) -> Option<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        if *at >= end {
            return None;
        }
        let b = *buf.get(*at)?;
        *at += 1;
        if i == 9 && b > 1 {
            return None;
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some(value);
        }
    }
    None
}

impl Walker<'_> {
    fn place(&self) -> String {
        if self.path.is_empty() {
            return "model".into();
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

    fn malformed(&self, offset: usize, what: impl Into<String>) -> WireError {
        WireError::Malformed {
            offset: offset as u64,
            place: self.place(),
            what: what.into(),
        }
    }

    fn cost(&mut self, at: usize, bytes: u64, what: &str) -> Result<(), WireError> {
        self.walk.overhead = self.walk.overhead.saturating_add(bytes);
        if self.walk.overhead > self.limit {
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
    fn finding(
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
        });
        self.findings.add(kind, item);
    }

    fn varint(&self, at: &mut usize, end: usize) -> Result<u64, WireError> {
        let start = *at;
        read_varint(self.buf, at, end)
            .ok_or_else(|| self.malformed(start, "a varint is truncated or longer than 10 bytes"))
    }

    fn message(
        &mut self,
        start: usize,
        end: usize,
        msg: usize,
        depth: usize,
        role: Role,
    ) -> Result<(), WireError> {
        let schema = &MESSAGES[msg];
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
                        format!("field {number} uses wire type {wire} (a group), which onnx.proto never uses"),
                    ))
                }
                _ => {
                    return Err(self.malformed(tag_at, format!("field {number} has invalid wire type {wire}")))
                }
            };
            let Some(field) = schema.field(number) else {
                self.finding("fields onnx.proto does not define", Severity::Lead, tag_at, || {
                    format!(
                        "field {number} (wire type {wire}) is not defined for {} in onnx.proto 1.23: this reader skips it; a runtime that knows it may not",
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
    fn field(
        &mut self,
        field: &'static Field,
        wire: u8,
        (p0, p1): (usize, usize),
        tag_at: usize,
        index: u64,
        depth: usize,
        role: Role,
    ) -> Result<(), WireError> {
        let expected: u8 = match field.kind {
            Kind::Varint => 0,
            Kind::Fixed64 => 1,
            Kind::Fixed32 => 5,
            Kind::String | Kind::Bytes | Kind::Message(_) => 2,
        };
        let packed = field.repeated && wire == 2 && expected != 2;
        if wire != expected && !packed {
            return Err(self.malformed(
                tag_at,
                format!(
                    "field `{}` has wire type {wire}; onnx.proto defines it with wire type {expected}",
                    field.name
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
                self.cost(tag_at, MESSAGES[child].size as u64 * slack, "messages")?;
                let child_role = match (role, field.number) {
                    (Role::Model, 7) if child == GRAPH_PROTO => Role::MainGraph,
                    (Role::MainGraph, 5) if child == TENSOR_PROTO => {
                        self.walk.initializers.push(TensorSpans::default());
                        Role::Tensor(TensorSlot::Initializer(self.walk.initializers.len() - 1))
                    }
                    (Role::MainGraph, 1) if child == NODE_PROTO => {
                        // Counted over every occurrence of `graph`: prost merges them, and
                        // appends the nodes of each to one list.
                        self.walk.main_nodes += 1;
                        Role::MainNode(self.walk.main_nodes - 1)
                    }
                    (Role::MainNode(n), 5) if child == ATTRIBUTE_PROTO => {
                        Role::MainAttribute(n, index as usize)
                    }
                    (Role::MainAttribute(n, a), 5) if child == TENSOR_PROTO => {
                        let slot = self.attribute_slot(tag_at, n, a)?;
                        self.walk.attributes[slot]
                            .t
                            .get_or_insert_with(TensorSpans::default);
                        Role::Tensor(TensorSlot::Attribute(slot))
                    }
                    _ => Role::Other,
                };
                self.path.push(Seg {
                    name: field.name,
                    index: field.repeated.then_some(index),
                });
                let r = self.message(p0, p1, child, child_depth, child_role);
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
                if let (Role::Tensor(slot), 9) = (role, field.number) {
                    if let Some(spans) = self.tensor_spans(slot) {
                        spans.raw_data = Some((p0 as u64, len));
                    }
                }
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
                self.locate(tag_at, role, field.number, Some((p0 as u64, len)))?;
            }
            _ => {
                if field.repeated {
                    self.cost(tag_at, 16, "repeated values")?;
                    self.locate(tag_at, role, field.number, None)?;
                } else if let (Role::MainAttribute(n, a), 2) = (role, field.number) {
                    // `f`, a fixed32: its 4 bytes are a float32 as the file holds it.
                    let slot = self.attribute_slot(tag_at, n, a)?;
                    self.walk.attributes[slot].f = Some((p0 as u64, len));
                }
            }
        }
        Ok(())
    }

    /// The index in `walk.attributes` of attribute `a` of main-graph node `n`, recorded now
    /// if it is not yet (the fields of one attribute are walked together, so it can only be
    /// the last one).
    fn attribute_slot(&mut self, at: usize, n: usize, a: usize) -> Result<usize, WireError> {
        if let Some(last) = self.walk.attributes.last() {
            if (last.node, last.attribute) == (n, a) {
                return Ok(self.walk.attributes.len() - 1);
            }
        }
        self.cost(at, ATTRIBUTE_SPANS_COST, "attribute records")?;
        self.walk.attributes.push(AttributeSpans {
            node: n,
            attribute: a,
            ..AttributeSpans::default()
        });
        Ok(self.walk.attributes.len() - 1)
    }

    fn tensor_spans(&mut self, slot: TensorSlot) -> Option<&mut TensorSpans> {
        match slot {
            TensorSlot::Initializer(i) => self.walk.initializers.get_mut(i),
            TensorSlot::Attribute(i) => self.walk.attributes.get_mut(i)?.t.as_mut(),
        }
    }

    /// Records a `float_data` (4) or `double_data` (10) payload of a recorded tensor, or a
    /// `floats` (7) payload of a main-graph node's attribute; `None` for an unpacked element.
    fn locate(
        &mut self,
        at: usize,
        role: Role,
        number: u32,
        span: Option<(u64, u64)>,
    ) -> Result<(), WireError> {
        match (role, number) {
            (Role::Tensor(slot), 4 | 10) => {
                let Some(spans) = self.tensor_spans(slot) else {
                    return Ok(());
                };
                let list = if number == 4 {
                    &mut spans.float_data
                } else {
                    &mut spans.double_data
                };
                match span {
                    Some(s) => list.push(s),
                    None => spans.unpacked = true,
                }
            }
            (Role::MainAttribute(n, a), 7) => {
                let slot = self.attribute_slot(at, n, a)?;
                let attr = &mut self.walk.attributes[slot];
                match span {
                    Some(s) => attr.floats.push(s),
                    None => attr.floats_unpacked = true,
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(number: u32, wire: u8) -> Vec<u8> {
        varint(u64::from(number) << 3 | u64::from(wire))
    }

    fn varint(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    fn len_field(number: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = tag(number, 2);
        out.extend(varint(payload.len() as u64));
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn locates_packed_floats_of_initializers() {
        let mut tensor = len_field(8, b"w");
        tensor.extend(len_field(4, &[0u8; 8]));
        tensor.extend(len_field(4, &[1u8; 4]));
        let graph = len_field(5, &tensor);
        let mut model = vec![0x08, 0x07];
        model.extend(len_field(7, &graph));
        let w = walk(&model).unwrap();
        assert_eq!(w.initializers.len(), 1);
        let s = &w.initializers[0];
        let first = s.float_data[0];
        assert_eq!(first.1, 8);
        assert_eq!(&model[first.0 as usize..][..8], &[0u8; 8]);
        assert_eq!(s.float_data[1].1, 4);
        assert!(w.findings.is_empty());
    }

    #[test]
    fn refuses_bad_wire_types_groups_and_truncation() {
        // ir_version (varint) with wire type 2.
        let e = walk(&len_field(1, b"x")).unwrap_err();
        assert!(e.to_string().contains("wire type"), "{e}");
        // A group.
        let e = walk(&tag(20, 3)).unwrap_err();
        assert!(e.to_string().contains("group"), "{e}");
        // A length past the end.
        let e = walk(&[0x3a, 0x05, 0x00]).unwrap_err();
        assert!(e.to_string().contains("remain"), "{e}");
        // A truncated varint.
        let e = walk(&[0x08, 0x80]).unwrap_err();
        assert!(e.to_string().contains("varint"), "{e}");
        // An 11-byte varint.
        let mut long = vec![0x08];
        long.extend([0xff; 10]);
        long.push(0x01);
        assert!(walk(&long).is_err());
        // Field number 0.
        assert!(walk(&[0x00, 0x00]).is_err());
    }

    #[test]
    fn reports_repeated_singular_fields_and_unknown_fields() {
        let mut model = vec![0x08, 0x07, 0x08, 0x08];
        model.extend(tag(100, 0));
        model.push(1);
        let w = walk(&model).unwrap();
        assert_eq!(w.findings.len(), 2);
        assert_eq!(w.findings[0].severity, Severity::Fail);
        assert!(w.findings[0].reason.contains("ir_version"));
        assert_eq!(w.findings[1].severity, Severity::Lead);
        assert!(w.findings[1].reason.contains("field 100"));
    }

    #[test]
    fn bounds_nesting_and_decoded_size() {
        // graph.node.attribute.g.node.attribute.g... deeper than the limit.
        let mut inner: Vec<u8> = Vec::new();
        for _ in 0..60 {
            let attr = len_field(6, &inner); // AttributeProto.g
            let node = len_field(5, &attr); // NodeProto.attribute
            inner = len_field(1, &node); // GraphProto.node
        }
        let model = len_field(7, &inner);
        let e = walk(&model).unwrap_err();
        assert!(e.to_string().contains("nested"), "{e}");
        // A million empty nodes: 2 MB of input, hundreds of MB decoded.
        let mut graph = Vec::new();
        for _ in 0..1_000_000 {
            graph.extend([0x0a, 0x00]);
        }
        let model = len_field(7, &graph);
        let e = walk(&model).unwrap_err();
        assert!(matches!(e, WireError::TooCostly { .. }), "{e}");
    }
}
