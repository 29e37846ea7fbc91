//! What socair's tests share, as a crate the tests depend on (a dev-dependency of the plugins
//! and a dependency of the end-to-end crate, `tests/`), rather than files included by path or
//! helpers shipped in a production library:
//!
//! - [`measure`]: a child process's peak resident memory, CPU time and output, checked against
//!   the bounds every reader keeps (64 MiB + 8x the input, 5 s per 30 MB, output 8x the input);
//!   and [`measure::plugin_alone`], which runs a reader alone in one of the `bounds-*` programs
//!   of `socair-tests` (`tests/src/bin/`).
//! - [`shapes`] and [`npz_shapes`]: the hostile inputs those bounds are measured on, generated
//!   at test time (nothing large is committed).
//! - [`saved`]: the saved inputs a fuzz regression replays, and the one-line summary a
//!   `bounds-*` program prints of what an `open` returned.
//!
//! `cargo run -p socair-tests --bin write-bounds-corpora` writes small versions of the shapes
//! into the fuzz corpora (`tests/src/bin/write-bounds-corpora.rs`).

pub mod measure;
pub mod npz_shapes;
pub mod saved;
pub mod shapes;
