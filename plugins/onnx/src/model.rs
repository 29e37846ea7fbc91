//! The ONNX model as socair sees it: every initializer of the main graph, and the value of
//! every Constant node of the main graph (named by the node's output), located as byte ranges
//! (in the file, or in an external data file beside it) or decoded from the numbers the file
//! holds ([`crate::decode`]); everything else that holds tensors named as not carried, and the
//! findings of the checks.
//!
//! [`parse`] is a pure function over the file's bytes: the wire pre-pass ([`crate::wire`])
//! refuses or bounds the file first, then prost decodes it from a `Bytes` buffer so that every
//! `raw_data` is a zero-copy slice of the file whose offset is known.

use crate::bounded::{self, Listing};
use crate::decode;
use crate::proto::onnx::{
    tensor_proto, AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto,
};
use crate::wire::{self, Severity, TensorSpans};
use bytes::Bytes;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};

pub use crate::error::{OnnxError, MAX_MODEL_LEN};

/// One located tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name.
    pub name: String,
    /// Its element type in socair's names (`F32`, …).
    pub dtype: &'static str,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Its bytes, `(offset, len)`, in element order.
    pub ranges: Vec<(u64, u64)>,
    /// The external data file (relative to the model's directory), when not this file.
    pub file: Option<String>,
    /// The tensor's bytes as decoded by the reader (its elements' little-endian bytes in
    /// row-major order, what `onnx.numpy_helper.to_array` returns), when the file holds its
    /// values as numbers rather than as those bytes (varint-coded, or one tag per value):
    /// `ranges` is then empty and `file` none.
    pub inline: Option<Vec<u8>>,
}

/// A tensor (or the file) not located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadTensor {
    /// Its name, when it has one.
    pub name: Option<String>,
    /// Why, naming the place.
    pub reason: String,
    /// Sound but outside socair's model of the file (not carried by a conversion).
    pub outside_model: bool,
}

/// A finding of the structure check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// FAIL or LEAD.
    pub severity: Severity,
    /// Where.
    pub place: String,
    /// What.
    pub reason: String,
}

/// What the reader made of a model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Model {
    /// `ir_version`.
    pub ir_version: Option<i64>,
    /// The main graph's initializers that were located, in file order, then the values of
    /// its Constant nodes, in node order (each named by the node's output).
    pub tensors: Vec<Tensor>,
    /// Those that were not, and tensors elsewhere in the model.
    pub unread: Vec<UnreadTensor>,
    /// Findings.
    pub findings: Vec<Finding>,
    /// Model metadata as strings.
    pub metadata: Vec<(String, String)>,
    /// Initializers in the main graph (located or not).
    pub initializers: usize,
    /// Constant nodes in the main graph (their values located or not).
    pub constants: usize,
}

/// An ONNX data type: its name, and socair's element type and width when it has one.
pub fn data_type(code: i32) -> Option<(&'static str, Option<(&'static str, u64)>)> {
    Some(match code {
        0 => ("UNDEFINED", None),
        1 => ("FLOAT", Some(("F32", 4))),
        2 => ("UINT8", Some(("U8", 1))),
        3 => ("INT8", Some(("I8", 1))),
        4 => ("UINT16", Some(("U16", 2))),
        5 => ("INT16", Some(("I16", 2))),
        6 => ("INT32", Some(("I32", 4))),
        7 => ("INT64", Some(("I64", 8))),
        8 => ("STRING", None),
        9 => ("BOOL", Some(("BOOL", 1))),
        10 => ("FLOAT16", Some(("F16", 2))),
        11 => ("DOUBLE", Some(("F64", 8))),
        12 => ("UINT32", Some(("U32", 4))),
        13 => ("UINT64", Some(("U64", 8))),
        // Two little-endian binary32 values, real first: safetensors' C64 exactly.
        14 => ("COMPLEX64", Some(("C64", 8))),
        15 => ("COMPLEX128", None),
        16 => ("BFLOAT16", Some(("BF16", 2))),
        17 => ("FLOAT8E4M3FN", Some(("F8_E4M3", 1))),
        18 => ("FLOAT8E4M3FNUZ", Some(("F8_E4M3FNUZ", 1))),
        19 => ("FLOAT8E5M2", Some(("F8_E5M2", 1))),
        20 => ("FLOAT8E5M2FNUZ", Some(("F8_E5M2FNUZ", 1))),
        21 => ("UINT4", None),
        22 => ("INT4", None),
        23 => ("FLOAT4E2M1", None),
        24 => ("FLOAT8E8M0", Some(("F8_E8M0", 1))),
        25 => ("UINT2", None),
        26 => ("INT2", None),
        27 => ("FLOAT6E2M3", None),
        28 => ("FLOAT6E3M2", None),
        _ => return None,
    })
}

/// The width of one of socair's element types this reader emits.
pub fn data_type_width(element: &str) -> Option<(i32, u64)> {
    (0..=28).find_map(|code| match data_type(code) {
        Some((_, Some((e, w)))) if e == element => Some((code, w)),
        _ => None,
    })
}

/// Types onnx.proto allows in `int32_data`.
const INT32_DATA_TYPES: &[i32] = &[
    2, 3, 4, 5, 6, 9, 10, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
];

