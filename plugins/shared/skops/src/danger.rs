//! What in a skops schema runs code or does I/O, whether or not skops trusts it: every type,
//! function and method the schema names, judged by the pickle machine's tables
//! ([`socair_pickle::globals::classify`]), and the shapes of skops's known vulnerabilities, which
//! older skops releases load although 0.16 refuses them.
//!
//! The walk goes over every object of the schema, not only the nodes skops 0.16 would build:
//! a name that 0.16 never reaches (past an error, under a key it ignores, behind a repeated
//! `__id__`) may be reached by another release or another reader of the same file, and a
//! schema that names `os.system` anywhere is not a model.
//!
//! The vulnerability shapes, each a FAIL naming its advisory:
//!
//! * **CVE-2025-54412** (GHSA-m7f4-hrc6-fwg3, fixed in skops 0.12 by PR #482): an
//!   `OperatorFuncNode` whose `__module__` is not `operator`. skops 0.11 and older audited the
//!   claimed `module.class` but constructed `getattr(operator, class)(*attrs)`, so a file could
//!   show a harmless type for review and run `operator.call(f, *args)` when loaded. Also any
//!   `OperatorFuncNode` naming an `operator` function other than the three skops writes
//!   (`attrgetter`, `itemgetter`, `methodcaller`: `_general.py` `GET_STATE_DISPATCH_FUNCTIONS`):
//!   constructing it calls it (`op(*attrs)`), which for `operator.call` runs its arguments.
//! * **CVE-2025-54413** (fixed in skops 0.12 by PR #482, which hardened both nodes): a
//!   `MethodNode` whose method reaches past an ordinary method: skops 0.11 and older audited
//!   the claimed `module.class`, never the method `getattr(obj, func)` it then returned, so a
//!   dunder (`__getattribute__`, `__globals__`, `__subclasses__`, …), a dotted name, or a
//!   method the tables call dangerous (`numpy.ndarray.tofile` writes files) reached code. (A
//!   `MethodNode` whose type differs from its object's is refused by 0.16's check; skops
//!   itself writes one for an inherited method, so that alone is a LEAD, [`super::nodes`].)
//! * **CVE-2025-54886** (fixed in skops 0.13 by PR #485, `Card(allow_pickle=…)`) is not in a
//!   schema: `Card.get_model` loaded a file that is not a zip with joblib, that is pickle. A
//!   `.skops` file that is a pickle is read by socair's pickle readers, never by this module.
//! * skops PR #506 (in 0.14): a `LossNode` naming a module outside scikit-learn. skops 0.13 and
//!   older imported the state's `__module__` while building the tree, before the audit
//!   (`gettype(state["__module__"], state["__class__"])` in `LossNode.__init__`), and an import
//!   runs the module's code.
//! * A `RandomGeneratorNode` whose bit generator is not one of NumPy's (`MT19937`, `PCG64`,
//!   `PCG64DXSM`, `Philox`, `SFC64`): skops 0.14 and older resolve `numpy.random.<name>` from
//!   that string and call it, unaudited (the gap skops 0.16 `_numpy.py`
//!   `RandomGeneratorNode.__init__` describes and closes).
//! * A protocol-0 `FunctionNode` (`old/_general_v0.py`) imports `content["module_path"]` and
//!   `content["function"]`, not its `__module__` and `__class__`: those names are judged too.

use super::json::{Json, Renamed};
use super::nodes::bit_generator_name;
use super::trusted::Section;
use socair_pickle::globals::{classify, Class};
use std::collections::HashSet;

/// Findings listed at most; past them, counted.
pub const MAX_FINDINGS: usize = 64;

/// Distinct values of a repeated `__module__` or `__class__` judged, each.
const MAX_RENAMES: usize = 16;

/// The findings: `(place, reason)`, one per name, and how many more there were.
#[derive(Debug, Default)]
pub struct Danger {
    pub found: Vec<(String, String)>,
    pub more: u64,
    seen: HashSet<String>,
}

impl Danger {
    /// Adds `other`'s findings (a scan of another value) after this one's.
    pub fn extend(&mut self, other: Danger) {
        for (place, reason) in other.found {
            let key = format!("{place}\u{0}{reason}");
            self.add(|| place, key, || reason);
        }
        self.more += other.more;
    }

    /// The types an object repeating `__module__` or `__class__` names to one reader or
    /// another (Python keeps the last value of a key; other readers the first).
    pub fn renamed(&mut self, names: &Renamed) {
        let dedup = |v: &[String]| {
            let mut out: Vec<String> = Vec::new();
            for s in v {
                if !out.contains(s) && out.len() < MAX_RENAMES {
                    out.push(s.clone());
                }
            }
            out
        };
        for m in dedup(&names.modules) {
            for c in dedup(&names.classes) {
                if let Some(why) = dangerous(&m, &c) {
                    self.add(
                        || "(an object that repeats __module__ or __class__)".to_owned(),
                        format!("{m}.{c}"),
                        || format!("a skops schema names {m}.{c} through a repeated key (Python's json reads the last value, other readers the first): {why}: a reader that builds it runs it"),
                    );
                }
            }
        }
    }

