//! Calls, filters and the judging of names for [`Walk`]: what a call, a method or a filter
//! returns (as far as it matters for names), and the verdict on every name a lookup can be:
//! a subscript's key, a filter's attribute, filter or test name, a `str.format` field.
//!
//! Which jinja2 3.1.6 paths look a name up, and how (`filters.py`, `sandbox.py`):
//! `make_attrgetter`/`make_multi_attrgetter` call `environment.getitem` per part (the
//! sandbox's `SandboxedEnvironment.getitem` tries `obj[part]`, then `getattr` checked by
//! `is_safe_attribute`; a plain `Environment.getitem` does the same without the check);
//! `do_attr` calls `inspect.getattr_static(obj, name)` and `hasattr(obj, name)` in plain
//! Python (no value escapes: properties run, the result is a bool) and then
//! `environment.getattr`; `prepare_map` and `prepare_select_or_reject` call
//! `environment.call_filter`/`call_test`, which look the name up in the environment's
//! `filters`/`tests` dicts and raise `TemplateRuntimeError` for any other. So a filter name
//! reaches an attribute only through the filters that take one (`map('attr', n)`), a test
//! name reaches none; an unresolved one is still a LEAD, as the issue asks.

mod builtins;

use super::names::{
    format_attributes, name_verdict, parts, takes_names, Split, ATTRIBUTE_ARGS, TEST_ARGS,
};
use super::types::Severity;
use super::values::{self, Arg, Vals};
use super::walk::{start, Walk};
use builtins::{
    abs_filter, case_or_trim, container_method, format_filter, int_filter, kwarg, length_filter,
    list_filter, pick_element, positional, replace_filter, reverse_filter, sequence_filter,
    str_method,
};
use minijinja::machinery::ast::{self, Expr};

/// How deep `map('map', 'map', ...)` is followed.
const MAX_FILTER_DEPTH: usize = 4;

