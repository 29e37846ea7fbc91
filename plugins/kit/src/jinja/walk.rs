//! The walk over minijinja's AST: bindings first (names set from values the walk cannot
//! name), then every lookup judged by [`super::names`], with constants folded where every
//! operand is constant.

use super::names::{format_attributes, name_verdict, ATTRIBUTE_FILTERS, NUMERIC_FILTERS};
use super::source::StrTok;
use super::types::{Severity, MAX_DEPTH, MAX_FOLDED, MAX_NODES, MAX_RAW_FLAGS};
use minijinja::machinery::ast::{self, CallArg, Expr, Stmt};
use minijinja::machinery::Span;
use std::collections::HashSet;

/// A constant's value, as far as the walk folds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Folded {
    Str(String),
    Int(i128),
    /// A float, a boolean, `none`: names no attribute.
    Other,
}

impl Folded {
    fn text(&self) -> Option<String> {
        match self {
            Folded::Str(s) => Some(s.clone()),
            Folded::Int(i) => Some(i.to_string()),
            Folded::Other => None,
        }
    }
}

pub(super) struct Walk<'w> {
    pub(super) strings: &'w [StrTok],
    /// Findings as (byte offset, severity, reason), at most [`MAX_RAW_FLAGS`].
    pub(super) raw: Vec<(usize, Severity, String)>,
    /// Findings past that, counted.
    pub(super) raw_more: usize,
    /// Variables bound (set, for, with, macro arguments) to values the walk cannot name.
    pub(super) tainted: HashSet<String>,
    /// Namespace attributes (`{% set ns.k = ... %}`) bound so.
    pub(super) tainted_attrs: HashSet<String>,
    pub(super) nodes: usize,
    pub(super) stopped: Option<String>,
    /// The first pass only collects bindings; the second judges.
    pub(super) binding: bool,
}

