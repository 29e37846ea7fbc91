//! The `socair-sklearn/1` classes: filled from `make_sklearn.py`'s table.

/// The `module.name` of a class `socair-sklearn/1` lists, if it does.
pub fn class(module: &str, name: &str) -> Option<&'static str> {
    let _ = (module, name);
    None
}