impl Walk<'_> {
    /// A subscript's key: jinja2's `getitem` resolves a string key as an attribute when
    /// the item is missing.
    pub(super) fn judge_key(&mut self, at: usize, key: &Vals) {
        let how = "a subscript (which jinja2 also resolves as an attribute) of";
        let names: Vec<String> = key.strs.iter().cloned().collect();
        self.lookup_set(at, &names, how);
        for (p, s) in key.partial.clone() {
            self.judge_partial(at, &p, &s, Split::Whole, "a subscript");
        }
    }

    /// The names one lookup can be: the worst verdict among them, once.
    fn lookup_set(&mut self, at: usize, names: &[String], how: &str) {
        let mut worst: Option<(Severity, String)> = None;
        for n in names {
            if let Some((sev, why)) = name_verdict(n) {
                if worst.as_ref().is_none_or(|(w, _)| sev > *w) {
                    worst = Some((sev, why));
                }
            }
        }
        if let Some((sev, why)) = worst {
            let of = if names.len() > 1 {
                format!(
                    " (one of {} names the template can spell there)",
                    names.len()
                )
            } else {
                String::new()
            };
            self.flag(at, sev, format!("{how} {why}{of}"));
        }
    }

    /// A name built in the template that socair cannot spell: FAIL when every spelling
    /// starts with `__`, or when a whole part of a dotted path is known and unsafe.
    fn judge_partial(&mut self, at: usize, prefix: &str, suffix: &str, split: Split, what: &str) {
        let mut known: Vec<String> = Vec::new();
        let mut head = prefix.to_owned();
        let mut tail = suffix.to_owned();
        if split != Split::Whole {
            let seps: &[char] = if split == Split::Multi {
                &['.', ',']
            } else {
                &['.']
            };
            if let Some(i) = prefix.rfind(seps) {
                known.extend(parts(&prefix[..i], split).into_iter().map(str::to_owned));
                head = prefix[i + 1..].to_owned();
            }
            if let Some(i) = suffix.find(seps) {
                known.extend(
                    parts(&suffix[i + 1..], split)
                        .into_iter()
                        .map(str::to_owned),
                );
                tail = suffix[..i].to_owned();
            }
        }
        for k in known {
            self.lookup(
                at,
                &k,
                &format!("{what} whose name the template builds, with a part that names"),
            );
        }
        let _ = tail;
        if head.starts_with("__") {
            self.flag(
                at,
                Severity::Fail,
                format!("{what} whose name the template builds and which starts with `__` (`{head}...`), a Python dunder attribute: {}", super::names::REACHES),
            );
        } else {
            let hint = if head.starts_with('_') {
                " (it starts with `_`)"
            } else {
                ""
            };
            self.flag(
                at,
                Severity::Lead,
                format!("{what} whose name is computed in the template{hint}: jinja2 looks it up as an attribute, and socair cannot tell which name it spells"),
            );
        }
    }

    /// An attribute-name argument of a filter.
    fn judge_attribute(&mut self, at: usize, v: &Vals, split: Split, filter: &str) {
        let how = format!("the `{filter}` filter's attribute argument names");
        let names: Vec<String> = v
            .strs
            .iter()
            .flat_map(|s| {
                parts(s, split)
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        self.lookup_set(at, &names, &how);
        for (p, s) in v.partial.clone() {
            self.judge_partial(
                at,
                &p,
                &s,
                split,
                &format!("the `{filter}` filter's attribute argument,"),
            );
        }
        if v.plain {
            self.flag(
                at,
                Severity::Lead,
                format!("the `{filter}` filter with an attribute name the template does not write (it comes from the caller's data): socair cannot tell which attribute it looks up"),
            );
        }
        if v.bag.is_some() {
            self.flag(
                at,
                Severity::Lead,
                format!("the `{filter}` filter with an attribute name socair cannot follow"),
            );
        }
    }

    /// The name arguments of filter `name` called with `args`: attribute names, the filter
    /// `map` calls, the test `select` calls.
    pub(super) fn filter_names(&mut self, name: &str, args: &[Arg], depth: usize) {
        if depth > MAX_FILTER_DEPTH || !takes_names(name) {
            return;
        }
        // `*x`, `**x`: any item can be any argument.
        for a in args.iter().filter(|a| a.splat != 0) {
            let items = if a.splat == 1 {
                a.v.elements()
            } else {
                let mut all = Vals::default();
                for m in &a.v.maps {
                    for (_, x) in m {
                        all.join(x);
                    }
                }
                all.plain |= a.v.plain;
                if !a.v.partial.is_empty() || a.v.bag.is_some() {
                    all.join(&Vals::unknown());
                }
                all
            };
            self.judge_attribute(a.at, &items, Split::Multi, name);
        }
        let pos = positional(args);
        if name == "map" {
            if pos.is_empty() {
                if let Some(a) = kwarg(args, "attribute") {
                    self.judge_attribute(a.at, &a.v.clone(), Split::Dotted, name);
                }
                return;
            }
            let f = pos[0];
            let rest: Vec<Arg> = args
                .iter()
                .filter(|a| !std::ptr::eq(*a, f))
                .cloned()
                .collect();
            for s in f.v.strs.clone() {
                self.filter_names(&s, &rest, depth + 1);
            }
            if !f.v.partial.is_empty() || f.v.plain || f.v.bag.is_some() {
                self.flag(
                    f.at,
                    Severity::Lead,
                    "`map` with a filter name computed in the template: jinja2 calls the filter it names with the other arguments, and `attr` or `map(attribute=...)` there looks up any attribute; socair cannot tell which filter".into(),
                );
            }
            return;
        }
        if let Some((_, i, kw, split)) = ATTRIBUTE_ARGS.iter().find(|(f, ..)| *f == name) {
            let a = pos
                .get(*i)
                .copied()
                .or_else(|| (!kw.is_empty()).then(|| kwarg(args, kw)).flatten());
            if let Some(a) = a {
                self.judge_attribute(a.at, &a.v.clone(), *split, name);
            }
        }
        if let Some((_, i)) = TEST_ARGS.iter().find(|(f, _)| *f == name) {
            if let Some(a) = pos.get(*i) {
                if !a.v.partial.is_empty() || a.v.plain || a.v.bag.is_some() {
                    self.flag(
                        a.at,
                        Severity::Lead,
                        format!("`{name}` with a test name computed in the template: jinja2 calls the test it names (`environment.call_test`), and socair cannot tell which"),
                    );
                }
            }
        }
    }

    /// What filter `name` returns for `input`.
    pub(super) fn apply_filter(
        &mut self,
        name: &str,
        input: &Vals,
        args: &[Arg],
        depth: usize,
    ) -> Vals {
        let pos = positional(args);
        let arg = |i: usize| pos.get(i).map(|a| &a.v);
        let templated_args = args.iter().any(|a| a.v.templated());
        let mut out = match name {
            "string" | "e" | "escape" | "forceescape" | "safe" => input.text(),
            "lower" | "upper" | "capitalize" | "title" | "trim" => {
                case_or_trim(name, input, arg(0))
            }
            "replace" => replace_filter(input, &pos),
            "format" => format_filter(input, &pos, templated_args),
            "join" => self.join_filter(input, args, &pos, depth),
            "first" | "last" | "random" | "min" | "max" => pick_element(name, input),
            "list" => list_filter(input),
            "reverse" => reverse_filter(input),
            "default" | "d" => {
                let mut out = input.clone();
                if let Some(a) = arg(0) {
                    out.join(a);
                }
                out
            }
            "length" | "count" | "wordcount" => length_filter(input),
            "int" => int_filter(input),
            "abs" => abs_filter(input),
            "float" | "round" | "sum" | "filesizeformat" | "tojson" | "pprint" | "urlencode"
            | "xmlattr" | "items" | "dictsort"
                if !input.templated() =>
            {
                Vals {
                    plain: input.plain,
                    other: !input.plain,
                    ..Vals::default()
                }
            }
            "sort" | "unique" | "select" | "reject" | "selectattr" | "rejectattr" | "batch"
            | "slice" | "groupby" | "dictsort" | "items" => sequence_filter(name, input),
            "map" => self.map_filter(input, args, depth),
            "attr" => self.attr_filter(input, args, &pos),
            _ => {
                let mut out = Vals::default();
                if input.templated() || templated_args {
                    out.join(&Vals::unknown());
                }
                out.plain = input.plain;
                out.other = input.other;
                out
            }
        };
        if out.is_empty() {
            out.other = true;
        }
        out
    }

    /// The `join` filter, its separator the first of the positional arguments `pos`: a string
    /// is joined as the list of its characters.
    fn join_filter(&mut self, input: &Vals, args: &[Arg], pos: &[&Arg], depth: usize) -> Vals {
        let mut out = Vals::default();
        let sep = pos
            .first()
            .map(|a| a.v.text())
            .unwrap_or_else(|| Vals::str(""));
        if pos.len() > 1 || kwarg(args, "attribute").is_some() {
            return Vals::unknown();
        }
        for l in &input.lists {
            let mut acc = Vals::str("");
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    acc = values::concat(&acc, &sep);
                }
                acc = values::concat(&acc, &item.text());
            }
            out.join(&acc);
        }
        for s in &input.strs {
            let chars: Vec<Vals> = s.chars().map(|c| Vals::str(&c.to_string())).collect();
            out.join(&self.apply_filter("join", &Vals::list(chars), args, depth + 1));
        }
        if !input.partial.is_empty() || !input.maps.is_empty() || input.bag.is_some() {
            out.join(&Vals::unknown());
        }
        if input.plain {
            if sep.templated() {
                out.join(&Vals::unknown());
            } else {
                out.plain = true;
            }
        }
        out
    }

    /// The `map` filter: a filter named in the template applied to each element, followed
    /// [`MAX_FILTER_DEPTH`] deep.
    fn map_filter(&mut self, input: &Vals, args: &[Arg], depth: usize) -> Vals {
        let mut out = Vals::default();
        let p = positional(args);
        match p.first() {
            Some(f)
                if depth < MAX_FILTER_DEPTH
                    && f.v.partial.is_empty()
                    && !f.v.plain
                    && !f.v.strs.is_empty() =>
            {
                let rest: Vec<Arg> = args
                    .iter()
                    .filter(|a| !std::ptr::eq(*a, *f))
                    .cloned()
                    .collect();
                for fname in f.v.strs.clone() {
                    for l in &input.lists {
                        let items = l
                            .iter()
                            .map(|i| self.apply_filter(&fname, i, &rest, depth + 1))
                            .collect();
                        out.join(&Vals::list(items));
                    }
                    let mut rest_in = input.clone();
                    rest_in.lists.clear();
                    if rest_in.templated() {
                        let el = rest_in.elements();
                        let mapped = self.apply_filter(&fname, &el, &rest, depth + 1);
                        out.add_bag(mapped);
                    }
                }
                out.plain = input.plain;
            }
            _ => {
                if input.templated() {
                    out.add_bag(Vals::unknown());
                }
                out.plain = input.plain;
            }
        }
        out
    }

    /// The `attr` filter: the attribute it names looked up (and judged).
    fn attr_filter(&mut self, input: &Vals, args: &[Arg], pos: &[&Arg]) -> Vals {
        let mut out = Vals::default();
        let n = pos
            .first()
            .map(|a| &a.v)
            .or_else(|| kwarg(args, "name").map(|a| &a.v))
            .cloned()
            .unwrap_or_default();
        let at = pos.first().map_or(0, |a| a.at);
        self.format_by_name(at, input, &n);
        for s in &n.strs {
            out.join(&self.getattr(input, s));
        }
        if !n.partial.is_empty() || n.plain {
            out.join(&Vals::unknown());
        }
        out.plain |= input.plain;
        out
    }

    /// A call: a macro (its parameters bound to the arguments), `caller(...)`, jinja2's
    /// globals, a method.
    pub(super) fn call(&mut self, c: &ast::Call<'_>, depth: usize) -> Vals {
        let d = depth + 1;
        match &c.expr {
            Expr::Var(v) => {
                let args = self.args(&c.args, d);
                self.call_var(v.id, &args)
            }
            Expr::GetAttr(a) => {
                let at = (a.span().end_offset as usize).saturating_sub(a.name.len());
                self.lookup(at, a.name, "an attribute lookup of");
                let base = self.expr(&a.expr, d);
                let args = self.args(&c.args, d);
                if matches!(a.name, "format" | "format_map") {
                    self.judge_format(start(&a.expr), &base, a.name);
                }
                self.mutate(&a.expr, a.name, &args);
                self.method(&base, a.name, &args)
            }
            other => {
                self.expr(other, d);
                self.args(&c.args, d);
                Vals::unknown()
            }
        }
    }

    /// `l.append(x)`, `d.update(...)`...: a plain `Environment` lets a template mutate its
    /// own lists and dicts (the immutable sandbox refuses, `modifies_known_mutable`), so
    /// what is put in joins the variable (as items of unknown position).
    fn mutate(&mut self, target: &Expr<'_>, method: &str, args: &[Arg]) {
        let pos = positional(args);
        let added = match method {
            "append" | "add" => pos.first().map(|a| a.v.clone()),
            "insert" | "setdefault" => pos.get(1).map(|a| a.v.clone()),
            "extend" => pos.first().map(|a| a.v.elements()),
            "update" => {
                let mut all = Vals::default();
                for a in args {
                    all.join(&a.v);
                    for m in &a.v.maps {
                        for (k, x) in m {
                            all.join(k);
                            all.join(x);
                        }
                    }
                }
                Some(all)
            }
            _ => None,
        };
        let Some(added) = added else {
            return;
        };
        let mut v = Vals::default();
        v.add_bag(added);
        match target {
            Expr::Var(x) => self.bind(x.id, &v),
            Expr::GetAttr(a) => self.bind_attr(a.name, &v),
            _ => {}
        }
    }

    fn call_var(&mut self, id: &str, args: &[Arg]) -> Vals {
        if let Some(params) = self.macros.get(id).cloned() {
            let mut extra = Vec::new();
            let mut i = 0;
            for a in args {
                match (&a.kw, a.splat) {
                    (None, 0) => {
                        match params.get(i) {
                            Some(p) => self.bind(p, &a.v),
                            None => extra.push(a.v.clone()),
                        }
                        i += 1;
                    }
                    (Some(k), _) => {
                        if params.iter().any(|p| p == k) {
                            self.bind(k, &a.v);
                        } else {
                            let kw = Vals::map(vec![(Vals::str(k), a.v.clone())]);
                            self.bind("kwargs", &kw);
                        }
                    }
                    _ => {
                        // `*x`/`**x`: every parameter can be any of its items.
                        let items = a.v.elements().union(&Vals::unknown());
                        for p in &params {
                            self.bind(p, &items);
                        }
                    }
                }
            }
            if !extra.is_empty() {
                self.bind("varargs", &Vals::list(extra));
            }
            return self
                .macro_text
                .get(id)
                .cloned()
                .unwrap_or_else(Vals::unknown);
        }
        match id {
            "caller" => {
                for (i, a) in args.iter().enumerate() {
                    let v = if a.splat == 0 && a.kw.is_none() {
                        a.v.clone()
                    } else {
                        Vals::unknown()
                    };
                    self.bind_caller(i, &v);
                }
                Vals::unknown()
            }
            "namespace" | "dict" => {
                let mut pairs = Vec::new();
                let mut out = Vals::other();
                for a in args {
                    match &a.kw {
                        Some(k) => pairs.push((Vals::str(k), a.v.clone())),
                        None => {
                            for m in &a.v.maps {
                                out.join(&Vals::map(m.clone()));
                            }
                            if a.v.plain
                                || !a.v.partial.is_empty()
                                || a.v.bag.is_some()
                                || !a.v.lists.is_empty()
                            {
                                // A dict the walk cannot follow: any key, any value.
                                out.join(&Vals::map(vec![(
                                    Vals::unknown(),
                                    a.v.elements().union(&Vals::unknown()),
                                )]));
                            }
                        }
                    }
                }
                out.join(&Vals::map(pairs));
                out
            }
            "cycler" => {
                let mut items = Vals::default();
                for a in args {
                    items.join(&a.v);
                }
                let mut out = Vals::other();
                out.add_bag(items);
                out
            }
            "range" => Vals::plain(),
            "lipsum" | "joiner" => Vals::other(),
            _ if self.env.contains_key(id) => Vals::unknown(),
            // A function the caller passes (`raise_exception`, `strftime_now`).
            _ => Vals::plain(),
        }
    }

    /// `s|attr(name)` or `s[name]` where `name` can be `format`: the bound `str.format`
    /// without the `.format` syntax (CVE-2025-27516: jinja2 before 3.1.6 handed it out
    /// unwrapped from `|attr`, and its fields reached any attribute even in the sandbox).
    pub(super) fn format_by_name(&mut self, at: usize, base: &Vals, name: &Vals) {
        // Only on the template's own strings: a caller's dict has a `format` key.
        if base.strs.is_empty() && base.partial.is_empty() {
            return;
        }
        let base = &Vals {
            plain: false,
            ..base.clone()
        };
        for m in ["format", "format_map"] {
            if name.strs.contains(m) {
                self.judge_format(at, base, m);
            }
        }
        if !name.partial.is_empty() {
            self.judge_format(at, base, "format");
        }
    }

    /// `s.format(...)`/`s.format_map(...)`: Python's `str.format` looks up the attributes its
    /// fields name (jinja2's sandbox runs it through `SandboxedFormatter`, a plain
    /// `Environment` does not).
    fn judge_format(&mut self, at: usize, base: &Vals, method: &str) {
        for fmt in base.strs.clone() {
            for field in format_attributes(&fmt) {
                self.lookup(at, &field, "a `str.format` field that looks up");
            }
        }
        if !base.partial.is_empty() || base.plain || base.bag.is_some() {
            self.flag(
                at,
                Severity::Lead,
                format!("`.{method}(...)` on a string not written in the template: Python's `str.format` looks up the attributes its fields name (`{{0.__class__}}`), and socair cannot tell which"),
            );
        }
    }

    /// What `base.name(args)` returns.
    fn method(&mut self, base: &Vals, name: &str, args: &[Arg]) -> Vals {
        let pos = positional(args);
        let templated_args = args.iter().any(|a| a.v.templated());
        let mut out = Vals::default();
        // Strings written in the template.
        if !base.strs.is_empty() || !base.partial.is_empty() {
            match str_method(name, &str_part(base), args) {
                Some(v) => out.join(&v),
                None => out.other = true,
            }
        }
        // Dicts and lists written in the template, cyclers.
        if !base.maps.is_empty() || !base.lists.is_empty() || base.bag.is_some() {
            container_method(base, name, &pos, &mut out);
        }
        // `loop.cycle(...)` returns one of its arguments.
        if name == "cycle" {
            for a in args {
                out.join(&a.v);
            }
        }
        if base.plain {
            match name {
                "get" | "pop" | "setdefault" => {
                    out.plain = true;
                    if let Some(dflt) = pos.get(1) {
                        out.join(&dflt.v);
                    }
                }
                "replace" | "format" | "format_map" | "join" | "center" | "ljust" | "rjust"
                | "zfill" | "removeprefix" | "removesuffix" | "strip" | "lstrip" | "rstrip"
                    if templated_args =>
                {
                    out.join(&Vals::unknown());
                }
                _ => out.plain = true,
            }
        }
        if base.other && name != "cycle" {
            out.join(&Vals::unknown());
        }
        if !base.ints.is_empty() {
            out.other = true;
        }
        if out.is_empty() {
            out.other = true;
        }
        out
    }
}

fn str_part(v: &Vals) -> Vals {
    Vals {
        strs: v.strs.clone(),
        partial: v.partial.clone(),
        ..Vals::default()
    }
}
