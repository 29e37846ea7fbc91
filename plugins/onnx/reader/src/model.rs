//! The ONNX model as socair sees it: every initializer of the main graph, and the value of
//! every Constant node of the main graph (named by the node's output), located as byte ranges
//! (in the file, or in an external data file beside it) or decoded from the numbers the file
//! holds ([`crate::decode`]); everything else that holds tensors named as not carried, and the
//! findings of the checks.
//!
//! [`parse`] is a pure function over the file's bytes: the wire pre-pass ([`crate::wire`])
//! refuses or bounds the file first, then prost decodes it from a `Bytes` buffer so that every
//! `raw_data` is a zero-copy slice of the file whose offset is known.
//!
//! This file holds [`parse`] itself: the pre-pass, the decode, the names and the budgets; the
//! parts apart are what it yields (`results`), the ONNX data types (`data_type`), one
//! tensor located (`tensor`), the value of a Constant node (`constant`), the tensors other
//! nodes' attributes hold (`attribute`: ConstantOfShape's value...), the tensors outside the
//! model (`outside`) and the model's metadata (`metadata`).

mod attribute;
mod constant;
mod data_type;
mod metadata;
mod outside;
mod python_ops;
mod results;
mod tensor;
#[cfg(test)]
mod tests;

use constant::{constant, is_constant};
pub use data_type::{data_type, data_type_width};
use metadata::metadata;
pub use metadata::MAX_METADATA_LISTED;
pub use outside::MAX_DOMAINS_LISTED;
use outside::{outside_graph, outside_nodes, Seen, OUTSIDE};
pub use python_ops::{python_op, EXTENSIONS_CPP_OPS};
pub use results::{Finding, Model, Tensor, UnreadTensor};
use tensor::describe;
pub use tensor::{check_location, MAX_RANK};

use crate::bounded::{self, Listing};
use crate::proto::onnx::{GraphProto, ModelProto};
use crate::wire::{self, Severity};
use bytes::Bytes;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};

pub use crate::error::{OnnxError, MAX_MODEL_LEN};

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
        out.findings
            .push(Finding::new(f.severity, f.place.clone(), f.reason.clone()));
    }
    for &(kind, n) in &walk.suppressed {
        out.findings.push(Finding::new(
            Severity::Lead,
            "model",
            bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
        ));
    }
    let mut g = Gathered {
        findings: Listing::new(bounded::FINDINGS_PER_KIND),
        unread: Listing::new(bounded::UNREAD_PER_KIND),
        located: Vec::new(),
        by_name: BTreeMap::new(),
    };
    match model.ir_version {
        None => fail(&mut g.findings, "ir_version", &|| "model".into(), &|| {
            "ir_version is missing (onnx.proto: it MUST be present)".into()
        }),
        Some(v) if v < 1 => fail(
            &mut g.findings,
            "ir_version",
            &|| "model.ir_version".into(),
            &|| format!("ir_version {v} is not a version"),
        ),
        _ => {}
    }
    metadata(&model, &mut out);
    let Some(graph) = &model.graph else {
        fail(&mut g.findings, "graph", &|| "model".into(), &|| {
            "the model has no graph".into()
        });
        finish(&mut out, g.findings, g.unread);
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
    g.locate_initializers(graph, &walk, &data)?;
    g.locate_constants(graph, &walk, &data, &mut out)?;
    g.locate_attribute_tensors(graph, &walk, &data, &mut out)?;
    let refused = g.refuse_names();
    g.carry(&mut out, refused, len);
    name_outside(&model, graph, &mut out, &mut g.findings, &mut g.unread);
    finish(&mut out, g.findings, g.unread);
    Ok(out)
}

/// A FAIL of `kind`, listed within its kind's bound.
fn fail(
    findings: &mut Listing<Finding>,
    kind: &'static str,
    place: &dyn Fn() -> String,
    reason: &dyn Fn() -> String,
) {
    findings.push(kind, || Finding::new(Severity::Fail, place(), reason()))
}

/// What the main graph's tensors gave so far.
struct Gathered {
    findings: Listing<Finding>,
    unread: Listing<UnreadTensor>,
    /// Every tensor described, with the place that names it in findings.
    located: Vec<(String, Tensor)>,
    /// Every name a tensor takes, with the places that define it.
    by_name: BTreeMap<String, Vec<String>>,
}

