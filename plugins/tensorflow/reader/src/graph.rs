//! Every op of a graph and of every function in its library, judged: the op's class in
//! TensorFlow 2.21.0's registry ([`crate::ops`]), with the checkpoint and lookup-table ops
//! judged by where their file name comes from (data flow within the graph), and each finding
//! saying whether the op runs at load time or only when the graph or a function is run.
//!
//! A graph is data to socair: nothing here runs it. What it follows is `NodeDef.input`
//! (`node`, `node:1`, `^control` in a graph; `arg`, `node:out:0` in a function) and the
//! function references a node makes (its op naming a library function, or a `func` attribute,
//! as `StatefulPartitionedCall`'s `f` or `While`'s `body`).

use crate::bindings::{Bindings, Bound};
use crate::ops::{self, Class};
use crate::proto::tensorflow::{attr_value, FunctionDef, NodeDef};
use socair_plugin_kit::bounded::{short, Listing, FINDINGS_PER_KIND};
use socair_plugin_kit::protobuf::walk::Severity;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// How deep a file name is traced back through the nodes that build it.
const TRACE_DEPTH: usize = 32;

/// One node list: the main graph's or a function's.
#[derive(Debug)]
pub struct Scope<'a> {
    /// The function's name, or none for the main graph.
    pub function: Option<&'a str>,
    /// Its nodes.
    pub nodes: &'a [NodeDef],
    /// A function's input arguments, by name.
    pub args: Vec<&'a str>,
    by_name: HashMap<&'a str, usize>,
}

impl<'a> Scope<'a> {
    /// The main graph.
    pub fn main(nodes: &'a [NodeDef]) -> Self {
        Scope::new(None, nodes, Vec::new())
    }

    /// A library function.
    pub fn function(f: &'a FunctionDef) -> Self {
        let sig = f.signature.as_ref();
        Scope::new(
            Some(sig.map_or("", |s| s.name.as_str())),
            &f.node_def,
            sig.map(|s| s.input_arg.iter().map(|a| a.name.as_str()).collect())
                .unwrap_or_default(),
        )
    }

    fn new(function: Option<&'a str>, nodes: &'a [NodeDef], args: Vec<&'a str>) -> Self {
        let mut by_name = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            by_name.entry(n.name.as_str()).or_insert(i);
        }
        Scope {
            function,
            nodes,
            args,
            by_name,
        }
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&'a NodeDef> {
        self.by_name.get(name).and_then(|&i| self.nodes.get(i))
    }

    /// Where input `input` of a node comes from.
    pub fn source(&self, input: &str) -> Source<'a> {
        let name = input.trim_start_matches('^');
        let head = name.split(':').next().unwrap_or(name);
        if self.function.is_some() && !name.contains(':') {
            if let Some(i) = self.args.iter().position(|a| *a == head) {
                return Source::Arg(i);
            }
        }
        match self.node(head) {
            Some(n) => Source::Node(n),
            None => Source::Missing,
        }
    }

    /// A place for a finding about node `n`.
    pub fn place(&self, n: &NodeDef) -> String {
        match self.function {
            Some(f) => format!(
                "function {:?} node {:?} ({})",
                short(f),
                short(&n.name),
                short(&n.op)
            ),
            None => format!("graph node {:?} ({})", short(&n.name), short(&n.op)),
        }
    }
}

/// Where a node's input comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// The enclosing function's argument `i`.
    Arg(usize),
    /// A node of the same scope.
    Node(&'a NodeDef),
    /// Nothing of that name.
    Missing,
}

/// The data (non-control) inputs of `n`.
pub fn data_inputs(n: &NodeDef) -> impl Iterator<Item = &str> {
    n.input
        .iter()
        .map(String::as_str)
        .filter(|i| !i.starts_with('^'))
}

