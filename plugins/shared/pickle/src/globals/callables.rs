//! The callables that run code or do I/O, found by analysis rather than listed by hand:
//! `dangerous_callables.tsv` beside this file, written by `scripts/dangerous-callables/`
//! (`analyse.py` over the Python sources of the standard library and of the libraries its
//! `requirements.txt` pins; the table's header names every one and its version). Each row is
//! a callable a pickle can name (a function, a class whose construction or unpickling reaches
//! a sink, a method), a sink by name (a C function), an alias, an instance, a class's bases,
//! or a module listed whole; `GRAMMAR.md` ("Dangerous (FAIL)") says how far the analysis
//! follows calls and what it cannot see.
//!
//! The table is static: carried deflated (0.5 MB) and inflated once, on the first lookup,
//! sorted by bytes (a test checks it) and looked up by binary search over its lines where
//! they lie (nothing is parsed ahead or copied), each path's component
//! prefixes in turn, following aliases, instances and bases at most
//! [`MAX_STEPS`] times. The reason a row gives is built once per row and kept for the life of
//! the process (at most one per row).

use super::known::Via;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// The table as the plugins carry it: `dangerous_callables.tsv.deflate`, the table's length
/// (8 bytes, little-endian) then the table as one raw deflate stream
/// (`scripts/dangerous-callables/compress.py`). Each plugin that links the pickle machine grows
/// by this, about 0.5 MB, not by the 5.7 MB table, which the host would hash at every load.
const DEFLATED: &[u8] = include_bytes!("dangerous_callables.tsv.deflate");

/// Most bytes the table may inflate to (the committed one is 5.7 MB).
const MAX_TABLE: u64 = 32 << 20;

/// The table as the analysis wrote it, inflated once, on the first lookup (a scan whose
/// globals are all the grammar's never inflates it). A stream that does not inflate to its
/// declared length of UTF-8 is an empty table: a test checks that it inflates to exactly the
/// committed `.tsv`.
static TABLE: LazyLock<String> = LazyLock::new(|| inflate_table(DEFLATED).unwrap_or_default());

fn inflate_table(packed: &[u8]) -> Option<String> {
    let (len, stream) = packed.split_first_chunk::<8>()?;
    let len = u64::from_le_bytes(*len);
    if len > MAX_TABLE {
        return None;
    }
    let mut out = Vec::with_capacity(usize::try_from(len).ok()?);
    socair_plugin_kit::zip::inflate::inflate_each(stream, 0, stream.len() as u64, len, |piece| {
        out.extend_from_slice(piece);
        true
    })
    .ok()?;
    String::from_utf8(out).ok()
}

/// The table's text.
pub fn table() -> &'static str {
    TABLE.as_str()
}

/// Most rewrites (an alias to its target, an instance or a class to its class or bases) one
/// lookup follows.
pub const MAX_STEPS: usize = 16;

/// Most callables of a witness chain a reason shows.
pub const MAX_CHAIN: usize = 6;

/// One row: a path and what the analysis says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Dotted path: `sympy.core.sympify.sympify`.
    pub path: &'static str,
    /// What reaching it does (`code`, `file`, …), or the row's kind: `=` an alias, `~` an
    /// instance (or a module whose class is replaced), `<` a class's bases, `module` a module
    /// listed whole.
    pub kind: &'static str,
    /// The sink reached, or the alias's, instance's or bases' target(s), or why a module is
    /// listed whole.
    pub target: &'static str,
    /// The next callable of the witness chain (`-` when the path reaches the sink itself).
    pub next: &'static str,
}

/// What each kind of flagged row does, as a reason says it.
pub const WHAT: &[(&str, &str)] = &[
    ("code", "runs code"),
    ("import", "imports a module by name"),
    ("command", "runs commands"),
    ("signal", "signals other processes"),
    ("network", "opens network connections"),
    ("native", "loads or calls native code"),
    ("unpickle", "loads a nested pickle or code object"),
    ("file", "reads or writes files"),
    ("debugger", "starts a debugger"),
];

