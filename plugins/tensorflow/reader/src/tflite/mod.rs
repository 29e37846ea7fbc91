//! TFLite models (`.tflite`, a FlatBuffer with the file identifier `TFL3` at bytes 4..8,
//! schema `tensorflow/compiler/mlir/lite/schema/schema.fbs` as TensorFlow 2.21.0 builds it;
//! the excerpt read is `plugins/tensorflow/proto/tflite/schema_subset.fbs`), read with a
//! strict, bounded FlatBuffers reader ([`flatbuf`]):
//!
//! * every operator's code judged: a builtin op of the 2.21 schema PASS (its kernel is the
//!   interpreter's own); a custom op a LEAD naming its `custom_code` (the interpreter runs
//!   whatever kernel the application registered under that name); a Flex op (`custom_code`
//!   `Flex<Op>`, run by the Select TF ops delegate) judged as a TensorFlow op, from the
//!   `NodeDef` its custom options carry ([`flex`], [`crate::graph`]);
//! * every tensor with a constant buffer fingerprinted with its type and shape: bytes inline in
//!   the flatbuffer (`Buffer.data`) or placed after it (`Buffer.offset`/`size`, TensorFlow 2.13
//!   and later for models over 2 GB), both byte ranges of the file; a buffer's size must be
//!   the tensor's, as the interpreter requires; tensors sharing a buffer are each described;
//! * quantization parameters (scale, zero point, dimension) kept in the metadata;
//! * tensors whose bytes lie in files beside the model (`external_buffers`) are listed as
//!   not read, and a group naming a path that leaves the model's directory is FAIL.

pub mod flatbuf;
pub mod flex;

use crate::decode::decode;
use crate::graph::{self, Context, Scope};
use crate::outcome::{listed, Reading};
use crate::proto::schema::NODE_DEF;
use crate::proto::tensorflow::NodeDef;
use crate::tensor::{Data, Located};
use bytes::Bytes;
use flatbuf::{Buf, FbError, Table};
use socair_plugin_api::{ByteOrder, OpenedFile, RowStatus};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::protobuf::walk::Severity;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// The format name.
pub const FORMAT: &str = "tflite";

/// The schema version the interpreter accepts (`TFLITE_SCHEMA_VERSION`).
const SCHEMA_VERSION: u32 = 3;
/// `BuiltinOperator_CUSTOM`.
const CUSTOM: i32 = 32;

const ENUMS: &str = include_str!("../../../proto/tflite/builtin_ops.tsv");

fn enum_names(kind: &str) -> &'static BTreeMap<i32, &'static str> {
    static OPS: OnceLock<BTreeMap<i32, &'static str>> = OnceLock::new();
    static TYPES: OnceLock<BTreeMap<i32, &'static str>> = OnceLock::new();
    let cell = if kind == "BuiltinOperator" {
        &OPS
    } else {
        &TYPES
    };
    cell.get_or_init(|| {
        ENUMS
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut p = l.split('\t');
                if p.next()? != kind {
                    return None;
                }
                let v = p.next()?.parse().ok()?;
                Some((v, p.next()?))
            })
            .collect()
    })
}

/// The name of builtin operator `code` in the 2.21 schema.
pub fn builtin_name(code: i32) -> Option<&'static str> {
    enum_names("BuiltinOperator").get(&code).copied()
}

/// A TFLite tensor type: its name, width and socair's element type (none for packed 4- and
/// 2-bit types, strings, resources and variants, which have no width here).
fn tensor_type(t: i8) -> Option<(&'static str, u64, Option<&'static str>)> {
    let name = enum_names("TensorType").get(&i32::from(t)).copied()?;
    let (width, element) = match name {
        "FLOAT32" => (4, Some("F32")),
        "FLOAT16" => (2, Some("F16")),
        "BFLOAT16" => (2, Some("BF16")),
        "FLOAT64" => (8, Some("F64")),
        "INT8" => (1, Some("I8")),
        "UINT8" => (1, Some("U8")),
        "INT16" => (2, Some("I16")),
        "UINT16" => (2, Some("U16")),
        "INT32" => (4, Some("I32")),
        "UINT32" => (4, Some("U32")),
        "INT64" => (8, Some("I64")),
        "UINT64" => (8, Some("U64")),
        "BOOL" => (1, Some("BOOL")),
        "COMPLEX64" => (8, Some("C64")),
        "COMPLEX128" => (16, None),
        _ => return Some((name, 0, None)),
    };
    Some((name, width, element))
}