impl Gathered {
    /// Describes every initializer of the main graph, and records the names of the dense and
    /// sparse ones.
    fn locate_initializers(
        &mut self,
        graph: &GraphProto,
        walk: &wire::Walk,
        data: &Bytes,
    ) -> Result<(), OnnxError> {
        for (i, (t, spans)) in graph.initializer.iter().zip(&walk.initializers).enumerate() {
            let name = t.name.as_deref().unwrap_or_default();
            let place = || format!("graph.initializer[{i}] {:?}", bounded::short(name));
            match describe(t, spans, data)? {
                Ok(tensor) => self.located.push((place(), tensor)),
                Err(problem) => {
                    if let Some(severity) = problem.severity {
                        self.findings.push(problem.kind, || {
                            Finding::new(severity, place(), problem.reason.clone())
                        });
                    }
                    self.unread.push(problem.kind, || UnreadTensor {
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
        for (i, t) in graph.initializer.iter().enumerate() {
            let name = t.name.as_deref().unwrap_or("");
            self.by_name
                .entry(name.to_owned())
                .or_default()
                .push(format!("graph.initializer[{i}]"));
        }
        for (i, s) in graph.sparse_initializer.iter().enumerate() {
            let name = s
                .values
                .as_ref()
                .and_then(|v| v.name.as_deref())
                .unwrap_or("");
            self.by_name
                .entry(name.to_owned())
                .or_default()
                .push(format!("graph.sparse_initializer[{i}]"));
        }
        Ok(())
    }

    /// The value of every Constant node of the main graph, named by its output.
    fn locate_constants(
        &mut self,
        graph: &GraphProto,
        walk: &wire::Walk,
        data: &Bytes,
        out: &mut Model,
    ) -> Result<(), OnnxError> {
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
                    &mut self.findings,
                    "Constants refused",
                    &|| place.clone(),
                    &|| "a Constant node without an output name (onnx.checker requires one)".into(),
                );
                self.unread.push("Constants refused", || UnreadTensor {
                    name: None,
                    reason: format!("{place}: a Constant node without an output name"),
                    outside_model: false,
                });
                continue;
            };
            self.by_name
                .entry(output.clone())
                .or_default()
                .push(format!("graph.node[{n}] Constant"));
            match constant(node, n, walk, data)? {
                Ok(mut tensor) => {
                    tensor.name = output.clone();
                    self.located.push((place, tensor));
                }
                Err(problem) => {
                    if let Some(severity) = problem.severity {
                        self.findings.push(problem.kind, || {
                            Finding::new(
                                severity,
                                format!("{place} output {:?}", bounded::short(output)),
                                problem.reason.clone(),
                            )
                        });
                    }
                    self.unread.push(problem.kind, || UnreadTensor {
                        name: Some(output.clone()),
                        reason: format!("{place}: {}", problem.reason),
                        outside_model: problem.outside_model,
                    });
                }
            }
        }
        Ok(())
    }

    /// The tensors other nodes' attributes hold (ConstantOfShape's value...), as Constants'.
    fn locate_attribute_tensors(
        &mut self,
        graph: &GraphProto,
        walk: &wire::Walk,
        data: &Bytes,
        out: &mut Model,
    ) -> Result<(), OnnxError> {
        for (n, node) in graph.node.iter().enumerate() {
            if is_constant(node) {
                continue;
            }
            for (index, a) in node.attribute.iter().enumerate() {
                let Some(t) = &a.t else { continue };
                out.attribute_tensors += 1;
                let attr = a.name.as_deref().unwrap_or("");
                let place = format!(
                    "graph.node[{n}] {} {:?} attribute {:?}",
                    bounded::short(node.op_type.as_deref().unwrap_or("")),
                    bounded::short(node.name.as_deref().unwrap_or("")),
                    bounded::short(attr)
                );
                let Some(name) = attribute::name(node, attr) else {
                    self.unread.push("attribute tensors refused", || UnreadTensor {
                        name: None,
                        reason: format!("{place}: a node without an output name, which names the tensor its attribute holds"),
                        outside_model: false,
                    });
                    continue;
                };
                self.by_name.entry(name.clone()).or_default().push(format!(
                    "graph.node[{n}] attribute {:?}",
                    bounded::short(attr)
                ));
                let spans = walk
                    .attribute(n, index)
                    .and_then(|s| s.t.as_ref())
                    .ok_or_else(|| {
                        OnnxError::Inconsistent(format!(
                            "graph.node[{n}].attribute[{index}] decoded, not walked"
                        ))
                    })?;
                match describe(t, spans, data)? {
                    Ok(mut tensor) => {
                        tensor.name = name;
                        self.located.push((place, tensor));
                    }
                    Err(problem) => {
                        if let Some(severity) = problem.severity {
                            self.findings.push(problem.kind, || {
                                Finding::new(severity, place.clone(), problem.reason.clone())
                            });
                        }
                        self.unread.push(problem.kind, || UnreadTensor {
                            name: Some(name.clone()),
                            reason: format!("{place}: {}", problem.reason),
                            outside_model: problem.outside_model,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// FAILs every empty and every shared name; the names whose tensors cannot be told apart.
    fn refuse_names(&mut self) -> BTreeSet<String> {
        let mut refused: BTreeSet<String> = BTreeSet::new();
        for (name, places) in &self.by_name {
            if name.is_empty() {
                for p in places {
                    fail(
                        &mut self.findings,
                        "initializers without a name",
                        &|| p.clone(),
                        &|| "an initializer without a name (onnx.proto: each MUST have one)".into(),
                    );
                }
                refused.insert(String::new());
            } else if places.len() > 1 {
                for p in &places[1..] {
                    fail(
                        &mut self.findings,
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
                refused.insert(name.clone());
            }
        }
        refused
    }

    /// Moves the located tensors into `out`, within the budgets for a `len`-byte model; the
    /// ones refused or past a budget are unread.
    fn carry(&mut self, out: &mut Model, refused: BTreeSet<String>, len: u64) {
        let limit = bounded::described_limit(len);
        // Decoded bytes held at once: at most 8x the input (each value decoded has at least one
        // byte of the file and yields at most 8).
        let inline_limit = len.saturating_mul(8);
        let mut inline_total = 0u64;
        let mut past_budget = 0u64;
        let mut past_decoded = 0u64;
        for (place, t) in std::mem::take(&mut self.located) {
            let inline_len = t.inline.as_ref().map_or(0, |b| b.len() as u64);
            if refused.contains(&t.name) {
                self.unread.push("tensors whose name is not unique", || UnreadTensor {
                    name: Some(t.name.clone()),
                    reason: format!(
                        "{place} {:?}: its name is not unique (or empty), so it cannot be told apart",
                        bounded::short(&t.name)
                    ),
                    outside_model: false,
                });
            } else if out.tensors.len() as u64 >= limit {
                past_budget += 1;
                self.unread
                    .push("tensors past the budget", || UnreadTensor {
                        name: Some(t.name.clone()),
                        reason: budget_reason(limit, len),
                        outside_model: false,
                    });
            } else if inline_total.saturating_add(inline_len) > inline_limit {
                past_decoded += 1;
                self.unread.push("tensors past the budget", || UnreadTensor {
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
            self.findings.push("tensors past the budget", || {
                Finding::new(
                    Severity::Lead,
                    "graph",
                    format!(
                        "{} located tensors are past the budget: {}",
                        bounded::thousands(past_budget),
                        budget_reason(limit, len)
                    ),
                )
            });
        }
        if past_decoded > 0 {
            self.findings.push("tensors past the decoding budget", || {
                Finding::new(
                    Severity::Lead,
                    "graph",
                    format!(
                    "{} tensors are not decoded: socair decodes at most {} bytes (8 times the file's size) of values the file holds as numbers",
                    bounded::thousands(past_decoded),
                    bounded::thousands(inline_limit)
                    ),
                )
            });
        }
    }
}

/// Tensors outside the main graph's dense initializers: named, not carried; and the operator
/// domains the model's nodes use, in its metadata.
fn name_outside(
    model: &ModelProto,
    graph: &GraphProto,
    out: &mut Model,
    findings: &mut Listing<Finding>,
    unread: &mut Listing<UnreadTensor>,
) {
    let mut domains = BTreeSet::new();
    let mut seen = Seen {
        domains: &mut domains,
        findings,
    };
    outside_graph(graph, "graph", true, unread, &mut seen);
    for (i, f) in model.functions.iter().enumerate() {
        outside_nodes(
            &f.node,
            &format!("functions[{i}]"),
            false,
            unread,
            &mut seen,
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
                    unread,
                    &mut seen,
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
}

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
        out.findings.push(Finding::new(
            Severity::Lead,
            "model",
            bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
        ));
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
