//! A skops file among a zip's members: `skops.io.dump` writes a zip of `schema.json` (a tree
//! of nodes, each with `__class__`, `__module__` and `__loader__`, the node type
//! `skops.io.load` builds it with) and the arrays as `.npy` members (skops 0.16
//! `skops/io/_persist.py`, `_general.py`). Loading builds every object the tree names: classes
//! by `cls.__new__` and their state, functions and types as references an estimator may call
//! later.
//!
//! socair does not model skops's node types yet, so a skops schema is never data: every one is
//! a LEAD naming the types it builds, and a FAIL when one of them is a callable the pickle
//! machine's tables call dangerous ([`crate::globals::classify`]: `os.system`,
//! `builtins.eval`…), which an estimator holding it would run. It lives here, beside those
//! tables, for the two readers that meet skops files (the archive reader, a schema-only
//! skops zip; the NumPy reader, one with arrays, as `np.load` would open it).

use crate::globals::{classify, Class};
use serde_json::Value;

/// Nodes walked at most: a schema with more is judged by its first ones, and says so.
const MAX_NODES: usize = 1 << 16;

/// What a skops schema was found to name.
pub struct Judged {
    /// `(place, reason)` of each dangerous callable, one per type.
    pub dangerous: Vec<(String, String)>,
    /// The types the schema names, `module.name`, each once, in tree order.
    pub types: Vec<String>,
    /// Nodes past [`MAX_NODES`], not walked.
    pub more: u64,
}

/// The schema in `bytes`, when it is a skops schema (a JSON object whose root node has a
/// `__loader__`); `None` for any other JSON.
pub fn judge(bytes: &[u8]) -> Option<Judged> {
    let root: Value = serde_json::from_slice(bytes).ok()?;
    root.get("__loader__")?.as_str()?;
    let mut out = Judged {
        dangerous: Vec::new(),
        types: Vec::new(),
        more: 0,
    };
    let mut stack = vec![(String::new(), &root)];
    let mut walked = 0usize;
    while let Some((at, v)) = stack.pop() {
        match v {
            Value::Object(m) => {
                walked += 1;
                if walked > MAX_NODES {
                    out.more += 1;
                    continue;
                }
                if let (Some(Value::String(module)), Some(Value::String(class))) =
                    (m.get("__module__"), m.get("__class__"))
                {
                    let path = format!("{module}.{class}");
                    if !out.types.contains(&path) {
                        match classify(module, class) {
                            Class::Dangerous(why) | Class::Constructs(why, _) => {
                                out.dangerous.push((at.clone(), format!("{path}: {why}")))
                            }
                            _ => {}
                        }
                        out.types.push(path);
                    }
                }
                for (k, child) in m.iter().rev() {
                    let at = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    stack.push((at, child));
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate().rev() {
                    stack.push((format!("{at}[{i}]"), child));
                }
            }
            _ => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skops_schema_names_its_types_and_dangerous_callables_fail() {
        let schema = br#"{"__class__": "FunctionTransformer", "__module__": "sklearn.preprocessing._function_transformer", "__loader__": "ObjectNode",
            "content": {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "content": {
                "func": {"__class__": "system", "__module__": "posix", "__loader__": "FunctionNode"}}}}"#;
        let j = judge(schema).unwrap();
        assert_eq!(j.types.len(), 3);
        assert_eq!(j.dangerous.len(), 1, "{:?}", j.dangerous);
        assert_eq!(
            j.dangerous[0].0, "content.content.func",
            "{:?}",
            j.dangerous
        );
        assert!(judge(br#"{"a": 1}"#).is_none());
        assert!(judge(b"not json").is_none());
    }
}