/// The functions node `n` refers to: its op when that names one of `library`'s functions,
/// and every `func` attribute (single or list).
pub fn called<'n>(n: &'n NodeDef, library: &BTreeMap<&str, &FunctionDef>) -> Vec<&'n str> {
    let mut out = Vec::new();
    if library.contains_key(n.op.as_str()) {
        out.push(n.op.as_str());
    }
    for v in n.attr.values() {
        match &v.value {
            Some(attr_value::Value::Func(f)) => out.push(f.name.as_str()),
            Some(attr_value::Value::List(l)) => out.extend(l.func.iter().map(|f| f.name.as_str())),
            _ => {}
        }
    }
    out
}

/// What runs at load time: main-graph nodes and whole functions, each with why.
#[derive(Debug, Default, Clone)]
pub struct LoadTime {
    /// Main-graph nodes that run at load time, with the root that reaches them.
    pub main: BTreeMap<String, String>,
    /// Functions that run at load time, with why.
    pub functions: BTreeMap<String, String>,
}

impl LoadTime {
    /// Adds what `roots` (main-graph node names, each with why) and `functions` (function
    /// names, each with why) reach: main-graph inputs and control inputs, and every function
    /// a reached node or function calls.
    pub fn reach(
        &mut self,
        main: &Scope<'_>,
        library: &BTreeMap<&str, &FunctionDef>,
        roots: &[(String, String)],
        functions: &[(String, String)],
        bindings: &Bindings,
    ) {
        let mut nodes: VecDeque<(String, String)> = roots.iter().cloned().collect();
        let mut fns: VecDeque<(String, String)> = functions.iter().cloned().collect();
        while let Some((name, why)) = nodes.pop_front() {
            if self.main.contains_key(&name) {
                continue;
            }
            let Some(n) = main.node(&name) else {
                continue;
            };
            self.main.insert(name.clone(), why.clone());
            for i in &n.input {
                let head = i.trim_start_matches('^').split(':').next().unwrap_or("");
                if !self.main.contains_key(head) {
                    nodes.push_back((head.to_owned(), why.clone()));
                }
            }
            for f in called(n, library) {
                fns.push_back((f.to_owned(), why.clone()));
            }
        }
        while let Some((name, why)) = fns.pop_front() {
            if self.functions.contains_key(&name) {
                continue;
            }
            let Some(f) = library.get(name.as_str()) else {
                continue;
            };
            self.functions.insert(name.clone(), why.clone());
            for n in &f.node_def {
                for c in called(n, library) {
                    if !self.functions.contains_key(c) {
                        fns.push_back((c.to_owned(), why.clone()));
                    }
                }
                // A function named by a placeholder, as the calls bind it.
                for c in bindings.callees(&name, n) {
                    if !self.functions.contains_key(&c) {
                        fns.push_back((c, why.clone()));
                    }
                }
            }
        }
    }

    /// When an op of `scope`'s node `n` runs, for a finding.
    pub fn when(&self, scope: &Scope<'_>, n: &NodeDef) -> String {
        let load = match scope.function {
            Some(f) => self.functions.get(f),
            None => self.main.get(&n.name),
        };
        match (load, scope.function) {
            (Some(why), _) => format!("it runs at load time ({why})"),
            (None, Some(f)) => format!("it runs when function {:?} is called", short(f)),
            (None, None) => "it runs when the graph is run".into(),
        }
    }
}

/// What a graph's judgement needs besides the graph: the saver and the assets of a
/// SavedModel (none for a frozen GraphDef).
#[derive(Debug, Default, Clone)]
pub struct Context {
    /// The main-graph node that holds the loader's checkpoint file name (`saver_def`'s
    /// `filename_tensor_name`).
    pub saver_filename: Option<String>,
    /// Functions that are the saver's save and restore subgraphs: called only by the
    /// saver's own nodes, with the loader's file name as their first argument.
    pub saver_functions: BTreeSet<String>,
    /// Main-graph nodes that hold an asset's path (`asset_file_def`'s tensors), which the
    /// loader fills with `assets/<filename>`.
    pub asset_nodes: BTreeSet<String>,
    /// Function arguments the object graph binds to an asset: `(function, argument)`.
    pub asset_args: BTreeSet<(String, usize)>,
    /// What runs at load time.
    pub load_time: LoadTime,
    /// The values every function-attribute placeholder can take ([`crate::bindings`]).
    pub bindings: Bindings,
}