/// Whether `head` is a TFLite model: the `TFL3` file identifier after the root offset.
pub fn looks_like_tflite(head: &[u8], file_len: u64) -> bool {
    file_len >= 16 && head.get(4..8) == Some(b"TFL3")
}

/// Reads a `.tflite` file of `file_len` bytes, of which `data` holds the first (the whole
/// flatbuffer, at most 2 GiB; buffers placed after it are only located, never read).
pub fn read(data: Bytes, file_len: u64) -> OpenedFile {
    let mut out = Reading::new(FORMAT, file_len);
    match model(&data, file_len, &mut out) {
        Ok(summary) => out.finish(|status| match status {
            RowStatus::Pass => summary,
            RowStatus::Fail => "TFLite model holding ops that read or write files, run code or reach the network, or that readers would read differently: see the findings".into(),
            _ => format!("TFLite model with parts this reader does not prove: {summary}"),
        }),
        Err(e) => socair_plugin_kit::report::refused(
            FORMAT,
            "not a sound TFLite model: readers may disagree on what it holds",
            format!("not a sound FlatBuffer: {e}"),
            socair_plugin_api::Finding::new(
                socair_plugin_api::Severity::Fail,
                format!("byte {}", e.offset),
                e.what,
            ),
        ),
    }
}

/// Where a buffer's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BufferAt {
    Empty,
    Range(u64, u64),
}

/// An operator code: the builtin code and, for a custom op, its `custom_code`.
type OpCode = (i32, Option<String>);

/// What the model's subgraphs hold, counted for the summary.
#[derive(Default)]
struct Tally {
    operators: u64,
    /// Constant tensors fingerprinted.
    described: u64,
    flex_ops: u64,
    /// Tensors with quantization parameters.
    quantized: u64,
    /// How many operators use each operator code (by index).
    used_codes: BTreeMap<usize, u64>,
    /// How many tensors so far bore each name, to tell later ones apart.
    names: BTreeMap<String, u64>,
}

fn model(data: &Bytes, file_len: u64, out: &mut Reading) -> Result<String, FbError> {
    let buf = Buf::new(data)?;
    if data.get(4..8) != Some(b"TFL3") {
        return Err(FbError {
            offset: 4,
            what: "the file identifier is not TFL3".into(),
        });
    }
    let m = buf.root()?;
    let version: u32 = m.scalar(0, 0)?;
    if version != SCHEMA_VERSION {
        out.note("schema versions", Severity::Fail, || "model.version".into(), || {
            format!("schema version {version}: the interpreter refuses any model whose version is not {SCHEMA_VERSION}")
        });
    }
    if let Some(d) = m.string(3)? {
        out.metadata.push((
            "tflite.description".into(),
            short(&String::from_utf8_lossy(d)),
        ));
    }
    let codes = operator_codes(&m)?;
    let buffers = buffers(&m, file_len, out)?;
    external_buffer_groups(&m, out)?;
    metadata_and_signatures(&m, out)?;
    let Some(subgraphs) = m.vector(2, 4)? else {
        out.note(
            "subgraphs",
            Severity::Fail,
            || "model.subgraphs".into(),
            || "no subgraph: the interpreter refuses the model".into(),
        );
        return Ok("TFLite model with no subgraph".into());
    };
    let mut tally = Tally::default();
    for s in 0..subgraphs.len {
        let sg = subgraphs.table(s)?;
        operators(data, &sg, s, &codes, &mut tally, out)?;
        let Some(tensors) = sg.vector(0, 4)? else {
            continue;
        };
        for t in 0..tensors.len {
            tensor(&tensors.table(t)?, s, t, &buffers, &mut tally, out)?;
        }
    }
    let builtins = judge_codes(&codes, &tally.used_codes, out);
    Ok(format!(
        "TFLite model (schema {version}): {} operators ({} distinct builtin ops{}) judged; {} constant tensors fingerprinted; quantization parameters of {} tensors kept in the metadata",
        thousands(tally.operators),
        builtins,
        if tally.flex_ops > 0 { format!(" and {} Flex (TensorFlow) ops", tally.flex_ops) } else { String::new() },
        thousands(tally.described),
        thousands(tally.quantized)
    ))
}