static REASONS: LazyLock<Mutex<HashMap<&'static str, &'static str>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn parse_line(line: &'static str) -> Option<Row> {
    let mut f = line.split('\t');
    Some(Row {
        path: f.next()?,
        kind: f.next()?,
        target: f.next()?,
        next: f.next()?,
    })
}

/// The rows, after the header: sorted lines, searched where they lie (nothing is parsed ahead
/// or copied).
fn body() -> &'static str {
    let mut at = 0;
    for line in table().split_inclusive('\n') {
        if !line.starts_with('#') {
            break;
        }
        at += line.len();
    }
    &table()[at..]
}

/// Every row, in the table's order (for tests and listings; lookups never build this).
pub fn rows() -> Vec<Row> {
    body()
        .lines()
        .filter(|l| !l.is_empty())
        .filter_map(parse_line)
        .collect()
}

/// The header lines of the table (the sources analysed and their versions).
pub fn header() -> impl Iterator<Item = &'static str> {
    table().lines().take_while(|l| l.starts_with('#'))
}

/// The row of exactly `path`: a binary search over the sorted lines, by byte offset.
pub fn row(path: &str) -> Option<Row> {
    let body = body();
    let bytes = body.as_bytes();
    let (mut lo, mut hi) = (0usize, bytes.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let start = bytes[..mid]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        // Line boundaries are ASCII newlines, so both ends are character boundaries.
        let line = &body[start..end];
        let key = line.split('\t').next().unwrap_or("");
        match key.as_bytes().cmp(path.as_bytes()) {
            std::cmp::Ordering::Equal => return parse_line(line),
            std::cmp::Ordering::Less => lo = end + 1,
            std::cmp::Ordering::Greater => hi = start,
        }
    }
    None
}

fn is_flagged(r: &Row) -> bool {
    WHAT.iter().any(|(k, _)| *k == r.kind) || r.kind == "module"
}

/// The flagged row a global reaches, if any: `path` is `module.name`, the first `module_len`
/// bytes of it the module Python imports (0 for a path reached wholly as attributes). The
/// first component prefix of `path` that is a flagged callable, a sink or a module listed
/// whole is the hit (everything reached through a callable is reached through it), after
/// aliases, instances and bases are followed where the prefix is reached as an attribute (an
/// alias `sympy.core.sympify` is the function only past the module part: a pickle whose module
/// is `sympy.core.sympify` imports the module). A module's own `~` row (its class replaced at
/// import) applies from the module itself.
pub fn lookup(path: &str, module_len: usize) -> Option<Row> {
    let mut steps = MAX_STEPS;
    lookup_in(path, module_len, &mut steps).map(|(r, _)| r)
}

/// The members of a class that unpickling an instance may run besides its constructor:
/// BUILD calls `__setstate__` (or sets slot state with `setattr`), a dict or set key is
/// hashed and compared, and a dropped object is finalized.
const RUN_BY_UNPICKLING: &[&str] = &[
    "__setstate__",
    "__setattr__",
    "__hash__",
    "__eq__",
    "__del__",
];

/// The flagged row a global reaches ([`lookup`]) and, when it is a class flagged through its
/// constructor alone, which constructor: one walk of the table for both. A class is flagged
/// through its constructor alone when the flagged row is the class itself (not a member, not
/// a prefix the path is reached through), its witness is its own `__init__`,
/// `__post_init__` or `__new__`, and none of the members unpickling runs
/// ([`RUN_BY_UNPICKLING`]) has a flagged row of its own. (A member inherited from a flagged
/// base has none: the class's single witness is all the table keeps, so such a class is
/// judged by its witness.)
pub fn judge(path: &str, module_len: usize) -> Option<(Row, Option<Via>)> {
    let mut steps = MAX_STEPS;
    let (r, exact) = lookup_in(path, module_len, &mut steps)?;
    Some((r, constructor_only(r, exact)))
}

