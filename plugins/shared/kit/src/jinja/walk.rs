//! The walk over minijinja's AST. Each expression is evaluated to the bounded set of values
//! it can take ([`Vals`]: `set` and `with` variables, loop variables over template-written
//! lists, macro arguments from every call site, namespace attributes, `caller(...)`
//! arguments, all joined over the whole template, flow-insensitively), and every lookup by
//! a name is judged by [`super::names`] over every name it can be: an attribute, a
//! subscript's key, the name arguments of the filters that look attributes up
//! (`make_attrgetter` and friends), the filter `map` calls and the test `select` calls, and
//! the fields of a `str.format` string. The passes before the last only bind; the last one
//! judges ([`super::judge`] runs them).

use super::names::name_verdict;
use super::source::StrTok;
use super::types::{Severity, MAX_DEPTH, MAX_NODES, MAX_RAW_FLAGS};
use super::values::{concat, map_strs, slice_indices, slice_str, Arg, Vals};
use minijinja::machinery::ast::{self, CallArg, Expr, Stmt};
use minijinja::machinery::Span;
use std::collections::{HashMap, HashSet};

pub(super) struct Walk<'w> {
    pub(super) strings: &'w [StrTok],
    /// Findings as (byte offset, severity, reason), at most [`MAX_RAW_FLAGS`].
    pub(super) raw: Vec<(usize, Severity, String)>,
    /// Findings past that, counted.
    pub(super) raw_more: usize,
    pub(super) nodes: usize,
    pub(super) stopped: Option<String>,
    /// The passes before the last only bind; the last judges.
    pub(super) binding: bool,
    /// Whether this pass bound anything new.
    pub(super) changed: bool,
    /// Variables the template binds, and what they can be.
    pub(super) env: HashMap<String, Vals>,
    /// Attributes set on namespaces (`{% set ns.k = ... %}`), by name.
    pub(super) attrs: HashMap<String, Vals>,
    /// Macros: their parameters, and the text their body can emit.
    pub(super) macros: HashMap<String, Vec<String>>,
    pub(super) macro_text: HashMap<String, Vals>,
    /// Macros used other than by a direct call (their arguments are unknown).
    pub(super) escaped: HashSet<String>,
    /// What `caller(...)` is called with, by position.
    pub(super) caller_args: Vec<Vals>,
    /// Which binding pass this is (from 0).
    pub(super) pass: usize,
}

/// The binding pass from which a value that still changes is widened.
const WIDEN_FROM: usize = 3;
/// The pass from which a variable's strings that still change are widened too: a macro
/// that calls itself with `indent ~ '  '` would otherwise add one string per pass.
const WIDEN_STRS_FROM: usize = 8;

impl<'w> Walk<'w> {
    pub(super) fn new(strings: &'w [StrTok]) -> Self {
        Walk {
            strings,
            raw: Vec::new(),
            raw_more: 0,
            nodes: 0,
            stopped: None,
            binding: true,
            changed: false,
            env: HashMap::new(),
            attrs: HashMap::new(),
            macros: HashMap::new(),
            macro_text: HashMap::new(),
            escaped: HashSet::new(),
            caller_args: Vec::new(),
            pass: 0,
        }
    }

    pub(super) fn flag(&mut self, at: usize, severity: Severity, reason: String) {
        if self.binding {
            return;
        }
        if self.raw.len() < MAX_RAW_FLAGS {
            self.raw.push((at, severity, reason));
        } else {
            self.raw_more += 1;
        }
    }

    pub(super) fn lookup(&mut self, at: usize, name: &str, how: &str) {
        if let Some((severity, why)) = name_verdict(name) {
            self.flag(at, severity, format!("{how} {why}"));
        }
    }

    /// `map[name] ∪= v`; from pass [`WIDEN_FROM`] on, a value that still changes is
    /// widened ([`widen`]: its numbers to some number, its lists to their items, and with
    /// `strs` its strings to their common prefix), so the passes reach a fixed point.
    fn grow(
        map: &mut HashMap<String, Vals>,
        name: &str,
        v: &Vals,
        pass: usize,
        strs: bool,
    ) -> bool {
        let e = map.entry(name.to_owned()).or_default();
        let before = e.clone();
        e.join(v);
        if *e != before && pass >= WIDEN_FROM {
            let strs = strs || pass >= WIDEN_STRS_FROM;
            *e = before
                .clone()
                .union(&widen(&e.clone(), Some(&before), strs));
        }
        *e != before
    }

