//! Integration tests: one binary, a module per file.

mod bounds;
mod replay;
mod shapes;