/// A finding about an op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpFinding {
    /// How serious.
    pub severity: Severity,
    /// Where.
    pub place: String,
    /// What.
    pub reason: String,
}

/// The judgement of a graph and its library.
#[derive(Debug, Default)]
pub struct Judged {
    /// Findings: the first of each kind, then how many more.
    pub findings: Vec<OpFinding>,
    /// Kinds whose findings were not all kept.
    pub suppressed: Vec<(&'static str, u64)>,
    /// Nodes judged.
    pub nodes: u64,
    /// Functions judged.
    pub functions: u64,
    /// Each op used, with how many nodes use it.
    pub ops: BTreeMap<String, u64>,
    /// Asset-backed lookup tables (data).
    pub asset_tables: u64,
    /// Checkpoint ops in the saver's own subgraph.
    pub saver_ops: u64,
}

/// Judges every node of `main` and of every function of `library`.
pub fn judge(main: &Scope<'_>, library: &BTreeMap<&str, &FunctionDef>, ctx: &Context) -> Judged {
    let mut out = Judged::default();
    let mut findings = Listing::new(FINDINGS_PER_KIND);
    judge_scope(main, main, library, ctx, &mut out, &mut findings);
    for f in library.values() {
        out.functions += 1;
        let scope = Scope::function(f);
        judge_scope(&scope, main, library, ctx, &mut out, &mut findings);
    }
    let (kept, suppressed) = findings.finish();
    out.findings = kept;
    out.suppressed = suppressed;
    out
}

/// Reports one finding about the node being judged: its kind, severity and reason (the
/// node's place and when its op runs are added).
type Push<'p> = dyn FnMut(&'static str, Severity, &dyn Fn() -> String) + 'p;

fn judge_scope(
    scope: &Scope<'_>,
    main: &Scope<'_>,
    library: &BTreeMap<&str, &FunctionDef>,
    ctx: &Context,
    out: &mut Judged,
    findings: &mut Listing<OpFinding>,
) {
    for n in scope.nodes {
        out.nodes += 1;
        if out.ops.len() < 10_000 || out.ops.contains_key(&n.op) {
            *out.ops.entry(n.op.clone()).or_default() += 1;
        }
        let mut push = |kind: &'static str, severity: Severity, reason: &dyn Fn() -> String| {
            findings.push(kind, || OpFinding {
                severity,
                place: scope.place(n),
                reason: format!("{}; {}", reason(), ctx.load_time.when(scope, n)),
            })
        };
        judge_node(scope, main, library, ctx, n, out, &mut push);
    }
}