fn constructor_only(r: Row, exact: bool) -> Option<Via> {
    if !exact || r.kind == "module" {
        return None;
    }
    let via = match r.next.strip_prefix(r.path)? {
        ".__init__" | ".__post_init__" => Via::Init,
        ".__new__" => Via::New,
        _ => return None,
    };
    let member_runs = RUN_BY_UNPICKLING
        .iter()
        .any(|m| row(&format!("{}.{m}", r.path)).is_some_and(|m| is_flagged(&m)));
    (!member_runs).then_some(via)
}

/// A target as the table spells it: `module:qualname` (or `module:`) for what the sources
/// define, whose module part is known, or a plain dotted name.
fn target_path(target: &str, rest: &str) -> (String, usize) {
    match target.split_once(':') {
        Some((m, "")) => (format!("{m}{rest}"), m.len()),
        Some((m, q)) => (format!("{m}.{q}{rest}"), m.len()),
        None => (format!("{target}{rest}"), 0),
    }
}

/// The hit, and whether it is the whole of `path` (not a prefix it is reached through).
fn lookup_in(path: &str, module_len: usize, steps: &mut usize) -> Option<(Row, bool)> {
    if *steps == 0 {
        return None;
    }
    *steps -= 1;
    let ends = path
        .match_indices('.')
        .map(|(i, _)| i)
        .chain(std::iter::once(path.len()));
    for end in ends {
        let Some(r) = row(&path[..end]) else {
            continue;
        };
        let rest = &path[end..];
        let attribute = end > module_len;
        match r.kind {
            "=" if attribute => {
                let (p, m) = target_path(r.target, rest);
                return lookup_in(&p, m, steps);
            }
            "~" if end >= module_len && !rest.is_empty() => {
                let (p, m) = target_path(r.target, rest);
                return lookup_in(&p, m, steps);
            }
            "<" if attribute && !rest.is_empty() => {
                for base in r.target.split(' ') {
                    let (p, m) = target_path(base, rest);
                    if let Some(hit) = lookup_in(&p, m, steps) {
                        return Some(hit);
                    }
                }
            }
            _ if is_flagged(&r) => {
                // The most specific row says the most: a flagged member of a flagged class.
                let deeper = path[end..]
                    .match_indices('.')
                    .skip(1)
                    .map(|(i, _)| end + i)
                    .chain(std::iter::once(path.len()))
                    .filter(|&e| e > end)
                    .filter_map(|e| row(&path[..e]).filter(is_flagged).map(|r| (r, e)))
                    .last();
                let (hit, hit_end) = deeper.unwrap_or((r, end));
                return Some((hit, hit_end == path.len()));
            }
            _ => {}
        }
    }
    None
}

/// The witness chain of a flagged row: its path, then each next callable, to the sink.
pub fn chain(r: Row) -> Vec<&'static str> {
    let mut out = vec![r.path];
    let mut at = r;
    while at.next != "-" && out.len() < MAX_CHAIN {
        out.push(at.next);
        match row(at.next) {
            Some(n) if is_flagged(&n) => at = n,
            _ => return out,
        }
    }
    if at.next != "-" {
        out.push("…");
    }
    if at.target != at.path && at.kind != "module" {
        out.push(at.target);
    }
    out
}

