//! The airlock commands that load plugins (a plugin pin, a review, a scan of a staged artifact,
//! a derived conversion); the others go straight to [`crate::cli::airlock`].

use super::context::Context;
use crate::cli::airlock;
use crate::cli::exit::Fatal;
use crate::convert::rules::Rules;
use std::path::Path;

/// `socair airlock pin plugin NAME [--version V] [--any-build] [--remove]`.
pub fn pin_plugin(
    ctx: Context,
    store: &Path,
    name: &str,
    version: Option<String>,
    any_build: bool,
    remove: bool,
) -> Result<u8, Fatal> {
    let set = ctx.plugins();
    airlock::pin_plugin(store, name, version, any_build, remove, &set)
}

/// `socair airlock review add CLASS --reason R --key K [--expires T]`.
pub fn review_add(
    ctx: Context,
    store: &Path,
    class: &str,
    reason: &str,
    key: &Path,
    expires: Option<String>,
) -> Result<u8, Fatal> {
    let set = ctx.plugins();
    airlock::review_add(store, class, reason, key, expires, &set)
}

/// `socair airlock scan SHA256 --key K`.
pub fn scan(ctx: Context, store: &Path, sha256: &str, key: &Path) -> Result<u8, Fatal> {
    let set = ctx.plugins_warned();
    airlock::scan_staged(store, sha256, key, &set)
}

/// `socair airlock convert CHECKPOINT --attestation A --key K [--rules R]`.
pub fn convert(
    ctx: Context,
    store: &Path,
    checkpoint: &Path,
    attestation: &Path,
    key: &Path,
    rules: Option<&str>,
) -> Result<u8, Fatal> {
    if let Some(r) = rules {
        // A --rules this socair does not implement is a usage error (exit 2).
        Rules::parse(r).map_err(Fatal)?;
    }
    let set = ctx.plugins_warned();
    airlock::convert(store, checkpoint, attestation, key, rules, &set)
}
