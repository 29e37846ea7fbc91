//! Function-attribute placeholders, resolved through every call path.
//!
//! A node of a library function may hold, instead of an attribute's value, a placeholder
//! (`AttrValue.placeholder`, `"$name"` in TensorFlow's printouts) naming an attribute of the
//! function; the value comes from the call. TensorFlow 2.21.0
//! (`tensorflow/core/framework/function.cc`, `InstantiateFunction`) substitutes each
//! placeholder with the value the call binds, else the default of the function signature's
//! `AttrDef`, else refuses the call ("Failed to bind all placeholders"); `SubstitutePlaceholders`
//! (`attr_value_util.cc`) also substitutes inside a `func` attribute's `NameAttrList.attr` and
//! a list of them, which is how a function passes its own placeholder on to the function it
//! calls. A call binds attributes two ways (`GetFunctionDefAndAttrs`): a node whose op is the
//! function binds its own `attr`; a node calling through a `func` attribute
//! (`PartitionedCall`/`StatefulPartitionedCall`'s `f`, `If`'s branches, `While`'s `cond` and
//! `body`, `Case`'s `branches`, `For`, `RemoteCall`, tf.data's `f`, `predicate`, `*_func`…)
//! binds that `NameAttrList`'s `attr`.
//!
//! This module computes, for every (function, attribute) a placeholder of the library uses,
//! the set of values every call path can give it: a bounded fixed point over the call sites
//! of the main graph and of every function, each value with the call path that binds it.
//! What cannot be resolved (no call site binds it, a function named by a placeholder that
//! cannot be resolved, more values than [`MAX_VALUES`], no fixed point within [`MAX_ROUNDS`])
//! is [`Bound::Unknown`], which the judge takes as the worst value the attribute can hold.

use crate::proto::tensorflow::{attr_value, AttrValue, FunctionDef, NameAttrList, NodeDef};
use socair_plugin_kit::bounded::short;
use std::collections::{BTreeMap, BTreeSet};

/// How many distinct values one placeholder keeps before it is taken as unknown.
pub const MAX_VALUES: usize = 16;
/// How many rounds the fixed point may take (each round carries values one call deeper).
pub const MAX_ROUNDS: usize = 64;
/// How many call sites are followed; past that every placeholder is unknown.
pub const MAX_SITES: usize = 100_000;
/// How many placeholder values the fixed point may carry in all; past that every placeholder
/// is unknown (a file can make each round cost calls × placeholders × values).
pub const MAX_WORK: u64 = 4_000_000;
/// How many hops of a call path a value keeps for its finding.
const MAX_HOPS: usize = 8;

/// One value a placeholder can take.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// A value, with the call path that binds it (outermost call first).
    Value(attr_value::Value, Vec<String>),
    /// A value this reader cannot resolve, with why.
    Unknown(String),
}

/// The attribute keys through which an op calls a function (TensorFlow 2.21.0's functional
/// and tf.data ops): an unresolved placeholder there hides which function is called.
fn calls_through(key: &str) -> bool {
    matches!(
        key,
        "f" | "then_branch" | "else_branch" | "cond" | "body" | "branches" | "predicate"
    ) || key.ends_with("_func")
        || key.ends_with("_fn")
}

/// Whom a call site calls.
#[derive(Debug)]
enum Target<'a> {
    /// A function named in the file, with the attributes the call binds.
    Named(&'a str, &'a BTreeMap<String, AttrValue>),
    /// A function named by a placeholder of the calling function.
    Via(&'a str),
}

/// One function a call site calls: (callee, the attributes it binds, whether placeholders in
/// them are the calling function's own, the call path so far).
type Call<'a> = (&'a str, &'a BTreeMap<String, AttrValue>, bool, Vec<String>);

#[derive(Debug)]
struct Site<'a> {
    /// The calling function (none: the main graph).
    caller: Option<&'a str>,
    /// The call, as a hop of a call path.
    here: String,
    target: Target<'a>,
}

