//! What socair's first-party plugins share, written once: the reading model ([`model`]: a
//! finding, its severity, the memory a read is held to), the guarded export of a plugin
//! ([`export_plugin!`] and the adapters in [`export`]), the bounds on what one read reports
//! ([`bounded`]), the rules for files no reader models ([`companion`], which the host uses
//! too) and for chat templates wherever they are ([`jinja`]), the pieces of an `OpenedFile`
//! every reader builds ([`report`]), strict JSON ([`json`]), the zip primitives every zip reader needs ([`zip`]), and
//! protobuf at wire level for the protobuf formats' readers ([`protobuf`]).
//!
//! `socair-plugin-api` stays the small ABI contract that third-party plugins build against;
//! this crate is a normal library that first-party plugins link in, and nothing in it crosses
//! the boundary but the API's own types.

pub mod bounded;
pub mod checkpoint_state;
pub mod companion;
pub mod export;
pub mod jinja;
pub mod joblib;
pub mod json;
pub mod model;
pub mod ndarray;
pub mod protobuf;
pub mod reading;
pub mod report;
pub mod sentencepiece;
pub mod severity;
pub mod source_reader;
pub mod tiktoken;
pub mod zip;

pub use severity::Severity;

/// abi_stable, for the same.
pub use abi_stable;
/// The API crate, for the paths [`export_plugin!`] expands to.
pub use socair_plugin_api as api;
