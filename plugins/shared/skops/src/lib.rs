//! A skops file's schema, judged as skops 0.16 judges it. `skops.io.dump` writes a zip of
//! `schema.json` (a tree of nodes: each names its type by `__module__` and `__class__`, and
//! by `__loader__` the node class `skops.io.load` builds it with) and the arrays as `.npy`
//! members (skops 0.16 `_persist.py`). `skops.io.load(file, trusted=None)` reads the schema
//! (`_utils.py` `read_schema`), builds the node tree (`_audit.py` `get_tree`), refuses the
//! file with `UntrustedTypesFoundException` unless every type `tree.get_unsafe_set()` returns
//! is listed in `trusted=` (`audit_tree`), and only then constructs the objects.
//!
//! This module mirrors those steps over the schema's bytes, without Python:
//! [`json`] reads the bytes as Python's `json.loads` does, `nodes` builds the tree as
//! `get_tree` and each node class's `__init__` do (raising where they raise; `pyvalue` says
//! what Python does with each kind of value they touch), `audit` computes `get_unsafe_set`
//! with the default trusted types of `trusted` (read from skops itself by
//! `make_trusted.py`), and `danger` judges every name the schema holds by the pickle
//! machine's tables ([`socair_pickle::globals::classify`]) and looks for the shapes of skops's known
//! vulnerabilities. `fixtures/skops/` holds files skops wrote and hand-written schemas, each
//! with what skops 0.16 said of it; the tests check this module says the same.
//!
//! Where it knowingly stops short of skops: construction is taken to succeed once the audit
//! passes (only a `JsonNode`'s content and a protocol-0 Generator are checked; the members a
//! node reads are for the readers of those members to judge, and [`judge`] takes them to be
//! in the zip unless [`judge_in_zip`] is told what is), and schemas past socair's bounds
//! (nesting, node and value counts) are a LEAD rather than skops's own answer.
//!
//! The verdict the readers report:
//!
//! * **FAIL**: the schema names a type, function or method that runs code or does I/O
//!   (`os.system`, `builtins.eval`, `operator.methodcaller`…), trusted or not, or carries a
//!   known vulnerability's shape (CVE-2025-54412, CVE-2025-54413; `danger`).
//! * **LEAD**: skops 0.16 refuses the file as it is: types it does not trust by default (it
//!   loads them only when `trusted=` lists them), or a schema it raises on while building or
//!   auditing the tree (then nothing is constructed); or socair did not read it whole (its
//!   bounds, or a key repeated in an object, which skops never writes and JSON readers read
//!   differently).
//! * **PASS** (data): every type is trusted by default and nothing is dangerous:
//!   `skops.io.load` loads it without `trusted=`.
//!
//! It lives here, beside the pickle tables it judges names with, for the two readers that meet
//! skops files: the archive reader (a schema-only skops zip) and the NumPy reader (one with
//! arrays, as `np.load` would open it). Pure functions over bytes.

mod audit;
mod danger;
pub mod fuzzing;
pub mod json;
mod nodes;
mod pyvalue;
mod trusted;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fixtures;
#[cfg(test)]
mod tests_hostile;

use json::Json;

/// Types, problems and dangerous names listed in a reason at most.
pub const SHOWN: usize = 20;

/// What a skops schema was found to hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// `(place, reason)` of each name that runs code or does I/O, or carries a known
    /// vulnerability's shape, one per name: a FAIL.
    pub dangerous: Vec<(String, String)>,
    /// What `skops.io.get_untrusted_types` returns (sorted): the types skops 0.16 does not
    /// trust by default. `None` when it raises (the schema is malformed) or socair's bounds
    /// stopped before the whole tree was built.
    pub untrusted: Option<Vec<String>>,
    /// `(place, why)` of each reason skops 0.16 refuses the file other than untrusted types:
    /// it raises while reading the schema, building or auditing the tree, or constructing a
    /// node.
    pub problems: Vec<(String, String)>,
    /// `(place, why)` of what keeps socair from calling the schema data although skops may
    /// load it: a bound socair stopped at, or a key repeated in an object (skops never
    /// writes one; Python keeps its last value, other JSON readers the first).
    pub unchecked: Vec<(String, String)>,
    /// The types the built nodes name (`module.class`), each once, in tree order.
    pub types: Vec<String>,
    /// The zip members the tree reads, and as what (arrays, bytes, sparse matrices).
    pub reads: Vec<(String, String)>,
    /// Dangerous names past the listed ones, not listed.
    pub more: u64,
    /// The types of `untrusted` an operator reviewed (`--reviewed-classes`, a store's
    /// reviews), taken out of it as `skops.io.load(file, trusted=…)` takes them
    /// ([`Judged::trusting`]).
    pub trusted: Vec<String>,
}

