//! Every name a TorchScript archive's code uses, resolved as torch.jit.load resolves it, and
//! judged by what it reaches.
//!
//! Resolution follows the compiler (torch/csrc/jit/frontend/ir_emitter.cpp,
//! `Environment::getSugaredVar`): a function's own variables first, then the builtins table
//! (`print`, `len`, `range`, `getattr`, ...), then the source importer's names
//! (torch/csrc/jit/serialization/import_source.cpp, `SourceImporterImpl`: `torch` is the
//! `aten` operator namespace and `torch.autograd` too, `ops.<ns>` any namespace, `CONSTANTS`,
//! `fork`, `awaitable`, `annotate`, `unchecked_cast`, `uninitialized`, `inf`, `nan`, `infj`,
//! `nanj`, and `__torch__`, under which the archive's own classes and functions are found,
//! and TorchBind classes under `__torch__.torch.classes`). Any other name is undefined and
//! torch.jit.load raises: there is no `os`, `open`, `eval` or `__import__` in TorchScript.
//!
//! The judgment: a registered operator that computes passes; one that reads or writes files
//! or talks to the network fails (`ops::effect`); an operator torch does not register, a
//! TorchBind class it does not register, a method no class or operator has, an undefined name
//! or a reference this reading cannot follow is a LEAD: torch.jit.load raises on it unless a
//! native library registered it first, so what it runs is that library's code, not the
//! archive's. The archive's own classes and functions are judged by their own code, here.

use super::ops::{self, Effect};
use super::parser::{ClassDef, Def, Expr, Module, Name, Stmt};
use crate::pickle::Severity;
use std::collections::{BTreeSet, HashSet};

/// The compiler's builtins (ir_emitter.cpp, `getSugaredVar`'s `globals`) and the importer's
/// special forms (import_source.cpp, `env_`) that are called like functions.
const BUILTINS: &[&str] = &[
    "print",
    "tuple",
    "float",
    "complex",
    "int",
    "bool",
    "str",
    "getattr",
    "hasattr",
    "isinstance",
    "_to_tensor",
    "len",
    "hex",
    "oct",
    "round",
    "hash",
    "id",
    "min",
    "max",
    "abs",
    "all",
    "any",
    "divmod",
    "sum",
    "list",
    "dict",
    "ord",
    "chr",
    "bin",
    "pow",
    "range",
    "zip",
    "enumerate",
    "rangelist",
    "sorted",
    "AssertionError",
    "fork",
    "awaitable",
    "annotate",
    "unchecked_cast",
    "uninitialized",
];

/// The importer's constants (`resolveValue`).
const CONSTANT_NAMES: &[&str] = &["inf", "nan", "infj", "nanj"];

/// Methods the compiler provides on module and builtin values itself (sugared_value.cpp:
/// `ModuleValue::attr`, iterables, context managers) rather than through an operator.
const COMPILER_METHODS: &[&str] = &[
    "forward",
    "__call__",
    "items",
    "keys",
    "values",
    "children",
    "named_children",
    "modules",
    "named_modules",
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
    "__getitem__",
    "__len__",
    "__contains__",
    "__iter__",
    "__next__",
    "__enter__",
    "__exit__",
    "__init__",
    "__new__",
    "__getstate__",
    "__setstate__",
    "tolist",
    "_is_full_backward_hook",
];

/// What the archive's code defines, from every file.
#[derive(Debug, Default)]
pub struct Defs {
    /// Classes by qualified name (`__torch__.torch.nn.modules.linear.Linear`).
    pub classes: HashSet<String>,
    /// Free functions by qualified name.
    pub functions: HashSet<String>,
    /// Every method and attribute name of every class.
    pub members: HashSet<String>,
}