/// Parses a whole ONNX file.
pub fn parse(data: Bytes) -> Result<Model, OnnxError> {
    let len = data.len() as u64;
    if len == 0 {
        return Err(OnnxError::Empty);
    }
    if len > MAX_MODEL_LEN {
        return Err(OnnxError::TooLarge { len });
    }
    let walk = wire::walk(&data)?;
    let model = ModelProto::decode(data.clone()).map_err(|e| OnnxError::Decode(e.to_string()))?;
    let mut out = Model {
        ir_version: model.ir_version,
        ..Model::default()
    };
    for f in &walk.findings {
        out.findings.push(Finding {
            severity: f.severity,
            place: f.place.clone(),
            reason: f.reason.clone(),
        });
    }
    for &(kind, n) in &walk.suppressed {
        out.findings.push(Finding {
            severity: Severity::Lead,
            place: "model".into(),
            reason: bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
        });
    }
    let mut findings = Listing::new(bounded::FINDINGS_PER_KIND);
    let mut unread = Listing::new(bounded::UNREAD_PER_KIND);
    let fail = |findings: &mut Listing<Finding>,
                kind: &'static str,
                place: &dyn Fn() -> String,
                reason: &dyn Fn() -> String| {
        findings.push(kind, || Finding {
            severity: Severity::Fail,
            place: place(),
            reason: reason(),
        })
    };
    match model.ir_version {
        None => fail(&mut findings, "ir_version", &|| "model".into(), &|| {
            "ir_version is missing (onnx.proto: it MUST be present)".into()
        }),
        Some(v) if v < 1 => fail(
            &mut findings,
            "ir_version",
            &|| "model.ir_version".into(),
            &|| format!("ir_version {v} is not a version"),
        ),
        _ => {}
    }
    metadata(&model, &mut out);
    let Some(graph) = &model.graph else {
        fail(&mut findings, "graph", &|| "model".into(), &|| {
            "the model has no graph".into()
        });
        finish(&mut out, findings, unread);
        return Ok(out);
    };
    if graph.initializer.len() != walk.initializers.len() {
        return Err(OnnxError::Inconsistent(format!(
            "{} initializers decoded, {} walked",
            graph.initializer.len(),
            walk.initializers.len()
        )));
    }
    out.initializers = graph.initializer.len();
    if graph.node.len() != walk.main_nodes {
        return Err(OnnxError::Inconsistent(format!(
            "{} main-graph nodes decoded, {} walked",
            graph.node.len(),
            walk.main_nodes
        )));
    }
    // Every tensor described, with the place that names it in findings.
    let mut located: Vec<(String, Tensor)> = Vec::new();
    for (i, (t, spans)) in graph.initializer.iter().zip(&walk.initializers).enumerate() {
        let name = t.name.as_deref().unwrap_or_default();
        let place = || format!("graph.initializer[{i}] {:?}", bounded::short(name));
        match describe(t, spans, &data)? {
            Ok(tensor) => located.push((place(), tensor)),
            Err(problem) => {
                if let Some(severity) = problem.severity {
                    findings.push(problem.kind, || Finding {
                        severity,
                        place: place(),
                        reason: problem.reason.clone(),
                    });
                }
                unread.push(problem.kind, || UnreadTensor {
                    name: Some(name.to_owned()),
                    reason: format!("{}: {}", place(), problem.reason),
                    outside_model: false,
                });
            }
        }
    }
    // Names: every initializer (and sparse initializer) has one, and no two share it; nor
    // does a Constant's output (onnx.checker: "Graph must be in single static assignment
    // (SSA) form").
    let mut by_name: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (i, t) in graph.initializer.iter().enumerate() {
        let name = t.name.as_deref().unwrap_or("");
        by_name
            .entry(name)
            .or_default()
            .push(format!("graph.initializer[{i}]"));
    }
    for (i, s) in graph.sparse_initializer.iter().enumerate() {
        let name = s
            .values
            .as_ref()
            .and_then(|v| v.name.as_deref())
            .unwrap_or("");
        by_name
            .entry(name)
            .or_default()
            .push(format!("graph.sparse_initializer[{i}]"));
    }
    for (n, node) in graph.node.iter().enumerate() {
        if !is_constant(node) {
            continue;
        }
        out.constants += 1;
        let place = format!(
            "graph.node[{n}] Constant {:?}",
            bounded::short(node.name.as_deref().unwrap_or(""))
        );
        let Some(output) = node.output.first().filter(|o| !o.is_empty()) else {
            fail(
                &mut findings,
                "Constants refused",
                &|| place.clone(),
                &|| "a Constant node without an output name (onnx.checker requires one)".into(),
            );
            unread.push("Constants refused", || UnreadTensor {
                name: None,
                reason: format!("{place}: a Constant node without an output name"),
                outside_model: false,
            });
            continue;
        };
        by_name
            .entry(output.as_str())
            .or_default()
            .push(format!("graph.node[{n}] Constant"));
        match constant(node, n, &walk, &data)? {
            Ok(mut tensor) => {
                tensor.name = output.clone();
                located.push((place, tensor));
            }
            Err(problem) => {
                if let Some(severity) = problem.severity {
                    findings.push(problem.kind, || Finding {
                        severity,
                        place: format!("{place} output {:?}", bounded::short(output)),
                        reason: problem.reason.clone(),
                    });
                }
                unread.push(problem.kind, || UnreadTensor {
                    name: Some(output.clone()),
                    reason: format!("{place}: {}", problem.reason),
                    outside_model: problem.outside_model,
                });
            }
        }
    }
    let mut refused: BTreeSet<String> = BTreeSet::new();
    for (name, places) in &by_name {
        if name.is_empty() {
            for p in places {
                fail(
                    &mut findings,
                    "initializers without a name",
                    &|| p.clone(),
                    &|| "an initializer without a name (onnx.proto: each MUST have one)".into(),
                );
            }
            refused.insert(String::new());
        } else if places.len() > 1 {
            for p in &places[1..] {
                fail(
                    &mut findings,
                    "duplicate names",
                    &|| format!("{p} {:?}", bounded::short(name)),
                    &|| {
                        format!(
                        "duplicate name: {} also defines {:?} (onnx.checker: the graph is not in single static assignment form); which one a runtime binds is up to the runtime",
                        places[0],
                        bounded::short(name)
                    )
                    },
                );
            }
            refused.insert((*name).to_owned());
        }
    }
    let limit = bounded::described_limit(len);
    // Decoded bytes held at once: at most 8x the input (each value decoded has at least one
    // byte of the file and yields at most 8).
    let inline_limit = len.saturating_mul(8);
    let mut inline_total = 0u64;
    let mut past_budget = 0u64;
    let mut past_decoded = 0u64;
    for (place, t) in located {
        let inline_len = t.inline.as_ref().map_or(0, |b| b.len() as u64);
        if refused.contains(&t.name) {
            unread.push("tensors whose name is not unique", || UnreadTensor {
                name: Some(t.name.clone()),
                reason: format!(
                    "{place} {:?}: its name is not unique (or empty), so it cannot be told apart",
                    bounded::short(&t.name)
                ),
                outside_model: false,
            });
        } else if out.tensors.len() as u64 >= limit {
            past_budget += 1;
            unread.push("tensors past the budget", || UnreadTensor {
                name: Some(t.name.clone()),
                reason: budget_reason(limit, len),
                outside_model: false,
            });
        } else if inline_total.saturating_add(inline_len) > inline_limit {
            past_decoded += 1;
            unread.push("tensors past the budget", || UnreadTensor {
                name: Some(t.name.clone()),
                reason: format!(
                    "{place}: its {} decoded bytes would take the bytes decoded from this {}-byte model past {} (8 times its size)",
                    bounded::thousands(inline_len),
                    bounded::thousands(len),
                    bounded::thousands(inline_limit)
                ),
                outside_model: false,
            });
        } else {
            inline_total += inline_len;
            out.tensors.push(t);
        }
    }
    if past_budget > 0 {
        findings.push("tensors past the budget", || Finding {
            severity: Severity::Lead,
            place: "graph".into(),
            reason: format!(
                "{} located tensors are past the budget: {}",
                bounded::thousands(past_budget),
                budget_reason(limit, len)
            ),
        });
    }
    if past_decoded > 0 {
        findings.push("tensors past the decoding budget", || Finding {
            severity: Severity::Lead,
            place: "graph".into(),
            reason: format!(
                "{} tensors are not decoded: socair decodes at most {} bytes (8 times the file's size) of values the file holds as numbers",
                bounded::thousands(past_decoded),
                bounded::thousands(inline_limit)
            ),
        });
    }
    // Tensors outside the main graph's dense initializers: named, not carried.
    let mut domains = BTreeSet::new();
    outside_graph(graph, "graph", true, &mut unread, &mut domains);
    for (i, f) in model.functions.iter().enumerate() {
        outside_nodes(
            &f.node,
            &format!("functions[{i}]"),
            false,
            &mut unread,
            &mut domains,
        );
    }
    for (i, t) in model.training_info.iter().enumerate() {
        for (what, g) in [
            ("initialization", &t.initialization),
            ("algorithm", &t.algorithm),
        ] {
            if let Some(g) = g {
                outside_graph(
                    g,
                    &format!("training_info[{i}].{what}"),
                    false,
                    &mut unread,
                    &mut domains,
                );
            }
        }
    }
    if !domains.is_empty() {
        let mut listed: Vec<String> = domains.into_iter().collect();
        if listed.len() > MAX_DOMAINS_LISTED {
            let more = listed.len() - MAX_DOMAINS_LISTED;
            listed.truncate(MAX_DOMAINS_LISTED);
            listed.push(format!("… and {} more", bounded::thousands(more as u64)));
        }
        out.metadata
            .push(("onnx.op_domains".into(), listed.join(",")));
    }
    finish(&mut out, findings, unread);
    Ok(out)
}

