//! The command line: the only room that prints or knows exit codes. The arguments
//! ([`args`]), the table that maps each command to its function (this file; the functions are
//! in [`commands`], [`airlock`] and [`oms`]), documents on standard output ([`output`]), the
//! plugin listing ([`listing`]), progress bars on a terminal ([`progress`]) and the exit codes
//! ([`exit`]).
//! May use every other room; none uses it.

pub mod airlock;
pub mod args;
pub mod batch;
pub mod commands;
pub mod exit;
pub mod human;
pub mod listing;
pub mod oms;
pub mod output;
pub mod progress;

pub use args::{
    parse_args, version_line, AirlockCommand, Cli, Command, Format, PinCommand, ReviewCommand,
    TensorsAction,
};
pub use exit::{Fatal, EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK};

use commands::context::Context;
use std::process::ExitCode;

/// Runs the parsed command line; returns the exit code.
pub fn run(cli: Cli) -> ExitCode {
    progress::install();
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(Fatal(message)) => {
            eprintln!("socair: error: {message}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Maps the parsed command to its function in [`commands`]: this only calls.
fn dispatch(cli: Cli) -> Result<u8, Fatal> {
    use commands::{convert, info, scan, signing, store, tensors};
    let Cli {
        plugin_dirs,
        reader,
        command,
    } = cli;
    let ctx = Context::new(plugin_dirs, reader);
    match command {
        Command::Completions { shell } => info::completions(shell),
        Command::Plugins { json } => info::plugins(ctx, json),
        Command::Bom {
            paths,
            each,
            profile,
            out,
        } => scan::bom(ctx, paths, each, profile, out),
        Command::Scan {
            paths,
            each,
            format,
            header_only,
            reviewed_classes,
            profile,
            reference,
            out,
            json,
        } => scan::scan(
            ctx,
            scan::ScanArgs {
                paths,
                each,
                format,
                header_only,
                reviewed_classes,
                profile,
                reference,
                out,
                json,
            },
        ),
        Command::Tensors {
            action:
                Some(TensorsAction::Diff {
                    artifact,
                    reference,
                    out,
                    html,
                    limit,
                }),
            ..
        } => tensors::diff(ctx, &artifact, &reference, out, html, limit),
        Command::Tensors {
            path: Some(path),
            out,
            json,
            action: None,
        } => tensors::fingerprint(ctx, &path, out, json),
        Command::Tensors { .. } => Err(Fatal("socair tensors needs a path".into())),
        Command::Keygen { out, algorithm } => signing::keygen(&out, algorithm),
        Command::Sign {
            model,
            key,
            out,
            ignore_paths,
            json,
        } => oms::sign(&model, &key, &out, &ignore_paths, json),
        Command::Convert {
            src,
            dst,
            from,
            to,
            rules,
        } => convert::convert(ctx, &src, &dst, &from, &to, rules.as_deref()),
        Command::Attest {
            path,
            key,
            out,
            reviewed_classes,
            profile,
            json,
            subject,
            oms_ignore,
        } => signing::attest(
            ctx,
            signing::AttestArgs {
                path,
                key,
                out,
                reviewed_classes,
                profile,
                json,
                subject,
                oms_ignore,
            },
        ),
        Command::Verify {
            envelope,
            artifact,
            store,
            public_key,
            signature_only,
            input,
            output,
            json,
        } => signing::verify(
            ctx,
            signing::VerifyArgs {
                envelope,
                artifact,
                store,
                public_key,
                signature_only,
                input,
                output,
                json,
            },
        ),
        Command::Airlock(cmd) => match cmd {
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
                store: s,
            }) => store::pin_plugin(ctx, &s.path(), &name, version, any_build, remove),
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
                store: s,
            }) => store::review_add(ctx, &s.path(), &class, &reason, &key, expires),
            AirlockCommand::Review(ReviewCommand::Ls { store }) => {
                airlock::review_ls(&store.path())
            }
            AirlockCommand::Review(ReviewCommand::Remove { id, key, store }) => {
                airlock::review_remove(&store.path(), &id, &key)
            }
            AirlockCommand::Pull { path, store } => airlock::pull(&store.path(), &path),
            AirlockCommand::Scan {
                sha256,
                key,
                store: s,
            } => store::scan(ctx, &s.path(), &sha256, &key),
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
                store: s,
            } => store::convert(
                ctx,
                &s.path(),
                &checkpoint,
                &attestation,
                &key,
                rules.as_deref(),
            ),
        },
    }
}