/// The model's operator codes, in order.
fn operator_codes(m: &Table<'_>) -> Result<Vec<OpCode>, FbError> {
    let mut codes: Vec<OpCode> = Vec::new();
    if let Some(v) = m.vector(1, 4)? {
        for i in 0..v.len {
            let c = v.table(i)?;
            let deprecated: i8 = c.scalar(0, 0)?;
            let builtin: i32 = c.scalar(3, 0)?;
            // The interpreter's GetBuiltinCode: the larger of the two fields.
            let code = builtin.max(i32::from(deprecated));
            let custom = c
                .string(1)?
                .map(|s| String::from_utf8_lossy(s).into_owned());
            codes.push((code, custom));
        }
    }
    Ok(codes)
}

/// Where each of the model's buffers lies, judging buffers given twice or past the end of the
/// file, and a sentinel buffer 0 that holds bytes.
fn buffers(m: &Table<'_>, file_len: u64, out: &mut Reading) -> Result<Vec<BufferAt>, FbError> {
    let mut buffers: Vec<BufferAt> = Vec::new();
    if let Some(v) = m.vector(4, 4)? {
        for i in 0..v.len {
            let b = v.table(i)?;
            let inline = b.vector(0, 1)?;
            let offset: u64 = b.scalar(1, 0)?;
            let size: u64 = b.scalar(2, 0)?;
            let at = match (inline, offset > 1) {
                (Some(d), true) if d.len > 0 => {
                    out.note("buffers given twice", Severity::Fail, || format!("buffers[{i}]"), || {
                        "the buffer holds data inline and also an offset past the flatbuffer: readers may take either".into()
                    });
                    BufferAt::Empty
                }
                (_, true) => match offset.checked_add(size) {
                    Some(end) if end <= file_len => BufferAt::Range(offset, size),
                    _ => {
                        out.note("buffers past the end", Severity::Fail, || format!("buffers[{i}]"), || {
                                format!("its {size} bytes at offset {offset} lie past the end of the {file_len}-byte file")
                            });
                        BufferAt::Empty
                    }
                },
                (Some(d), false) if d.len > 0 => BufferAt::Range(d.start as u64, d.len as u64),
                _ => BufferAt::Empty,
            };
            buffers.push(at);
        }
    }
    if buffers.first().is_some_and(|b| *b != BufferAt::Empty) {
        out.note("the sentinel buffer", Severity::Lead, || "buffers[0]".into(), || {
            "buffer 0, which tensors without data point to, holds bytes (the schema requires it empty)".into()
        });
    }
    Ok(buffers)
}

/// External buffer groups: files beside the model, a LEAD, or outside its directory, a FAIL.
fn external_buffer_groups(m: &Table<'_>, out: &mut Reading) -> Result<(), FbError> {
    if let Some(groups) = m.vector(8, 4)? {
        for i in 0..groups.len {
            let name = groups
                .table(i)?
                .string(0)?
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .unwrap_or_default();
            match crate::savedmodel::plain_asset_name(&name) {
                Ok(()) => out.note("tensors in files beside the model", Severity::Lead, || format!("external_buffer_groups[{i}]"), || {
                    format!("the interpreter reads tensor bytes from {:?} beside the model, which this reader does not read", short(&name))
                }),
                Err(why) => out.note("external files outside the model", Severity::Fail, || format!("external_buffer_groups[{i}]"), || {
                    format!("the interpreter reads tensor bytes from {:?}, and {why}: a file outside the model's directory", short(&name))
                }),
            }
        }
    }
    Ok(())
}

/// The names of the model's metadata entries and signatures, kept in the metadata.
fn metadata_and_signatures(m: &Table<'_>, out: &mut Reading) -> Result<(), FbError> {
    if let Some(v) = m.vector(6, 4)? {
        let mut names = Vec::new();
        for i in 0..v.len {
            let t = v.table(i)?;
            names.push(
                t.string(0)?
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .unwrap_or_default(),
            );
            // The entry's buffer index is not used, but a malformed one refuses the file.
            t.scalar::<u32>(1, 0)?;
        }
        out.metadata.push((
            "tflite.metadata".into(),
            listed(names.iter().map(String::as_str), 50),
        ));
    }
    if let Some(v) = m.vector(7, 4)? {
        let mut keys = Vec::new();
        for i in 0..v.len {
            keys.push(
                v.table(i)?
                    .string(2)?
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .unwrap_or_default(),
            );
        }
        out.metadata.push((
            "tflite.signatures".into(),
            listed(keys.iter().map(String::as_str), 50),
        ));
    }
    Ok(())
}

