//! What a name reaches when a template looks it up: the attribute lists mirrored from
//! jinja2 3.1.6's sandbox and runtime, the filters that look attributes up by an argument,
//! and the fields of a `str.format` string.

use super::types::Severity;

/// What an unsandboxed renderer does with a FAIL's lookup, said once.
pub(super) const REACHES: &str = "a plain jinja2 `Environment` reaches Python's internals through it, as llama-cpp-python's did before 0.2.72 (CVE-2024-34359); jinja2's sandbox refuses it";

/// Private attributes of the objects jinja2 3.1.6 hands a template (`jinja2/runtime.py`
/// `Macro`, `LoopContext`, `BlockReference`, `Context`, `Undefined`; `jinja2/utils.py`
/// `Cycler`, `Joiner`, `Namespace`, `LRUCache`): every `self._name` they assign.
/// `_environment` and `_context` lead to the `Environment` (`compile`, `from_string`,
/// `globals`), `_func` and `_recurse` to Python functions.
pub(super) const JINJA_PRIVATE: &[&str] = &[
    "_after",
    "_append",
    "_argument_count",
    "_before",
    "_context",
    "_current",
    "_default_autoescape",
    "_depth",
    "_environment",
    "_func",
    "_iterable",
    "_iterator",
    "_last_changed_value",
    "_length",
    "_module",
    "_pop",
    "_popleft",
    "_recurse",
    "_remove",
    "_stack",
    "_undefined",
    "_undefined_exception",
    "_undefined_hint",
    "_undefined_name",
    "_undefined_obj",
    "_wlock",
];

/// Attributes without an underscore that reach internals: `mro` (refused on types by
/// `is_internal_attribute`), the sandbox's `UNSAFE_GENERATOR_ATTRIBUTES`,
/// `UNSAFE_COROUTINE_ATTRIBUTES` and `UNSAFE_ASYNC_GENERATOR_ATTRIBUTES` and their awaited
/// and delegated objects, the attributes of frames, code objects and tracebacks (all refused
/// by `is_internal_attribute`), and Python 2's function and method internals.
pub(super) const INTERNAL: &[&str] = &[
    "mro",
    "gi_frame",
    "gi_code",
    "gi_yieldfrom",
    "cr_frame",
    "cr_code",
    "cr_await",
    "cr_origin",
    "ag_frame",
    "ag_code",
    "ag_await",
    "f_back",
    "f_builtins",
    "f_code",
    "f_globals",
    "f_locals",
    "f_trace",
    "tb_frame",
    "tb_next",
    "co_code",
    "co_consts",
    "co_names",
    "func_globals",
    "func_code",
    "func_closure",
    "im_func",
    "im_self",
    "im_class",
];

/// How a filter's name argument is split before each part is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Split {
    /// `do_attr`: the whole string is one `getattr` (a dot is part of the name).
    Whole,
    /// `make_attrgetter` via `_prepare_attribute_parts`: split on `.`, digit parts are
    /// integer keys, each part an `environment.getitem` (which falls back to `getattr`).
    Dotted,
    /// `make_multi_attrgetter` (`do_sort`): split on `,`, then as [`Split::Dotted`].
    Multi,
}

/// The filters of jinja2 3.1.6 (`filters.py`) that take an attribute name: the filter, the
/// positional index of that argument (after the value), its keyword and how it is split.
/// `do_attr(obj, name)`; `do_sort(reverse, case_sensitive, attribute)`;
/// `sync_do_groupby(attribute, default, case_sensitive)`; `sync_do_sum(attribute, start)`;
/// `sync_do_unique(case_sensitive, attribute)`; `do_min`/`do_max(case_sensitive,
/// attribute)`; `sync_do_join(d, attribute)`; `sync_do_selectattr`/`rejectattr(attr, test,
/// *args)` through `prepare_select_or_reject`. `map` is apart: `prepare_map` reads
/// `attribute=` only when no positional argument is given, and otherwise calls the filter
/// its first argument names (`environment.call_filter`) with the rest.
pub(super) const ATTRIBUTE_ARGS: &[(&str, usize, &str, Split)] = &[
    ("attr", 0, "name", Split::Whole),
    ("selectattr", 0, "", Split::Dotted),
    ("rejectattr", 0, "", Split::Dotted),
    ("sort", 2, "attribute", Split::Multi),
    ("groupby", 0, "attribute", Split::Dotted),
    ("sum", 0, "attribute", Split::Dotted),
    ("unique", 1, "attribute", Split::Dotted),
    ("min", 1, "attribute", Split::Dotted),
    ("max", 1, "attribute", Split::Dotted),
    ("join", 1, "attribute", Split::Dotted),
];