/// Why a flagged row is dangerous, in words, with its witness chain: built once per row.
pub fn reason(r: Row) -> &'static str {
    let mut reasons = REASONS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = reasons.get(r.path) {
        return why;
    }
    let why = if r.kind == "module" {
        format!("{} ({}, by scripts/dangerous-callables)", r.target, r.path)
    } else {
        let what = WHAT
            .iter()
            .find(|(k, _)| *k == r.kind)
            .map_or(r.kind, |(_, w)| w);
        let sink = chain(r).last().copied().unwrap_or(r.target);
        format!(
            "{what}: reaches {sink} ({}; found by scripts/dangerous-callables' analysis)",
            chain(r).join(" -> ")
        )
    };
    let why: &'static str = Box::leak(why.into_boxed_str());
    reasons.insert(r.path, why);
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_loaded_sorted_and_whole() {
        // What the plugins carry inflates to exactly what the analysis wrote.
        assert!(
            table() == include_str!("dangerous_callables.tsv"),
            "run compress.py"
        );
        assert_eq!(inflate_table(&DEFLATED[..DEFLATED.len() - 1]), None);
        let rows = rows();
        assert!(rows.len() > 10_000, "{} rows", rows.len());
        assert_eq!(
            rows.len(),
            body().lines().count(),
            "a line that is not four tab-separated fields, or a blank line"
        );
        assert!(body().lines().all(|l| l.split('\t').count() == 4));
        for w in rows.windows(2) {
            assert!(
                w[0].path.as_bytes() < w[1].path.as_bytes(),
                "not sorted or not unique: {} then {}",
                w[0].path,
                w[1].path
            );
        }
        for r in &rows {
            assert_eq!(row(r.path), Some(*r), "binary search misses {}", r.path);
            assert!(
                is_flagged(r) || matches!(r.kind, "=" | "~" | "<"),
                "unknown kind {:?} in {}",
                r.kind,
                r.path
            );
            // Every chain can be followed to its end.
            if r.next != "-" {
                let n =
                    row(r.next).unwrap_or_else(|| panic!("{}: next {} has no row", r.path, r.next));
                assert!(is_flagged(&n), "{}: next {} is not flagged", r.path, r.next);
            }
        }
        // The header names the standard library and the pinned libraries.
        let header: Vec<_> = header().collect();
        for lib in [
            "CPython 3.11.7",
            "torch 2.15.0",
            "numpy",
            "sympy",
            "transformers",
        ] {
            assert!(header.iter().any(|l| l.contains(lib)), "header lacks {lib}");
        }
        assert!(header[0].contains("@generated"));
    }

    #[test]
    fn lookups_follow_prefixes_aliases_and_bases() {
        // A function the analysis found, directly and through a package's re-export.
        let direct = lookup("sympy.core.sympify.sympify", 18).expect("sympify");
        assert_eq!(direct.kind, "code");
        assert_eq!(lookup("sympy.sympify", 5), Some(direct));
        // sympy.core binds sympify to the function: reached as an attribute it is flagged,
        // imported as a module it is the module.
        assert_eq!(lookup("sympy.core.sympify", 10), Some(direct));
        assert_eq!(lookup("sympy.core.sympify", 18), None);
        let why = reason(direct);
        assert!(why.contains("sympify -> "), "{why}");
        assert!(why.contains("builtins."), "{why}");
        // Anything reached through a flagged callable.
        assert!(lookup("sympy.core.sympify.sympify.__wrapped__", 18).is_some());
        // A sink by name (a C function the analysis cannot read).
        assert_eq!(lookup("torch.from_file", 5).map(|r| r.kind), Some("file"));
        // A torch config module is a ConfigModule (whose __setattr__ imports aliased modules
        // by name, and whose load_config unpickles).
        let config = lookup("torch._functorch.config.load_config", 23).expect("load_config");
        assert!(
            config.path.starts_with("torch.utils._config_module."),
            "{config:?}"
        );
        let load = lookup("torch.utils._config_module.ConfigModule.load_config", 26).unwrap();
        assert_eq!(load.kind, "unpickle");
        // An inherited method, through the class's bases.
        assert!(lookup(
            "transformers.models.bert.modeling_bert.BertModel.save_pretrained",
            38
        )
        .is_some());
        // Never by substring.
        assert_eq!(lookup("sympy.core.sympify.sympifyx", 18), None);
        assert_eq!(lookup("collections.OrderedDict", 11), None);
        // Bounded: a path that is nothing.
        assert_eq!(lookup("", 0), None);
        assert_eq!(lookup(&"a.".repeat(200), 0), None);
    }

    #[test]
    fn a_reason_is_built_once_per_row() {
        let r = lookup("sympy.core.sympify.sympify", 18).unwrap();
        assert!(std::ptr::eq(reason(r), reason(r)));
        // Every row the binary search is asked about misses cleanly between rows.
        assert_eq!(row("~"), None);
        assert_eq!(row("\u{10ffff}"), None);
    }
}