    fn add(
        &mut self,
        place: impl FnOnce() -> String,
        key: String,
        reason: impl FnOnce() -> String,
    ) {
        if !self.seen.insert(key) {
            return;
        }
        if self.found.len() >= MAX_FINDINGS {
            self.more += 1;
            return;
        }
        self.found.push((place(), reason()));
    }
}

/// What the tables say of `module.name`, when it runs code or does I/O.
fn dangerous(module: &str, name: &str) -> Option<&'static str> {
    match classify(module, name) {
        Class::Dangerous(why) | Class::Constructs(why, _) => Some(why),
        _ => None,
    }
}

/// A step of the walk's current place.
#[derive(Clone, Copy)]
enum Step<'j> {
    Key(&'j str),
    Index(usize),
}

fn place_of(prefix: &str, steps: &[Step<'_>]) -> String {
    let mut out = prefix.to_owned();
    for s in steps {
        match s {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Walks every object of `doc`, depth first, without recursion; places start with `prefix`.
pub fn scan(doc: &Json, prefix: &str) -> Danger {
    let mut danger = Danger::default();
    // (container, next child) frames, and the steps to the current one.
    let mut frames: Vec<(&Json, usize)> = vec![(doc, 0)];
    let mut steps: Vec<Step<'_>> = Vec::new();
    check(doc, prefix, &steps, &mut danger);
    while let Some((container, next)) = frames.last_mut() {
        let child = match container {
            Json::Array(items) => items.get(*next).map(|v| (Step::Index(*next), v)),
            Json::Object(pairs) => pairs.get(*next).map(|(k, v)| (Step::Key(k.as_str()), v)),
            _ => None,
        };
        *next += 1;
        match child {
            Some((step, value @ (Json::Array(_) | Json::Object(_)))) => {
                steps.push(step);
                check(value, prefix, &steps, &mut danger);
                frames.push((value, 0));
            }
            Some(_) => {}
            None => {
                frames.pop();
                steps.pop();
            }
        }
    }
    danger
}

/// The checks of one object.
fn check(value: &Json, prefix: &str, steps: &[Step<'_>], danger: &mut Danger) {
    let Json::Object(_) = value else {
        return;
    };
    let text = |k: &str| value.get(k).and_then(Json::as_str);
    let (module, class) = (text("__module__"), text("__class__"));
    // What skops writes for a partial: skops 0.16 `_general.py` `PartialNode._construct` builds
    // `functools.partial(func, *args, **kwds)` itself ("always use partial, not a subclass"),
    // whatever the names say, and what it binds is a node of its own, judged by its own names.
    // The tables call `functools.partial` dangerous for what a pickle may bind to it.
    let skops_partial = text("__loader__") == Some("PartialNode")
        && module == Some("functools")
        && class == Some("partial");
    if let (Some(m), Some(c), false) = (module, class, skops_partial) {
        if let Some(why) = dangerous(m, c) {
            danger.add(|| place_of(prefix, steps), format!("{m}.{c}"), || {
                format!("a skops schema names {m}.{c}: {why}: skops.io.load builds it, and an estimator holding it runs it")
            });
        }
    }
    let content = value.get("content");
    match text("__loader__") {
        Some("OperatorFuncNode") => operator_func(value, prefix, steps, danger),
        Some("MethodNode") => method(value, prefix, steps, danger),
        Some("LossNode") => {
            if let (Some(m), Some(c)) = (module, class) {
                let name = format!("{m}.{c}");
                if !m.starts_with("sklearn.") && !Section::AllowedLosses.contains(&name) {
                    danger.add(|| place_of(prefix, steps), format!("LossNode {name}"), || {
                        format!("a skops LossNode names {name}, no scikit-learn loss: skops 0.13 and older import {m} while building the tree, before any audit (fixed by skops PR #506), and importing a module runs its code")
                    });
                }
            }
        }
        Some("RandomGeneratorNode") => {
            let raw = content.and_then(|c| c.get("bit_generator"));
            // Protocols 1 and 2 keep the name as a JsonNode's content; protocol 0 as a plain
            // string of the raw state.
            let name = raw.and_then(bit_generator_name).or_else(|| {
                raw.and_then(|r| r.get("bit_generator"))
                    .and_then(Json::as_str)
                    .map(str::to_owned)
            });
            if let Some(name) = name {
                let full = format!("numpy.random.{name}");
                if !Section::NumpyRandomBitGeneratorTypeNames.contains(&full) {
                    let why = dangerous("numpy.random", &name).unwrap_or(
                        "no NumPy bit generator, yet called when the Generator is rebuilt",
                    );
                    danger.add(|| place_of(prefix, steps), format!("bit generator {full}"), || {
                        format!("a skops RandomGeneratorNode names {full} as its bit generator: {why}: skops 0.14 and older resolve that name in numpy.random and call it without auditing it (skops 0.16 `_numpy.py` RandomGeneratorNode audits it and refuses to call anything but a bit generator)")
                    });
                }
            }
        }
        Some("FunctionNode") => {
            let names = content.map(|c| {
                (
                    c.get("module_path").and_then(Json::as_str),
                    c.get("function").and_then(Json::as_str),
                )
            });
            if let Some((Some(m), Some(f))) = names {
                if let Some(why) = dangerous(m, f) {
                    danger.add(|| place_of(prefix, steps), format!("{m}.{f}"), || {
                        format!("a skops FunctionNode's content names {m}.{f}: {why}: under protocol 0 skops.io.load imports the function its content names (skops 0.16 `old/_general_v0.py`), and an estimator holding it runs it")
                    });
                }
            }
        }
        _ => {}
    }
}

/// The operator functions skops writes (`_general.py` `GET_STATE_DISPATCH_FUNCTIONS`).
const OPERATOR_FUNCS: [&str; 3] = ["attrgetter", "itemgetter", "methodcaller"];

/// CVE-2025-54412's shapes (see the module's comment).
fn operator_func(value: &Json, prefix: &str, steps: &[Step<'_>], danger: &mut Danger) {
    let module = value.get("__module__");
    let class = value.get("__class__").and_then(Json::as_str);
    let shown = |v: Option<&Json>| v.map_or("(none)".to_owned(), super::pyvalue::py_str);
    if module.and_then(Json::as_str) != Some("operator") {
        let claimed = format!("{}.{}", shown(module), shown(value.get("__class__")));
        danger.add(|| place_of(prefix, steps), format!("OperatorFuncNode {claimed}"), || {
            format!("a skops OperatorFuncNode claims the type {claimed} but is built as operator.{} (the CVE-2025-54412 pattern: skops 0.11 and older audit the claimed type and construct getattr(operator, class)(*attrs); skops 0.16 refuses a module other than operator)", shown(value.get("__class__")))
        });
    }
    if let Some(c) = class {
        if !OPERATOR_FUNCS.contains(&c) {
            danger.add(|| place_of(prefix, steps), format!("operator.{c} (constructed)"), || {
                format!("a skops OperatorFuncNode builds operator.{c}(*attrs) when the file loads, an operator function skops never writes (it writes attrgetter, itemgetter, methodcaller): the CVE-2025-54412 pattern (operator.call calls its first argument)")
            });
        }
    }
}

/// CVE-2025-54413's shapes (see the module's comment).
fn method(value: &Json, prefix: &str, steps: &[Step<'_>], danger: &mut Danger) {
    let content = value.get("content");
    let Some(func) = content.and_then(|c| c.get("func")).and_then(Json::as_str) else {
        return;
    };
    fn text<'j>(v: Option<&'j Json>, k: &str) -> Option<&'j str> {
        v.and_then(|v| v.get(k)).and_then(Json::as_str)
    }
    let obj = content.and_then(|c| c.get("obj"));
    let mut owners = Vec::new();
    if let (Some(m), Some(c)) = (text(obj, "__module__"), text(obj, "__class__")) {
        owners.push((m, c));
    }
    if let (Some(m), Some(c)) = (
        text(Some(value), "__module__"),
        text(Some(value), "__class__"),
    ) {
        owners.push((m, c));
    }
    let plain = ordinary_method_name(func);
    for (m, c) in owners {
        let path = format!("{m}.{c}.{func}");
        let why = if !plain {
            Some("not an ordinary method name: it reaches the object's internals")
        } else {
            dangerous(m, &format!("{c}.{func}"))
        };
        if let Some(why) = why {
            danger.add(|| place_of(prefix, steps), format!("method {path}"), || {
                format!("a skops MethodNode returns the method {path}: {why} (the CVE-2025-54413 pattern: skops 0.11 and older return getattr(obj, func) without auditing the method)")
            });
        }
    }
}

/// A name `getattr` reaches an ordinary method by: an identifier, not a dunder.
fn ordinary_method_name(func: &str) -> bool {
    let dunder = func.len() > 4 && func.starts_with("__") && func.ends_with("__");
    let identifier = func.chars().all(|ch| ch == '_' || ch.is_alphanumeric())
        && func.chars().next().is_some_and(|ch| !ch.is_ascii_digit());
    identifier && !dunder
}