/// Most dimensions of a tensor described: numpy's `NPY_MAXDIMS`.
pub const MAX_RANK: usize = 64;

/// Operator domains listed in `onnx.op_domains` (a model uses a handful).
pub const MAX_DOMAINS_LISTED: usize = 1_000;

/// Metadata entries (`metadata_props`) passed on (a model has a handful).
pub const MAX_METADATA_LISTED: usize = 65_536;

fn budget_reason(limit: u64, len: u64) -> String {
    format!(
        "socair describes at most {} tensors for a {}-byte model (16,384 plus one per 256 bytes), so the rest are not fingerprinted",
        bounded::thousands(limit),
        bounded::thousands(len)
    )
}

/// Moves the listed findings and unread tensors into `out`, each kind past its limit counted
/// in one final entry.
fn finish(out: &mut Model, findings: Listing<Finding>, unread: Listing<UnreadTensor>) {
    let (kept, over) = findings.finish();
    out.findings.extend(kept);
    for (kind, n) in over {
        out.findings.push(Finding {
            severity: Severity::Lead,
            place: "model".into(),
            reason: bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
        });
    }
    let (kept, over) = unread.finish();
    out.unread.extend(kept);
    for (kind, n) in over {
        out.unread.push(UnreadTensor {
            name: None,
            reason: bounded::and_more(n, kind, bounded::UNREAD_PER_KIND),
            outside_model: kind == OUTSIDE,
        });
    }
}