/// Counts subgraph `s`'s operators and the codes they use, judging each Flex op's `NodeDef`.
fn operators(
    data: &Bytes,
    sg: &Table<'_>,
    s: usize,
    codes: &[OpCode],
    tally: &mut Tally,
    out: &mut Reading,
) -> Result<(), FbError> {
    let Some(ops) = sg.vector(3, 4)? else {
        return Ok(());
    };
    for o in 0..ops.len {
        tally.operators += 1;
        let op = ops.table(o)?;
        let idx: u32 = op.scalar(0, 0)?;
        let Some((code, custom)) = codes.get(idx as usize) else {
            out.note("operators without a code", Severity::Fail, || format!("subgraph {s} operator {o}"), || {
                format!("opcode_index {idx} past the model's {} operator codes: the interpreter refuses it", codes.len())
            });
            continue;
        };
        *tally.used_codes.entry(idx as usize).or_default() += 1;
        if *code == CUSTOM {
            let custom = custom.clone().unwrap_or_default();
            if let Some(tf_op) = custom.strip_prefix("Flex") {
                tally.flex_ops += 1;
                flex(data, &op, s, o, tf_op, &custom, out)?;
            }
        }
    }
    Ok(())
}

/// Tensor `t` of subgraph `s`: its quantization parameters kept, and its constant buffer, if
/// any, fingerprinted with its type and shape once the interpreter would accept it.
fn tensor(
    tensor: &Table<'_>,
    s: usize,
    t: usize,
    buffers: &[BufferAt],
    tally: &mut Tally,
    out: &mut Reading,
) -> Result<(), FbError> {
    let b: u32 = tensor.scalar(2, 0)?;
    let raw = tensor
        .string(3)?
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .unwrap_or_default();
    let mut name = if s > 0 {
        format!("subgraph{s}/{raw}")
    } else {
        raw
    };
    let seen = tally.names.entry(name.clone()).or_default();
    *seen += 1;
    if *seen > 1 {
        name = format!("{name}#{}", *seen - 1);
    }
    if let Some(q) = tensor.table(4)? {
        if let Some(desc) = quantization(&q)? {
            tally.quantized += 1;
            if out.metadata.len() < 10_000 {
                out.metadata
                    .push((format!("tflite.quantization.{}", short(&name)), desc));
            }
        }
    }
    let ext: u32 = tensor.scalar(10, 0)?;
    if ext != 0 {
        out.unread("tensors in files beside the model", Some(&name), format!("subgraph {s} tensor {t}: its bytes lie in external buffer {ext}, in a file beside the model, which this reader does not read"), false);
        return Ok(());
    }
    let Some(&at) = buffers.get(b as usize) else {
        out.note(
            "tensors without a buffer",
            Severity::Fail,
            || format!("subgraph {s} tensor {t} {:?}", short(&name)),
            || {
                format!(
                    "buffer {b} past the model's {} buffers: the interpreter refuses it",
                    buffers.len()
                )
            },
        );
        return Ok(());
    };
    let BufferAt::Range(offset, len) = at else {
        return Ok(());
    };
    let ty: i8 = tensor.scalar(1, 0)?;
    let Some(shape) = constant_shape(tensor, s, t, &name, out)? else {
        return Ok(());
    };
    let place = || format!("subgraph {s} tensor {t} {:?}", short(&name));
    if tensor.table(6)?.is_some() {
        out.unread(
            "sparse tensors",
            Some(&name),
            format!(
                "{}: a sparse tensor (its buffer holds the compressed values), not read",
                place()
            ),
            false,
        );
        return Ok(());
    }
    let Some((tname, width, element)) = tensor_type(ty) else {
        out.note("tensors of unknown types", Severity::Lead, place, || {
            format!("tensor type {ty} is not one of TFLite 2.21's")
        });
        return Ok(());
    };
    if width == 0 {
        out.unread(
            "tensors that are not fixed-width",
            Some(&name),
            format!(
                "{}: a {tname} tensor, whose buffer this reader does not fingerprint",
                place()
            ),
            true,
        );
        return Ok(());
    }
    let n = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    if n.and_then(|n| n.checked_mul(width)) != Some(len) {
        out.note("constant tensors the interpreter refuses", Severity::Fail, place, || {
            format!("its buffer holds {len} bytes but {shape:?} elements of {tname} take {} (the interpreter refuses it)", n.and_then(|n| n.checked_mul(width)).map_or("more than 2^64".into(), |b| b.to_string()))
        });
        return Ok(());
    }
    if !out.room() {
        return Ok(());
    }
    crate::outcome::located(
        out,
        &name,
        Located {
            dtype: crate::dtype::DType {
                name: tname,
                width,
                element,
            },
            shape,
            bytes: Data::Range(offset, len),
            extra_values: false,
        },
        ByteOrder::Little,
        None,
        false,
    );
    tally.described += 1;
    Ok(())
}

