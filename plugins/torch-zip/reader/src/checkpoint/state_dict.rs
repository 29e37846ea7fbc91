//! The state-dict model (`ReadStateDict`): the tensors a checkpoint's pickle holds, named as
//! a state dict names them, and everything else it holds named as not carried. A pure function
//! of the pickle's outcome, apart from the file the tensors lie in.

use crate::pickle::{self, Object, TensorModel, Value};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Deepest nesting of mappings walked for tensor names.
pub const MAX_NAME_DEPTH: usize = 64;

/// A tensor with its state-dict name.
pub type NamedTensor = (String, Rc<TensorModel>);

/// The state-dict model of a checkpoint.
#[derive(Debug, Default)]
pub struct StateDict {
    /// Its tensors, by flattened name.
    pub named: Vec<NamedTensor>,
    /// Tensors that cannot be named (colliding names, too deep): refused by conversion.
    pub unread: Vec<(String, String)>,
    /// Tensors outside the model that cannot be named (under a key that is neither a string
    /// nor an integer): unread, and named as not carried by conversion.
    pub outside: Vec<(String, String)>,
    /// Tensors outside the model, named by their whole path (integer keys and list or tuple
    /// positions as decimal numbers): fingerprinted, not converted. With each, the line a
    /// conversion lists it under in `not_carried`, when it is listed one by one.
    pub outside_named: Vec<(String, Rc<TensorModel>, Option<String>)>,
    /// Everything else the checkpoint holds, as `path (what)`.
    pub not_carried: Vec<String>,
}

/// `ReadStateDict`: the tensors a checkpoint holds as a state dict, and every other tensor it
/// holds. The model's root is the top-level mapping, or its `state_dict` entry when that is a
/// mapping (as safetensors' convert.py and PyTorch Lightning read training checkpoints);
/// nested string-keyed mappings are flattened with `.`. Tensors in lists or tuples, under
/// integer keys, or beside `state_dict` are outside the model: named by their whole path
/// (positions and integer keys as decimal numbers) and fingerprinted, never converted. A file
/// that holds one bare tensor names it [`BARE_TENSOR`]. Tensors whose names collide are
/// unread; every other value is named as not carried.
pub fn read_state_dict(outcome: &pickle::Unpickled, result: &Value) -> StateDict {
    read_state_dict_in(outcome, result, pickle::Grammar::V1)
}

/// [`read_state_dict`] as `grammar` models it. From `socair-wo/3` a pickle whose value is a
/// tuple or list (`torch.save((a, b))`, `torch.save([a, b])`) is a model whose entries are
/// its positions, named `0`, `1`, … as `socair tensors` names them, so that a conversion
/// carries them; sequences inside it stay outside the model. Tensors torch builds from other
/// tensors (sparse, quantized) are fingerprinted under `<name>.<part>` outside the model, a
/// meta tensor is unread (it has no values), and a tensor's Python attributes are named as
/// not carried.
pub fn read_state_dict_in(
    outcome: &pickle::Unpickled,
    result: &Value,
    grammar: pickle::Grammar,
) -> StateDict {
    let dict_items = |v: &Value| match v {
        Value::Obj(id) => match &outcome.objects[*id] {
            Object::Dict(d) => Some(&d.items),
            Object::List(_) | Object::Record(_) => None,
        },
        _ => None,
    };
    let mut walker = Walker {
        outcome,
        beside: Vec::new(),
        on_path: HashSet::new(),
        // Every container once and every tensor and container item four times over: a large
        // state dict is walked whole, a pickle that shares containers to multiply the walk is
        // not.
        budget: 4
            * (outcome.objects.len()
                + outcome
                    .objects
                    .iter()
                    .map(|o| match o {
                        Object::Dict(d) => d.items.len(),
                        Object::List(items) => items.len(),
                        Object::Record(_) => 1,
                    })
                    .sum::<usize>()
                + outcome.tensors.len())
            + 1024,
        exhausted: false,
        root_sequence: grammar >= pickle::Grammar::V3,
        sd: StateDict::default(),
    };
    let mut root = result;
    if let Some(items) = dict_items(result) {
        if let Some((_, v)) = items.iter().find(|(k, v)| {
            matches!(k, Value::Str(s) if &**s == "state_dict") && dict_items(v).is_some()
        }) {
            root = v;
            for (k, v) in items {
                match k {
                    Value::Str(k) if &**k == "state_dict" => {}
                    Value::Str(k) => {
                        walker
                            .sd
                            .not_carried
                            .push(format!("{k} ({}, beside state_dict)", kind(outcome, v)));
                        walker.beside.push((k.to_string(), v.clone()));
                    }
                    _ => walker.sd.not_carried.push(format!(
                        "a value under a non-string key ({})",
                        kind(outcome, v)
                    )),
                }
            }
        }
    }
    if matches!(root, Value::Tensor(_)) {
        // torch.save of one tensor: a name, never "".
        walker.walk(root, BARE_TENSOR.to_owned(), 0, None);
    } else {
        walker.walk(root, String::new(), 0, None);
    }
    // What lies beside the state dict: its tensors are fingerprinted under their whole path,
    // and a conversion names the entry as a whole (above), not each tensor in it.
    for (k, v) in std::mem::take(&mut walker.beside) {
        walker.walk(&v, k, 1, Some(BESIDE));
    }
    let mut sd = walker.sd;

    // Names that collide ("a.b" as a key and as a path) are ambiguous: none of them is read.
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for n in sd
        .named
        .iter()
        .map(|(n, _)| n)
        .chain(sd.outside_named.iter().map(|(n, _, _)| n))
    {
        *counts.entry(n.as_str()).or_default() += 1;
    }
    let colliding: HashSet<String> = counts
        .into_iter()
        .filter(|(_, c)| *c > 1)
        .map(|(n, _)| n.to_owned())
        .collect();
    let mut unread = std::mem::take(&mut sd.unread);
    let collides = |n: &String, unread: &mut Vec<(String, String)>| {
        if colliding.contains(n) {
            unread.push((
                n.clone(),
                "two tensors get this name when nested keys are joined with '.'".into(),
            ));
            false
        } else {
            true
        }
    };
    sd.named.retain(|(n, _)| collides(n, &mut unread));
    sd.outside_named
        .retain(|(n, _, _)| collides(n, &mut unread));
    sd.unread = unread;
    if sd.named.iter().any(|(_, t)| t.requires_grad || t.parameter) {
        sd.not_carried
            .push("requires_grad and nn.Parameter types (safetensors holds plain tensors)".into());
    }
    sd
}