/// The kind of every tensor outside the main graph's dense initializers (not carried).
const OUTSIDE: &str = "tensors outside the main graph's initializers";

fn metadata(model: &ModelProto, out: &mut Model) {
    let m = &mut out.metadata;
    if let Some(v) = model.ir_version {
        m.push(("onnx.ir_version".into(), v.to_string()));
    }
    if !model.opset_import.is_empty() {
        let opsets: Vec<String> = model
            .opset_import
            .iter()
            .map(|o| {
                let domain = o
                    .domain
                    .as_deref()
                    .filter(|d| !d.is_empty())
                    .unwrap_or("ai.onnx");
                format!("{domain}:{}", o.version.unwrap_or(0))
            })
            .collect();
        m.push(("onnx.opset_import".into(), opsets.join(",")));
    }
    for (key, value) in [
        ("onnx.producer_name", &model.producer_name),
        ("onnx.producer_version", &model.producer_version),
        ("onnx.domain", &model.domain),
    ] {
        if let Some(v) = value {
            m.push((key.into(), v.clone()));
        }
    }
    if let Some(v) = model.model_version {
        m.push(("onnx.model_version".into(), v.to_string()));
    }
    for p in model.metadata_props.iter().take(MAX_METADATA_LISTED) {
        m.push((
            format!("onnx.metadata_props.{}", p.key.as_deref().unwrap_or("")),
            p.value.clone().unwrap_or_default(),
        ));
    }
    if model.metadata_props.len() > MAX_METADATA_LISTED {
        m.push((
            "onnx.metadata_props (socair: not listed)".into(),
            format!(
                "{} more entries are not listed",
                bounded::thousands((model.metadata_props.len() - MAX_METADATA_LISTED) as u64)
            ),
        ));
    }
    if !model.functions.is_empty() {
        m.push(("onnx.functions".into(), model.functions.len().to_string()));
    }
}

fn outside_graph(
    g: &GraphProto,
    place: &str,
    main: bool,
    unread: &mut Listing<UnreadTensor>,
    domains: &mut BTreeSet<String>,
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
    outside_nodes(&g.node, place, main, unread, domains);
}

/// Lists the tensors held by the attributes of `nodes` (and their subgraphs) as not carried;
/// in the main graph (`main`), a Constant's value is the Constant's own tensor, read by
/// [`constant`], and is not listed here.
fn outside_nodes(
    nodes: &[NodeProto],
    place: &str,
    main: bool,
    unread: &mut Listing<UnreadTensor>,
    domains: &mut BTreeSet<String>,
) {
    for (n, node) in nodes.iter().enumerate() {
        let domain = node
            .domain
            .as_deref()
            .filter(|d| !d.is_empty())
            .unwrap_or("ai.onnx");
        if domains.len() <= MAX_DOMAINS_LISTED && !domains.contains(domain) {
            domains.insert(domain.to_owned());
        }
        let node_place = || {
            format!(
                "{place}.node[{n}] {} {:?}",
                bounded::short(node.op_type.as_deref().unwrap_or("")),
                bounded::short(node.name.as_deref().unwrap_or(""))
            )
        };
        let constant = is_constant(node);
        for a in &node.attribute {
            let name = a.name.as_deref().unwrap_or("");
            let value = constant && CONSTANT_VALUES.contains(&name);
            if main && value {
                continue;
            }
            let attr = bounded::short(name);
            for t in a.t.iter().chain(&a.tensors) {
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
                            "{} attribute {attr:?}: a tensor held by a node attribute, not an initializer or a Constant's value; this reader does not carry it",
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
                    domains,
                );
            }
        }
    }
}

/// Why an initializer was not located; `severity` when it is a finding too.
#[derive(Debug)]
struct Problem {
    severity: Option<Severity>,
    /// Sound but outside socair's model of the file (not carried by a conversion).
    outside_model: bool,
    /// The kind it is counted under when there are many.
    kind: &'static str,
    reason: String,
}

fn problem(severity: Option<Severity>, reason: impl Into<String>) -> Problem {
    Problem {
        severity,
        outside_model: false,
        kind: match severity {
            Some(Severity::Fail) => "initializers refused",
            Some(Severity::Lead) => "initializers not proved",
            None => "initializers with no byte range",
        },
        reason: reason.into(),
    }
}

fn fail(reason: impl Into<String>) -> Problem {
    problem(Some(Severity::Fail), reason)
}

/// Whether `node` is the ONNX `Constant` operator (of the default domain: a Constant of
/// another domain is some other operator).
fn is_constant(node: &NodeProto) -> bool {
    node.op_type.as_deref() == Some("Constant")
        && matches!(node.domain.as_deref(), None | Some("" | "ai.onnx"))
}

