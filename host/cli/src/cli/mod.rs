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
            reference_pub,
            reference_store,
            reference_feed,
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
                reference_keys: tensors::KeySource {
                    public: reference_pub,
                    store: reference_store,
                },
                reference_feed,
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
                    json,
                    public_keys,
                    store,
                }),
            ..
        } => tensors::diff(
            ctx,
            &artifact,
            &reference,
            out,
            html,
            limit,
            &tensors::KeySource {
                public: public_keys,
                store,
            },
            json,
        ),
        Command::Tensors {
            action: Some(TensorsAction::Publish { envelope, feed }),
            ..
        } => tensors::publish(&envelope, &feed),
        Command::Tensors {
            path: Some(path),
            out,
            json,
            sign,
            key,
            action: None,
        } => tensors::fingerprint(ctx, &path, out, json, key.filter(|_| sign).as_deref()),
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
        Command::Airlock(cmd) => store::airlock(ctx, cmd),
        Command::Serve {
            listen,
            tokens,
            header_timeout,
            quiet,
            upstream,
            key,
            store,
        } => commands::serve::serve(
            ctx,
            &store.path(),
            listen,
            tokens,
            header_timeout,
            quiet,
            upstream.zip(key),
        ),
    }
}
