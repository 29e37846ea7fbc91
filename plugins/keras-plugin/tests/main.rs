//! Integration tests: one binary, a module per file.