/// Filters that name a test by a positional argument (`prepare_select_or_reject`: `name =
/// args[off]`, then `environment.call_test(name, ...)`): the index of that argument.
pub(super) const TEST_ARGS: &[(&str, usize)] = &[
    ("select", 0),
    ("reject", 0),
    ("selectattr", 1),
    ("rejectattr", 1),
];

/// Whether `name` is a filter that takes a name argument (so `map(name, ...)` passes it
/// names).
pub(super) fn takes_names(name: &str) -> bool {
    name == "map"
        || ATTRIBUTE_ARGS.iter().any(|(f, ..)| *f == name)
        || TEST_ARGS.iter().any(|(f, _)| *f == name)
}

/// The parts `split` makes of `path`, as jinja2 looks them up: digit parts are integers
/// and name nothing.
pub(super) fn parts(path: &str, split: Split) -> Vec<&str> {
    let pieces: Vec<&str> = match split {
        Split::Whole => vec![path],
        Split::Dotted => path.split('.').collect(),
        Split::Multi => path.split(',').flat_map(|p| p.split('.')).collect(),
    };
    pieces
        .into_iter()
        .filter(|p| split == Split::Whole || p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
        .collect()
}

/// What a name read as an attribute reaches.
pub(super) fn name_verdict(name: &str) -> Option<(Severity, String)> {
    let mangled = name.strip_prefix('_').is_some_and(|rest| {
        rest.split_once("__").is_some_and(|(class, attr)| {
            !class.is_empty()
                && class.chars().all(|c| c.is_ascii_alphanumeric())
                && !attr.is_empty()
        })
    });
    if name.starts_with("__") && name.len() > 2 {
        Some((
            Severity::Fail,
            format!("`{name}`, a Python dunder attribute: {REACHES}"),
        ))
    } else if mangled {
        Some((
            Severity::Fail,
            format!("`{name}`, a name-mangled private attribute (as `self._TemplateReference__context`, which holds the render context): {REACHES}"),
        ))
    } else if JINJA_PRIVATE.contains(&name) {
        Some((
            Severity::Fail,
            format!("`{name}`, a private attribute of jinja2's runtime objects (macros, loops, cyclers, joiners, namespaces), which leads to its Environment or to Python functions: {REACHES}"),
        ))
    } else if INTERNAL.contains(&name) {
        Some((
            Severity::Fail,
            format!("`{name}`, an attribute of Python's types, frames, code or generators (refused by jinja2's `is_internal_attribute`): {REACHES}"),
        ))
    } else if name.starts_with('_') {
        Some((
            Severity::Lead,
            format!("`{name}`, an attribute starting with `_`: jinja2's sandbox refuses it on an object that has it, and on a dict it reads a key; socair cannot tell which this template meets"),
        ))
    } else {
        None
    }
}

/// The attribute names in a `str.format` string's replacement fields: every name after a
/// `.` inside braces (`{0.__class__}`, `{x[0].y}`, and fields nested in a format spec; a
/// spec's own `.2f` yields `2f`, which names nothing).
pub(super) fn format_attributes(fmt: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut chars = fmt.chars().peekable();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        if depth == 0 {
            if c == '{' {
                if chars.peek() == Some(&'{') {
                    chars.next();
                } else {
                    depth = 1;
                }
            }
            continue;
        }
        if let Some(name) = current.as_mut() {
            if c.is_alphanumeric() || c == '_' {
                name.push(c);
                continue;
            }
            out.extend(current.take());
        }
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '.' => current = Some(String::new()),
            _ => {}
        }
    }
    out.extend(current);
    out
}
