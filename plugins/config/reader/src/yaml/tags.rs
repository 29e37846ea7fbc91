//! What PyYAML 6.0.3 builds for a node's tag (`yaml/constructor.py`), written out by hand: the
//! parser hands over each node's tag with its handle expanded (`!!` is `tag:yaml.org,2002:`, a
//! `%TAG` directive's handle its prefix, a verbatim `!<…>` itself) and nothing resolved, and
//! `BaseConstructor.construct_object` picks the constructor: the one registered for the exact
//! tag, else the first multi-constructor whose prefix the tag starts with, else
//! `construct_undefined` (an error).
//!
//! * `SafeConstructor` (`yaml.safe_load`; OmegaConf's loader is a `SafeLoader`) builds data
//!   for the core tags: `null`, `bool`, `int`, `float`, `binary`, `timestamp`, `omap`,
//!   `pairs`, `set`, `str`, `seq`, `map` (and the `merge` and `value` keys of
//!   `flatten_mapping`). Every other tag is refused.
//! * `FullConstructor` (`yaml.full_load`, `yaml.load(Loader=yaml.FullLoader)`) adds the Python
//!   tags that build only data (`python/none`, `bool`, `str`, `unicode`, `bytes`, `int`,
//!   `long`, `float`, `complex`, `list`, `tuple`, `dict`: [`PYTHON_DATA`]) and
//!   `python/name:` (`construct_python_name`: the object a dotted name names, from a module
//!   already imported).
//! * `UnsafeConstructor` (`yaml.unsafe_load`, `yaml.load(Loader=yaml.Loader)`, whose
//!   `Constructor` is the same class) imports the module a name needs (`find_python_name`,
//!   `find_python_module` with `unsafe=True`) and adds `python/module:` (a module imported),
//!   `python/object:` (an instance made by `cls.__new__`, its state set, `__setstate__`
//!   called), `python/object/new:` and `python/object/apply:` (`make_python_instance`: the
//!   callable called with the node's arguments, whether or not it is a class).

/// The prefix of the tags `!!` names (`yaml/parser.py`, `Parser.DEFAULT_TAGS`).
pub const YAML_PREFIX: &str = "tag:yaml.org,2002:";

/// The prefix of every Python tag.
pub const PYTHON_PREFIX: &str = "tag:yaml.org,2002:python/";

/// The tags `SafeConstructor` builds (and `flatten_mapping`'s merge and value keys).
const CORE: &[&str] = &[
    "null",
    "bool",
    "int",
    "float",
    "binary",
    "timestamp",
    "omap",
    "pairs",
    "set",
    "str",
    "seq",
    "map",
    "merge",
    "value",
];

/// The Python tags `FullConstructor` builds data for: the tag's suffix after `python/` and the
/// Python value it builds (`construct_yaml_null`, `construct_python_str`,
/// `construct_python_bytes` (base64), `construct_python_complex` (`complex(str)`),
/// `construct_python_tuple`, `construct_yaml_map`, …).
pub const PYTHON_DATA: &[(&str, &str)] = &[
    ("none", "None"),
    ("bool", "a bool"),
    ("str", "a str"),
    ("unicode", "a str"),
    ("bytes", "bytes (decoded from base64)"),
    ("int", "an int"),
    ("long", "an int"),
    ("float", "a float"),
    ("complex", "a complex number (complex() of the string)"),
    ("list", "a list"),
    ("tuple", "a tuple"),
    ("dict", "a dict"),
];

/// The Python multi-constructors, by the prefix after `python/`, in the order
/// `UnsafeConstructor.yaml_multi_constructors` tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PythonCode {
    /// `python/name:` — the named object itself (`construct_python_name`).
    Name,
    /// `python/module:` — a module (`construct_python_module`).
    Module,
    /// `python/object:` — an instance, state set (`construct_python_object`).
    Object,
    /// `python/object/new:` — `cls.__new__(cls, *args)` (`construct_python_object_new`).
    ObjectNew,
    /// `python/object/apply:` — the callable called (`construct_python_object_apply`).
    ObjectApply,
}

const PYTHON_CODE: &[(&str, PythonCode)] = &[
    ("name:", PythonCode::Name),
    ("module:", PythonCode::Module),
    ("object:", PythonCode::Object),
    ("object/new:", PythonCode::ObjectNew),
    ("object/apply:", PythonCode::ObjectApply),
];

/// What PyYAML's loaders make of a node's tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagKind {
    /// No tag, the non-specific `!`, or a core tag: data for every loader.
    Data,
    /// A Python tag that builds only data: what it builds. `yaml.safe_load` refuses it.
    PythonData(&'static str),
    /// A Python tag whose constructor imports or calls code, and the name after the prefix.
    PythonCode(PythonCode, String),
    /// A Python tag no PyYAML constructor builds (`construct_undefined`: the load fails).
    PythonUnknown,
    /// A local tag (`!foo`) or another global one: `yaml.safe_load` refuses it, and a program
    /// that registers a constructor for it runs that constructor.
    Other,
}