impl Judged {
    /// The judgement of `skops.io.load(file, trusted=reviewed)`: the untrusted types an
    /// operator reviewed no longer stop it (skops 0.16 `_audit.py` `audit_tree`: the unsafe
    /// set minus `trusted`). A name that runs code stays dangerous, reviewed or not.
    pub fn trusting(mut self, reviewed: &[String]) -> Self {
        if let Some(untrusted) = self.untrusted.as_mut() {
            let (trusted, left): (Vec<String>, Vec<String>) =
                untrusted.drain(..).partition(|t| reviewed.contains(t));
            *untrusted = left;
            self.trusted = trusted;
        }
        self
    }

    /// Whether `skops.io.load(file)` (no `trusted=`, or `trusted=` the reviewed types after
    /// [`Judged::trusting`]) loads it: every type trusted, and nothing it raises on.
    pub fn loads_by_default(&self) -> bool {
        self.problems.is_empty() && self.untrusted.as_ref().is_some_and(Vec::is_empty)
    }

    /// Data: skops loads it by default, nothing in it runs code, and socair read all of it
    /// (a PASS).
    pub fn is_data(&self) -> bool {
        self.loads_by_default() && self.dangerous.is_empty() && self.unchecked.is_empty()
    }

    /// The LEAD's reason when skops 0.16 refuses the file as it is (untrusted types, or a
    /// schema it raises on) or socair did not read all of it; `None` otherwise.
    pub fn lead(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(untrusted) = self.untrusted.as_ref().filter(|u| !u.is_empty()) {
            let more = match untrusted.len().saturating_sub(SHOWN) {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            // How to accept them, unless something in the file runs code: reviewing cannot
            // clear that, and a store refuses to review a global that runs code.
            let hint = if self.dangerous.is_empty() {
                " (once a person reviewed them, --reviewed-classes naming them passes them as trusted=)"
            } else {
                ""
            };
            parts.push(format!(
                "skops.io.load refuses it unless trusted= lists the {} type(s) skops 0.16 does not trust by default: {}{more}{hint}",
                untrusted.len(),
                untrusted.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        if !self.problems.is_empty() {
            parts.push(format!(
                "skops 0.16 does not load it as it is, so nothing in it is constructed: {}",
                placed(&self.problems)
            ));
        }
        if !self.unchecked.is_empty() {
            parts.push(format!(
                "socair did not read all of it: {}",
                placed(&self.unchecked)
            ));
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!(
            "a skops file's schema (skops.io.dump): {}",
            parts.join("; and ")
        ))
    }

    /// The PASS's sentence.
    pub fn pass_summary(&self) -> String {
        if self.trusted.is_empty() {
            return format!(
                "a skops file's schema (skops.io.dump) whose {} type(s) skops 0.16 trusts by default and none of which runs code: skops.io.load loads it without trusted=",
                self.types.len()
            );
        }
        format!(
            "a skops file's schema (skops.io.dump) whose {} type(s) skops 0.16 trusts by default or a person reviewed ({}) and none of which runs code: skops.io.load loads it with trusted= naming the reviewed ones",
            self.types.len(),
            self.trusted.join(", ")
        )
    }
}

/// The schema in `bytes`, judged as skops 0.16 loads it with every member it names present,
/// when it is a skops schema (a JSON object with a `__loader__` or `_skops_version`, or bytes
/// naming `__loader__` that Python's `json` does not read); `None` for anything else.
pub fn judge(bytes: &[u8]) -> Option<Judged> {
    judge_with(bytes, None)
}

/// [`judge`] for a schema read from a zip whose member names `has_member` knows: a node that
/// reads a member the zip lacks makes skops raise (`zip_file.read`'s `KeyError`).
pub fn judge_in_zip(bytes: &[u8], has_member: &dyn Fn(&str) -> bool) -> Option<Judged> {
    judge_with(bytes, Some(has_member))
}

fn judge_with(bytes: &[u8], has_member: Option<&dyn Fn(&str) -> bool>) -> Option<Judged> {
    let mut out = Judged {
        dangerous: Vec::new(),
        untrusted: None,
        problems: Vec::new(),
        unchecked: Vec::new(),
        types: Vec::new(),
        reads: Vec::new(),
        more: 0,
        trusted: Vec::new(),
    };
    let json::Parsed {
        doc,
        shadowed,
        renamed,
    } = match json::loads_keeping_shadowed(bytes) {
        Ok(parsed) => parsed,
        Err(e) => {
            // Not JSON to Python: skops raises on it. A skops schema still, if it names a
            // loader (in whatever encoding the bytes are).
            let text =
                json::decode(bytes).unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned());
            if !text.contains("__loader__") {
                return None;
            }
            if e.bound {
                out.unchecked
                    .push((String::new(), format!("schema.json {}", e.why)));
            } else {
                out.problems.push((
                    String::new(),
                    format!(
                        "json.loads raises on schema.json ({}, at byte {} of its text)",
                        e.why, e.at
                    ),
                ));
            }
            return Some(out);
        }
    };
    if doc.get("__loader__").is_none() && doc.get("_skops_version").is_none() {
        return None;
    }
    let mut danger = danger::scan(&doc, "");
    if let Some((key, _)) = shadowed.first() {
        out.unchecked.push((
            String::new(),
            format!(
                "schema.json repeats a key in an object ({} time(s), first {key:?}): Python's json keeps the last value, other JSON readers the first, and skops never writes a repeated key",
                shadowed.len()
            ),
        ));
    }
    for names in &renamed {
        danger.renamed(names);
    }
    for (key, value) in &shadowed {
        danger.extend(danger::scan(
            value,
            &format!("(a value the repeated key {key:?} replaces)"),
        ));
    }
    out.dangerous = danger.found;
    out.more = danger.more;
    let protocol = match read_schema_protocol(&doc) {
        Ok(p) => p,
        Err(why) => {
            out.problems.push(("protocol".into(), why));
            return Some(out);
        }
    };
    let (tree, built) = nodes::build(&doc, protocol, has_member);
    let mut seen = std::collections::HashSet::new();
    for node in &tree.nodes {
        if let (Some(m), Some(c)) = (node.module.as_str(), node.class.as_str()) {
            let name = format!("{m}.{c}");
            if seen.insert(name.clone()) {
                out.types.push(name);
            }
        }
    }
    out.reads = tree
        .reads
        .iter()
        .map(|(name, what)| (name.clone(), (*what).to_owned()))
        .collect();
    match built {
        Err(nodes::Stop::Refused { at, why }) => {
            out.problems.push((tree.place(at), why));
        }
        Err(nodes::Stop::Bound { at, why }) => {
            out.unchecked.push((tree.place(at), why));
        }
        Ok(()) => match audit::unsafe_set(&tree) {
            Err((at, why)) => out.problems.push((
                tree.place(at),
                format!("{why} (skops 0.16 `_audit.py` get_unsafe_set raises, so neither get_untrusted_types nor load completes)"),
            )),
            Ok(set) => {
                out.untrusted = Some(set.into_iter().collect());
                for (at, why) in audit::construction_errors(&tree).into_iter().take(SHOWN) {
                    out.problems.push((tree.place(at), format!("{why}: the audit passes, constructing it raises")));
                }
            }
        },
    }
    Some(out)
}

/// `read_schema`'s check (skops 0.16 `_utils.py`): `schema.get("protocol")` must be an int
/// (not a bool) from 0 to `PROTOCOL`.
fn read_schema_protocol(doc: &Json) -> Result<i64, String> {
    let Json::Object(_) = doc else {
        return Err(format!(
            "AttributeError: '{}' object has no attribute 'get'",
            doc.type_name()
        ));
    };
    let protocol = doc.get("protocol").unwrap_or(&Json::Null);
    let Json::Int(digits) = protocol else {
        return Err(format!(
            "TypeError: Invalid skops protocol {} in schema.json, expected an integer (skops 0.16 `_utils.py` read_schema)",
            pyvalue::py_repr(protocol)
        ));
    };
    match digits.parse::<i64>() {
        Ok(p) if (0..=nodes::PROTOCOL).contains(&p) => Ok(p),
        Ok(p) if p < 0 => Err(format!(
            "ValueError: Invalid skops protocol {p} in schema.json, expected a value between 0 and {} (skops 0.16 `_utils.py` read_schema)",
            nodes::PROTOCOL
        )),
        _ if digits.starts_with('-') => Err(format!(
            "ValueError: Invalid skops protocol {digits} in schema.json (skops 0.16 `_utils.py` read_schema)"
        )),
        _ => Err(format!(
            "ValueError: The file was saved with skops protocol {digits}, but skops 0.16 only supports protocols up to {} (skops 0.16 `_utils.py` read_schema)",
            nodes::PROTOCOL
        )),
    }
}

/// The first [`SHOWN`] of `(place, why)` pairs, each `at PLACE: WHY` (or the reason alone at
/// the root), joined by `; `.
fn placed(items: &[(String, String)]) -> String {
    items
        .iter()
        .take(SHOWN)
        .map(|(at, why)| {
            if at.is_empty() {
                why.clone()
            } else {
                format!("at {at}: {why}")
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}