/// The values of every placeholder of a library.
#[derive(Debug, Default, Clone)]
pub struct Bindings {
    values: BTreeMap<(String, String), Vec<Bound>>,
    /// Why every placeholder is unknown, when something hides every call.
    everything_unknown: Option<String>,
    /// Values carried so far (bounded by [`MAX_WORK`]).
    work: u64,
}

/// A hop of a call path, for findings.
pub fn hop(caller: Option<&str>, n: &NodeDef) -> String {
    match caller {
        Some(f) => format!(
            "function {:?} node {:?} ({})",
            short(f),
            short(&n.name),
            short(&n.op)
        ),
        None => format!("graph node {:?} ({})", short(&n.name), short(&n.op)),
    }
}

fn extended(path: &[String], next: String) -> Vec<String> {
    let mut p = path.to_vec();
    if p.len() < MAX_HOPS {
        p.push(next);
    } else if p.last().map(String::as_str) != Some("…") {
        p.push("…".into());
    }
    p
}

/// The placeholders a function's nodes use (top-level, and inside `func` attributes).
fn placeholders(f: &FunctionDef) -> BTreeSet<&str> {
    fn nested<'a>(nal: &'a NameAttrList, out: &mut BTreeSet<&'a str>, depth: usize) {
        for v in nal.attr.values() {
            add(v, out, depth + 1);
        }
    }
    fn add<'a>(v: &'a AttrValue, out: &mut BTreeSet<&'a str>, depth: usize) {
        // NameAttrLists nest as deep as the protobuf decoder allowed; stop well before.
        if depth > 16 {
            return;
        }
        match &v.value {
            Some(attr_value::Value::Placeholder(p)) => {
                out.insert(p.as_str());
            }
            Some(attr_value::Value::Func(nal)) => nested(nal, out, depth),
            Some(attr_value::Value::List(l)) => {
                for nal in &l.func {
                    nested(nal, out, depth);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for n in &f.node_def {
        for v in n.attr.values() {
            add(v, &mut out, 0);
        }
    }
    out
}

impl Bindings {
    /// Resolves every placeholder of `library`'s functions through the call sites of `main`
    /// and of every function.
    pub fn resolve(main: &[NodeDef], library: &BTreeMap<&str, &FunctionDef>) -> Bindings {
        let used: BTreeMap<&str, BTreeSet<&str>> = library
            .iter()
            .map(|(name, f)| (*name, placeholders(f)))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        let mut out = Bindings::default();
        if used.is_empty() {
            return out;
        }
        for (f, ps) in &used {
            for p in ps {
                out.values
                    .insert(((*f).to_owned(), (*p).to_owned()), Vec::new());
            }
        }
        // Every call site: by op name, through a func attribute or a list of them, or
        // through a placeholder of the calling function.
        let mut sites: Vec<Site<'_>> = Vec::new();
        let scopes = std::iter::once((None, main)).chain(
            library
                .iter()
                .map(|(n, f)| (Some(*n), f.node_def.as_slice())),
        );
        'scopes: for (caller, nodes) in scopes {
            for node in nodes {
                if sites.len() >= MAX_SITES {
                    out.everything_unknown = Some(format!(
                        "the file makes more than {MAX_SITES} calls to functions with placeholders, more than this reader follows"
                    ));
                    break 'scopes;
                }
                // Only calls that can bind a placeholder matter: of a function that uses
                // one, or of a function a placeholder names.
                let mut targets: Vec<Target<'_>> = Vec::new();
                if used.contains_key(node.op.as_str()) {
                    targets.push(Target::Named(node.op.as_str(), &node.attr));
                }
                for (key, v) in &node.attr {
                    match &v.value {
                        Some(attr_value::Value::Func(nal)) => {
                            targets.push(Target::Named(nal.name.as_str(), &nal.attr))
                        }
                        Some(attr_value::Value::List(l)) => targets.extend(
                            l.func
                                .iter()
                                .map(|nal| Target::Named(nal.name.as_str(), &nal.attr)),
                        ),
                        Some(attr_value::Value::Placeholder(p)) if calls_through(key) => {
                            match caller {
                                Some(_) => targets.push(Target::Via(p.as_str())),
                                None => {
                                    out.everything_unknown = Some(format!(
                                        "{} calls the function a placeholder names, and the main graph binds no placeholder",
                                        hop(None, node)
                                    ))
                                }
                            }
                        }
                        _ => {}
                    }
                }
                targets.retain(|t| match t {
                    Target::Named(name, _) => used.contains_key(name),
                    Target::Via(_) => true,
                });
                if targets.is_empty() {
                    continue;
                }
                let here = hop(caller, node);
                sites.extend(targets.into_iter().map(|target| Site {
                    caller,
                    here: here.clone(),
                    target,
                }));
            }
        }
        // Carry values until nothing changes; then a placeholder no call path gave a value is
        // unknown, which is carried on in turn to what it binds.
        let mut passes = 0;
        loop {
            let mut settled = false;
            for _ in 0..MAX_ROUNDS {
                let mut changed = false;
                for site in &sites {
                    changed |= out.visit(site, library, &used);
                }
                if out.everything_unknown.is_some() {
                    break;
                }
                if !changed {
                    settled = true;
                    break;
                }
            }
            if !settled {
                out.everything_unknown.get_or_insert_with(|| {
                    format!("the values did not settle within {MAX_ROUNDS} rounds of calls")
                });
            }
            let mut filled = false;
            for vals in out.values.values_mut() {
                if vals.is_empty() {
                    vals.push(Bound::Unknown(
                        "no call site in the file binds it and its function's signature gives no default".into(),
                    ));
                    filled = true;
                }
            }
            passes += 1;
            if !filled || out.everything_unknown.is_some() {
                break;
            }
            if passes > MAX_ROUNDS {
                out.everything_unknown = Some(format!(
                    "the values did not settle within {MAX_ROUNDS} rounds of calls"
                ));
                break;
            }
        }
        out
    }

    /// Carries the values of one call site into its callees; whether anything was added.
    fn visit(
        &mut self,
        site: &Site<'_>,
        library: &BTreeMap<&str, &FunctionDef>,
        used: &BTreeMap<&str, BTreeSet<&str>>,
    ) -> bool {
        if self.everything_unknown.is_some() {
            return false;
        }
        let here = &site.here;
        let resolved: Vec<Bound>;
        let mut calls: Vec<Call<'_>> = Vec::new();
        match site.target {
            Target::Named(name, attrs) => calls.push((name, attrs, true, Vec::new())),
            Target::Via(p) => {
                resolved = self.current(site.caller, p);
                for b in &resolved {
                    match b {
                        Bound::Value(attr_value::Value::Func(nal), path) => {
                            calls.push((nal.name.as_str(), &nal.attr, false, path.clone()))
                        }
                        Bound::Value(..) => {}
                        Bound::Unknown(why) => {
                            if self.everything_unknown.is_none() {
                                self.everything_unknown = Some(format!(
                                    "{here} calls the function placeholder {:?} names, which this reader cannot resolve ({why})",
                                    short(p)
                                ));
                                return true;
                            }
                        }
                    }
                }
            }
        }
        let mut changed = false;
        for (callee, attrs, own, path) in calls {
            let Some(ps) = used.get(callee) else {
                continue;
            };
            let sig_default = |a: &str| {
                library
                    .get(callee)
                    .and_then(|f| f.signature.as_ref())
                    .and_then(|s| s.attr.iter().find(|d| d.name == a))
                    .and_then(|d| d.default_value.as_ref())
                    .and_then(|v| v.value.clone())
            };
            for a in ps {
                self.work += 1;
                if self.work > MAX_WORK {
                    self.everything_unknown = Some(format!(
                        "the file's calls and placeholders are more than this reader follows ({MAX_WORK} values carried)"
                    ));
                    return false;
                }
                let new: Vec<Bound> = match attrs.get(*a).and_then(|v| v.value.as_ref()) {
                    Some(attr_value::Value::Placeholder(q)) => match (own, site.caller) {
                        (true, Some(_)) => self
                            .current(site.caller, q)
                            .into_iter()
                            .map(|b| match b {
                                Bound::Value(v, p) => {
                                    Bound::Value(v, extended(&p, here.clone()))
                                }
                                u => u,
                            })
                            .collect(),
                        _ => vec![Bound::Unknown(format!(
                            "{here} binds it to placeholder {:?} outside a function that defines it",
                            short(q)
                        ))],
                    },
                    Some(v) => vec![Bound::Value(v.clone(), extended(&path, here.clone()))],
                    None => match sig_default(a) {
                        Some(v) => vec![Bound::Value(
                            v,
                            extended(
                                &path,
                                format!("{here}, which leaves it to the signature's default"),
                            ),
                        )],
                        // TensorFlow refuses this call: it gives the placeholder nothing.
                        None => Vec::new(),
                    },
                };
                self.work += new.len() as u64;
                let key = (callee.to_owned(), (*a).to_owned());
                let vals = self.values.entry(key).or_default();
                for b in new {
                    changed |= insert(vals, b);
                }
            }
        }
        changed
    }

    /// The values found so far for placeholder `name` of `function` (empty: none yet).
    fn current(&self, function: Option<&str>, name: &str) -> Vec<Bound> {
        match function {
            Some(f) => self
                .values
                .get(&(f.to_owned(), name.to_owned()))
                .cloned()
                .unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// The functions node `n` of `function` calls through a placeholder of a `func` attribute,
    /// as far as the placeholder resolves.
    pub fn callees(&self, function: &str, n: &NodeDef) -> Vec<String> {
        let mut out = Vec::new();
        for (key, v) in &n.attr {
            if let Some(attr_value::Value::Placeholder(p)) = &v.value {
                if calls_through(key) {
                    for b in self.of(Some(function), p) {
                        if let Bound::Value(attr_value::Value::Func(nal), _) = b {
                            out.push(nal.name);
                        }
                    }
                }
            }
        }
        out
    }

    /// Every value placeholder `name` of `function` can take (none: the main graph, where a
    /// placeholder has no caller to bind it).
    pub fn of(&self, function: Option<&str>, name: &str) -> Vec<Bound> {
        if let Some(why) = &self.everything_unknown {
            return vec![Bound::Unknown(why.clone())];
        }
        let Some(f) = function else {
            return vec![Bound::Unknown(
                "a node of the main graph holds a placeholder no call binds".into(),
            )];
        };
        match self.values.get(&(f.to_owned(), name.to_owned())) {
            Some(v) if !v.is_empty() => v.clone(),
            _ => vec![Bound::Unknown(
                "no call site in the file binds it and its function's signature gives no default"
                    .into(),
            )],
        }
    }
}

/// Adds `b` to `vals` unless it is there (a value compares by value, not path); past
/// [`MAX_VALUES`] the placeholder becomes unknown. Whether anything was added.
fn insert(vals: &mut Vec<Bound>, b: Bound) -> bool {
    let there = vals.iter().any(|v| match (v, &b) {
        (Bound::Value(x, _), Bound::Value(y, _)) => x == y,
        (Bound::Unknown(_), Bound::Unknown(_)) => true,
        _ => false,
    });
    if there {
        return false;
    }
    if vals.len() >= MAX_VALUES {
        if vals.iter().any(|v| matches!(v, Bound::Unknown(_))) {
            return false;
        }
        vals.push(Bound::Unknown(format!(
            "it can take more than {MAX_VALUES} values"
        )));
        return true;
    }
    vals.push(b);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::{op_def, OpDef};

    fn s(v: &str) -> AttrValue {
        AttrValue {
            value: Some(attr_value::Value::S(v.as_bytes().to_vec().into())),
        }
    }

    fn ph(p: &str) -> AttrValue {
        AttrValue {
            value: Some(attr_value::Value::Placeholder(p.into())),
        }
    }

    fn func(name: &str, attrs: &[(&str, AttrValue)]) -> AttrValue {
        AttrValue {
            value: Some(attr_value::Value::Func(Box::new(NameAttrList {
                name: name.into(),
                attr: attrs
                    .iter()
                    .map(|(k, v)| ((*k).into(), v.clone()))
                    .collect(),
            }))),
        }
    }

    fn node(name: &str, op: &str, attrs: &[(&str, AttrValue)]) -> NodeDef {
        NodeDef {
            name: name.into(),
            op: op.into(),
            attr: attrs
                .iter()
                .map(|(k, v)| ((*k).into(), v.clone()))
                .collect(),
            ..Default::default()
        }
    }

    fn function(name: &str, nodes: Vec<NodeDef>, defaults: &[(&str, AttrValue)]) -> FunctionDef {
        FunctionDef {
            signature: Some(OpDef {
                name: name.into(),
                attr: defaults
                    .iter()
                    .map(|(k, v)| op_def::AttrDef {
                        name: (*k).into(),
                        r#type: "string".into(),
                        default_value: Some(v.clone()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            node_def: nodes,
            ..Default::default()
        }
    }

    fn strings(b: &[Bound]) -> Vec<String> {
        b.iter()
            .map(|b| match b {
                Bound::Value(attr_value::Value::S(s), _) => String::from_utf8_lossy(s).into(),
                Bound::Value(..) => "other".into(),
                Bound::Unknown(_) => "?".into(),
            })
            .collect()
    }

    fn printer() -> FunctionDef {
        function(
            "p",
            vec![node("print", "PrintV2", &[("output_stream", ph("stream"))])],
            &[],
        )
    }

    #[test]
    fn a_value_flows_through_two_calls_with_its_path() {
        let outer = function(
            "outer",
            vec![node(
                "inner",
                "PartitionedCall",
                &[("f", func("p", &[("stream", ph("s2"))]))],
            )],
            &[],
        );
        let (p, o) = (printer(), outer);
        let lib: BTreeMap<&str, &FunctionDef> = [("p", &p), ("outer", &o)].into();
        let main = vec![
            node(
                "a",
                "StatefulPartitionedCall",
                &[("f", func("outer", &[("s2", s("file:///x"))]))],
            ),
            // A call by op name binds the node's own attributes.
            node("b", "outer", &[("s2", s("stderr"))]),
        ];
        let b = Bindings::resolve(&main, &lib);
        let got = b.of(Some("p"), "stream");
        assert_eq!(strings(&got), ["file:///x", "stderr"]);
        let Bound::Value(_, path) = &got[0] else {
            panic!()
        };
        assert_eq!(path.len(), 2, "{path:?}");
        assert!(path[0].contains("graph node \"a\""), "{path:?}");
        assert!(
            path[1].contains("function \"outer\" node \"inner\""),
            "{path:?}"
        );
    }

    #[test]
    fn unbound_uncalled_and_main_graph_placeholders_are_unknown() {
        let p = printer();
        let lib: BTreeMap<&str, &FunctionDef> = [("p", &p)].into();
        assert_eq!(
            strings(&Bindings::resolve(&[], &lib).of(Some("p"), "stream")),
            ["?"]
        );
        // A call that binds nothing: TensorFlow refuses it, so it gives no value.
        let main = vec![node("a", "p", &[])];
        assert_eq!(
            strings(&Bindings::resolve(&main, &lib).of(Some("p"), "stream")),
            ["?"]
        );
        assert_eq!(
            strings(&Bindings::resolve(&main, &lib).of(None, "x")),
            ["?"]
        );
    }

    #[test]
    fn a_signature_default_is_a_value() {
        let p = function(
            "p",
            vec![node("print", "PrintV2", &[("output_stream", ph("stream"))])],
            &[("stream", s("file:///d"))],
        );
        let lib: BTreeMap<&str, &FunctionDef> = [("p", &p)].into();
        let main = vec![node("a", "p", &[])];
        assert_eq!(
            strings(&Bindings::resolve(&main, &lib).of(Some("p"), "stream")),
            ["file:///d"]
        );
    }

    #[test]
    fn recursion_settles_and_a_function_named_by_a_placeholder_is_followed() {
        // r calls itself passing its own placeholder on, and calls whatever `g` names.
        let r = function(
            "r",
            vec![
                node(
                    "self",
                    "PartitionedCall",
                    &[("f", func("r", &[("v", ph("v")), ("g", ph("g"))]))],
                ),
                node("other", "PartitionedCall", &[("f", ph("g"))]),
                node("print", "PrintV2", &[("output_stream", ph("v"))]),
            ],
            &[],
        );
        let p = printer();
        let lib: BTreeMap<&str, &FunctionDef> = [("r", &r), ("p", &p)].into();
        let main = vec![node(
            "a",
            "PartitionedCall",
            &[(
                "f",
                func(
                    "r",
                    &[
                        ("v", s("stderr")),
                        ("g", func("p", &[("stream", s("file:///y"))])),
                    ],
                ),
            )],
        )];
        let b = Bindings::resolve(&main, &lib);
        assert_eq!(strings(&b.of(Some("r"), "v")), ["stderr"]);
        assert_eq!(strings(&b.of(Some("p"), "stream")), ["file:///y"]);
        // Unresolvable: the function `g` names is not bound anywhere.
        let main = vec![node(
            "a",
            "PartitionedCall",
            &[("f", func("r", &[("v", s("stderr"))]))],
        )];
        let b = Bindings::resolve(&main, &lib);
        assert_eq!(strings(&b.of(Some("p"), "stream")), ["?"]);
        assert_eq!(strings(&b.of(Some("r"), "v")), ["?"]);
    }

    #[test]
    fn too_many_values_become_unknown() {
        let p = printer();
        let lib: BTreeMap<&str, &FunctionDef> = [("p", &p)].into();
        let main: Vec<NodeDef> = (0..40)
            .map(|i| node(&format!("c{i}"), "p", &[("stream", s(&format!("log{i}")))]))
            .collect();
        let got = strings(&Bindings::resolve(&main, &lib).of(Some("p"), "stream"));
        assert_eq!(got.len(), MAX_VALUES + 1);
        assert_eq!(got.last().map(String::as_str), Some("?"));
    }

    #[test]
    fn case_branches_and_while_bodies_bind_too() {
        let p = printer();
        let lib: BTreeMap<&str, &FunctionDef> = [("p", &p)].into();
        let list = AttrValue {
            value: Some(attr_value::Value::List(Box::new(attr_value::ListValue {
                func: vec![NameAttrList {
                    name: "p".into(),
                    attr: [("stream".to_owned(), s("file:///case"))].into(),
                }],
                ..Default::default()
            }))),
        };
        let main = vec![
            node("case", "Case", &[("branches", list)]),
            node(
                "while",
                "While",
                &[("body", func("p", &[("stream", s("file:///body"))]))],
            ),
        ];
        let b = Bindings::resolve(&main, &lib);
        assert_eq!(
            strings(&b.of(Some("p"), "stream")),
            ["file:///case", "file:///body"]
        );
    }

    #[test]
    fn a_pathological_library_is_bounded_and_unknown() {
        // 2,000 placeholders in one function, called from 4,000 sites, each binding them
        // all: past the work bound every placeholder is unknown, quickly.
        let names: Vec<String> = (0..2000).map(|i| format!("a{i}")).collect();
        let nodes: Vec<NodeDef> = names
            .iter()
            .map(|n| node(n, "PrintV2", &[("output_stream", ph(n))]))
            .collect();
        let p = function("p", nodes, &[]);
        let lib: BTreeMap<&str, &FunctionDef> = [("p", &p)].into();
        let binding: Vec<(&str, AttrValue)> =
            names.iter().map(|n| (n.as_str(), s("stderr"))).collect();
        let main: Vec<NodeDef> = (0..4000)
            .map(|i| node(&format!("c{i}"), "p", &binding))
            .collect();
        let start = std::time::Instant::now();
        let b = Bindings::resolve(&main, &lib);
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        assert_eq!(strings(&b.of(Some("p"), "a7")), ["?"]);
    }
}
