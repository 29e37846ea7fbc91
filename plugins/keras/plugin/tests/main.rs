//! Integration tests: one binary, a module per file.

#[path = "../../../../tests/tests/bounds/measure.rs"]
mod measure;

mod bounds;
mod replay;
mod shapes;
