//! What the extension's modules share, in a leaf they all import (so no module imports
//! `lib.rs`, which declares them): the error Python sees, a document's text, the `repr` of a
//! record, and the `record!` macro that declares the frozen classes.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;

/// A class of plain values read from a host document: frozen, compared field by field,
/// every field a read-only attribute, shown as `Name(field=value, ...)`.
macro_rules! record {
    ($(#[$meta:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        #[pyclass(frozen, eq, module = "socair._native")]
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $(#[pyo3(get)] pub $field: $ty,)*
        }

        #[pymethods]
        impl $name {
            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                $crate::values::repr(slf.as_any(), stringify!($name), &[$(stringify!($field)),*])
            }
        }
    };
}

pyo3::create_exception!(
    _native,
    SocairError,
    PyException,
    "An input socair cannot read at all: the command line's exit code 2."
);

pub(crate) fn error(message: impl std::fmt::Display) -> PyErr {
    SocairError::new_err(message.to_string())
}

pub(crate) fn json_text(bytes: Vec<u8>) -> PyResult<String> {
    String::from_utf8(bytes).map_err(error)
}

/// A document's text as `json.loads` reads it: the form the package returned before its
/// documents had classes.
pub(crate) fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// `Name(field=repr(value), ...)`, each value's own Python repr.
pub(crate) fn repr(obj: &Bound<'_, PyAny>, name: &str, fields: &[&str]) -> PyResult<String> {
    let mut parts = Vec::with_capacity(fields.len());
    for field in fields {
        parts.push(format!("{field}={}", obj.getattr(*field)?.repr()?));
    }
    Ok(format!("{name}({})", parts.join(", ")))
}