/// Judges node `n` of `scope`: the functions it calls, and its op by its class.
fn judge_node(
    scope: &Scope<'_>,
    main: &Scope<'_>,
    library: &BTreeMap<&str, &FunctionDef>,
    ctx: &Context,
    n: &NodeDef,
    out: &mut Judged,
    push: &mut Push<'_>,
) {
    for f in called(n, library) {
        if !library.contains_key(f) && f != n.op {
            push(
                "calls to functions the library lacks",
                Severity::Lead,
                &|| {
                    format!(
                    "it calls function {:?}, which the graph's library does not define (a function registered in the process that loads it)",
                    short(f)
                )
                },
            );
        }
    }
    if library.contains_key(n.op.as_str()) {
        // A call by op name: the function's own nodes are judged.
        return;
    }
    let Some(op) = ops::lookup(&n.op) else {
        push("ops not in TensorFlow's registry", Severity::Lead, &|| {
            format!(
                "op {:?} is not one of TensorFlow 2.21.0's {} registered ops: a custom op, from a native library the loading process must load (tf.load_op_library)",
                short(&n.op),
                ops::count()
            )
        });
        return;
    };
    match op.class {
        Class::Compute | Class::State => {}
        Class::File => push("ops that touch files", Severity::Fail, &|| {
            format!("op {} touches files ({})", op.name, op.why)
        }),
        Class::Code => push("ops that run code", Severity::Fail, &|| {
            format!("op {} runs code ({})", op.name, op.why)
        }),
        Class::Net => push("ops that reach the network", Severity::Fail, &|| {
            format!("op {} reaches the network ({})", op.name, op.why)
        }),
        Class::Cluster => push(
            "ops that talk to other devices or tasks",
            Severity::Lead,
            &|| format!("op {} {}", op.name, op.why),
        ),
        Class::Lead => push("ops outside the allow-list", Severity::Lead, &|| {
            format!(
                "op {} is stateful and not on the allow-list of computational ops (ops/OPS.md)",
                op.name
            )
        }),
        Class::Checkpoint => judge_checkpoint_op(scope, ctx, n, op, out, push),
        Class::TableFile => {
            let src = data_inputs(n).nth(1).map_or(Asset::Unknown, |i| {
                asset_source(scope, main, library, i, ctx, 0)
            });
            judge_table_file(op, src, out, push);
        }
        Class::Print => {
            if let Some(reason) = print_to_file(scope, ctx, n) {
                push("ops that touch files", Severity::Fail, &|| reason.clone());
            }
        }
        Class::Debug => {
            if let Some(reason) = debug_dump(scope, ctx, n, op) {
                push("ops that touch files", Severity::Fail, &|| reason.clone());
            }
        }
        Class::AttrFile => {
            if let Some(reason) = attr_file_opened(scope, ctx, n, op) {
                push("ops that touch files", Severity::Fail, &|| reason.clone());
            }
        }
    }
}

/// A checkpoint op: the saver's own when its path(s) derive from the loader's checkpoint file
/// name, a FAIL otherwise.
fn judge_checkpoint_op(
    scope: &Scope<'_>,
    ctx: &Context,
    n: &NodeDef,
    op: &ops::Op,
    out: &mut Judged,
    push: &mut Push<'_>,
) {
    let paths: &[usize] = if op.name == "MergeV2Checkpoints" {
        &[0, 1]
    } else {
        &[0]
    };
    let ours = paths.iter().all(|&i| {
        data_inputs(n)
            .nth(i)
            .is_some_and(|inp| derives_from_filename(scope, inp, ctx, 0))
    });
    if ours {
        out.saver_ops += 1;
    } else {
        push("checkpoint ops outside the saver", Severity::Fail, &|| {
            format!(
                "op {} {}, and its path is not the loader's checkpoint file name: outside the save/restore subgraph TensorFlow's saver writes, it reads or writes whatever file the graph names",
                op.name,
                op.why.split_once(": ").map_or(op.why, |(_, w)| w)
            )
        });
    }
}

/// An op filling a lookup table from a file: data when the file is one of the model's assets,
/// a FAIL when the graph names the file, a LEAD when its name cannot be traced.
fn judge_table_file(op: &ops::Op, src: Asset, out: &mut Judged, push: &mut Push<'_>) {
    match src {
        Asset::Model => out.asset_tables += 1,
        Asset::Const(path) => push(
            "tables read from files the graph names",
            Severity::Fail,
            &|| {
                format!(
                "op {} fills a lookup table from {:?}, a file the graph names rather than one of the model's assets",
                op.name,
                short(&path)
            )
            },
        ),
        Asset::Unknown => push(
            "tables read from files the graph names",
            Severity::Lead,
            &|| {
                format!(
                "op {} fills a lookup table from a file whose name this reader cannot trace to one of the model's assets",
                op.name
            )
            },
        ),
    }
}