    pub(super) fn bind(&mut self, name: &str, v: &Vals) {
        if Self::grow(&mut self.env, name, v, self.pass, false) {
            self.changed = true;
        }
    }

    pub(super) fn bind_attr(&mut self, name: &str, v: &Vals) {
        if Self::grow(&mut self.attrs, name, v, self.pass, false) {
            self.changed = true;
        }
    }

    pub(super) fn bind_caller(&mut self, i: usize, v: &Vals) {
        if i >= super::values::MAX_ITEMS {
            return;
        }
        while self.caller_args.len() <= i {
            self.caller_args.push(Vals::default());
        }
        let before = self.caller_args[i].clone();
        self.caller_args[i].join(v);
        if self.caller_args[i] != before && self.pass >= WIDEN_FROM {
            let now = self.caller_args[i].clone();
            let strs = self.pass >= WIDEN_STRS_FROM;
            self.caller_args[i] = before.clone().union(&widen(&now, Some(&before), strs));
        }
        if self.caller_args[i] != before {
            self.changed = true;
        }
    }

    fn bind_text(&mut self, name: &str, v: &Vals) {
        if Self::grow(&mut self.macro_text, name, v, self.pass, true) {
            self.changed = true;
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

    /// The text a body emits, concatenated.
    fn stmts(&mut self, body: &[Stmt<'_>], depth: usize) -> Vals {
        let mut text = Vals::str("");
        for s in body {
            let t = self.stmt(s, depth + 1);
            text = concat(&text, &t);
        }
        text
    }

    /// Walks `s`; returns the text it can emit.
    pub(super) fn stmt(&mut self, s: &Stmt<'_>, depth: usize) -> Vals {
        if !self.enter(depth) {
            return Vals::unknown();
        }
        match s {
            Stmt::Template(t) => self.stmts(&t.children, depth),
            Stmt::EmitExpr(e) => self.expr(&e.expr, depth).text(),
            Stmt::EmitRaw(r) => raw_text(r.raw),
            Stmt::ForLoop(f) => {
                let iter = self.expr(&f.iter, depth);
                self.bind_target(&f.target, &iter.elements(), depth);
                if let Some(e) = &f.filter_expr {
                    self.expr(e, depth);
                }
                self.stmts(&f.body, depth);
                self.stmts(&f.else_body, depth);
                Vals::unknown()
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr, depth);
                let t = self.stmts(&i.true_body, depth);
                let f = self.stmts(&i.false_body, depth);
                t.union(&f)
            }
            Stmt::WithBlock(w) => {
                for (target, value) in &w.assignments {
                    let v = self.expr(value, depth);
                    self.bind_target(target, &v, depth);
                }
                self.stmts(&w.body, depth)
            }
            Stmt::Set(set) => {
                let mut v = self.expr(&set.expr, depth);
                // `{% set ns.s = ns.s ~ c %}` in a loop accumulates: followed pass by pass it
                // would spell every combination, so it widens to what all its values start
                // with (a flow-insensitive set would otherwise claim `'_' ~ '_'`).
                let name = match &set.target {
                    Expr::Var(x) => Some((x.id, false)),
                    Expr::GetAttr(a) => Some((a.name, true)),
                    _ => None,
                };
                if let Some((name, attr)) = name {
                    if mentions(&set.expr, name, attr, 0) {
                        let old = if attr {
                            self.attrs.get(name)
                        } else {
                            self.env.get(name)
                        };
                        v = widen(&v, old, true);
                    }
                }
                self.bind_target(&set.target, &v, depth);
                Vals::str("")
            }
            Stmt::SetBlock(set) => {
                let mut text = self.stmts(&set.body, depth);
                if let Some(f) = &set.filter {
                    text = self.filter_expr(f, text, depth);
                }
                self.bind_target(&set.target, &text, depth);
                Vals::str("")
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled, depth);
                self.stmts(&a.body, depth)
            }
            Stmt::FilterBlock(f) => {
                let text = self.stmts(&f.body, depth);
                self.filter_expr(&f.filter, text, depth)
            }
            Stmt::Macro(m) => {
                self.macro_decl(m, None, depth);
                Vals::str("")
            }
            Stmt::CallBlock(c) => {
                let out = self.call(&c.call, depth);
                let args = self.caller_args.clone();
                self.macro_decl(&c.macro_decl, Some(&args), depth);
                out
            }
            Stmt::Continue(_) | Stmt::Break(_) => Vals::str(""),
            Stmt::Do(d) => {
                self.call(&d.call, depth);
                Vals::str("")
            }
        }
    }

    /// A filter block's or `{% set x | f %}`'s filter applied to `input`: minijinja parses
    /// it as a filter chain whose innermost filter has no operand.
    fn filter_expr(&mut self, f: &Expr<'_>, input: Vals, depth: usize) -> Vals {
        match f {
            Expr::Filter(flt) => {
                let inner = match &flt.expr {
                    Some(x) => self.filter_expr(x, input, depth + 1),
                    None => input,
                };
                self.apply_filter_node(flt, inner, depth)
            }
            other => {
                self.expr(other, depth);
                Vals::unknown()
            }
        }
    }

    fn macro_decl(&mut self, m: &ast::Macro<'_>, caller: Option<&[Vals]>, depth: usize) {
        let params: Vec<String> = m
            .args
            .iter()
            .map(|a| match a {
                Expr::Var(v) => v.id.to_owned(),
                _ => String::new(),
            })
            .collect();
        let first_default = params.len().saturating_sub(m.defaults.len());
        for (i, d) in m.defaults.iter().enumerate() {
            let v = self.expr(d, depth);
            if let Some(p) = params.get(first_default + i) {
                self.bind(p, &v);
            }
        }
        match caller {
            // `{% call(a, b) m() %}`: its parameters are what `caller(...)` passes.
            Some(args) => {
                for (i, p) in params.iter().enumerate() {
                    let v = args.get(i).cloned().unwrap_or_default();
                    self.bind(p, &v);
                }
            }
            None => {
                if self.escaped.contains(m.name) {
                    for p in &params {
                        self.bind(p, &Vals::unknown());
                    }
                }
                let before = self.macros.get(m.name);
                if before != Some(&params) {
                    self.macros.insert(m.name.to_owned(), params.clone());
                    self.changed = true;
                }
            }
        }
        let text = self.stmts(&m.body, depth);
        if caller.is_none() {
            self.bind_text(m.name, &text);
        }
    }

    /// Binds what an assignment target names (a variable, a namespace attribute, a tuple of
    /// them) to `v`; its attribute names are lookups too.
    fn bind_target(&mut self, target: &Expr<'_>, v: &Vals, depth: usize) {
        match target {
            Expr::Var(var) => self.bind(var.id, v),
            Expr::GetAttr(a) => {
                self.bind_attr(a.name, v);
                let at = (a.span().end_offset as usize).saturating_sub(a.name.len());
                self.lookup(at, a.name, "an attribute lookup of");
                self.expr(&a.expr, depth + 1);
            }
            Expr::Tuple(_) | Expr::List(_) => {
                let items: &[Expr<'_>] = match target {
                    Expr::Tuple(t) => &t.items,
                    Expr::List(l) => &l.items,
                    _ => &[],
                };
                let n = items.len();
                // Same-length lists unpack item by item; anything else by its elements.
                let mut rest = v.clone();
                rest.lists.retain(|l| l.len() != n);
                let rest = rest.elements();
                for (i, item) in items.iter().enumerate() {
                    let mut vi = rest.clone();
                    for l in v.lists.iter().filter(|l| l.len() == n) {
                        vi.join(&l[i]);
                    }
                    self.bind_target(item, &vi, depth + 1);
                }
            }
            other => {
                self.expr(other, depth + 1);
            }
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

    /// Walks `e`, judging its lookups; returns what it can be.
    pub(super) fn expr(&mut self, e: &Expr<'_>, depth: usize) -> Vals {
        if !self.enter(depth) {
            return Vals::unknown();
        }
        let d = depth + 1;
        match e {
            Expr::Var(v) => self.var(v.id),
            Expr::Const(c) => {
                if c.value.as_str().is_some() {
                    self.literal(c.span())
                        .map_or_else(Vals::unknown, |s| Vals::str(&s))
                } else if let Some(i) = c.value.as_i64() {
                    Vals::int(i128::from(i))
                } else {
                    Vals::other()
                }
            }
            Expr::Slice(s) => {
                let base = self.expr(&s.expr, d);
                let mut bounds = Vec::new();
                for x in [&s.start, &s.stop, &s.step] {
                    bounds.push(x.as_ref().map(|x| self.expr(x, d)));
                }
                slice(&base, &bounds)
            }
            Expr::UnaryOp(u) => {
                let v = self.expr(&u.expr, d);
                match u.op {
                    ast::UnaryOpKind::Not => Vals::other(),
                    ast::UnaryOpKind::Neg => {
                        let mut out = Vals {
                            plain: v.plain,
                            ..Vals::default()
                        };
                        out.ints = v.ints.iter().filter_map(|i| i.checked_neg()).collect();
                        out.other = v.other || v.templated();
                        out
                    }
                }
            }
            Expr::BinOp(b) => {
                let l = self.expr(&b.left, d);
                let r = self.expr(&b.right, d);
                binop(b.op, &l, &r)
            }
            Expr::Compare(c) => {
                self.expr(&c.expr, d);
                for o in &c.ops {
                    self.expr(&o.expr, d);
                }
                Vals::other()
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr, d);
                let t = self.expr(&i.true_expr, d);
                match &i.false_expr {
                    Some(x) => t.union(&self.expr(x, d)),
                    None => t.union(&Vals::other()),
                }
            }
            Expr::Filter(f) => {
                let input = match &f.expr {
                    Some(x) => self.expr(x, d),
                    None => Vals::unknown(),
                };
                self.apply_filter_node(f, input, d)
            }
            Expr::Test(t) => {
                self.expr(&t.expr, d);
                self.args(&t.args, d);
                Vals::other()
            }
            Expr::GetAttr(a) => {
                // The name is the span's last bytes (`x.name`).
                let at = (a.span().end_offset as usize).saturating_sub(a.name.len());
                self.lookup(at, a.name, "an attribute lookup of");
                let base = self.expr(&a.expr, d);
                self.getattr(&base, a.name)
            }
            Expr::GetItem(i) => {
                let base = self.expr(&i.expr, d);
                let key = self.expr(&i.subscript_expr, d);
                let at = start(&i.subscript_expr);
                self.judge_key(at, &key);
                self.format_by_name(at, &base, &key);
                let mut out = base.item(&key);
                if base.other || !base.maps.is_empty() {
                    // `getitem` falls back to `getattr`: a namespace's attributes.
                    for k in &key.strs {
                        if let Some(v) = self.attrs.get(k) {
                            out.join(v);
                        }
                    }
                    if base.other {
                        out.other = true;
                    }
                }
                out
            }
            Expr::Call(c) => self.call(c, depth),
            Expr::List(l) => {
                let items = l.items.iter().map(|x| self.expr(x, d)).collect();
                Vals::list(items)
            }
            Expr::Tuple(t) => {
                let items = t.items.iter().map(|x| self.expr(x, d)).collect();
                Vals::list(items)
            }
            Expr::Map(m) => {
                let pairs = m
                    .keys
                    .iter()
                    .zip(&m.values)
                    .map(|(k, v)| (self.expr(k, d), self.expr(v, d)))
                    .collect();
                Vals::map(pairs)
            }
        }
    }

    fn var(&mut self, id: &str) -> Vals {
        if self.macros.contains_key(id) {
            // A macro as a value: whoever it is handed to calls it with anything.
            if self.escaped.insert(id.to_owned()) {
                self.changed = true;
            }
            return Vals::other();
        }
        if let Some(v) = self.env.get(id) {
            return v.clone();
        }
        match id {
            "range" | "lipsum" | "cycler" | "joiner" | "namespace" | "dict" | "self" => {
                Vals::other()
            }
            // The caller's data: `messages`, `tools`, `loop`, `bos_token`...
            _ => Vals::plain(),
        }
    }

    /// What `base.name` can be.
    pub(super) fn getattr(&self, base: &Vals, name: &str) -> Vals {
        let mut out = Vals::default();
        let key = Vals::str(name);
        for m in &base.maps {
            let one = Vals {
                maps: vec![m.clone()],
                ..Vals::default()
            };
            out.join(&one.item(&key));
        }
        if let Some(b) = &base.bag {
            out.join(b);
        }
        if base.other || !base.maps.is_empty() || base.bag.is_some() || !base.partial.is_empty() {
            if let Some(v) = self.attrs.get(name) {
                out.join(v);
            }
        }
        if !base.partial.is_empty() {
            out.join(&Vals::unknown());
        }
        out.plain |= base.plain;
        out.other |=
            base.other || !base.strs.is_empty() || !base.ints.is_empty() || !base.lists.is_empty();
        out
    }

    pub(super) fn args(&mut self, args: &[CallArg<'_>], depth: usize) -> Vec<Arg> {
        args.iter()
            .map(|a| {
                let x = arg_expr(a);
                let v = self.expr(x, depth);
                let (kw, splat) = match a {
                    CallArg::Pos(_) => (None, 0),
                    CallArg::Kwarg(k, _) => (Some((*k).to_owned()), 0),
                    CallArg::PosSplat(_) => (None, 1),
                    CallArg::KwargSplat(_) => (None, 2),
                };
                Arg {
                    kw,
                    splat,
                    v,
                    at: start(x),
                }
            })
            .collect()
    }

    /// A filter node applied to `input`: its name arguments judged, its value computed.
    fn apply_filter_node(&mut self, f: &ast::Filter<'_>, input: Vals, depth: usize) -> Vals {
        let args = self.args(&f.args, depth + 1);
        self.filter_names(f.name, &args, 0);
        self.apply_filter(f.name, &input, &args, 0)
    }
}

/// Whether `e` reads variable `name` (or, with `attr`, an attribute `name`).
fn mentions(e: &Expr<'_>, name: &str, attr: bool, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let d = depth + 1;
    let any = |xs: &mut dyn Iterator<Item = &Expr<'_>>| {
        for x in xs {
            if mentions(x, name, attr, d) {
                return true;
            }
        }
        false
    };
    match e {
        Expr::Var(v) => !attr && v.id == name,
        Expr::Const(_) => false,
        Expr::Slice(s) => any(&mut [
            Some(&s.expr),
            s.start.as_ref(),
            s.stop.as_ref(),
            s.step.as_ref(),
        ]
        .into_iter()
        .flatten()),
        Expr::UnaryOp(u) => mentions(&u.expr, name, attr, d),
        Expr::BinOp(b) => any(&mut [&b.left, &b.right].into_iter()),
        Expr::Compare(c) => any(&mut std::iter::once(&c.expr).chain(c.ops.iter().map(|o| &o.expr))),
        Expr::IfExpr(i) => any(&mut [
            Some(&i.test_expr),
            Some(&i.true_expr),
            i.false_expr.as_ref(),
        ]
        .into_iter()
        .flatten()),
        Expr::Filter(f) => any(&mut f.expr.iter().chain(f.args.iter().map(arg_expr))),
        Expr::Test(t) => any(&mut std::iter::once(&t.expr).chain(t.args.iter().map(arg_expr))),
        Expr::GetAttr(a) => (attr && a.name == name) || mentions(&a.expr, name, attr, d),
        Expr::GetItem(i) => any(&mut [&i.expr, &i.subscript_expr].into_iter()),
        Expr::Call(c) => any(&mut std::iter::once(&c.expr).chain(c.args.iter().map(arg_expr))),
        Expr::List(l) => any(&mut l.items.iter()),
        Expr::Tuple(t) => any(&mut t.items.iter()),
        Expr::Map(m) => any(&mut m.keys.iter().chain(&m.values)),
    }
}

/// A value that keeps changing, widened against what it was (`old`): new strings become
/// the prefix they share with the earlier ones followed by anything, new numbers some
/// number, lists that changed their items in no known order or number. What did not change
/// is kept exact, so a growing structure does not blur the names already spelled.
fn widen(v: &Vals, old: Option<&Vals>, strs: bool) -> Vals {
    let empty = Vals::default();
    let old = old.unwrap_or(&empty);
    let mut v = v.clone();
    // A counter (`ns.i = ns.i + 1`) is some number: it names nothing.
    if v.ints.iter().any(|i| !old.ints.contains(i)) {
        v.ints.clear();
        v.plain = true;
    }
    // A list that grows (`l = l + [x]`): its items, in no known order or number.
    let lists_changed = v.lists.iter().any(|l| !old.lists.contains(l))
        || v.maps.iter().any(|m| !old.maps.contains(m));
    if lists_changed {
        let mut items = Vals::default();
        for l in std::mem::take(&mut v.lists) {
            for x in l {
                items.join(&x);
            }
        }
        for m in std::mem::take(&mut v.maps) {
            for (k, x) in m {
                items.join(&k);
                items.join(&x);
            }
        }
        v.add_bag(items);
    }
    // A sequence whose items keep changing: its items widened the same way.
    if let Some(b) = v.bag.take() {
        let ob = old.bag.as_deref();
        v.bag = Some(Box::new(if ob == Some(&*b) {
            *b
        } else {
            widen(&b, ob, strs)
        }));
    }
    let new_strs: Vec<String> = v
        .strs
        .iter()
        .filter(|s| !old.strs.contains(*s))
        .cloned()
        .collect();
    let new_partial: Vec<String> = v
        .partial
        .iter()
        .filter(|p| !old.partial.contains(*p))
        .map(|(p, _)| p.clone())
        .collect();
    // Strings are widened early only where they accumulate (`s = s ~ c`, a macro's text
    // that includes its own), elsewhere from pass `WIDEN_STRS_FROM`: a name that reaches a
    // variable through a chain of macros a few passes long stays spelled.
    if !strs || (new_strs.is_empty() && new_partial.is_empty()) {
        return v;
    }
    let mut prefixes = new_strs;
    prefixes.extend(new_partial);
    prefixes.extend(old.strs.iter().cloned());
    prefixes.extend(old.partial.iter().map(|(p, _)| p.clone()));
    let mut common: String = prefixes.first().cloned().unwrap_or_default();
    for p in &prefixes {
        let n = common
            .chars()
            .zip(p.chars())
            .take_while(|(a, b)| a == b)
            .count();
        common = common.chars().take(n).collect();
    }
    let mut out = Vals {
        strs: old.strs.clone(),
        partial: old.partial.clone(),
        ..v
    };
    out.add_partial(common, String::new());
    out
}

/// Raw text as emitted, and as transformers' `trim_blocks`/`lstrip_blocks` leave it (the
/// newline after a tag dropped, the indentation before one).
fn raw_text(raw: &str) -> Vals {
    let mut v = Vals::str(raw);
    let mut t = raw.strip_prefix('\n').unwrap_or(raw);
    if let Some(i) = t.rfind('\n') {
        if t[i + 1..].chars().all(|c| c == ' ' || c == '\t') {
            t = &t[..=i];
        }
    } else if t.chars().all(|c| c == ' ' || c == '\t') {
        t = "";
    }
    v.add_str(t.to_owned());
    v
}

/// A slice's value: exact where the bounds are known integers.
fn slice(base: &Vals, bounds: &[Option<Vals>]) -> Vals {
    let exact: Option<Vec<Option<i128>>> = bounds
        .iter()
        .map(|b| match b {
            None => Some(None),
            Some(v) if v.ints.len() == 1 && !v.plain && !v.templated() && !v.other => {
                v.ints.iter().next().map(|i| Some(*i))
            }
            Some(v) if v.is_empty() => Some(None),
            Some(_) => None,
        })
        .collect();
    let mut out = Vals {
        plain: base.plain,
        ..Vals::default()
    };
    match exact {
        Some(b) => {
            for s in &base.strs {
                match slice_str(s, b[0], b[1], b[2]) {
                    Some(x) => out.add_str(x),
                    None => out.other = true,
                }
            }
            for l in &base.lists {
                match slice_indices(l.len(), b[0], b[1], b[2]) {
                    Some(idx) => {
                        out.join(&Vals::list(idx.into_iter().map(|i| l[i].clone()).collect()))
                    }
                    None => out.other = true,
                }
            }
        }
        None => {
            if !base.strs.is_empty() {
                out.add_partial(String::new(), String::new());
            }
            if !base.lists.is_empty() {
                let mut only = base.clone();
                only.strs.clear();
                out.add_bag(only.elements());
            }
        }
    }
    if !base.partial.is_empty() {
        out.add_partial(String::new(), String::new());
    }
    if let Some(b) = &base.bag {
        out.add_bag((**b).clone());
    }
    out
}

fn str_part(v: &Vals) -> Vals {
    Vals {
        strs: v.strs.clone(),
        partial: v.partial.clone(),
        ..Vals::default()
    }
}

fn has_str(v: &Vals) -> bool {
    !v.strs.is_empty() || !v.partial.is_empty()
}

/// `l op r`.
fn binop(op: ast::BinOpKind, l: &Vals, r: &Vals) -> Vals {
    use ast::BinOpKind as K;
    let mut out = Vals::default();
    let nums = |f: &dyn Fn(i128, i128) -> Option<i128>, out: &mut Vals| {
        for a in &l.ints {
            for b in &r.ints {
                match f(*a, *b) {
                    Some(x) if out.ints.len() < super::values::MAX_STRS => {
                        out.ints.insert(x);
                    }
                    _ => out.other = true,
                }
            }
        }
        if (l.plain && (r.plain || !r.ints.is_empty())) || (r.plain && !l.ints.is_empty()) {
            out.plain = true;
        }
    };
    match op {
        K::Concat => return concat(l, r),
        K::Add => {
            if has_str(l) || has_str(r) {
                let ls = if l.plain {
                    str_part(l).union(&Vals::unknown())
                } else {
                    str_part(l)
                };
                let rs = if r.plain {
                    str_part(r).union(&Vals::unknown())
                } else {
                    str_part(r)
                };
                if has_str(&ls) && has_str(&rs) {
                    out.join(&concat(&ls, &rs));
                }
            }
            for a in &l.lists {
                for b in &r.lists {
                    out.join(&Vals::list(a.iter().chain(b).cloned().collect()));
                }
            }
            if (!l.lists.is_empty() || l.bag.is_some()) && (r.bag.is_some() || r.plain)
                || (!r.lists.is_empty() || r.bag.is_some()) && (l.bag.is_some() || l.plain)
            {
                out.add_bag(l.elements().union(&r.elements()));
            }
            nums(&|a, b| a.checked_add(b), &mut out);
        }
        K::Sub => nums(&|a, b| a.checked_sub(b), &mut out),
        K::Mul => {
            nums(&|a, b| a.checked_mul(b), &mut out);
            for (s, n) in l
                .strs
                .iter()
                .map(|s| (s, &r.ints))
                .chain(r.strs.iter().map(|s| (s, &l.ints)))
            {
                for &k in n {
                    let k = usize::try_from(k.max(0)).unwrap_or(usize::MAX);
                    match s.len().checked_mul(k) {
                        Some(len) if len <= super::values::MAX_STR * 4 => out.add_str(s.repeat(k)),
                        _ => out.add_partial(s.chars().take(2).collect(), String::new()),
                    }
                }
            }
            if (has_str(l) && r.plain)
                || (has_str(r) && l.plain)
                || !l.partial.is_empty()
                || !r.partial.is_empty()
            {
                out.add_partial(String::new(), String::new());
            }
            if !l.lists.is_empty() || !r.lists.is_empty() {
                out.add_bag(l.elements().union(&r.elements()));
            }
        }
        K::Rem => {
            if has_str(l) {
                // `fmt % args`: a tuple's items are the arguments, anything else is one.
                let mut args: Vec<Vec<Vals>> = r
                    .lists
                    .iter()
                    .map(|l| l.iter().map(Vals::text).collect())
                    .collect();
                let mut single = r.clone();
                single.lists.clear();
                if !single.is_empty() {
                    args.push(vec![single.text()]);
                }
                for a in &args {
                    let mut inputs: Vec<&Vals> = vec![l];
                    inputs.extend(a.iter());
                    out.join(&map_strs(&inputs, |s| super::values::printf(s[0], &s[1..])));
                }
            }
            nums(
                &|a, b| if b == 0 { None } else { Some(a.rem_euclid(b)) },
                &mut out,
            );
            if l.plain && r.templated() {
                out.add_partial(String::new(), String::new());
            }
        }
        K::FloorDiv => nums(
            &|a, b| if b == 0 { None } else { Some(a.div_euclid(b)) },
            &mut out,
        ),
        K::Pow => nums(
            &|a, b| u32::try_from(b).ok().and_then(|b| a.checked_pow(b)),
            &mut out,
        ),
        K::ScAnd | K::ScOr => {
            // Python's `and`/`or` return an operand.
            out.join(l);
            out.join(r);
            out.other = true;
        }
        K::Div | K::Eq | K::Ne | K::Lt | K::Lte | K::Gt | K::Gte | K::In => {
            out.other = true;
            out.plain |= matches!(op, K::Div) && (l.plain || r.plain);
        }
    }
    if out.is_empty() {
        out.other = true;
    }
    out
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