/// What a value is, for not_carried entries.
fn kind(outcome: &pickle::Unpickled, v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(_) => "bool".into(),
        Value::Int(_) | Value::BigInt => "int".into(),
        Value::Float(_) => "float".into(),
        Value::Str(_) => "str".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::Tuple(..) => "tuple".into(),
        Value::Obj(id) => match &outcome.objects[*id] {
            Object::List(_) => "list".into(),
            Object::Dict(d) if d.ordered => "OrderedDict".into(),
            Object::Dict(d) if d.counter => "Counter".into(),
            Object::Dict(_) => "dict".into(),
            Object::Record(r) => r.class.to_string(),
        },
        Value::Global(g) => format!("the global {}.{}", g.module, g.name),
        Value::Storage(_) => "a bare storage".into(),
        Value::Tensor(_) => "tensor".into(),
        Value::Opaque(what) => format!("an object built by {what}"),
        Value::Layout(l) => l.name().into(),
        Value::Data(what) => what.to_string(),
        Value::Composite(c) => c.kind.clone(),
    }
}

/// Walks the result for tensors. A container reached twice is walked twice (Python would
/// see its tensors under both paths), a cycle is not followed, and the total work is bounded
/// by a budget proportional to the pickle's objects.
struct Walker<'a> {
    outcome: &'a pickle::Unpickled,
    /// Entries beside `state_dict`, walked after the model.
    beside: Vec<(String, Value)>,
    on_path: HashSet<usize>,
    budget: usize,
    /// Whether the budget ran out (said once).
    exhausted: bool,
    /// Whether a tuple or list at the root is the model (`socair-wo/3`).
    root_sequence: bool,
    sd: StateDict,
}