/// The attributes of a Constant that hold its value (`onnx/defs/generator/defs.cc`).
const CONSTANT_VALUES: &[&str] = &[
    "value",
    "value_float",
    "value_floats",
    "value_int",
    "value_ints",
    "value_string",
    "value_strings",
    "sparse_value",
];

/// The value of main-graph Constant node `n`, as the tensor the node outputs (its name is set
/// by the caller). The outer error is an internal inconsistency.
///
/// What the operator outputs (onnx/defs/generator/defs.cc, and the reference implementation
/// `onnx/reference/ops/op_constant.py`): `value` its tensor; `value_float` a FLOAT scalar;
/// `value_floats` a 1-D FLOAT tensor; `value_int` an INT64 scalar; `value_ints` a 1-D INT64
/// tensor. `value_string(s)` have no fixed-width element type and `sparse_value` is a sparse
/// tensor: both are listed as not read.
fn constant(
    node: &NodeProto,
    n: usize,
    walk: &wire::Walk,
    base: &Bytes,
) -> Result<Result<Tensor, Problem>, OnnxError> {
    let values: Vec<(usize, &AttributeProto)> = node
        .attribute
        .iter()
        .enumerate()
        .filter(|(_, a)| CONSTANT_VALUES.contains(&a.name.as_deref().unwrap_or("")))
        .collect();
    if values.len() != 1 {
        let names: Vec<&str> = values
            .iter()
            .map(|(_, a)| a.name.as_deref().unwrap_or(""))
            .collect();
        return Ok(Err(fail(format!(
            "{} of its attributes hold a value ({}); onnx requires exactly one (\"Only one of the attributes 'value', 'value_*' or 'sparse_value' must be specified for a Constant node.\"), so readers may take any",
            values.len(),
            names.join(", ")
        ))));
    }
    if node.output.len() != 1 {
        return Ok(Err(fail(format!(
            "it has {} outputs; the Constant operator has one",
            node.output.len()
        ))));
    }
    let (index, a) = values[0];
    let attr = a.name.as_deref().unwrap_or("");
    // onnx.checker: "Attribute should contain one and only one value field."
    let fields = [
        a.f.is_some(),
        a.i.is_some(),
        a.s.is_some(),
        a.t.is_some(),
        a.g.is_some(),
        a.sparse_tensor.is_some(),
        a.tp.is_some(),
        !a.floats.is_empty(),
        !a.ints.is_empty(),
        !a.strings.is_empty(),
        !a.tensors.is_empty(),
        !a.graphs.is_empty(),
        !a.sparse_tensors.is_empty(),
        !a.type_protos.is_empty(),
    ]
    .into_iter()
    .filter(|&present| present)
    .count();
    if fields > 1 {
        return Ok(Err(fail(format!(
            "attribute {attr:?} holds {fields} value fields; onnx.checker requires one (\"Attribute should contain one and only one value field.\"), so readers may take any"
        ))));
    }
    let spans = walk.attribute(n, index);
    let missing = |field: &str| {
        Ok(Err(fail(format!(
            "attribute {attr:?} does not hold its value in `{field}`"
        ))))
    };
    let inconsistent = || {
        OnnxError::Inconsistent(format!(
            "graph.node[{n}].attribute[{index}] decoded, not walked"
        ))
    };
    let tensor =
        |shape: Vec<u64>, dtype, ranges: Vec<(u64, u64)>, inline: Option<Vec<u8>>| Tensor {
            name: String::new(),
            dtype,
            shape,
            ranges,
            file: None,
            inline,
        };
    match attr {
        "value" => {
            let Some(t) = &a.t else { return missing("t") };
            let spans = spans.and_then(|s| s.t.as_ref()).ok_or_else(inconsistent)?;
            describe(t, spans, base)
        }
        "value_float" => {
            if a.f.is_none() {
                return missing("f");
            }
            let span = spans.and_then(|s| s.f).ok_or_else(inconsistent)?;
            Ok(Ok(tensor(Vec::new(), "F32", vec![span], None)))
        }
        "value_floats" => {
            let shape = vec![a.floats.len() as u64];
            let size = a.floats.len() as u64 * 4;
            if size == 0 {
                return Ok(Ok(tensor(shape, "F32", vec![(0, 0)], None)));
            }
            let spans = spans.ok_or_else(inconsistent)?;
            if spans.floats_unpacked {
                // One tag per value (proto2's default, as the Python protobuf writes
                // `floats`): no byte range holds them alone.
                return Ok(Ok(tensor(shape, "F32", Vec::new(), Some(decode::floats(&a.floats)))));
            }
            let walked: u64 = spans.floats.iter().map(|s| s.1).sum();
            if walked != size {
                return Err(OnnxError::Inconsistent(format!(
                    "floats: {size} bytes decoded, {walked} walked"
                )));
            }
            let ranges = spans.floats.iter().copied().filter(|s| s.1 > 0).collect();
            Ok(Ok(tensor(shape, "F32", ranges, None)))
        }
        "value_int" => match a.i {
            Some(i) => Ok(Ok(tensor(Vec::new(), "I64", Vec::new(), Some(decode::int64s(&[i]))))),
            None => missing("i"),
        },
        "value_ints" => {
            let shape = vec![a.ints.len() as u64];
            Ok(Ok(if a.ints.is_empty() {
                tensor(shape, "I64", vec![(0, 0)], None)
            } else {
                tensor(shape, "I64", Vec::new(), Some(decode::int64s(&a.ints)))
            }))
        }
        "sparse_value" => Ok(Err(Problem {
            outside_model: true,
            ..problem(
                None,
                "its value is a sparse tensor (values and indices), which this reader does not carry",
            )
        })),
        _ => Ok(Err(problem(
            None,
            format!("its value ({attr}) is STRING, which has no fixed-width element type in socair's vocabulary"),
        ))),
    }
}

