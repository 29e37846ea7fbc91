//! What skops 0.16 does with a built tree: `tree.get_unsafe_set()` (`_audit.py`
//! `Node.get_unsafe_set` and the overrides of `FunctionNode`, `old/_general_v0.py`
//! `FunctionNode`, `MethodNode`, `JsonNode`, `SliceNode` and `RandomGeneratorNode`), which
//! `get_untrusted_types` returns sorted and `audit_tree` refuses unless `trusted=` covers it;
//! and, where the audit passes, the construction steps that raise on what the schema holds.
//!
//! `get_unsafe_set` walks `self.children` recursively, guarded against cycles (a node being
//! computed contributes nothing to itself) and without caching; its result is therefore the
//! union, over every node reachable from the root, of what the node adds for itself, and it
//! raises if any reachable node raises. Every node the builder keeps is reachable (each is a
//! child of the node that built it), so this takes the union over all of them, once each.

use super::json::Json;
use super::nodes::{name_str, Child, Kind, Name, Node, Tree};
use super::pyvalue::{py_str, subscript};
use super::trusted::Section;
use std::collections::BTreeSet;

/// `tree.get_unsafe_set()`: the untrusted types, or where and why skops raises computing them.
/// The walk goes from the root through the children, once per node (iteratively: the cycles
/// a repeated `__id__` makes are walked once).
pub fn unsafe_set(tree: &Tree<'_>) -> Result<BTreeSet<String>, (usize, String)> {
    let mut set = BTreeSet::new();
    let mut seen = vec![false; tree.nodes.len()];
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        let Some(node) = tree.nodes.get(i) else {
            continue;
        };
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        own(tree, node, &mut set).map_err(|why| (node.at, why))?;
        for child in node.children.iter().rev() {
            if let Child::Node(c) = child {
                stack.push(*c);
            }
        }
    }
    Ok(set)
}

/// What `node` adds for itself (its children are nodes of their own, but for raw values).
fn own(tree: &Tree<'_>, node: &Node<'_>, set: &mut BTreeSet<String>) -> Result<(), String> {
    match node.kind {
        // `JsonNode.get_unsafe_set` and `SliceNode.get_unsafe_set` return `set()`.
        Kind::Json | Kind::Slice => Ok(()),
        // `_general.py` FunctionNode.get_unsafe_set: `f"{module}.{class}"`, any values.
        Kind::Function => {
            let name = format!("{}.{}", name_str(node.module), name_str(node.class));
            if !node.trust.trusts(&name) {
                set.insert(name);
            }
            Ok(())
        }
        // `old/_general_v0.py` FunctionNode: `content["module_path"] + "." +
        // content["function"]`.
        Kind::FunctionV0 => {
            let content = node.content.unwrap_or(&Json::Null);
            let module = subscript(content, "module_path")?;
            let Json::Str(module) = module else {
                return Err(concat_error(module));
            };
            let function = subscript(content, "function")?;
            let Json::Str(function) = function else {
                return Err(concat_error(function));
            };
            let name = format!("{module}.{function}");
            if !node.trust.trusts(&name) {
                set.insert(name);
            }
            Ok(())
        }
        _ => {
            default_own(node, set)?;
            match node.kind {
                // `_general.py` MethodNode.get_unsafe_set: `super()`, plus
                // `f"{obj.module_name}.{obj.class_name}.{self.func}"`, always.
                Kind::Method => {
                    if let (Some(obj), Some(func)) =
                        (node.obj.and_then(|o| tree.nodes.get(o)), node.func)
                    {
                        set.insert(format!(
                            "{}.{}.{}",
                            name_str(obj.module),
                            name_str(obj.class),
                            py_str(func)
                        ));
                    }
                }
                // `_numpy.py` (and `old/_numpy_v1.py`) RandomGeneratorNode.get_unsafe_set:
                // `numpy.random.<name>` unless a real bit generator.
                Kind::RandomGenerator(1 | 2) => {
                    if let Some(name) = &node.bit_generator {
                        let full = format!("numpy.random.{name}");
                        if !Section::NumpyRandomBitGeneratorTypeNames.contains(&full) {
                            set.insert(full);
                        }
                    }
                }
                _ => {}
            }
            Ok(())
        }
    }
}