/// The kind of the full tag `tag` (handle expanded).
pub fn classify(tag: &str) -> TagKind {
    if tag == "!" {
        // `yaml/composer.py`: a node tagged `!` is resolved as if untagged (a str for a scalar).
        return TagKind::Data;
    }
    if let Some(python) = tag.strip_prefix(PYTHON_PREFIX) {
        if let Some((_, built)) = PYTHON_DATA.iter().find(|(name, _)| *name == python) {
            return TagKind::PythonData(built);
        }
        for (prefix, code) in PYTHON_CODE {
            if let Some(name) = python.strip_prefix(prefix) {
                return TagKind::PythonCode(*code, name.to_owned());
            }
        }
        return TagKind::PythonUnknown;
    }
    match tag.strip_prefix(YAML_PREFIX) {
        Some(core) if CORE.contains(&core) => TagKind::Data,
        _ => TagKind::Other,
    }
}

/// `name` split as `find_python_name` splits it: the module before the last dot, `builtins`
/// when there is none.
fn module_and_object(name: &str) -> (&str, &str) {
    name.rsplit_once('.').unwrap_or(("builtins", name))
}

/// What the loaders do with a node of `code` naming `name`, in words, with the constructor
/// cited (PyYAML 6.0.3 `yaml/constructor.py`).
pub fn what_it_runs(code: PythonCode, name: &str) -> String {
    let (module, object) = module_and_object(name);
    let full = format!("{module}.{object}");
    match code {
        PythonCode::Name => format!(
            "yaml.unsafe_load and yaml.load(Loader=yaml.Loader) import module `{module}` (running its code) and return `{full}` itself, a callable or object the program then holds; yaml.full_load returns it when `{module}` is already imported (FullConstructor.construct_python_name, find_python_name)"
        ),
        PythonCode::Module => format!(
            "yaml.unsafe_load and yaml.load(Loader=yaml.Loader) import module `{name}`, running its code, and return it (UnsafeConstructor.construct_python_module)"
        ),
        PythonCode::Object => format!(
            "yaml.unsafe_load and yaml.load(Loader=yaml.Loader) import module `{module}` and make a `{full}` without its __init__ (cls.__new__; a `{full}` that is no class is called), then set the mapping as its state, calling its __setstate__ (UnsafeConstructor.construct_python_object)"
        ),
        PythonCode::ObjectNew => format!(
            "yaml.unsafe_load and yaml.load(Loader=yaml.Loader) import module `{module}` and call `{full}.__new__` with the node's arguments (a `{full}` that is no class is called with them), then set its state, list items and dict items (UnsafeConstructor.construct_python_object_new)"
        ),
        PythonCode::ObjectApply => format!(
            "yaml.unsafe_load and yaml.load(Loader=yaml.Loader) import module `{module}` and call `{full}` with the node's arguments (a callable called: `os.system` runs a shell command), then set its state, list items and dict items (UnsafeConstructor.construct_python_object_apply)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_as_pyyaml_constructs_them() {
        assert_eq!(classify("!"), TagKind::Data);
        assert_eq!(classify("tag:yaml.org,2002:str"), TagKind::Data);
        assert_eq!(classify("tag:yaml.org,2002:merge"), TagKind::Data);
        assert_eq!(classify("tag:yaml.org,2002:strx"), TagKind::Other);
        assert_eq!(classify("!local"), TagKind::Other);
        assert_eq!(classify("tag:example.com,2000:app/x"), TagKind::Other);
        assert_eq!(
            classify("tag:yaml.org,2002:python/tuple"),
            TagKind::PythonData("a tuple")
        );
        assert_eq!(
            classify("tag:yaml.org,2002:python/object/apply:os.system"),
            TagKind::PythonCode(PythonCode::ObjectApply, "os.system".into())
        );
        assert_eq!(
            classify("tag:yaml.org,2002:python/object:x.Y"),
            TagKind::PythonCode(PythonCode::Object, "x.Y".into())
        );
        assert_eq!(
            classify("tag:yaml.org,2002:python/object/new:"),
            TagKind::PythonCode(PythonCode::ObjectNew, String::new())
        );
        assert_eq!(
            classify("tag:yaml.org,2002:python/module:os"),
            TagKind::PythonCode(PythonCode::Module, "os".into())
        );
        assert_eq!(
            classify("tag:yaml.org,2002:python/name:eval"),
            TagKind::PythonCode(PythonCode::Name, "eval".into())
        );
        // Exact names only for the data tags; an unknown Python tag has no constructor.
        assert_eq!(
            classify("tag:yaml.org,2002:python/tuplex"),
            TagKind::PythonUnknown
        );
        assert_eq!(
            classify("tag:yaml.org,2002:python/object"),
            TagKind::PythonUnknown
        );
        assert!(what_it_runs(PythonCode::Name, "eval").contains("`builtins.eval`"));
        assert!(what_it_runs(PythonCode::ObjectApply, "os.system").contains("module `os`"));
    }
}
