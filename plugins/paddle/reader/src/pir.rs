//! A PIR program: the JSON `paddle.jit.save` and `paddle.static.save_inference_model` write in
//! Paddle 3 (`model.json`, `inference.json`), read as Paddle 3.3.1 reads it
//! (paddle/fluid/pir/serialize_deserialize: `ProgramReader` in src/ir_deserialize.cc, the keys
//! of include/schema.h): `{"base_code": {"magic": "pir", "version", "trainable"},
//! "program": {"regions": [{"#", "blocks": [{"#", "args", "kwargs"?, "ops": [op...]}]}]}}`, each
//! op `{"#": name, "I", "O", "A", "OA"?, "DA"?, "QA"?, "regions"?}` with its name compressed
//! by dialect id (`1.matmul` for `pd_op.matmul`, `p` for `builtin.parameter`: src/schema.cc).
//!
//! The document is read strictly and streamed, never built as a tree: every object of it,
//! at any depth, is refused if it repeats a key (nlohmann's parser keeps one of them, another
//! reader may keep the other); every op of every block of every region, nested regions
//! included, is judged ([`crate::ops`]); what this reader does not know (a key of the
//! structure schema.h does not name) is a LEAD.

use crate::ops;
use crate::outcome::Reading;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::Severity;
use std::collections::HashSet;
use std::fmt;

/// The format name.
pub const FORMAT: &str = "paddle-pir";

/// Whether the head of a file is a PIR program: its first key is `base_code` (nlohmann writes
/// keys sorted) and the head names the magic `pir`, whitespace aside.
pub fn looks_like_pir(head: &[u8], _file_len: u64) -> bool {
    let compact: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b" \t\r\n".contains(b))
        .take(512)
        .collect();
    compact.starts_with(br#"{"base_code":{"#)
        && compact.windows(13).any(|w| w == br#""magic":"pir""#)
}

/// Where a value sits in the program, as far as this reader cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Root,
    BaseCode,
    Magic,
    Program,
    Regions,
    Region,
    Blocks,
    Block,
    Ops,
    Op,
    OpName,
    ParamAttrs,
    /// A parameter op's `OA`: `[persistable, stop_gradient, trainable]`.
    ParamResultAttrs,
    /// Its first element.
    Persistable,
    Other,
}

/// What a value gave back to its parent.
enum Got {
    Nothing,
    Text(String),
    Flag(bool),
}

struct Ctx<'o> {
    out: &'o mut Reading,
    /// The place of the value being read (`region 0 block 0 op 3`).
    path: Vec<String>,
    ops: u64,
    params: Vec<String>,
    magic: bool,
}

impl Ctx<'_> {
    fn place(&self) -> String {
        self.path.join(" ")
    }
}

struct Seed<'c, 'o> {
    ctx: &'c mut Ctx<'o>,
    role: Role,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Got;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Got, D::Error> {
        d.deserialize_any(self)
    }
}

fn structural(role: Role) -> bool {
    !matches!(
        role,
        Role::Other
            | Role::ParamAttrs
            | Role::ParamResultAttrs
            | Role::Persistable
            | Role::Magic
            | Role::OpName
    )
}

