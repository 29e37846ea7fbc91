//! The `socair` host: plugin discovery and loading, fingerprints and manifests, and the
//! command implementations behind the thin `socair` binary.

pub mod airlock;
pub mod artifact;
pub mod cli;
pub mod clock;
pub mod convert;
pub mod diff;
pub mod fault;
pub mod fingerprint;
#[doc(hidden)]
pub mod fuzzing;
pub mod hashpipe;
pub mod layout;
pub mod modeldir;
pub mod output;
pub mod plugins;
pub mod progress;
pub mod rules;
pub mod scan;
pub mod signing;
pub mod source;
pub mod store;
pub mod tensors;
pub mod unpermute;

/// The host's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