impl Walk<'_> {
    fn flag(&mut self, at: usize, severity: Severity, reason: String) {
        if self.binding {
            return;
        }
        if self.raw.len() < MAX_RAW_FLAGS {
            self.raw.push((at, severity, reason));
        } else {
            self.raw_more += 1;
        }
    }

    fn lookup(&mut self, at: usize, name: &str, how: &str) {
        if let Some((severity, why)) = name_verdict(name) {
            self.flag(at, severity, format!("{how} {why}"));
        }
    }

    /// A dotted attribute path (`make_attrgetter`): each part is looked up.
    fn path(&mut self, at: usize, path: &str, how: &str) {
        for part in path.split('.') {
            self.lookup(at, part, how);
        }
    }

    fn enter(&mut self, depth: usize) -> bool {
        self.nodes += 1;
        if self.stopped.is_some() {
            return false;
        }
        if self.nodes > MAX_NODES {
            self.stopped = Some(format!("more than {MAX_NODES} nodes, more than socair walks in one template: the rest was not checked"));
            return false;
        }
        if depth > MAX_DEPTH {
            self.stopped = Some(format!("nested more than {MAX_DEPTH} deep, deeper than socair walks: the rest was not checked"));
            return false;
        }
        true
    }

    fn stmts(&mut self, body: &[Stmt<'_>], depth: usize) {
        for s in body {
            self.stmt(s, depth + 1);
        }
    }

    pub(super) fn stmt(&mut self, s: &Stmt<'_>, depth: usize) {
        if !self.enter(depth) {
            return;
        }
        match s {
            Stmt::Template(t) => self.stmts(&t.children, depth),
            Stmt::EmitExpr(e) => self.expr(&e.expr, depth),
            Stmt::EmitRaw(_) => {}
            Stmt::ForLoop(f) => {
                if !self.plain(&f.iter, depth) {
                    self.taint(&f.target);
                }
                self.target(&f.target, depth);
                self.expr(&f.iter, depth);
                if let Some(e) = &f.filter_expr {
                    self.expr(e, depth);
                }
                self.stmts(&f.body, depth);
                self.stmts(&f.else_body, depth);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr, depth);
                self.stmts(&i.true_body, depth);
                self.stmts(&i.false_body, depth);
            }
            Stmt::WithBlock(w) => {
                for (target, value) in &w.assignments {
                    if !self.plain(value, depth) {
                        self.taint(target);
                    }
                    self.target(target, depth);
                    self.expr(value, depth);
                }
                self.stmts(&w.body, depth);
            }
            Stmt::Set(set) => {
                if !self.plain(&set.expr, depth) {
                    self.taint(&set.target);
                }
                self.target(&set.target, depth);
                self.expr(&set.expr, depth);
            }
            Stmt::SetBlock(set) => {
                self.taint(&set.target);
                self.target(&set.target, depth);
                if let Some(f) = &set.filter {
                    self.expr(f, depth);
                }
                self.stmts(&set.body, depth);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled, depth);
                self.stmts(&a.body, depth);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter, depth);
                self.stmts(&f.body, depth);
            }
            Stmt::Macro(m) => self.macro_decl(m, depth),
            Stmt::CallBlock(c) => {
                self.call(&c.call, depth);
                self.macro_decl(&c.macro_decl, depth);
            }
            Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::Do(d) => self.call(&d.call, depth),
        }
    }

    fn macro_decl(&mut self, m: &ast::Macro<'_>, depth: usize) {
        // A macro's arguments are whatever its callers pass.
        for a in &m.args {
            self.taint(a);
            self.target(a, depth);
        }
        for d in &m.defaults {
            self.expr(d, depth);
        }
        self.stmts(&m.body, depth);
    }

    /// Marks the names an assignment target binds as unknown.
    fn taint(&mut self, target: &Expr<'_>) {
        match target {
            Expr::Var(v) => {
                self.tainted.insert(v.id.to_owned());
            }
            Expr::GetAttr(a) => {
                self.tainted_attrs.insert(a.name.to_owned());
            }
            Expr::Tuple(t) => {
                for item in &t.items {
                    self.taint(item);
                }
            }
            Expr::List(l) => {
                for item in &l.items {
                    self.taint(item);
                }
            }
            _ => {}
        }
    }

    /// An assignment target: its attribute names are lookups too.
    fn target(&mut self, target: &Expr<'_>, depth: usize) {
        match target {
            Expr::Var(_) => {}
            other => self.expr(other, depth),
        }
    }

    /// The value of a constant expression, where the walk can fold it.
    fn fold(&self, e: &Expr<'_>, depth: usize) -> Option<Folded> {
        if depth > MAX_DEPTH {
            return None;
        }
        match e {
            Expr::Const(c) => {
                if c.value.as_str().is_some() {
                    self.literal(c.span()).map(Folded::Str)
                } else if let Some(i) = c.value.as_i64() {
                    Some(Folded::Int(i128::from(i)))
                } else if c.value.is_number() {
                    // An integer past i64 (minijinja's Int128): never an attribute name.
                    Some(Folded::Other)
                } else {
                    Some(Folded::Other)
                }
            }
            Expr::BinOp(b) => {
                let l = self.fold(&b.left, depth + 1)?;
                let r = self.fold(&b.right, depth + 1)?;
                let bounded = |s: String| (s.len() <= MAX_FOLDED).then_some(Folded::Str(s));
                match (b.op, l, r) {
                    (ast::BinOpKind::Concat, l, r) => bounded(l.text()? + &r.text()?),
                    (ast::BinOpKind::Add, Folded::Str(l), Folded::Str(r)) => bounded(l + &r),
                    (ast::BinOpKind::Add, Folded::Int(l), Folded::Int(r)) => {
                        l.checked_add(r).map(Folded::Int)
                    }
                    (ast::BinOpKind::Mul, Folded::Str(s), Folded::Int(n))
                    | (ast::BinOpKind::Mul, Folded::Int(n), Folded::Str(s)) => {
                        let n = usize::try_from(n.max(0)).ok()?;
                        if s.len().checked_mul(n)? > MAX_FOLDED {
                            return None;
                        }
                        Some(Folded::Str(s.repeat(n)))
                    }
                    _ => None,
                }
            }
            Expr::Filter(f) if f.args.is_empty() => {
                let inner = self.fold(f.expr.as_ref()?, depth + 1)?;
                match (f.name, inner) {
                    ("string", v) => v.text().map(Folded::Str),
                    ("lower", Folded::Str(s)) => Some(Folded::Str(s.to_lowercase())),
                    ("upper", Folded::Str(s)) => Some(Folded::Str(s.to_uppercase())),
                    ("trim", Folded::Str(s)) => Some(Folded::Str(s.trim().to_owned())),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A string literal's value as jinja2 decodes it: the literal tokens within `span`,
    /// joined (adjacent literals concatenate).
    fn literal(&self, span: Span) -> Option<String> {
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        let first = self.strings.partition_point(|s| s.start < start);
        let mut out = String::new();
        let mut any = false;
        for s in self.strings[first..].iter().take_while(|s| s.end <= end) {
            out.push_str(&s.value);
            any = true;
        }
        any.then_some(out)
    }

    /// Whether `e` is a plain value as a lookup key: numbers, variables and attributes the
    /// template did not bind to something computed, arithmetic of those. Strings built in
    /// the template (concatenations, filters, calls) are not: they could spell any name.
    fn plain(&self, e: &Expr<'_>, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let d = depth + 1;
        match e {
            Expr::Const(c) => c.value.as_str().is_none(),
            Expr::Var(v) => !self.tainted.contains(v.id),
            Expr::GetAttr(a) => !self.tainted_attrs.contains(a.name) && self.plain(&a.expr, d),
            Expr::GetItem(i) => self.plain(&i.expr, d) && self.plain(&i.subscript_expr, d),
            Expr::Slice(s) => {
                self.plain(&s.expr, d)
                    && [&s.start, &s.stop, &s.step]
                        .into_iter()
                        .flatten()
                        .all(|x| self.plain(x, d))
            }
            Expr::UnaryOp(u) => self.plain(&u.expr, d),
            Expr::BinOp(b) => {
                !matches!(b.op, ast::BinOpKind::Concat)
                    && self.plain(&b.left, d)
                    && self.plain(&b.right, d)
            }
            Expr::Compare(c) => {
                self.plain(&c.expr, d) && c.ops.iter().all(|o| self.plain(&o.expr, d))
            }
            Expr::IfExpr(i) => {
                self.plain(&i.test_expr, d)
                    && self.plain(&i.true_expr, d)
                    && i.false_expr.as_ref().is_none_or(|x| self.plain(x, d))
            }
            Expr::Test(_) => true,
            Expr::Filter(f) => {
                NUMERIC_FILTERS.contains(&f.name)
                    && f.expr.as_ref().is_none_or(|x| self.plain(x, d))
                    && f.args.iter().all(|a| self.plain(arg_expr(a), d))
            }
            Expr::Call(_) | Expr::List(_) | Expr::Tuple(_) | Expr::Map(_) => false,
        }
    }

    fn expr(&mut self, e: &Expr<'_>, depth: usize) {
        if !self.enter(depth) {
            return;
        }
        let d = depth + 1;
        match e {
            Expr::Var(_) | Expr::Const(_) => {}
            Expr::Slice(s) => {
                self.expr(&s.expr, d);
                for x in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(x, d);
                }
            }
            Expr::UnaryOp(u) => self.expr(&u.expr, d),
            Expr::BinOp(b) => {
                self.expr(&b.left, d);
                self.expr(&b.right, d);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr, d);
                for o in &c.ops {
                    self.expr(&o.expr, d);
                }
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr, d);
                self.expr(&i.true_expr, d);
                if let Some(x) = &i.false_expr {
                    self.expr(x, d);
                }
            }
            Expr::GetAttr(a) => {
                // The name is the span's last bytes (`x.name`).
                let at = (a.span().end_offset as usize).saturating_sub(a.name.len());
                self.lookup(at, a.name, "an attribute lookup of");
                self.expr(&a.expr, d);
            }
            Expr::GetItem(i) => {
                let at = start(&i.subscript_expr);
                match self.fold(&i.subscript_expr, d) {
                    Some(Folded::Str(key)) => {
                        self.lookup(at, &key, "a subscript (which jinja2 also resolves as an attribute) of")
                    }
                    Some(_) => {}
                    None if self.plain(&i.subscript_expr, d) => {}
                    None => self.flag(
                        at,
                        Severity::Lead,
                        "a subscript whose key is computed in the template: jinja2 resolves a string key as an attribute when the item is missing, and socair cannot tell which name this one spells".into(),
                    ),
                }
                self.expr(&i.expr, d);
                self.expr(&i.subscript_expr, d);
            }
            Expr::Filter(f) => {
                self.attribute_filter(f.name, &f.args, d);
                if let Some(x) = &f.expr {
                    self.expr(x, d);
                }
                self.args(&f.args, d);
            }
            Expr::Test(t) => {
                self.expr(&t.expr, d);
                self.args(&t.args, d);
            }
            Expr::Call(c) => self.call(c, depth),
            Expr::List(l) => {
                for x in &l.items {
                    self.expr(x, d);
                }
            }
            Expr::Tuple(t) => {
                for x in &t.items {
                    self.expr(x, d);
                }
            }
            Expr::Map(m) => {
                for x in m.keys.iter().chain(&m.values) {
                    self.expr(x, d);
                }
            }
        }
    }

    fn args(&mut self, args: &[CallArg<'_>], depth: usize) {
        for a in args {
            self.expr(arg_expr(a), depth);
        }
    }

    fn call(&mut self, c: &ast::Call<'_>, depth: usize) {
        let d = depth + 1;
        if let Expr::GetAttr(a) = &c.expr {
            if matches!(a.name, "format" | "format_map") {
                let at = start(&a.expr);
                match self.fold(&a.expr, d) {
                    Some(Folded::Str(fmt)) => {
                        for field in format_attributes(&fmt) {
                            self.lookup(at, &field, "a `str.format` field that looks up");
                        }
                    }
                    _ => self.flag(
                        at,
                        Severity::Lead,
                        format!("`.{}(...)` on a string not written in the template: Python's `str.format` looks up the attributes its fields name (`{{0.__class__}}`), and socair cannot tell which", a.name),
                    ),
                }
            }
        }
        self.expr(&c.expr, d);
        self.args(&c.args, d);
    }

    /// The attribute arguments of `attr`, `map`, `selectattr`...
    fn attribute_filter(&mut self, name: &str, args: &[CallArg<'_>], depth: usize) {
        let Some((_, positions)) = ATTRIBUTE_FILTERS.iter().find(|(f, _)| *f == name) else {
            return;
        };
        // `map('attr', name)`, `select('...')`: a filter named by the first argument gets
        // the rest; when that filter looks attributes up, every argument is a name.
        let names_filter = args.first().and_then(|a| match a {
            CallArg::Pos(x) => self.fold(x, depth),
            _ => None,
        });
        let every = matches!(&names_filter, Some(Folded::Str(f)) if ATTRIBUTE_FILTERS.iter().any(|(n, _)| n == f));
        for (i, a) in args.iter().enumerate() {
            let at = match a {
                CallArg::Pos(_) => positions.contains(&i) || (every && i > 0),
                CallArg::Kwarg(k, _) => *k == "attribute",
                _ => true,
            };
            if !at {
                continue;
            }
            let x = arg_expr(a);
            let at = start(x);
            match self.fold(x, depth) {
                Some(Folded::Str(p)) => {
                    self.path(at, &p, &format!("the `{name}` filter's attribute argument names"))
                }
                Some(_) => {}
                None => self.flag(
                    at,
                    Severity::Lead,
                    format!("the `{name}` filter with an attribute name computed in the template: socair cannot tell which attribute it looks up"),
                ),
            }
        }
    }
}

/// Where an expression starts.
pub(super) fn start(e: &Expr<'_>) -> usize {
    e.span().start_offset as usize
}

pub(super) fn arg_expr<'a, 'b>(a: &'b CallArg<'a>) -> &'b Expr<'a> {
    match a {
        CallArg::Pos(x) | CallArg::Kwarg(_, x) | CallArg::PosSplat(x) | CallArg::KwargSplat(x) => x,
    }
}