/// Locates one main-graph initializer, or the tensor of a Constant's `value`. The outer error is an internal inconsistency.
fn describe(
    t: &TensorProto,
    spans: &TensorSpans,
    base: &Bytes,
) -> Result<Result<Tensor, Problem>, OnnxError> {
    let code = t.data_type.unwrap_or(0);
    let Some((onnx_name, element)) = data_type(code) else {
        return Ok(Err(problem(
            Some(Severity::Lead),
            format!("data_type {code} is not defined in onnx.proto 1.23"),
        )));
    };
    if code == 0 {
        return Ok(Err(fail("data_type is UNDEFINED (or missing)")));
    }
    if t.dims.len() > MAX_RANK {
        return Ok(Err(problem(
            Some(Severity::Lead),
            format!(
                "it has {} dimensions; numpy (NPY_MAXDIMS, which onnx.numpy_helper goes through) holds at most {MAX_RANK}",
                t.dims.len()
            ),
        )));
    }
    let mut shape = Vec::with_capacity(t.dims.len());
    let mut count = 1u64;
    for (k, &d) in t.dims.iter().enumerate() {
        let Ok(d) = u64::try_from(d) else {
            return Ok(Err(fail(format!("dims[{k}] is {d}, negative"))));
        };
        count = match count.checked_mul(d) {
            Some(c) => c,
            None => return Ok(Err(fail("its dims overflow 64 bits"))),
        };
        shape.push(d);
    }
    let location = t.data_location.unwrap_or(0);
    if location != tensor_proto::DataLocation::Default as i32
        && location != tensor_proto::DataLocation::External as i32
    {
        return Ok(Err(fail(format!(
            "data_location {location} is neither DEFAULT (0) nor EXTERNAL (1)"
        ))));
    }
    let external = location == tensor_proto::DataLocation::External as i32;
    let sources: Vec<&str> = [
        ("raw_data", t.raw_data.is_some()),
        ("float_data", !t.float_data.is_empty()),
        ("int32_data", !t.int32_data.is_empty()),
        ("string_data", !t.string_data.is_empty()),
        ("int64_data", !t.int64_data.is_empty()),
        ("double_data", !t.double_data.is_empty()),
        ("uint64_data", !t.uint64_data.is_empty()),
    ]
    .into_iter()
    .filter(|(_, present)| *present)
    .map(|(name, _)| name)
    .collect();
    if sources.len() > 1 {
        return Ok(Err(fail(format!(
            "its values are in more than one field ({}): readers may take either",
            sources.join(", ")
        ))));
    }
    if external && !sources.is_empty() {
        return Ok(Err(fail(format!(
            "data_location is EXTERNAL but it also holds {} in the file: readers may take either",
            sources[0]
        ))));
    }
    if !external && !t.external_data.is_empty() {
        return Ok(Err(fail(
            "it has external_data entries but data_location is not EXTERNAL: readers may take either",
        )));
    }
    if let Some(seg) = &t.segment {
        return Ok(Err(problem(
            Some(Severity::Lead),
            format!(
                "it holds only the segment {}..{} of a larger tensor; segments are not assembled",
                seg.begin.unwrap_or(0),
                seg.end.unwrap_or(0)
            ),
        )));
    }
    let Some((element, width)) = element else {
        return Ok(Err(problem(
            None,
            format!("{onnx_name} has no fixed-width element type in socair's vocabulary"),
        )));
    };
    let Some(size) = count.checked_mul(width) else {
        return Ok(Err(fail("its size in bytes overflows 64 bits")));
    };
    let tensor = |ranges: Vec<(u64, u64)>, file: Option<String>| Tensor {
        name: t.name.clone().unwrap_or_default(),
        dtype: element,
        shape: shape.clone(),
        ranges,
        file,
        inline: None,
    };
    let decoded = |bytes: Vec<u8>| Tensor {
        name: t.name.clone().unwrap_or_default(),
        dtype: element,
        shape: shape.clone(),
        ranges: Vec::new(),
        file: None,
        inline: Some(bytes),
    };
    if external {
        return Ok(
            external_tensor(t, size).map(|(file, offset)| tensor(vec![(offset, size)], Some(file)))
        );
    }
    // Zero elements: one empty range, so that every descriptor has one.
    let empty = || vec![(0u64, 0u64)];
    match sources.first().copied() {
        None if count == 0 => Ok(Ok(tensor(empty(), None))),
        None => Ok(Err(fail(format!(
            "it holds no values for its {count} elements"
        )))),
        Some("raw_data") => {
            let raw = t.raw_data.as_ref().map_or(&[][..], |r| &r[..]);
            let raw_len = raw.len() as u64;
            if raw_len != size {
                return Ok(Err(fail(format!(
                    "raw_data holds {raw_len} bytes but {count} elements of {onnx_name} need {size}"
                ))));
            }
            // The zero-copy slice's place in the file, cross-checked with the wire walk.
            let walked = spans
                .raw_data
                .ok_or_else(|| OnnxError::Inconsistent("raw_data decoded but not walked".into()))?;
            if raw_len > 0 {
                let offset = (raw.as_ptr() as usize)
                    .checked_sub(base.as_ptr() as usize)
                    .filter(|o| o.checked_add(raw.len()).is_some_and(|e| e <= base.len()))
                    .ok_or_else(|| {
                        OnnxError::Inconsistent("raw_data is not a slice of the file".into())
                    })? as u64;
                if (offset, raw_len) != walked {
                    return Err(OnnxError::Inconsistent(format!(
                        "raw_data decoded at {offset}+{raw_len}, walked at {}+{}",
                        walked.0, walked.1
                    )));
                }
            }
            Ok(Ok(tensor(vec![walked], None)))
        }
        Some(field @ ("float_data" | "double_data")) => {
            let (allowed, values, packed) = if field == "float_data" {
                (
                    &[1, 14][..],
                    t.float_data.len() as u64 * 4,
                    &spans.float_data,
                )
            } else {
                (
                    &[11, 15][..],
                    t.double_data.len() as u64 * 8,
                    &spans.double_data,
                )
            };
            if !allowed.contains(&code) {
                return Ok(Err(fail(format!(
                    "{field} holds the values of a {onnx_name} tensor"
                ))));
            }
            if values != size {
                return Ok(Err(fail(format!(
                    "{field} holds {values} bytes but {count} elements of {onnx_name} need {size}"
                ))));
            }
            if spans.unpacked {
                // A tag before some values: no byte range holds the values alone, so their
                // own bits are the tensor's bytes (COMPLEX64: real, imaginary, as numpy views
                // the float32 pairs).
                return Ok(Ok(decoded(if field == "float_data" {
                    decode::floats(&t.float_data)
                } else {
                    decode::doubles(&t.double_data)
                })));
            }
            let walked: u64 = packed.iter().map(|s| s.1).sum();
            if walked != values {
                return Err(OnnxError::Inconsistent(format!(
                    "{field}: {values} bytes decoded, {walked} walked"
                )));
            }
            let ranges: Vec<(u64, u64)> = packed.iter().copied().filter(|s| s.1 > 0).collect();
            Ok(Ok(tensor(
                if ranges.is_empty() { empty() } else { ranges },
                None,
            )))
        }
        Some(field) => {
            let allowed: &[i32] = match field {
                "int32_data" => INT32_DATA_TYPES,
                "int64_data" => &[7],
                "uint64_data" => &[12, 13],
                _ => &[8],
            };
            if !allowed.contains(&code) {
                return Ok(Err(fail(format!(
                    "{field} holds the values of a {onnx_name} tensor"
                ))));
            }
            // Varint-coded: decoded to the bytes `onnx.numpy_helper.to_array` returns, or
            // refused where readers disagree on them (see `decode`).
            let bytes = match field {
                "int32_data" => decode::int32_data(code, onnx_name, &t.int32_data, count),
                "int64_data" => decode::int64_data(onnx_name, &t.int64_data, count),
                "uint64_data" => decode::uint64_data(code, onnx_name, &t.uint64_data, count),
                _ => {
                    return Ok(Err(problem(
                        None,
                        format!("{onnx_name} values in {field} have no fixed width"),
                    )))
                }
            };
            Ok(match bytes {
                Ok(bytes) => Ok(decoded(bytes)),
                Err(decode::Refused(why)) => Err(fail(why)),
            })
        }
    }
}