impl Defs {
    /// Adds what `module`, the file of `qualifier`, defines.
    pub fn add(&mut self, qualifier: &str, module: &Module) {
        for c in &module.classes {
            self.classes.insert(format!("{qualifier}.{}", c.name.text));
            for s in &c.body {
                match s {
                    Stmt::Def(d) => {
                        self.members.insert(d.name.text.clone());
                    }
                    Stmt::Assign { lhs, .. } => {
                        for e in lhs {
                            match e {
                                Expr::Var(n) => {
                                    self.members.insert(n.text.clone());
                                }
                                // `__annotations__["0"] = Tensor`: an attribute named by a string.
                                Expr::Node(items, _) => {
                                    if let Some(Expr::Str(s, _)) = items.get(1) {
                                        self.members
                                            .insert(String::from_utf8_lossy(s).into_owned());
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        for f in &module.functions {
            self.functions
                .insert(format!("{qualifier}.{}", f.name.text));
        }
    }
}

/// One finding of the rules: how bad, where (byte offset in the file), why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFinding {
    /// How bad.
    pub severity: Severity,
    /// Byte offset in the file.
    pub at: usize,
    /// Why.
    pub reason: String,
}

/// What judging one file found.
#[derive(Debug, Default)]
pub struct FileJudgment {
    /// Findings, in file order.
    pub findings: Vec<RuleFinding>,
    /// The operators the file calls (`ns::name`).
    pub operators: BTreeSet<String>,
}

/// What a name or expression resolves to.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    /// `torch`: the `aten` operator namespace.
    Aten,
    /// `ops`.
    Ops,
    /// `ops.<ns>`.
    Namespace(String),
    /// An operator.
    Op,
    /// A prefix under `__torch__` that is not (yet) a class or function.
    ClassNs(String),
    /// One of the archive's classes or functions, or a TorchBind class torch registers.
    Defined,
    /// `CONSTANTS`.
    Constants,
    /// A builtin or special form, by name.
    Builtin(&'static str),
    /// An attribute of a value: a method if called.
    Member(String),
    /// A value (a variable, a literal, a call's result).
    Value,
    /// A name already reported as undefined: what follows from it is not reported again.
    Unresolved,
}

/// Judges every function and class of one parsed file.
pub fn judge_module(module: &Module, defs: &Defs) -> FileJudgment {
    let mut j = Judge {
        defs,
        out: FileJudgment::default(),
        locals: Vec::new(),
    };
    for c in &module.classes {
        j.class(c);
    }
    for f in &module.functions {
        j.function(f);
    }
    j.out.findings.sort_by_key(|f| f.at);
    j.out
}

struct Judge<'a> {
    defs: &'a Defs,
    out: FileJudgment,
    /// The variables of the functions being judged, innermost last.
    locals: Vec<HashSet<String>>,
}

impl Judge<'_> {
    fn report(&mut self, severity: Severity, at: usize, reason: String) {
        self.out.findings.push(RuleFinding {
            severity,
            at,
            reason,
        });
    }

    fn class(&mut self, c: &ClassDef) {
        if let Some(sup) = &c.superclass {
            let known = matches!(sup, Expr::Var(n) if ["Module", "NamedTuple", "Interface", "ModuleInterface", "Enum"].contains(&n.text.as_str()));
            if !known {
                self.report(
                    Severity::Lead,
                    sup.at(),
                    format!("class {} names a base torch.jit.load does not know (only Module, NamedTuple, Interface, ModuleInterface and Enum: \"Torchscript does not support class inheritance\"), so it raises", c.name.text),
                );
            }
        }
        for s in &c.body {
            match s {
                Stmt::Def(d) => self.function(d),
                Stmt::Assign { rhs, ty, .. } => {
                    if let Some(t) = ty {
                        self.type_expr(t);
                    }
                    if let Some(r) = rhs {
                        self.value(r);
                    }
                }
                other => self.report(
                    Severity::Lead,
                    stmt_at(other).unwrap_or(c.name.at),
                    format!("class {} holds a statement other than an attribute, a constant or a method: torch.jit.load's importer asserts (\"Unexpected statement kind in class body\")", c.name.text),
                ),
            }
        }
    }

    fn function(&mut self, d: &Def) {
        let mut scope = HashSet::new();
        for p in &d.params {
            scope.insert(p.name.text.clone());
        }
        bind_block(&d.body, &mut scope);
        self.locals.push(scope);
        for p in &d.params {
            if let Some(t) = &p.ty {
                self.type_expr(t);
            }
            if let Some(v) = &p.default {
                self.value(v);
            }
        }
        for t in &d.types {
            self.type_expr(t);
        }
        self.block(&d.body);
        self.locals.pop();
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::If(c, a, b) => {
                self.value(c);
                self.block(a);
                self.block(b);
            }
            Stmt::While(c, body) => {
                self.value(c);
                self.block(body);
            }
            Stmt::For(targets, iters, body) => {
                for e in targets.iter().chain(iters) {
                    self.value(e);
                }
                self.block(body);
            }
            Stmt::With(items, body) => {
                for (e, _) in items {
                    self.value(e);
                }
                self.block(body);
            }
            Stmt::Def(d) => self.function(d),
            Stmt::Assign { lhs, rhs, ty } => {
                for e in lhs.iter().chain(rhs) {
                    self.value(e);
                }
                if let Some(t) = ty {
                    self.type_expr(t);
                }
            }
            Stmt::Exprs(es) => {
                for e in es {
                    self.value(e);
                }
            }
            Stmt::Empty => {}
        }
    }

    fn is_local(&self, name: &str) -> bool {
        self.locals.iter().any(|s| s.contains(name))
    }

    /// An expression used as a value: a `__torch__` prefix that names nothing is undefined.
    fn value(&mut self, e: &Expr) {
        if let Val::ClassNs(q) = self.eval(e) {
            self.undefined_torch_name(&q, e.at());
        }
    }

    fn undefined_torch_name(&mut self, q: &str, at: usize) {
        let reason = if let Some(rest) = q.strip_prefix("__torch__.torch.classes.") {
            format!("names the TorchBind class {rest}, which torch does not register: torch.jit.load raises unless a native library registered it first (torch.classes.load_library), and its methods are that library's code")
        } else {
            format!("names {q}, which no code file of the archive defines: torch.jit.load raises")
        };
        self.report(Severity::Lead, at, reason);
    }

    fn eval(&mut self, e: &Expr) -> Val {
        match e {
            Expr::Var(n) => self.var(n),
            Expr::Str(..) | Expr::Atom(_) => Val::Value,
            Expr::Select(base, name) => {
                let b = self.eval(base);
                self.select(b, name)
            }
            Expr::Apply {
                callee,
                args,
                kwargs,
                at,
            } => self.apply(callee, args, kwargs, *at),
            Expr::Comp { target, parts } => {
                self.value(target);
                for p in parts {
                    self.value(p);
                }
                Val::Value
            }
            Expr::Tuple(items, _) | Expr::Node(items, _) => {
                for i in items {
                    self.value(i);
                }
                Val::Value
            }
        }
    }

    fn var(&mut self, n: &Name) -> Val {
        let name = n.text.as_str();
        if self.is_local(name) || CONSTANT_NAMES.contains(&name) {
            return Val::Value;
        }
        if let Some(b) = BUILTINS.iter().find(|b| **b == name) {
            return Val::Builtin(b);
        }
        match name {
            "torch" => Val::Aten,
            "ops" => Val::Ops,
            "CONSTANTS" => Val::Constants,
            "__torch__" => Val::ClassNs(name.into()),
            _ => {
                self.report(
                    Severity::Lead,
                    n.at,
                    format!("uses the name {name}, which TorchScript does not define (it is no variable of the function, no builtin and none of the importer's names: Python modules such as os do not exist here): torch.jit.load raises (\"undefined value {name}\")"),
                );
                Val::Unresolved
            }
        }
    }

    fn select(&mut self, base: Val, name: &Name) -> Val {
        let field = name.text.as_str();
        match base {
            // BuiltinModule::attr: `torch.autograd` is the aten namespace again.
            Val::Aten if field == "autograd" => Val::Aten,
            Val::Aten => self.operator("aten", field, name.at),
            Val::Ops => Val::Namespace(field.into()),
            Val::Namespace(ns) => self.operator(&ns, field, name.at),
            Val::ClassNs(q) => {
                let full = format!("{q}.{field}");
                if self.defs.classes.contains(&full)
                    || self.defs.functions.contains(&full)
                    || ops::is_torchbind_class(&full)
                {
                    Val::Defined
                } else {
                    Val::ClassNs(full)
                }
            }
            Val::Op | Val::Builtin(_) => {
                self.report(
                    Severity::Lead,
                    name.at,
                    format!("reads .{field} of an operator or builtin, which has no attributes: torch.jit.load raises"),
                );
                Val::Value
            }
            Val::Constants | Val::Defined | Val::Member(_) | Val::Value => {
                Val::Member(field.into())
            }
            Val::Unresolved => Val::Unresolved,
        }
    }

    /// A reference to `ns::field` (called or not: a reference can be called later).
    fn operator(&mut self, ns: &str, field: &str, at: usize) -> Val {
        let qualified = format!("{ns}::{field}");
        if !ops::is_registered(ns, field) {
            let reason = if ops::is_torch_namespace(ns) {
                format!("calls {qualified}, which torch 2.15.0 does not register: torch.jit.load raises (\"Unknown builtin op\") unless a native library registered it first, and what it runs is that library's code")
            } else {
                format!("calls the custom operator {qualified}: torch.jit.load raises (\"Unknown builtin op\") unless a native library registering namespace {ns} was loaded first (torch.ops.load_library, or importing the package that ships it); what it runs is that library's native code, outside the archive")
            };
            self.report(Severity::Lead, at, reason);
            return Val::Op;
        }
        self.out.operators.insert(qualified.clone());
        match ops::effect(ns, field) {
            Effect::Compute => {}
            Effect::File(what) => self.report(
                Severity::Fail,
                at,
                format!("calls {qualified}, which {what}: torch.jit.load compiles it and the model does file I/O when it runs"),
            ),
            Effect::Network(what) => self.report(
                Severity::Fail,
                at,
                format!("calls {qualified}, {what}: the model reaches the network when it runs"),
            ),
            Effect::Python(what) => {
                self.report(Severity::Lead, at, format!("calls {qualified}, {what}"))
            }
        }
        Val::Op
    }

    fn apply(&mut self, callee: &Expr, args: &[Expr], kwargs: &[(Name, Expr)], at: usize) -> Val {
        let c = self.eval(callee);
        // Special forms whose arguments are types, in these positions.
        let type_args: &[usize] = match c {
            Val::Builtin("annotate" | "unchecked_cast" | "uninitialized") => &[0],
            Val::Builtin("isinstance") => &[1],
            _ => &[],
        };
        for (i, a) in args.iter().enumerate() {
            if type_args.contains(&i) {
                self.type_expr(a);
            } else {
                self.value(a);
            }
        }
        for (_, v) in kwargs {
            self.value(v);
        }
        match c {
            // getattr(obj, "name") is obj.name (prim::GetAttr).
            Val::Builtin("getattr") => match args.get(1) {
                Some(Expr::Str(s, _)) => Val::Member(String::from_utf8_lossy(s).into_owned()),
                _ => {
                    self.report(Severity::Lead, at, "getattr with an attribute name that is not a string literal: TorchScript needs a constant name, so torch.jit.load raises".into());
                    Val::Value
                }
            },
            Val::Member(m) => {
                self.method(&m, callee.at());
                Val::Value
            }
            Val::ClassNs(q) => {
                self.undefined_torch_name(&q, callee.at());
                Val::Value
            }
            Val::Aten | Val::Ops | Val::Namespace(_) | Val::Constants => {
                self.report(
                    Severity::Lead,
                    callee.at(),
                    "calls a namespace, which TorchScript cannot call: torch.jit.load raises"
                        .into(),
                );
                Val::Value
            }
            Val::Op | Val::Defined | Val::Builtin(_) | Val::Value => Val::Value,
            Val::Unresolved => Val::Unresolved,
        }
    }

    /// A method call `value.name(...)`.
    fn method(&mut self, name: &str, at: usize) {
        if self.defs.members.contains(name)
            || COMPILER_METHODS.contains(&name)
            || ops::is_torchbind_method(name)
        {
            return;
        }
        if let Some(op) = ops::leaves_process(name) {
            if ops::is_registered("aten", name) && name == "to_here" {
                self.report(Severity::Fail, at, format!("calls .{name}(), {op}: fetches a remote reference's value through torch.distributed.rpc, reaching the network"));
            } else {
                self.report(Severity::Lead, at, format!("calls a method .{name}(), named like {op}, which no value has and no class of the archive defines: torch.jit.load raises (\"object has no attribute or method\")"));
            }
            return;
        }
        if ops::is_registered("aten", name) || ops::is_registered("prim", name) {
            return;
        }
        self.report(
            Severity::Lead,
            at,
            format!("calls a method .{name}() that no class of the archive defines and no torch operator or TorchBind class has: socair cannot tell what it runs (torch.jit.load most likely raises)"),
        );
    }

    /// A type annotation: only names under `__torch__` are checked (a type runs nothing, but
    /// one torch cannot resolve makes torch.jit.load raise, and a TorchBind class is native
    /// code).
    fn type_expr(&mut self, e: &Expr) {
        match e {
            Expr::Select(..) => {
                if let Some(path) = dotted(e) {
                    if path.starts_with("__torch__.") {
                        let known =
                            self.defs.classes.contains(&path) || ops::is_torchbind_class(&path);
                        if !known {
                            self.undefined_torch_name(&path, e.at());
                        }
                    }
                }
            }
            Expr::Tuple(items, _) | Expr::Node(items, _) => {
                for i in items {
                    self.type_expr(i);
                }
            }
            _ => {}
        }
    }
}

/// `a.b.c` as a string, when `e` is only names and selections.
fn dotted(e: &Expr) -> Option<String> {
    match e {
        Expr::Var(n) => Some(n.text.clone()),
        Expr::Select(base, n) => Some(format!("{}.{}", dotted(base)?, n.text)),
        _ => None,
    }
}

fn stmt_at(s: &Stmt) -> Option<usize> {
    match s {
        Stmt::If(e, ..) | Stmt::While(e, _) => Some(e.at()),
        Stmt::Exprs(es) => es.first().map(Expr::at),
        Stmt::For(t, ..) => t.first().map(Expr::at),
        _ => None,
    }
}

/// Every name a block binds (assignment targets, loop targets, `with ... as`, nested `def`s,
/// comprehension targets), flow-insensitively: a name bound anywhere in a function is its
/// variable everywhere in it, so a variable named like a builtin (`torch = self.t`) is read
/// as a variable, whose methods are judged as methods.
fn bind_block(stmts: &[Stmt], scope: &mut HashSet<String>) {
    for s in stmts {
        match s {
            Stmt::If(c, a, b) => {
                bind_comps(c, scope);
                bind_block(a, scope);
                bind_block(b, scope);
            }
            Stmt::While(c, body) => {
                bind_comps(c, scope);
                bind_block(body, scope);
            }
            Stmt::For(targets, iters, body) => {
                for t in targets {
                    bind_target(t, scope);
                }
                for i in iters {
                    bind_comps(i, scope);
                }
                bind_block(body, scope);
            }
            Stmt::With(items, body) => {
                for (e, name) in items {
                    bind_comps(e, scope);
                    if let Some(n) = name {
                        scope.insert(n.text.clone());
                    }
                }
                bind_block(body, scope);
            }
            Stmt::Def(d) => {
                scope.insert(d.name.text.clone());
            }
            Stmt::Assign { lhs, rhs, .. } => {
                for t in lhs {
                    bind_target(t, scope);
                }
                if let Some(r) = rhs {
                    bind_comps(r, scope);
                }
            }
            Stmt::Exprs(es) => {
                for e in es {
                    bind_comps(e, scope);
                }
            }
            Stmt::Empty => {}
        }
    }
}

fn bind_target(e: &Expr, scope: &mut HashSet<String>) {
    match e {
        Expr::Var(n) => {
            scope.insert(n.text.clone());
        }
        Expr::Tuple(items, _) => {
            for i in items {
                bind_target(i, scope);
            }
        }
        // `*rest`: the unary star's one operand.
        Expr::Node(items, _) if items.len() == 1 => bind_target(&items[0], scope),
        _ => {}
    }
}

/// The targets of comprehensions inside an expression.
fn bind_comps(e: &Expr, scope: &mut HashSet<String>) {
    match e {
        Expr::Comp { target, parts } => {
            bind_target(target, scope);
            for p in parts {
                bind_comps(p, scope);
            }
        }
        Expr::Select(b, _) => bind_comps(b, scope),
        Expr::Apply {
            callee,
            args,
            kwargs,
            ..
        } => {
            bind_comps(callee, scope);
            for a in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
                bind_comps(a, scope);
            }
        }
        Expr::Tuple(items, _) | Expr::Node(items, _) => {
            for i in items {
                bind_comps(i, scope);
            }
        }
        Expr::Var(_) | Expr::Str(..) | Expr::Atom(_) => {}
    }
}
