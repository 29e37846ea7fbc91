//! The role the reader gives each message as the kit's wire walk enters it ([`Role`], passed
//! down from parent to child), and what it does there ([`Visit`]'s `enter`): a layer's name
//! for the weights it holds, an operation's output and an attribute's key for the values they
//! hold, a custom class, a link, a tensor.

use super::found::Located;
use super::links::linked_model_file;
use super::mil::{self, Value};
use super::weights::{weight_params, Weight};
use crate::proto::schema::{
    CUSTOM_LAYER_PARAMS, CUSTOM_MODEL, LINKED_MODEL_FILE, MIL_ARGUMENT, MIL_BINDING, MIL_OPERATION,
    MIL_OPERATION_ATTRIBUTE, MIL_OPERATION_INPUT, MIL_VALUE, MODEL, NEURAL_NETWORK_LAYER, ONEOFS,
    WEIGHT_PARAMS,
};
use crate::proto::shallow::{self, Span};
use socair_plugin_kit::bounded::short;
use socair_plugin_kit::protobuf::schema::Field;
use socair_plugin_kit::protobuf::walk::{Core, Visitor, WireError};
use socair_plugin_kit::reading::Reading;
use socair_plugin_kit::Severity;
use std::collections::HashSet;

/// What kind of MIL operation holds a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// `const`: its `val` is the constant, named by the operation's output.
    Const,
    /// `constexpr_*`: its attributes are the parts of a constant (quantized data, scales).
    Constexpr,
    /// Any other.
    Other,
}

/// Where a value sits in its MIL operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Not directly in an operation's attribute or input.
    None,
    /// An attribute's value.
    Attribute,
    /// An input's binding.
    Input,
}

/// A message's role: what encloses it, as far as naming and judging need.
#[derive(Debug, Clone, Copy)]
pub struct Role {
    /// Its depth (the root is 0).
    pub depth: u16,
    /// The enclosing NeuralNetwork layer: its name's span and its depth.
    pub layer: Option<(Span, u16)>,
    /// The enclosing MIL operation: its kind and its first output's name.
    pub op: Option<(OpKind, Option<Span>)>,
    /// The key of the enclosing attribute or input.
    pub key: Option<Span>,
    /// Where a MIL value sits.
    pub slot: Slot,
}

impl Role {
    /// The root message's.
    pub fn root() -> Role {
        Role {
            depth: 0,
            layer: None,
            op: None,
            key: None,
            slot: Slot::None,
        }
    }
}

/// What a read of a model file gathers as the walk goes.
#[derive(Debug)]
pub struct Visit {
    /// Tensors, findings, unread tensors, metadata.
    pub reading: Reading,
    /// The names given to tensors.
    pub names: HashSet<String>,
    /// The model types met, distinct, in order (at most 32).
    pub types: Vec<&'static str>,
    /// Findings about another file: their place, and the file.
    pub about: Vec<(String, String)>,
}

impl Visit {
    /// A read of a file of `len` bytes in `format`.
    pub fn new(format: &'static str, len: u64) -> Visit {
        Visit {
            reading: Reading::new(format, len),
            names: HashSet::new(),
            types: Vec::new(),
            about: Vec::new(),
        }
    }

    /// A name for a tensor not given yet: `wanted`, else its path.
    fn name(&mut self, wanted: Option<String>, path: &str) -> String {
        let mut name = wanted
            .filter(|n| !n.is_empty() && !self.names.contains(n))
            .unwrap_or_else(|| path.to_owned());
        let mut n = 2;
        while self.names.contains(&name) {
            name = format!("{path}#{n}");
            n += 1;
        }
        self.names.insert(name.clone());
        name
    }

    /// Describes `located` as the tensor `name`.
    fn describe(&mut self, name: String, located: Located) {
        if located.is_empty() {
            return;
        }
        if self.reading.room() {
            self.reading.tensors.push(located.descriptor(&name));
        }
    }

    fn weight(&mut self, buf: &[u8], role: &Role, span: Span, path: &str, place: &str) {
        let mut left = self.reading.inline_left;
        let weight = weight_params(buf, span, &mut left);
        self.reading.inline_left = left;
        let wanted = role.layer.and_then(|(name, depth)| {
            let layer = shallow::text(buf, name)?;
            let segments: Vec<&str> = path.split('.').collect();
            let after = segments
                .get(usize::from(depth) + 1..)
                .filter(|s| !s.is_empty())
                .or_else(|| segments.get(usize::from(depth)..))?;
            Some(format!("{layer}.{}", after.join(".")))
        });
        match weight {
            Weight::Empty => {}
            Weight::Located(t) => {
                let name = self.name(wanted, path);
                self.describe(name, t);
            }
            Weight::Refused(why) => {
                let name = wanted.unwrap_or_else(|| path.to_owned());
                self.reading.note(
                    "weights Core ML refuses",
                    Severity::Lead,
                    || place.to_owned(),
                    || why.clone(),
                );
                self.reading
                    .unread("weights not located", Some(&name), why, false);
            }
        }
    }