/// The external data file and offset of an `EXTERNAL` tensor of `size` bytes.
fn external_tensor(t: &TensorProto, size: u64) -> Result<(String, u64), Problem> {
    let mut entries: BTreeMap<&str, &str> = BTreeMap::new();
    for e in &t.external_data {
        let key = e.key.as_deref().unwrap_or("");
        if entries
            .insert(key, e.value.as_deref().unwrap_or(""))
            .is_some()
        {
            return Err(fail(format!(
                "external_data names key {key:?} twice: readers may take either"
            )));
        }
        if !["location", "offset", "length", "checksum"].contains(&key) {
            return Err(problem(
                Some(Severity::Lead),
                format!("external_data has the key {key:?}, which ONNX does not define"),
            ));
        }
    }
    let location = entries
        .get("location")
        .ok_or_else(|| fail("data_location is EXTERNAL but external_data has no location"))?;
    check_location(location)
        .map_err(|why| fail(format!("external data location {location:?} {why}")))?;
    let number = |key: &str| -> Result<Option<u64>, Problem> {
        let Some(v) = entries.get(key) else {
            return Ok(None);
        };
        if v.is_empty() || v.len() > 20 || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(fail(format!(
                "external_data {key} {v:?} is not a decimal byte count"
            )));
        }
        v.parse::<u64>()
            .map(Some)
            .map_err(|_| fail(format!("external_data {key} {v:?} does not fit 64 bits")))
    };
    let offset = number("offset")?.unwrap_or(0);
    if let Some(length) = number("length")? {
        if length != size {
            return Err(fail(format!(
                "external_data length {length} but its shape and type need {size} bytes"
            )));
        }
    }
    if offset.checked_add(size).is_none() {
        return Err(fail(format!(
            "external_data offset {offset} + {size} bytes overflows"
        )));
    }
    Ok(((*location).to_owned(), offset))
}