/// The shape of constant tensor `t` of subgraph `s` (a scalar when it has none), or none,
/// judged, when a dimension is negative or the rank is past what socair describes.
fn constant_shape(
    tensor: &Table<'_>,
    s: usize,
    t: usize,
    name: &str,
    out: &mut Reading,
) -> Result<Option<Vec<u64>>, FbError> {
    let Some(v) = tensor.vector(0, 4)? else {
        return Ok(Some(Vec::new()));
    };
    let mut dims = Vec::with_capacity(v.len.min(64));
    for i in 0..v.len {
        dims.push(v.get::<i32>(i)?);
    }
    match dims
        .iter()
        .map(|&d| u64::try_from(d))
        .collect::<Result<Vec<u64>, _>>()
    {
        Ok(d) if d.len() <= crate::tensor::MAX_RANK => Ok(Some(d)),
        _ => {
            out.note(
                "constant tensors the interpreter refuses",
                Severity::Fail,
                || format!("subgraph {s} tensor {t} {:?}", short(name)),
                || format!("a constant tensor of shape {dims:?}"),
            );
            Ok(None)
        }
    }
}

/// Judges each operator code used, once: a custom op a LEAD, a builtin code not in the schema
/// a LEAD; the builtin and custom ops used kept in the metadata. Returns how many distinct
/// builtin ops are used.
fn judge_codes(codes: &[OpCode], used_codes: &BTreeMap<usize, u64>, out: &mut Reading) -> usize {
    let mut builtins = BTreeSet::new();
    let mut customs = BTreeSet::new();
    for (&idx, &count) in used_codes {
        let Some((code, custom)) = codes.get(idx) else {
            continue;
        };
        if *code == CUSTOM {
            let c = custom.clone().unwrap_or_default();
            if c.starts_with("Flex") {
                customs.insert(c);
                continue;
            }
            out.note("custom ops", Severity::Lead, || format!("operator_codes[{idx}] custom {:?}", short(&c)), || {
                format!("a custom op, used by {count} operators: the interpreter runs whatever kernel the application registered under this name, which this file does not show")
            });
            customs.insert(c);
        } else {
            match builtin_name(*code) {
                Some(n) => {
                    builtins.insert(n);
                }
                None => out.note(
                    "ops not in the schema",
                    Severity::Lead,
                    || format!("operator_codes[{idx}]"),
                    || format!("builtin code {code} is not an operator of TFLite 2.21's schema"),
                ),
            }
        }
    }
    out.metadata.push((
        "tflite.builtin_ops".into(),
        listed(builtins.iter().copied(), 200),
    ));
    if !customs.is_empty() {
        out.metadata.push((
            "tflite.custom_ops".into(),
            listed(customs.iter().map(String::as_str), 200),
        ));
    }
    builtins.len()
}

