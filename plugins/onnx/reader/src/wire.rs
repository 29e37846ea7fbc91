//! The wire-level pre-pass over a `ModelProto`: the kit's walk
//! ([`socair_plugin_kit::protobuf::walk`]) by the field table generated from onnx.proto
//! ([`crate::proto::schema`]), **before** prost decodes anything. The walk refuses what is
//! malformed, bounds what decoding will allocate, and reports singular fields given twice and
//! fields onnx.proto does not define (see the kit's module for each rule); this file is
//! ONNX's part of it, which
//!
//! * locates, for each initializer of the main graph and each tensor in an attribute of a
//!   main-graph node (a Constant's `value`), the packed `float_data` and `double_data`
//!   payloads (fixed-width little-endian, so their bytes are the tensor's) and the `raw_data`
//!   payload, which the reader cross-checks against what prost decoded; and for the
//!   attributes of main-graph nodes, the 4 bytes of `f` and the packed `floats` payloads (a
//!   Constant's `value_float` and `value_floats`).

use crate::proto::schema::{
    ATTRIBUTE_PROTO, GRAPH_PROTO, MESSAGES, MODEL_PROTO, NODE_PROTO, TENSOR_PROTO,
};
use socair_plugin_kit::protobuf::schema::Field;
use socair_plugin_kit::protobuf::walk::{self as kit, Core, Dialect, Visitor};

pub use socair_plugin_kit::protobuf::read_varint;
pub use socair_plugin_kit::protobuf::walk::{
    overhead_limit, Severity, WireError, WireFinding, MAX_DEPTH,
};

/// How the walk names onnx.proto.
const ONNX: Dialect = Dialect {
    messages: MESSAGES,
    schema: "onnx.proto",
    versioned: "onnx.proto 1.23",
    undefined_kind: "fields onnx.proto does not define",
    root: "model",
    overhead_factor: 2,
};

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

/// The walk's record of what ONNX needs located.
struct Onnx {
    walk: Walk,
}

/// Walks `buf` as an `onnx.ModelProto`.
pub fn walk(buf: &[u8]) -> Result<Walk, WireError> {
    let mut v = Onnx {
        walk: Walk::default(),
    };
    let walked = kit::walk(buf, ONNX, MODEL_PROTO, Role::Model, &mut v)?;
    v.walk.findings = walked.findings;
    v.walk.suppressed = walked.suppressed;
    v.walk.overhead = walked.overhead;
    Ok(v.walk)
}

impl Visitor for Onnx {
    type Role = Role;

    fn enter(
        &mut self,
        core: &mut Core<'_>,
        role: Role,
        field: &'static Field,
        child: usize,
        index: u64,
        tag_at: usize,
    ) -> Result<Role, WireError> {
        Ok(match (role, field.number) {
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
                let slot = self.attribute_slot(core, tag_at, n, a)?;
                self.walk.attributes[slot]
                    .t
                    .get_or_insert_with(TensorSpans::default);
                Role::Tensor(TensorSlot::Attribute(slot))
            }
            _ => Role::Other,
        })
    }

    fn bytes(
        &mut self,
        _core: &mut Core<'_>,
        role: Role,
        field: &'static Field,
        (p0, p1): (usize, usize),
        _tag_at: usize,
    ) -> Result<(), WireError> {
        if let (Role::Tensor(slot), 9) = (role, field.number) {
            if let Some(spans) = self.tensor_spans(slot) {
                spans.raw_data = Some((p0 as u64, (p1 - p0) as u64));
            }
        }
        Ok(())
    }

    fn packed_fixed(
        &mut self,
        core: &mut Core<'_>,
        role: Role,
        field: &'static Field,
        span: (u64, u64),
        tag_at: usize,
    ) -> Result<(), WireError> {
        self.locate(core, tag_at, role, field.number, Some(span))
    }

    fn unpacked(
        &mut self,
        core: &mut Core<'_>,
        role: Role,
        field: &'static Field,
        tag_at: usize,
    ) -> Result<(), WireError> {
        self.locate(core, tag_at, role, field.number, None)
    }

    fn scalar(
        &mut self,
        core: &mut Core<'_>,
        role: Role,
        field: &'static Field,
        (p0, p1): (usize, usize),
        tag_at: usize,
    ) -> Result<(), WireError> {
        if let (Role::MainAttribute(n, a), 2) = (role, field.number) {
            // `f`, a fixed32: its 4 bytes are a float32 as the file holds it.
            let slot = self.attribute_slot(core, tag_at, n, a)?;
            self.walk.attributes[slot].f = Some((p0 as u64, (p1 - p0) as u64));
        }
        Ok(())
    }
}

impl Onnx {
    /// The index in `walk.attributes` of attribute `a` of main-graph node `n`, recorded now
    /// if it is not yet (the fields of one attribute are walked together, so it can only be
    /// the last one).
    fn attribute_slot(
        &mut self,
        core: &mut Core<'_>,
        at: usize,
        n: usize,
        a: usize,
    ) -> Result<usize, WireError> {
        if let Some(last) = self.walk.attributes.last() {
            if (last.node, last.attribute) == (n, a) {
                return Ok(self.walk.attributes.len() - 1);
            }
        }
        core.cost(at, ATTRIBUTE_SPANS_COST, "attribute records")?;
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
        core: &mut Core<'_>,
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
                let slot = self.attribute_slot(core, at, n, a)?;
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