/// The `TypeError` of `a + "." + b` when one is not a string.
fn concat_error(v: &Json) -> String {
    format!(
        "TypeError: can only concatenate str (not \"{}\") to str",
        v.type_name()
    )
}

/// `Node.get_unsafe_set` for the node itself: `check_type` of its own type, then the raw
/// children, as the loop over `self.children` treats them.
fn default_own(node: &Node<'_>, set: &mut BTreeSet<String>) -> Result<(), String> {
    // `check_type`: `module_name + "." + type_name in trusted`.
    let name = match (node.module.as_str(), node.class.as_str()) {
        (Some(m), Some(c)) => format!("{m}.{c}"),
        (Some(_), None) => return Err(concat_error(json_of(node.class))),
        (None, _) => {
            return Err(format!(
            "TypeError: unsupported operand type(s) for +: '{}' and 'str' (a node's __module__)",
            json_of(node.module).type_name()
        ))
        }
    };
    if !node.trust.trusts(&name) {
        set.insert(name);
    }
    for child in &node.children {
        if let Child::Raw(value) = child {
            match value {
                // `if child is None: continue`; `isinstance(child, (io.BytesIO, str))`.
                Json::Null | Json::Str(_) => {}
                // A raw list or dict: `value.get_unsafe_set()` of each item raises.
                Json::Array(items) if items.is_empty() => {}
                Json::Object(pairs) if pairs.is_empty() => {}
                Json::Array(items) => {
                    return Err(format!(
                        "AttributeError: '{}' object has no attribute 'get_unsafe_set'",
                        items.first().map_or("NoneType", Json::type_name)
                    ))
                }
                Json::Object(pairs) => {
                    return Err(format!(
                        "AttributeError: '{}' object has no attribute 'get_unsafe_set'",
                        pairs.first().map_or("NoneType", |(_, v)| v.type_name())
                    ))
                }
                other => {
                    return Err(format!(
                        "ValueError: Cannot determine the safety of type <class '{}'>",
                        other.type_name()
                    ))
                }
            }
        }
    }
    Ok(())
}

fn json_of<'j>(name: Name<'j>) -> &'j Json {
    match name {
        Name::Json(j) => j,
        Name::Fixed(_) => &Json::Null,
    }
}

/// The construction steps that raise on what the schema holds, once the audit has passed:
/// `JsonNode._construct` (`json.loads(self.content)`, which needs a string of JSON), and the
/// protocol-0 `RandomGeneratorNode._construct` (`self.bit_generator_state["bit_generator"]`
/// of a state its audit let through: empty, a string or null, none of which holds one).
/// Everything else is taken to construct: the members it reads are for the readers of those
/// members to judge.
pub fn construction_errors(tree: &Tree<'_>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for node in &tree.nodes {
        match node.kind {
            Kind::Json => match node.content {
                Some(Json::Str(text)) => {
                    if let Err(e) = super::json::loads_str(text) {
                        out.push((node.at, format!("json.decoder.JSONDecodeError: {} (char {}) (skops 0.16 `_general.py` JsonNode._construct)", e.why, e.at)));
                    }
                }
                Some(other) => out.push((
                    node.at,
                    format!(
                        "TypeError: the JSON object must be str, bytes or bytearray, not {} (skops 0.16 `_general.py` JsonNode._construct)",
                        other.type_name()
                    ),
                )),
                None => {}
            },
            Kind::RandomGenerator(0) => out.push((
                node.at,
                "the protocol-0 RandomGeneratorNode never constructs: its state holds no bit generator its audit lets through (skops 0.16 `old/_numpy_v0.py`)".into(),
            )),
            _ => {}
        }
    }
    out
}
