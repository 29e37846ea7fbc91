//! The tensors outside the model (subgraphs, repeated `tensors` node attributes, sparse
//! initializers, functions, training graphs): each listed as unread and not carried, and the
//! operator domains the nodes use. Apart from the main graph's own tensors (initializers,
//! Constant values, and the single tensor `t` of a main-graph node's attribute). Every node,
//! wherever it lies, is also asked whether its runtime runs Python (`python_ops`).

/// The kind under which nodes that run Python are listed.
pub(super) const PYTHON_OPS: &str = "nodes that run Python";

/// What the walk collects besides the unread tensors.
pub(super) struct Seen<'a> {
    /// Operator domains.
    pub(super) domains: &'a mut BTreeSet<String>,
    /// Findings on nodes that run Python.
    pub(super) findings: &'a mut Listing<Finding>,
}

use super::constant::{is_constant, CONSTANT_VALUES};
use super::python_ops::python_op;
use super::results::{Finding, UnreadTensor};
use crate::bounded::{self, Listing};
use crate::proto::onnx::{GraphProto, NodeProto};
use std::collections::BTreeSet;

/// Operator domains listed in `onnx.op_domains` (a model uses a handful).
pub const MAX_DOMAINS_LISTED: usize = 1_000;

/// The kind of every tensor outside the main graph's dense initializers (not carried).
pub(super) const OUTSIDE: &str = "tensors outside the main graph's initializers";

pub(super) fn outside_graph(
    g: &GraphProto,
    place: &str,
    main: bool,
    unread: &mut Listing<UnreadTensor>,
    seen: &mut Seen<'_>,
) {
    if !main {
        for (i, t) in g.initializer.iter().enumerate() {
            unread.push(OUTSIDE, || UnreadTensor {
                name: t.name.clone(),
                reason: format!(
                    "{place}.initializer[{i}] {:?}: an initializer of a subgraph or training graph, which this reader does not carry",
                    bounded::short(t.name.as_deref().unwrap_or(""))
                ),
                outside_model: true,
            });
        }
    }
    for (i, s) in g.sparse_initializer.iter().enumerate() {
        unread.push(OUTSIDE, || {
            let name = s.values.as_ref().and_then(|v| v.name.clone());
            UnreadTensor {
                reason: format!(
                    "{place}.sparse_initializer[{i}] {:?}: a sparse initializer (values and indices), which this reader does not carry",
                    bounded::short(name.as_deref().unwrap_or(""))
                ),
                name,
                outside_model: true,
            }
        });
    }
    outside_nodes(&g.node, place, main, unread, seen);
}

/// Lists the tensors held by the attributes of `nodes` (and their subgraphs) as not carried;
/// in the main graph (`main`), a Constant's value is the Constant's own tensor, read by
/// [`constant`], and is not listed here.
pub(super) fn outside_nodes(
    nodes: &[NodeProto],
    place: &str,
    main: bool,
    unread: &mut Listing<UnreadTensor>,
    seen: &mut Seen<'_>,
) {
    for (n, node) in nodes.iter().enumerate() {
        let domain = node
            .domain
            .as_deref()
            .filter(|d| !d.is_empty())
            .unwrap_or("ai.onnx");
        if seen.domains.len() <= MAX_DOMAINS_LISTED && !seen.domains.contains(domain) {
            seen.domains.insert(domain.to_owned());
        }
        let node_place = || {
            format!(
                "{place}.node[{n}] {} {:?}",
                bounded::short(node.op_type.as_deref().unwrap_or("")),
                bounded::short(node.name.as_deref().unwrap_or(""))
            )
        };
        if let Some((severity, reason)) = python_op(node) {
            seen.findings
                .push(PYTHON_OPS, || Finding::new(severity, node_place(), reason));
        }
        let constant = is_constant(node);
        for a in &node.attribute {
            let name = a.name.as_deref().unwrap_or("");
            let value = constant && CONSTANT_VALUES.contains(&name);
            if main && value {
                continue;
            }
            let attr = bounded::short(name);
            // A main-graph node's own `t` is read as a tensor of the model (`attribute.rs`).
            let single = if main { None } else { a.t.as_ref() };
            for t in single.into_iter().chain(&a.tensors) {
                unread.push(OUTSIDE, || UnreadTensor {
                    name: if value {
                        node.output.first().cloned()
                    } else {
                        t.name
                            .clone()
                            .filter(|n| !n.is_empty())
                            .or_else(|| node.output.first().cloned())
                    },
                    reason: if value {
                        format!(
                            "{} attribute {attr:?}: the value of a Constant outside the main graph (in a subgraph of If/Loop/Scan, a function or a training graph), which this reader does not carry: its name is local to that graph",
                            node_place()
                        )
                    } else {
                        format!(
                            "{} attribute {attr:?}: a tensor held by a node attribute outside the main graph (in a subgraph of If/Loop/Scan, a function or a training graph) or in a repeated `tensors` attribute, which this reader does not carry",
                            node_place()
                        )
                    },
                    outside_model: true,
                });
            }
            for s in a.sparse_tensor.iter().chain(&a.sparse_tensors) {
                unread.push(OUTSIDE, || UnreadTensor {
                    name: s.values.as_ref().and_then(|v| v.name.clone()),
                    reason: format!(
                        "{} attribute {attr:?}: a sparse tensor held by a node attribute; this reader does not carry it",
                        node_place()
                    ),
                    outside_model: true,
                });
            }
            for (k, g) in a.g.iter().chain(&a.graphs).enumerate() {
                outside_graph(
                    g,
                    &format!("{} attribute {attr:?} graph[{k}]", node_place()),
                    false,
                    unread,
                    seen,
                );
            }
        }
    }
}
