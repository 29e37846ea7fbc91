//! The tables of what Keras' own registries resolve, generated from the libraries by
//! `fixtures/keras/make_registry.py` (keras 3.15.1, tf-keras 2.21.0) and looked up here.

use std::sync::OnceLock;

/// socair's verdict on a name Keras resolves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Part of the grammar: a modeling object or function.
    Grammar,
    /// Exported by Keras, but no modeling object: a LEAD.
    Lead,
    /// Touches files or the network, or turns safe mode off: a FAIL, with why.
    Fail(&'static str),
}

static KERAS3: &str = include_str!("table/keras3.tsv");
static TF_KERAS: &str = include_str!("table/tf_keras.txt");
static STDLIB: &str = include_str!("table/stdlib.txt");
static TF_KERAS_MODULES: &str = include_str!("table/tf_keras_modules.txt");

fn lines(
    table: &'static str,
    cell: &'static OnceLock<Vec<&'static str>>,
) -> &'static [&'static str] {
    cell.get_or_init(|| table.lines().collect())
}

/// The verdict on `module.name` as Keras 3.15.1 resolves it, if it resolves it at all.
pub fn keras3(full: &str) -> Option<Verdict> {
    static CELL: OnceLock<Vec<&'static str>> = OnceLock::new();
    let lines = lines(KERAS3, &CELL);
    let i = lines
        .binary_search_by(|l| l.split('\t').next().unwrap_or("").cmp(full))
        .ok()?;
    let code = lines.get(i)?.split('\t').nth(1)?;
    Some(match code {
        "P" => Verdict::Grammar,
        "L" => Verdict::Lead,
        "Ff" => Verdict::Fail("it reads or writes files"),
        "Fn" => Verdict::Fail("it downloads from the network (keras.utils.get_file)"),
        "Fd" => Verdict::Fail(
            "it loads or deserializes other models or objects, outside this file's safe mode",
        ),
        "Fs" => Verdict::Fail(
            "it turns safe mode off or switches the backend for the rest of the process",
        ),
        _ => Verdict::Fail("it is refused by Keras as a non-modeling API"),
    })
}

/// Whether Keras 3.15.1 exports a modeling object (a grammar row) named `name` under any
/// module: what its legacy `.h5` loader resolves by class name.
pub fn keras3_name(name: &str) -> bool {
    static CELL: OnceLock<Vec<&'static str>> = OnceLock::new();
    let names = CELL.get_or_init(|| {
        let mut v: Vec<&str> = KERAS3
            .lines()
            .filter(|l| l.ends_with("\tP"))
            .filter_map(|l| l.split('\t').next()?.rsplit('.').next())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    });
    names.binary_search(&name).is_ok()
}

/// Whether tf-keras 2.21's legacy deserializer finds `name` in its own registries.
pub fn tf_keras(name: &str) -> bool {
    static CELL: OnceLock<Vec<&'static str>> = OnceLock::new();
    lines(TF_KERAS, &CELL).binary_search(&name).is_ok()
}

/// Whether `module.Class` is a class tf-keras 2.21 defines in its own modules and its `.keras`
/// loader builds (a layer, model, optimizer, loss, metric, initializer, regularizer,
/// constraint or schedule, such as `tf_keras.src.engine.functional.Functional`).
pub fn tf_keras_module(full: &str) -> bool {
    static CELL: OnceLock<Vec<&'static str>> = OnceLock::new();
    lines(TF_KERAS_MODULES, &CELL).binary_search(&full).is_ok()
}

/// Whether `module`'s top-level package is part of CPython 3.11's standard library
/// (`sys.stdlib_module_names`).
pub fn stdlib(module: &str) -> bool {
    static CELL: OnceLock<Vec<&'static str>> = OnceLock::new();
    let top = module.split('.').next().unwrap_or(module);
    lines(STDLIB, &CELL).binary_search(&top).is_ok()
}

/// The Keras packages whose modules Keras 3.15.1 imports to find a `KerasSaveable` class
/// (`_retrieve_class_or_fn`: `package in {"keras", "keras_hub", "keras_cv", "keras_nlp"}`).
pub const KERAS_PACKAGES: &[&str] = &["keras", "keras_hub", "keras_cv", "keras_nlp"];

/// The modules Keras 3.15.1 searches for a built-in function named in a config whose module
/// is `builtins` (`serialization_lib.BUILTIN_MODULES`).
pub const BUILTIN_MODULES: &[&str] = &[
    "activations",
    "constraints",
    "initializers",
    "losses",
    "metrics",
    "optimizers",
    "regularizers",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_and_answer() {
        let names: Vec<&str> = KERAS3
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]));
        let tf: Vec<&str> = TF_KERAS.lines().collect();
        assert!(tf.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(keras3("keras.layers.Dense"), Some(Verdict::Grammar));
        assert_eq!(
            keras3("keras.src.models.functional.Functional"),
            Some(Verdict::Grammar)
        );
        assert!(matches!(
            keras3("keras.utils.get_file"),
            Some(Verdict::Fail(_))
        ));
        assert!(matches!(
            keras3("keras.config.enable_unsafe_deserialization"),
            Some(Verdict::Fail(_))
        ));
        assert_eq!(keras3("keras.activations.relu"), Some(Verdict::Grammar));
        assert_eq!(keras3("os.system"), None);
        assert!(tf_keras("Dense"));
        assert!(tf_keras("GlorotUniform"));
        assert!(!tf_keras("Lambda"));
        assert!(!tf_keras("system"));
        assert!(stdlib("os") && stdlib("subprocess.run") && stdlib("builtins"));
        assert!(!stdlib("my_package.layers"));
        assert!(tf_keras_module("tf_keras.src.engine.functional.Functional"));
        assert!(!tf_keras_module("tf_keras.src.utils.data_utils.get_file"));
    }
}

#[cfg(test)]
mod legacy3_tests {
    use super::*;

    /// Keras 3's own optimizers resolve by name for its legacy `.h5` loader; tf-keras' table
    /// does not hold the ones it lacks.
    #[test]
    fn keras_3_names_for_its_legacy_form() {
        for name in ["AdamW", "LossScaleOptimizer", "Dense", "ExponentialDecay"] {
            assert!(keras3_name(name), "{name}");
        }
        for name in ["system", "get_file", "NoSuchLayer"] {
            assert!(!keras3_name(name), "{name}");
        }
    }
}
