//! `socair airlock …`: the table that maps each airlock command to its function, and the
//! commands that load plugins (a plugin pin, a review, a scan of a staged artifact, a derived
//! conversion); the others go straight to [`crate::cli::airlock`].

use super::context::Context;
use crate::cli::airlock;
use crate::cli::args::{AirlockCommand, PinCommand, ReviewCommand};
use crate::cli::exit::Fatal;
use crate::convert::rules::Rules;
use std::path::Path;

/// Maps the airlock command to its function: this only calls.
pub fn airlock(ctx: Context, cmd: AirlockCommand) -> Result<u8, Fatal> {
    match cmd {
        AirlockCommand::Init { store } => airlock::init(&store.path()),
        AirlockCommand::Trust {
            public_key,
            role,
            store,
        } => airlock::trust(&store.path(), &public_key, &role),
        AirlockCommand::Pin(PinCommand::Plugin {
            name,
            version,
            any_build,
            remove,
            store,
        }) => pin_plugin(ctx, &store.path(), &name, version, any_build, remove),
        AirlockCommand::Pin(PinCommand::Rules {
            name,
            requirement,
            remove,
            store,
        }) => airlock::pin_rules(&store.path(), &name, requirement.as_deref(), remove),
        AirlockCommand::Review(ReviewCommand::Add {
            class,
            reason,
            key,
            expires,
            store,
        }) => review_add(ctx, &store.path(), &class, &reason, &key, expires),
        AirlockCommand::Review(ReviewCommand::Ls { store }) => airlock::review_ls(&store.path()),
        AirlockCommand::Review(ReviewCommand::Remove { id, key, store }) => {
            airlock::review_remove(&store.path(), &id, &key)
        }
        AirlockCommand::Pull {
            path,
            as_repo,
            revision,
            store,
        } => airlock::pull(&store.path(), &path, as_repo.as_deref(), &revision),
        AirlockCommand::Scan { sha256, key, store } => scan(ctx, &store.path(), &sha256, &key),
        AirlockCommand::Accept {
            sha256,
            rows,
            reason,
            key,
            expires,
            store,
        } => airlock::accept(&store.path(), &sha256, &rows, &reason, &key, expires),
        AirlockCommand::Promote { sha256, store } => airlock::promote(&store.path(), &sha256),
        AirlockCommand::Ls { json, store } => airlock::ls(&store.path(), json),
        AirlockCommand::Export {
            sha256,
            dest,
            store,
        } => airlock::export(&store.path(), &sha256, &dest),
        AirlockCommand::Log {
            head,
            since,
            json,
            store,
        } => airlock::log(&store.path(), head, since.as_deref(), json),
        AirlockCommand::Convert {
            checkpoint,
            attestation,
            key,
            rules,
            store,
        } => convert(
            ctx,
            &store.path(),
            &checkpoint,
            &attestation,
            &key,
            rules.as_deref(),
        ),
    }
}

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
