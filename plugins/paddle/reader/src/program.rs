//! A `.pdmodel`: the `ProgramDesc` protobuf `paddle.static.save_inference_model` and
//! `paddle.jit.save` (PIR off) write (paddle/fluid/framework/framework.proto at v3.3.1).
//! Walked whole at wire level before prost decodes it, then every op of every block judged
//! ([`crate::ops`]) with the attributes that name blocks, files or callables; its parameters
//! are the persistable dense tensors, in the sorted order `save_combine` wrote them to the
//! `.pdiparams` beside it (python/paddle/static/io.py `save_vars`: `sorted(save_var_map)`).

use crate::ops::{self, Class};
use crate::outcome::Reading;
use crate::proto::{OpDesc, ProgramDesc};
use crate::schema::{MESSAGES, PROGRAM_DESC};
use crate::wire::{decode, ProtoError};
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::protobuf::head;
use socair_plugin_kit::Severity;

/// The format name.
pub const FORMAT: &str = "paddle-program";

/// `VarType.Type.DENSE_TENSOR`.
const DENSE_TENSOR: i32 = 7;
/// `AttrType.BLOCK` and `AttrType.BLOCKS`.
const BLOCK: i32 = 8;
const BLOCKS: i32 = 10;

/// Whether the head of a file is a `ProgramDesc` as Paddle writes one: its first field is a
/// block (field 1) whose first field is the block's `idx` (required, written first), and
/// every field the head holds parses by the schema.
pub fn looks_like_program(head: &[u8], file_len: u64) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    let mut at = 1;
    if socair_plugin_kit::protobuf::read_varint(head, &mut at, head.len()).is_none()
        || head.get(at) != Some(&0x08)
    {
        return false;
    }
    head::fields(head, file_len, MESSAGES, PROGRAM_DESC).is_some_and(|f| !f.is_empty())
}

/// The persistable dense tensors of a program's global block, sorted by name: what
/// `save_combine` wrote to the `.pdiparams`, in its order.
pub fn parameters(p: &ProgramDesc) -> Vec<String> {
    let mut names: Vec<String> = p
        .blocks
        .first()
        .map(|b| {
            b.vars
                .iter()
                .filter(|v| v.persistable == Some(true))
                .filter(|v| v.r#type.as_ref().and_then(|t| t.r#type) == Some(DENSE_TENSOR))
                .filter_map(|v| v.name.clone())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.dedup();
    names
}

/// Reads a `.pdmodel`.
pub fn read(data: &[u8]) -> OpenedFile {
    let mut out = crate::outcome::read(FORMAT, data.len() as u64);
    let p: ProgramDesc = match decode(data, PROGRAM_DESC, "program") {
        Ok((p, walked)) => {
            out.walked(&walked);
            p
        }
        Err(e) => return refused(e),
    };
    if let Some(v) = p.version.as_ref().and_then(|v| v.version) {
        out.metadata
            .push(("paddle.program_version".into(), v.to_string()));
    }
    if p.blocks.is_empty() {
        out.note(
            "programs without blocks",
            Severity::Lead,
            || "program".into(),
            || "the program has no block: Paddle has nothing to run, and this is no model".into(),
        );
    }
    let blocks = p.blocks.len();
    let mut n_ops = 0u64;
    for (b, block) in p.blocks.iter().enumerate() {
        for (i, op) in block.ops.iter().enumerate() {
            n_ops += 1;
            judge(&mut out, b, i, op, blocks);
        }
    }
    let params = parameters(&p);
    // The order the host names the .pdiparams beside it by (host/reading/src/read/artifact.rs
    // `name_by_program`).
    out.metadata.push((
        "paddle.parameter_order".into(),
        serde_json::to_string(&params).unwrap_or_default(),
    ));
    out.metadata.push((
        "paddle.parameters".into(),
        crate::outcome::listed(params.iter().map(String::as_str), 32),
    ));
    let n_params = params.len() as u64;
    let order = crate::outcome::listed(params.iter().map(String::as_str), 8);
    out.finish(|status| match status {
        RowStatus::Fail => "PaddlePaddle program holding ops that run Python, read or write files, print or reach the network, or that readers would read differently: see the findings".into(),
        RowStatus::Lead => format!(
            "PaddlePaddle program with ops this reader does not prove: {} ops in {} judged",
            thousands(n_ops), blocks_of(blocks)
        ),
        _ => format!(
            "PaddlePaddle program: {} ops in {} judged, every op computational; {} parameters, the tensors of the .pdiparams beside it in this order: {}",
            thousands(n_ops), blocks_of(blocks), thousands(n_params), order
        ),
    })
}

/// `1 block`, `3 blocks`.
fn blocks_of(n: usize) -> String {
    if n == 1 {
        "1 block".into()
    } else {
        format!("{} blocks", thousands(n as u64))
    }
}

/// Judges op `i` of block `b`.
fn judge(out: &mut Reading, b: usize, i: usize, op: &OpDesc, blocks: usize) {
    let ty = op.r#type.as_deref().unwrap_or("");
    let place = || format!("block {b} op {i} ({})", short(ty));
    let class = ops::legacy(ty);
    if let Some(sev) = class.severity() {
        let detail = detail(op, class);
        out.note(class.kind(), sev, place, || {
            format!("op `{}` {}{detail}", short(ty), class.why())
        });
    }
    for a in &op.attrs {
        let name = a.name.as_deref().unwrap_or("");
        let named: Vec<i32> = match a.r#type {
            Some(BLOCK) => a.block_idx.into_iter().collect(),
            Some(BLOCKS) => a.blocks_idx.clone(),
            _ => continue,
        };
        for idx in named {
            if idx < 0 || idx as usize >= blocks {
                out.note("attributes naming blocks the program lacks", Severity::Fail, place, || {
                    format!(
                        "attribute `{}` names block {idx}; the program has {blocks}: Paddle's executor would index past its blocks",
                        short(name)
                    )
                });
            }
        }
    }
}

/// The attributes that say what a file or code op would touch, for its finding.
fn detail(op: &OpDesc, class: Class) -> String {
    let keys: &[&str] = match class {
        Class::Files => &["file_path", "filename"],
        Class::Code => &["forward_callable_id", "backward_callable_id"],
        Class::Network => &["endpoint", "other_endpoints", "endpoints", "epmap"],
        _ => return String::new(),
    };
    let mut parts = Vec::new();
    for a in &op.attrs {
        let name = a.name.as_deref().unwrap_or("");
        if !keys.contains(&name) {
            continue;
        }
        let value = if let Some(s) = &a.s {
            format!("{:?}", short(s))
        } else if !a.strings.is_empty() {
            crate::outcome::listed(a.strings.iter().map(String::as_str), 4)
        } else if let Some(i) = a.i {
            i.to_string()
        } else {
            continue;
        };
        parts.push(format!("{name} = {value}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

fn refused(e: ProtoError) -> OpenedFile {
    e.refused(
        FORMAT,
        "not a sound PaddlePaddle program: readers may disagree on what it holds",
    )
}