/// A tensor's quantization parameters for the metadata, when it has any.
fn quantization(q: &Table<'_>) -> Result<Option<String>, FbError> {
    let floats = |id: usize| -> Result<Vec<f32>, FbError> {
        let mut v = Vec::new();
        if let Some(x) = q.vector(id, 4)? {
            for i in 0..x.len.min(8) {
                v.push(x.get::<f32>(i)?);
            }
        }
        Ok(v)
    };
    let count = |id: usize, elem: usize| -> Result<usize, FbError> {
        Ok(q.vector(id, elem)?.map_or(0, |v| v.len))
    };
    let scale = floats(2)?;
    let mut zero = Vec::new();
    if let Some(x) = q.vector(3, 8)? {
        for i in 0..x.len.min(8) {
            zero.push(x.get::<i64>(i)?);
        }
    }
    let details: u8 = q.scalar(4, 0)?;
    if scale.is_empty() && zero.is_empty() && details == 0 {
        return Ok(None);
    }
    let dim: i32 = q.scalar(6, 0)?;
    let (ns, nz) = (count(2, 4)?, count(3, 8)?);
    let more = |n: usize| {
        if n > 8 {
            format!(" … ({n} in all)")
        } else {
            String::new()
        }
    };
    Ok(Some(format!(
        "scale {scale:?}{} zero_point {zero:?}{} quantized_dimension {dim}{}",
        more(ns),
        more(nz),
        if details != 0 {
            " (custom quantization details)"
        } else {
            ""
        }
    )))
}

/// Judges a Flex operator from the `NodeDef` its custom options carry.
fn flex(
    data: &Bytes,
    op: &Table<'_>,
    s: usize,
    o: usize,
    tf_op: &str,
    custom: &str,
    out: &mut Reading,
) -> Result<(), FbError> {
    let place = || format!("subgraph {s} operator {o} ({})", short(custom));
    let large: u64 = op.scalar(9, 0)?;
    let large_size: u64 = op.scalar(10, 0)?;
    let options: Option<&[u8]> = if large > 1 {
        large
            .checked_add(large_size)
            .filter(|&e| e <= data.len() as u64)
            .map(|e| &data[large as usize..e as usize])
    } else {
        op.vector(5, 1)?.map(|v| v.bytes())
    };
    let Some(options) = options else {
        out.note(
            "Flex ops without their NodeDef",
            Severity::Fail,
            place,
            || "a Flex op without custom options: the Flex delegate has no NodeDef to run".into(),
        );
        return Ok(());
    };
    let parts = match flex::strings(options) {
        Ok(p) if p.len() == 2 => p,
        Ok(p) => {
            out.note(
                "Flex ops without their NodeDef",
                Severity::Fail,
                place,
                || {
                    format!(
                        "its custom options hold {} strings, not the op's name and its NodeDef",
                        p.len()
                    )
                },
            );
            return Ok(());
        }
        Err(e) => {
            out.note(
                "Flex ops without their NodeDef",
                Severity::Fail,
                place,
                || {
                    format!(
                        "its custom options are not the FlexBuffer the Flex delegate reads: {e}"
                    )
                },
            );
            return Ok(());
        }
    };
    let start = parts[1].as_ptr() as usize - data.as_ptr() as usize;
    let node_bytes = data.slice(start..start + parts[1].len());
    let node: NodeDef = match decode(&node_bytes, NODE_DEF, "node_def") {
        Ok((n, w)) => {
            for f in w.findings {
                out.note(
                    "Flex NodeDef wire findings",
                    f.severity,
                    || format!("{} {}", place(), f.place),
                    || f.reason,
                );
            }
            n
        }
        Err(e) => {
            out.note(
                "Flex ops without their NodeDef",
                Severity::Fail,
                place,
                || format!("its NodeDef: {e}"),
            );
            return Ok(());
        }
    };
    let named = String::from_utf8_lossy(parts[0]);
    if node.op != tf_op || named != tf_op {
        out.note("Flex ops named twice", Severity::Fail, place, || {
            format!(
                "its custom code names op {tf_op:?}, its options {:?} and its NodeDef {:?}: the Flex delegate runs the NodeDef's",
                short(&named),
                short(&node.op)
            )
        });
    }
    let nodes = [node];
    let judged = graph::judge(&Scope::main(&nodes), &BTreeMap::new(), &Context::default());
    for f in judged.findings {
        out.note("Flex ops judged", f.severity, place, || {
            f.reason.replace(
                "it runs when the graph is run",
                "it runs when the model is invoked",
            )
        });
    }
    Ok(())
}