/// Why a PrintV2 node appends to a file, if it can.
fn print_to_file(scope: &Scope<'_>, ctx: &Context, n: &NodeDef) -> Option<String> {
    // logging_ops.cc (PrintV2Op's constructor): `file://<path>` appends to that
    // file; the other accepted streams are stdout, stderr and log(...).
    attr_values(scope, n, "output_stream", ctx).find_map(|(via, b)| match b {
        Bound::Value(v, path) => {
            let s = string_of(&v)?;
            s.starts_with("file://").then(|| {
                format!(
                    "op PrintV2 appends to the file {:?} (its output_stream attr{})",
                    short(&s),
                    bound_by(via, &path)
                )
            })
        }
        Bound::Unknown(why) => Some(unresolved(
            "PrintV2",
            "output_stream",
            via,
            &why,
            "file://<path>, which appends to that file",
        )),
    })
}

/// Why a debug op writes a dump or connects, if it can: its `debug_urls`, or for
/// DebugIdentityV2 its `tfdbg_run_id`.
fn debug_dump(scope: &Scope<'_>, ctx: &Context, n: &NodeDef, op: &ops::Op) -> Option<String> {
    let hit = attr_values(scope, n, "debug_urls", ctx).find_map(|(via, b)| {
        match b {
            Bound::Value(v, path) => {
                let urls = strings_of(&v);
                (!urls.is_empty()).then(|| {
                    format!(
                        "op {} sends tensors to {:?} (its debug_urls attr{}: file:// writes a dump, grpc:// connects)",
                        op.name,
                        urls.iter().map(|u| short(u)).collect::<Vec<_>>(),
                        bound_by(via, &path)
                    )
                })
            }
            Bound::Unknown(why) => Some(unresolved(op.name, "debug_urls", via, &why, "a file:// or grpc:// URL, which writes a dump or connects")),
        }
    });
    if hit.is_some() || op.name != "DebugIdentityV2" {
        return hit;
    }
    attr_values(scope, n, "tfdbg_run_id", ctx).find_map(|(via, b)| match b {
        Bound::Value(v, path) => string_of(&v).filter(|s| !s.is_empty()).map(|s| {
            format!(
                "op DebugIdentityV2 writes tfdbg dumps for run {:?} (its tfdbg_run_id attr{})",
                short(&s),
                bound_by(via, &path)
            )
        }),
        Bound::Unknown(why) => Some(unresolved(
            op.name,
            "tfdbg_run_id",
            via,
            &why,
            "a run id, for which it writes dumps",
        )),
    })
}

/// Why an op whose attribute names a file ([`ops::attr_file`]) opens one, if it can.
fn attr_file_opened(scope: &Scope<'_>, ctx: &Context, n: &NodeDef, op: &ops::Op) -> Option<String> {
    let rule = ops::attr_file(op.name)?;
    attr_values(scope, n, rule.attr, ctx).find_map(|(via, b)| match b {
        Bound::Value(v, path) => {
            let s = string_of(&v)?;
            (!(rule.opens_nothing)(&s)).then(|| {
                format!(
                    "op {} opens the file {:?} (its {} attr{}; {})",
                    op.name,
                    short(&s),
                    rule.attr,
                    bound_by(via, &path),
                    op.why
                )
            })
        }
        Bound::Unknown(why) => Some(unresolved(
            op.name,
            rule.attr,
            via,
            &why,
            "a file path, which its kernel opens",
        )),
    })
}

/// What attribute `key` of node `n` in `scope` can hold when the node runs, each value with
/// the placeholder it came through (if any): its own value, or for a placeholder every value
/// a call path binds ([`Bindings::of`]). Nothing when the node does not set it (the OpDef's
/// default applies, which opens nothing for every op judged here).
fn attr_values<'s>(
    scope: &Scope<'_>,
    n: &'s NodeDef,
    key: &str,
    ctx: &Context,
) -> impl Iterator<Item = (Option<&'s str>, Bound)> {
    let got: Vec<(Option<&str>, Bound)> = match n.attr.get(key).and_then(|a| a.value.as_ref()) {
        None => Vec::new(),
        Some(attr_value::Value::Placeholder(p)) => ctx
            .bindings
            .of(scope.function, p)
            .into_iter()
            .map(|b| (Some(p.as_str()), b))
            .collect(),
        Some(v) => vec![(None, Bound::Value(v.clone(), Vec::new()))],
    };
    got.into_iter()
}

