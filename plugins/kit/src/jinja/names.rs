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

/// Filters that look an attribute up by a name given as an argument, with the positions of
/// that argument (jinja2 3.1.6 `filters.py`: `do_attr(obj, name)`, `make_attrgetter` for
/// `attribute=`). `map`, `select`... also pass their other arguments to a filter they name.
pub(super) const ATTRIBUTE_FILTERS: &[(&str, &[usize])] = &[
    ("attr", &[0]),
    ("map", &[]),
    ("selectattr", &[0]),
    ("rejectattr", &[0]),
    ("sort", &[2]),
    ("groupby", &[0]),
    ("sum", &[0]),
    ("unique", &[1]),
    ("min", &[1]),
    ("max", &[1]),
    ("join", &[1]),
];

/// Filters whose result is a number or a boolean: a key computed by them names no attribute.
pub(super) const NUMERIC_FILTERS: &[&str] =
    &["length", "count", "int", "float", "abs", "round", "sum"];

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