/// A location must be a plain relative path inside the model's directory: `/`-separated
/// names, none empty, `.` or `..`, no backslash, no NUL, not absolute.
pub fn check_location(location: &str) -> Result<(), &'static str> {
    if location.is_empty() {
        return Err("is empty");
    }
    if location.starts_with('/') {
        return Err("is absolute: it must be relative to the model's directory");
    }
    if location.contains('\\') {
        return Err("holds a backslash: it must be a `/`-separated relative path");
    }
    if location.contains('\0') {
        return Err("holds a NUL byte");
    }
    if location.len() >= 2
        && location.as_bytes()[1] == b':'
        && location.as_bytes()[0].is_ascii_alphabetic()
    {
        return Err("starts with a drive letter: it must be relative to the model's directory");
    }
    if location.contains('*') {
        // ONNX Runtime reads `*/_ORT_MEM_ADDR_/*` as "offset is a memory address".
        return Err("holds a `*` (ONNX Runtime's in-memory tag `*/_ORT_MEM_ADDR_/*` makes the offset a pointer)");
    }
    for part in location.split('/') {
        match part {
            ".." => return Err("has a `..` component: it must not leave the model's directory"),
            "" | "." => {
                return Err("has an empty or `.` component: it must be a plain relative path")
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{check_location, parse, Severity};
    use crate::proto::onnx::{
        AttributeProto, GraphProto, ModelProto, NodeProto, SparseTensorProto, TensorProto,
    };
    use prost::Message;

    fn attribute(name: &str, set: impl FnOnce(&mut AttributeProto)) -> AttributeProto {
        let mut a = AttributeProto {
            name: Some(name.into()),
            ..AttributeProto::default()
        };
        set(&mut a);
        a
    }

    fn node(op: &str, domain: &str, output: &str, attributes: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            domain: Some(domain.into()),
            output: vec![output.into()],
            attribute: attributes,
            ..NodeProto::default()
        }
    }

    fn model(nodes: Vec<NodeProto>) -> (Vec<u8>, super::Model) {
        let bytes = ModelProto {
            ir_version: Some(9),
            graph: Some(GraphProto {
                node: nodes,
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        }
        .encode_to_vec();
        let m = parse(bytes::Bytes::from(bytes.clone())).unwrap();
        (bytes, m)
    }

    #[test]
    fn constant_forms() {
        let (data, m) = model(vec![
            node(
                "Constant",
                "",
                "f",
                vec![attribute("value_float", |a| a.f = Some(0.125))],
            ),
            node(
                "Constant",
                "ai.onnx",
                "i",
                vec![attribute("value_int", |a| a.i = Some(-2))],
            ),
            node(
                "Constant",
                "",
                "s",
                vec![attribute("value_string", |a| {
                    a.s = Some(b"x".to_vec().into())
                })],
            ),
            node(
                "Constant",
                "",
                "sparse",
                vec![attribute("sparse_value", |a| {
                    a.sparse_tensor = Some(SparseTensorProto::default())
                })],
            ),
            // Two values: which one a runtime takes is up to it.
            node(
                "Constant",
                "",
                "two",
                vec![
                    attribute("value_float", |a| a.f = Some(1.0)),
                    attribute("value_int", |a| a.i = Some(1)),
                ],
            ),
            // A Constant of another domain is some other operator: its tensor is not read.
            node(
                "Constant",
                "com.example",
                "custom",
                vec![attribute("value", |a| {
                    a.t = Some(TensorProto {
                        data_type: Some(1),
                        raw_data: Some(vec![0; 4].into()),
                        ..TensorProto::default()
                    })
                })],
            ),
        ]);
        assert_eq!(m.constants, 5);
        let names: Vec<&str> = m.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["f", "i"]);
        let (o, l) = m.tensors[0].ranges[0];
        assert_eq!(&data[o as usize..(o + l) as usize], 0.125f32.to_le_bytes());
        assert!(m.tensors[0].shape.is_empty() && m.tensors[0].dtype == "F32");
        assert_eq!(
            m.tensors[1].inline.as_deref(),
            Some(&(-2i64).to_le_bytes()[..])
        );
        let unread = |n: &str| {
            m.unread
                .iter()
                .find(|u| u.name.as_deref() == Some(n))
                .unwrap()
        };
        assert!(unread("s").reason.contains("STRING") && !unread("s").outside_model);
        assert!(unread("sparse").outside_model);
        assert!(unread("two").reason.contains("exactly one"));
        assert!(unread("custom").outside_model);
        let fails: Vec<&str> = m
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Fail)
            .map(|f| f.place.as_str())
            .collect();
        assert_eq!(fails.len(), 1, "{:?}", m.findings);
        assert!(fails[0].contains("graph.node[4] Constant"), "{fails:?}");
    }

    #[test]
    fn external_locations_stay_plain_relative_paths() {
        assert!(check_location("weights.bin").is_ok());
        assert!(check_location("data/weights.bin").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "..\\x",
            "a/../../x",
            "./x",
            "a//b",
            "C:x",
            "*/_ORT_MEM_ADDR_/*",
            "a*b",
            "x\0y",
        ] {
            assert!(check_location(bad).is_err(), "{bad:?}");
        }
    }
}