    fn value(&mut self, buf: &[u8], parent: &Role, span: Span, path: &str, place: &str) {
        let key = parent.key.and_then(|k| shallow::text(buf, k));
        let (kind, output) = match parent.op {
            Some((kind, output)) => (kind, output.and_then(|o| shallow::text(buf, o))),
            None => (OpKind::Other, None),
        };
        let immediate = parent.slot == Slot::Attribute
            && kind != OpKind::Other
            && key.is_some_and(|k| k != "name");
        let mut left = self.reading.inline_left;
        let value = mil::value(buf, span, immediate, &mut left);
        self.reading.inline_left = left;
        let wanted = match (parent.slot, kind, key, output) {
            (Slot::Attribute, OpKind::Const, Some("val"), Some(out)) => Some(out.to_owned()),
            (Slot::Attribute | Slot::Input, _, Some(k), Some(out)) => Some(format!("{out}.{k}")),
            _ => None,
        };
        match value {
            Value::None => {}
            Value::Located(t) => {
                let name = self.name(wanted, path);
                self.describe(name, t);
            }
            Value::Unread(why, severity) => {
                if let Some(severity) = severity {
                    self.reading.note(
                        "values not located",
                        severity,
                        || place.to_owned(),
                        || why.clone(),
                    );
                }
                let name = wanted.unwrap_or_else(|| path.to_owned());
                self.reading
                    .unread("values not located", Some(&name), why, false);
            }
        }
    }

    fn custom(&mut self, buf: &[u8], role: &Role, span: Span, place: &str, model: bool) {
        let class = shallow::last_text(buf, span, 10).unwrap_or("");
        let layer = role
            .layer
            .and_then(|(n, _)| shallow::text(buf, n))
            .unwrap_or("");
        let reason = if model {
            format!("a custom model: Core ML instantiates the app's class {:?} (MLCustomModel) and runs its code to make every prediction; socair cannot see that code", short(class))
        } else {
            format!("custom layer {:?}: Core ML instantiates the app's class {:?} (MLCustomLayer) and runs its code on the layer's inputs; socair cannot see that code", short(layer), short(class))
        };
        self.reading.note(
            "code the app supplies",
            Severity::Lead,
            || place.to_owned(),
            || reason,
        );
        let key = if model {
            "coreml.custom_models"
        } else {
            "coreml.custom_layers"
        };
        let entry = self.reading.metadata.iter_mut().find(|(k, _)| k == key);
        match entry {
            Some((_, v)) if v.len() < 4096 => {
                v.push_str(", ");
                v.push_str(&short(class));
            }
            Some(_) => {}
            None => self.reading.metadata.push((key.into(), short(class))),
        }
    }

    fn link(&mut self, buf: &[u8], span: Span, place: &str) {
        for f in linked_model_file(buf, span) {
            if let Some(file) = &f.file {
                if self.about.len() < 64 {
                    self.about.push((place.to_owned(), file.clone()));
                }
            }
            self.reading
                .note("links", f.severity, || place.to_owned(), || f.reason);
        }
    }
}

impl Visitor for Visit {
    type Role = Role;

    fn enter(
        &mut self,
        core: &mut Core<'_>,
        parent: Role,
        field: &'static Field,
        child: usize,
        index: u64,
        tag_at: usize,
    ) -> Result<Role, WireError> {
        let buf = core.buf;
        let span = shallow::payload_at(buf, tag_at).unwrap_or((0, 0));
        // The path (`neuralNetwork.layers[3].convolution`) is built only where it is used:
        // every message is entered, and the walk's place costs its depth.
        let path = || {
            let segment = if field.repeated {
                format!("{}[{index}]", field.name)
            } else {
                field.name.to_owned()
            };
            if parent.depth == 0 {
                segment
            } else {
                format!("{}.{segment}", core.place())
            }
        };
        let place = |path: &str| format!("{path} (byte {tag_at})");
        let mut role = Role {
            depth: parent.depth.saturating_add(1),
            slot: Slot::None,
            ..parent
        };
        if ONEOFS.get(child).is_some_and(|g| !g.is_empty()) {
            self.oneofs(buf, child, span, path);
        }
        match child {
            MODEL => self.model(buf, span, &place(&path())),
            NEURAL_NETWORK_LAYER => {
                role.layer = shallow::last_bytes(buf, span, 1).map(|n| (n, role.depth));
            }
            CUSTOM_LAYER_PARAMS => self.custom(buf, &parent, span, &place(&path()), false),
            CUSTOM_MODEL => self.custom(buf, &parent, span, &place(&path()), true),
            LINKED_MODEL_FILE => self.link(buf, span, &place(&path())),
            WEIGHT_PARAMS => {
                let path = path();
                self.weight(buf, &parent, span, &path, &place(&path))
            }
            MIL_OPERATION => {
                let kind = match shallow::last_text(buf, span, 1) {
                    Some("const") => OpKind::Const,
                    Some(t) if t.starts_with("constexpr_") => OpKind::Constexpr,
                    _ => OpKind::Other,
                };
                let output = shallow::fields(buf, span)
                    .find(|f| f.number == 3 && f.wire == 2)
                    .and_then(|f| shallow::last_bytes(buf, f.payload, 1));
                role.op = Some((kind, output));
                role.key = None;
            }
            MIL_OPERATION_ATTRIBUTE | MIL_OPERATION_INPUT => {
                role.key = shallow::last_bytes(buf, span, 1);
                role.slot = if child == MIL_OPERATION_ATTRIBUTE {
                    Slot::Attribute
                } else {
                    Slot::Input
                };
            }
            MIL_ARGUMENT | MIL_BINDING => role.slot = parent.slot,
            MIL_VALUE => {
                let path = path();
                self.value(buf, &parent, span, &path, &place(&path))
            }
            _ => {}
        }
        Ok(role)
    }
}