/// `path.key`, or `key` at the root.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl Walker<'_> {
    /// `excluded` says why tensors found below are not part of the model.
    fn walk(&mut self, value: &Value, path: String, depth: usize, excluded: Option<&'static str>) {
        if self.budget == 0 {
            if !self.exhausted {
                self.exhausted = true;
                self.sd.unread.push((
                    path,
                    "the checkpoint's containers are too shared to walk: the walk stopped here, and what is below and after it is not read".into(),
                ));
            }
            return;
        }
        self.budget -= 1;
        let outcome = self.outcome;
        // A tuple or list that is the pickle's value is the model (`socair-wo/3`).
        let root_model = self.root_sequence && depth == 0 && excluded.is_none();
        let in_sequence = if root_model { None } else { Some(IN_SEQUENCE) };
        match value {
            Value::Tensor(t) => self.tensor(t, path, excluded),
            Value::Composite(c) => {
                if c.parts.is_empty() {
                    self.sd.outside.push((path, c.why.into()));
                    return;
                }
                for (part, v) in &c.parts {
                    self.walk(
                        v,
                        join(&path, part),
                        depth + 1,
                        Some(excluded.unwrap_or(c.why)),
                    );
                }
            }
            Value::Tuple(..) | Value::Obj(_) if depth >= MAX_NAME_DEPTH => {
                self.sd.unread.push((
                    path,
                    format!("nested deeper than {MAX_NAME_DEPTH} levels; not walked"),
                ));
            }
            Value::Tuple(items, _) => {
                if excluded.is_none() && !root_model {
                    self.sd.not_carried.push(format!("{path} (tuple)"));
                }
                for (i, v) in items.iter().enumerate() {
                    self.walk(v, join(&path, &i.to_string()), depth + 1, in_sequence);
                }
            }
            Value::Obj(id) => {
                if !self.on_path.insert(*id) {
                    return;
                }
                match &outcome.objects[*id] {
                    Object::List(items) => {
                        if excluded.is_none() && !root_model {
                            self.sd.not_carried.push(format!("{path} (list)"));
                        }
                        for (i, v) in items.iter().enumerate() {
                            self.walk(v, join(&path, &i.to_string()), depth + 1, in_sequence);
                        }
                    }
                    Object::Record(r) => self.record(r, path, depth, excluded),
                    Object::Dict(d) => self.dict(d, &path, depth, excluded),
                }
                self.on_path.remove(id);
            }
            other if excluded.is_none() => {
                let name = if path.is_empty() {
                    "the checkpoint".to_owned()
                } else {
                    path
                };
                self.sd
                    .not_carried
                    .push(format!("{name} ({})", kind(outcome, other)));
            }
            _ => {}
        }
    }

    /// A tensor at `path`: part of the model unless `excluded`.
    fn tensor(&mut self, t: &Rc<TensorModel>, path: String, excluded: Option<&'static str>) {
        match excluded {
            // Beside the state dict: the entry is named as not carried as a whole.
            Some(BESIDE) => self.sd.outside_named.push((path, t.clone(), None)),
            Some(why) => {
                let line = format!("{path} ({why})");
                self.sd.outside_named.push((path, t.clone(), Some(line)));
            }
            None => {
                if !t.attributes.is_empty() {
                    let names: Vec<&str> = t.attributes.iter().map(|a| &**a).collect();
                    self.sd.not_carried.push(format!(
                        "{path} (Python attributes on the tensor: {})",
                        names.join(", ")
                    ));
                }
                self.sd.named.push((path, t.clone()))
            }
        }
    }

    /// A dataclass instance: not carried itself, its state walked as outside the model.
    fn record(
        &mut self,
        r: &pickle::RecordObject,
        path: String,
        depth: usize,
        excluded: Option<&'static str>,
    ) {
        if excluded.is_none() {
            let name = if path.is_empty() {
                "the checkpoint".to_owned()
            } else {
                path.clone()
            };
            self.sd.not_carried.push(format!("{name} (a {})", r.class));
        }
        if let Some(state) = &r.state {
            self.walk(state, path, depth + 1, Some(IN_RECORD));
        }
    }

    /// A dict: its string keys extend the path; other keys put what is below outside the model.
    fn dict(
        &mut self,
        d: &pickle::DictObject,
        path: &str,
        depth: usize,
        excluded: Option<&'static str>,
    ) {
        if d.attrs.is_some() && excluded.is_none() {
            self.sd.not_carried.push(format!(
                "{} (the state dict's _metadata)",
                join(path, "_metadata")
            ));
        }
        for (k, v) in &d.items {
            match k {
                Value::Str(k) => self.walk(v, join(path, k), depth + 1, excluded),
                // An optimizer's state is keyed by parameter index.
                Value::Int(i) => {
                    if excluded.is_none() {
                        self.sd
                            .not_carried
                            .push(format!("{} (under a non-string key)", join(path, "<key>")));
                    }
                    self.walk(
                        v,
                        join(path, &i.to_string()),
                        depth + 1,
                        Some(excluded.unwrap_or(NON_STRING_KEY)),
                    )
                }
                _ => {
                    if excluded.is_none() {
                        self.sd
                            .not_carried
                            .push(format!("{} (under a non-string key)", join(path, "<key>")));
                    }
                    self.walk(v, join(path, "<key>"), depth + 1, Some(NON_STRING_KEY))
                }
            }
        }
    }
}

const IN_SEQUENCE: &str = "inside a list or tuple: not part of the state-dict model";
const BESIDE: &str = "beside the state dict: not part of the state-dict model";
const IN_RECORD: &str = "in a dataclass's state: not part of the state-dict model";

/// The name of the one tensor of a file that holds a bare tensor (`torch.save(t)`).
pub const BARE_TENSOR: &str = "tensor";
const NON_STRING_KEY: &str = "under a key that is not a string: not part of the state-dict model";