/// The keys schema.h defines for an object of each role, with the role of each value.
fn child(role: Role, key: &str) -> Option<Role> {
    Some(match (role, key) {
        (Role::Root, "base_code") => Role::BaseCode,
        (Role::Root, "program") => Role::Program,
        (Role::BaseCode, "magic") => Role::Magic,
        (Role::BaseCode, "version" | "trainable") => Role::Other,
        (Role::Program, "regions") => Role::Regions,
        (Role::Region, "#") => Role::Other,
        (Role::Region, "blocks") => Role::Blocks,
        (Role::Block, "#" | "args" | "kwargs") => Role::Other,
        (Role::Block, "ops") => Role::Ops,
        (Role::Op, "#") => Role::OpName,
        (Role::Op, "regions") => Role::Regions,
        (Role::Op, "I" | "O" | "OA" | "DA" | "QA") => Role::Other,
        _ => return None,
    })
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Got;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.role {
            Role::Root | Role::BaseCode | Role::Program | Role::Region | Role::Block | Role::Op => {
                "an object"
            }
            Role::Regions | Role::Blocks | Role::Ops => "an array",
            Role::Magic | Role::OpName => "a string",
            _ => "a JSON value",
        })
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Got, E> {
        if self.role == Role::Persistable {
            return Ok(Got::Flag(v));
        }
        self.scalar()
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Got, E> {
        if self.role == Role::Persistable {
            return Ok(Got::Flag(v != 0));
        }
        self.scalar()
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Got, E> {
        if self.role == Role::Persistable {
            return Ok(Got::Flag(v != 0));
        }
        self.scalar()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Got, E> {
        self.scalar()
    }
    fn visit_unit<E: de::Error>(self) -> Result<Got, E> {
        self.scalar()
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Got, E> {
        match self.role {
            Role::Magic => {
                if v != "pir" {
                    return Err(E::custom(format_args!(
                        "base_code.magic is {:?}; Paddle reads only \"pir\"",
                        short(v)
                    )));
                }
                self.ctx.magic = true;
                Ok(Got::Nothing)
            }
            Role::OpName | Role::ParamAttrs => Ok(Got::Text(v.to_owned())),
            r if structural(r) => Err(E::invalid_type(de::Unexpected::Str(v), &self)),
            _ => Ok(Got::Nothing),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Got, A::Error> {
        let (elem, label) = match self.role {
            Role::Regions => (Role::Region, "region"),
            Role::Blocks => (Role::Block, "block"),
            Role::Ops => (Role::Op, "op"),
            Role::Other | Role::ParamAttrs | Role::ParamResultAttrs | Role::Persistable => {
                (Role::Other, "")
            }
            _ => return Err(de::Error::invalid_type(de::Unexpected::Seq, &self)),
        };
        let mut i = 0u64;
        let mut last = Got::Nothing;
        let mut first = None;
        loop {
            if !label.is_empty() {
                self.ctx.path.push(format!("{label} {i}"));
            }
            let role = match self.role {
                Role::ParamAttrs => Role::ParamAttrs,
                Role::ParamResultAttrs if i == 0 => Role::Persistable,
                _ => elem,
            };
            let got = seq.next_element_seed(Seed {
                ctx: self.ctx,
                role,
            });
            if !label.is_empty() {
                self.ctx.path.pop();
            }
            match got? {
                Some(Got::Flag(f)) if self.role == Role::ParamResultAttrs => first = Some(f),
                Some(g) => last = g,
                None => break,
            }
            i += 1;
        }
        Ok(match self.role {
            // The parameter's name is the last of its attributes (`[.., .., .., name]`).
            Role::ParamAttrs => last,
            Role::ParamResultAttrs => first.map_or(Got::Nothing, Got::Flag),
            _ => Got::Nothing,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Got, A::Error> {
        if !matches!(
            self.role,
            Role::Root
                | Role::BaseCode
                | Role::Program
                | Role::Region
                | Role::Block
                | Role::Op
                | Role::Other
        ) {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let mut seen = HashSet::new();
        let mut name: Option<String> = None;
        let (mut param, mut persistable) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!(
                    "{}duplicate key {:?}: JSON parsers keep different ones",
                    at(self.ctx),
                    short(&key)
                )));
            }
            let role = match child(self.role, &key) {
                Some(Role::Other)
                    if self.role == Role::Op && key == "OA" && name.as_deref() == Some("p") =>
                {
                    Role::ParamResultAttrs
                }
                Some(r) => r,
                None if self.role == Role::Op && key == "A" => {
                    if name.as_deref() == Some("p") {
                        Role::ParamAttrs
                    } else {
                        Role::Other
                    }
                }

                None if self.role == Role::Other => Role::Other,
                None => {
                    let place = self.ctx.place();
                    self.ctx.out.note(
                        "keys Paddle 3.3.1's PIR schema does not define",
                        Severity::Lead,
                        || if place.is_empty() { "program".into() } else { place },
                        || format!("key {:?} is not one Paddle 3.3.1's ProgramReader reads: this reader skips it; another version of Paddle may not", short(&key)),
                    );
                    Role::Other
                }
            };
            match map.next_value_seed(Seed {
                ctx: self.ctx,
                role,
            })? {
                Got::Text(t) if role == Role::OpName => name = Some(t),
                Got::Text(t) if role == Role::ParamAttrs => param = Some(t),
                Got::Flag(f) if role == Role::ParamResultAttrs => persistable = Some(f),
                _ => {}
            }
        }
        let required: &[&str] = match self.role {
            Role::Root => &["base_code", "program"],
            Role::BaseCode => &["magic"],
            Role::Program => &["regions"],
            Role::Region => &["blocks"],
            Role::Block => &["ops"],
            Role::Op => &["#"],
            _ => &[],
        };
        if let Some(k) = required.iter().find(|k| !seen.contains(**k)) {
            return Err(de::Error::custom(format_args!(
                "{}no key {k:?}, which Paddle's ProgramReader requires",
                at(self.ctx)
            )));
        }
        if self.role == Role::Op {
            judge(self.ctx, name.as_deref().unwrap_or(""));
            // A persistable parameter is what save_combine wrote to the .pdiparams (`OA`'s
            // first value; a dropout state is a parameter op that is not persistable).
            if let (Some(p), Some(true)) = (param, persistable) {
                self.ctx.params.push(p);
            }
        }
        Ok(Got::Nothing)
    }
}

impl Seed<'_, '_> {
    fn scalar<E: de::Error>(self) -> Result<Got, E> {
        if structural(self.role) || matches!(self.role, Role::Magic | Role::OpName) {
            return Err(E::custom(format_args!(
                "{}{} is not {}",
                at(self.ctx),
                "a value",
                match self.role {
                    Role::Magic | Role::OpName => "a string",
                    Role::Regions | Role::Blocks | Role::Ops => "an array",
                    _ => "an object",
                }
            )));
        }
        Ok(Got::Nothing)
    }
}

fn at(ctx: &Ctx<'_>) -> String {
    let p = ctx.place();
    if p.is_empty() {
        String::new()
    } else {
        format!("{p}: ")
    }
}

fn judge(ctx: &mut Ctx<'_>, written: &str) {
    ctx.ops += 1;
    let place = format!("{} ({})", ctx.place(), short(written));
    let Some(full) = ops::pir_name(written) else {
        ctx.out.note(
            "ops Paddle 3.3.1 does not define",
            Severity::Lead,
            || place,
            || format!("op name {:?} has no dialect id Paddle 3.3.1 defines (0 to 4, or `p`): this reader cannot judge it", short(written)),
        );
        return;
    };
    let class = ops::pir(&full);
    if let Some(sev) = class.severity() {
        ctx.out.note(
            class.kind(),
            sev,
            || place,
            || format!("op `{}` {}", short(&full), class.why()),
        );
    }
}

/// Reads a PIR program.
pub fn read(data: &[u8]) -> OpenedFile {
    let mut out = crate::outcome::read(FORMAT, data.len() as u64);
    let mut ctx = Ctx {
        out: &mut out,
        path: Vec::new(),
        ops: 0,
        params: Vec::new(),
        magic: false,
    };
    let mut de = serde_json::Deserializer::from_slice(data);
    let r = Seed {
        ctx: &mut ctx,
        role: Role::Root,
    }
    .deserialize(&mut de)
    .and_then(|_| de.end());
    let (n_ops, params) = (ctx.ops, std::mem::take(&mut ctx.params));
    if let Err(e) = r {
        let reason = format!("not a PIR program Paddle reads: {e}");
        return socair_plugin_kit::report::refused(
            FORMAT,
            "not a sound PaddlePaddle PIR program: readers may disagree on what it holds",
            reason.clone(),
            socair_plugin_api::Finding::new(
                socair_plugin_api::Severity::Fail,
                format!("line {} column {}", e.line(), e.column()),
                reason,
            ),
        );
    }
    let mut sorted = params.clone();
    sorted.sort();
    // The order the host names the .pdiparams beside it by (host/reading/src/read/artifact.rs
    // `name_by_program`).
    out.metadata.push((
        "paddle.parameter_order".into(),
        serde_json::to_string(&sorted).unwrap_or_default(),
    ));
    out.metadata.push((
        "paddle.parameters".into(),
        crate::outcome::listed(sorted.iter().map(String::as_str), 32),
    ));
    let n_params = params.len() as u64;
    let order = crate::outcome::listed(sorted.iter().map(String::as_str), 8);
    out.finish(|status| match status {
        RowStatus::Fail => "PaddlePaddle PIR program holding ops that run Python, read or write files, print or reach the network: see the findings".into(),
        RowStatus::Lead => format!("PaddlePaddle PIR program with parts this reader does not prove: {} ops judged", thousands(n_ops)),
        _ => format!(
            "PaddlePaddle PIR program: {} ops judged, every op computational; {} parameters, the tensors of the .pdiparams beside it in this order: {}",
            thousands(n_ops), thousands(n_params), order
        ),
    })
}