/// How a value came to a node, for a finding: nothing for the node's own value.
fn bound_by(via: Option<&str>, path: &[String]) -> String {
    match via {
        None => String::new(),
        Some(p) => format!(
            ", placeholder {:?} bound by the call path {}",
            short(p),
            path.join(" → ")
        ),
    }
}

/// A finding's reason for an attribute whose value cannot be resolved: the worst it can be.
fn unresolved(op: &str, attr: &str, via: Option<&str>, why: &str, worst: &str) -> String {
    format!(
        "op {op}'s {attr} attr is placeholder {:?}, whose value this reader cannot resolve ({why}): judged as the worst value it can take, {worst}",
        short(via.unwrap_or(""))
    )
}

/// A string attribute value.
fn string_of(v: &attr_value::Value) -> Option<String> {
    match v {
        attr_value::Value::S(s) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

/// A list-of-strings attribute value (a single non-empty string counts as one).
fn strings_of(v: &attr_value::Value) -> Vec<String> {
    match v {
        attr_value::Value::List(l) => {
            l.s.iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        }
        attr_value::Value::S(s) if !s.is_empty() => {
            vec![String::from_utf8_lossy(s).into_owned()]
        }
        _ => Vec::new(),
    }
}

/// A node's string attribute.
pub fn string_attr(n: &NodeDef, key: &str) -> Option<String> {
    match n.attr.get(key).and_then(|a| a.value.as_ref()) {
        Some(attr_value::Value::S(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

/// The strings of a `Const` node of type `DT_STRING`.
pub fn const_strings(n: &NodeDef) -> Option<Vec<String>> {
    if n.op != "Const" {
        return None;
    }
    match n.attr.get("value").and_then(|a| a.value.as_ref()) {
        Some(attr_value::Value::Tensor(t)) if t.dtype == 7 => Some(
            t.string_val
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        ),
        _ => None,
    }
}

/// Whether `input` of a node in `scope` is the loader's checkpoint file name, or built from it
/// the way TensorFlow's saver builds shard names: `Identity`, `StringJoin` of the name and
/// safe suffixes, `ShardedFilename` of such a name, `Pack` of such names.
fn derives_from_filename(scope: &Scope<'_>, input: &str, ctx: &Context, depth: usize) -> bool {
    if depth > TRACE_DEPTH {
        return false;
    }
    match scope.source(input) {
        Source::Arg(i) => {
            i == 0
                && scope
                    .function
                    .is_some_and(|f| ctx.saver_functions.contains(f))
        }
        Source::Missing => false,
        Source::Node(n) => {
            if scope.function.is_none() && ctx.saver_filename.as_deref() == Some(n.name.as_str()) {
                return true;
            }
            let mut inputs = data_inputs(n);
            match n.op.as_str() {
                "Identity" => inputs
                    .next()
                    .is_some_and(|i| derives_from_filename(scope, i, ctx, depth + 1)),
                "StringJoin" => {
                    let Some(first) = inputs.next() else {
                        return false;
                    };
                    derives_from_filename(scope, first, ctx, depth + 1)
                        && inputs.all(|i| safe_suffix(scope, i, depth + 1))
                }
                "ShardedFilename" => inputs
                    .next()
                    .is_some_and(|i| derives_from_filename(scope, i, ctx, depth + 1)),
                "Pack" => {
                    let all: Vec<&str> = inputs.collect();
                    !all.is_empty()
                        && all
                            .iter()
                            .all(|i| derives_from_filename(scope, i, ctx, depth + 1))
                }
                _ => false,
            }
        }
    }
}

/// Whether `input` is a string constant (or a `Select` between such) that, appended to a
/// path, cannot leave its directory: no `..`, no leading `/`, no `\`, no URL scheme.
fn safe_suffix(scope: &Scope<'_>, input: &str, depth: usize) -> bool {
    if depth > TRACE_DEPTH {
        return false;
    }
    let Source::Node(n) = scope.source(input) else {
        return false;
    };
    if let Some(strings) = const_strings(n) {
        return strings.iter().all(|s| {
            !s.contains("..") && !s.starts_with('/') && !s.contains('\\') && !s.contains("://")
        });
    }
    let inputs: Vec<&str> = data_inputs(n).collect();
    match (n.op.as_str(), inputs.as_slice()) {
        ("Identity", [i]) => safe_suffix(scope, i, depth + 1),
        ("Select" | "SelectV2", [_, a, b]) => {
            safe_suffix(scope, a, depth + 1) && safe_suffix(scope, b, depth + 1)
        }
        _ => false,
    }
}

/// Where a lookup table's file name comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Asset {
    /// One of the model's assets, which the loader resolves under `assets/`.
    Model,
    /// A string constant of the graph: the path.
    Const(String),
    /// Neither, as far as this reader traces.
    Unknown,
}

fn asset_source(
    scope: &Scope<'_>,
    main: &Scope<'_>,
    library: &BTreeMap<&str, &FunctionDef>,
    input: &str,
    ctx: &Context,
    depth: usize,
) -> Asset {
    if depth > TRACE_DEPTH {
        return Asset::Unknown;
    }
    match scope.source(input) {
        Source::Missing => Asset::Unknown,
        Source::Arg(i) => {
            let Some(f) = scope.function else {
                return Asset::Unknown;
            };
            if ctx.asset_args.contains(&(f.to_owned(), i)) {
                return Asset::Model;
            }
            // Called from the main graph only: every call passes an asset there.
            let calls: Vec<&NodeDef> = main
                .nodes
                .iter()
                .filter(|n| called(n, library).contains(&f))
                .collect();
            if calls.is_empty() {
                return Asset::Unknown;
            }
            let all = calls.iter().map(|c| {
                data_inputs(c).nth(i).map_or(Asset::Unknown, |inp| {
                    asset_source(main, main, library, inp, ctx, depth + 1)
                })
            });
            let mut verdict = Asset::Model;
            for a in all {
                match a {
                    Asset::Model => {}
                    other => verdict = other,
                }
            }
            verdict
        }
        Source::Node(n) => {
            if scope.function.is_none() && ctx.asset_nodes.contains(&n.name) {
                return Asset::Model;
            }
            if let Some(s) = const_strings(n) {
                return Asset::Const(s.first().cloned().unwrap_or_default());
            }
            let first = data_inputs(n).next();
            match (n.op.as_str(), first) {
                ("Identity", Some(i)) => asset_source(scope, main, library, i, ctx, depth + 1),
                // A resource variable the main graph assigns only from asset paths (the asset
                // path variables TensorFlow 2 writes for its TF1-style loaders).
                ("ReadVariableOp", Some(v)) if scope.function.is_none() => {
                    let Source::Node(var) = scope.source(v) else {
                        return Asset::Unknown;
                    };
                    let assigns: Vec<&NodeDef> = scope
                        .nodes
                        .iter()
                        .filter(|a| {
                            a.op == "AssignVariableOp"
                                && data_inputs(a)
                                    .next()
                                    .map(|x| x.split(':').next().unwrap_or(x))
                                    == Some(var.name.as_str())
                        })
                        .collect();
                    if assigns.is_empty() {
                        return Asset::Unknown;
                    }
                    for a in assigns {
                        let value = data_inputs(a).nth(1);
                        let got = value.map_or(Asset::Unknown, |x| {
                            asset_source(scope, main, library, x, ctx, depth + 1)
                        });
                        if got != Asset::Model {
                            return got;
                        }
                    }
                    Asset::Model
                }
                _ => Asset::Unknown,
            }
        }
    }
}
