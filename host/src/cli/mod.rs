//! The command line: the only room that prints or knows exit codes. The arguments
//! ([`args`]), the dispatch of each command to the library (this file, and [`airlock`] for the
//! signing and store commands), documents on standard output ([`output`]), the plugin listing
//! ([`listing`]), progress bars on a terminal ([`progress`]) and the exit codes ([`exit`]).
//! May use every other room; none uses it.

pub mod airlock;
pub mod args;
pub mod exit;
pub mod listing;
pub mod output;
pub mod progress;

pub use args::{parse_args, version_line, AirlockCommand, Cli, Command, PinCommand, TensorsAction};
pub use exit::{Fatal, EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK};

use crate::base::output::to_json_bytes;
use crate::convert::convert_path;
use crate::convert::rules::Rules;
use crate::fingerprint::{diff, diff_html, diff_text, manifest};
use crate::read::plugins::{self, PluginSet};
use crate::report::reference::{read_reference, REFERENCE_ENV};
use crate::report::scan::{read_reviewed, scan, ScanOptions};
use listing::PluginListing;
use output::emit;
use std::path::PathBuf;
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

fn load_plugins(flag_dirs: &[PathBuf]) -> PluginSet {
    let dirs = plugins::search_path(
        flag_dirs,
        std::env::var_os(plugins::PLUGIN_PATH_ENV),
        std::env::current_exe().ok(),
    );
    plugins::discover(&dirs)
}

fn dispatch(cli: Cli) -> Result<u8, Fatal> {
    match cli.command {
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "socair", &mut out);
            emit(None, &out)?;
            Ok(EXIT_OK)
        }
        Command::Plugins { json } => {
            let set = load_plugins(&cli.plugin_dirs);
            let listing = PluginListing::of(&set);
            if json {
                emit(None, &to_json_bytes(&listing))?;
            } else {
                emit(None, listing.to_text().as_bytes())?;
            }
            Ok(if set.refused.is_empty() {
                EXIT_OK
            } else {
                EXIT_NEGATIVE
            })
        }
        Command::Scan {
            path,
            header_only,
            reviewed_classes,
            out,
        } => {
            let reviewed = match reviewed_classes {
                Some(f) => Some(read_reviewed(&f).map_err(|e| {
                    Fatal(format!(
                        "{}: cannot read reviewed classes: {e}",
                        f.display()
                    ))
                })?),
                None => None,
            };
            let reference = match std::env::var_os(REFERENCE_ENV) {
                Some(p) if !p.is_empty() => {
                    Some(read_reference(std::path::Path::new(&p)).map_err(Fatal)?)
                }
                _ => None,
            };
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            let report = scan(
                &path,
                &set,
                &ScanOptions {
                    header_only,
                    reviewed,
                    reference,
                },
            )
            .map_err(|e| Fatal(e.to_string()))?;
            emit(out.as_deref(), &to_json_bytes(&report))?;
            let verdicts: Vec<String> = report
                .rows
                .iter()
                .map(|r| format!("{} {}", r.status, r.check))
                .collect();
            eprintln!(
                "socair: scanned {} {:?} (sha256 {}): {}",
                report.artifact.format,
                report.artifact.name,
                &report.artifact.sha256[..16.min(report.artifact.sha256.len())],
                verdicts.join(", ")
            );
            for r in &report.rows {
                for f in &r.findings {
                    eprintln!(
                        "socair: {} {}: {}: {}",
                        r.status, r.check, f.place, f.reason
                    );
                }
            }
            let negative = report
                .rows
                .iter()
                .any(|r| r.status == "FAIL" || r.status == "LEAD");
            Ok(if negative { EXIT_NEGATIVE } else { EXIT_OK })
        }
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
        } => {
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            let comparison = diff::compare_paths(&artifact, &reference, &set).map_err(Fatal)?;
            emit(out.as_deref(), &to_json_bytes(&comparison))?;
            let summary = diff_text::summary(&comparison, limit);
            if let Some(page) = html {
                let rendered = diff_html::render(&comparison, &summary);
                emit(Some(&page), rendered.as_bytes())?;
            }
            for line in summary.lines() {
                eprintln!("socair: {line}");
            }
            Ok(if comparison.matches {
                EXIT_OK
            } else {
                EXIT_NEGATIVE
            })
        }
        Command::Tensors {
            path: Some(path),
            out,
            action: None,
        } => {
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            let manifest = manifest::fingerprint(&path, &set).map_err(|e| Fatal(e.to_string()))?;
            emit(out.as_deref(), &to_json_bytes(&manifest))?;
            let files: std::collections::BTreeSet<&str> =
                manifest.tensors.iter().map(|t| t.file.as_str()).collect();
            eprintln!(
                "socair: {} tensors fingerprinted in {} file{} of {} {:?} (sha256 {}); {} unread",
                manifest.tensors.len(),
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                manifest.artifact.format,
                manifest.artifact.name,
                &manifest.artifact.sha256[..16.min(manifest.artifact.sha256.len())],
                manifest.unread.len()
            );
            for u in &manifest.unread {
                match &u.tensor {
                    Some(t) => eprintln!("socair: unread: {} tensor {t:?}: {}", u.file, u.reason),
                    None => eprintln!("socair: unread: {}: {}", u.file, u.reason),
                }
            }
            Ok(if manifest.unread.is_empty() {
                EXIT_OK
            } else {
                EXIT_NEGATIVE
            })
        }
        Command::Tensors { .. } => Err(Fatal("socair tensors needs a path".into())),
        Command::Keygen { out } => airlock::keygen(&out),
        Command::Convert {
            src,
            dst,
            from,
            to,
            rules,
        } => {
            let rules = Rules::select(rules.as_deref(), None).map_err(Fatal)?;
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            match convert_path(&src, &dst, &from, &to, &set, rules).map_err(Fatal)? {
                Ok(done) => {
                    eprintln!(
                        "socair: converted {} ({from}) to {} ({to}) under {}: {} tensors, {} aliases, sha256 {}",
                        src.display(),
                        dst.display(),
                        done.rules.id(),
                        done.conversion.tensors.len(),
                        done.conversion.aliases.len(),
                        done.sha256
                    );
                    for n in &done.conversion.not_carried {
                        eprintln!("socair: not carried: {n}");
                    }
                    Ok(EXIT_OK)
                }
                Err(refusal) => {
                    eprintln!("socair: refused: {refusal}");
                    Ok(EXIT_NEGATIVE)
                }
            }
        }
        Command::Attest { path, key, out } => {
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            airlock::attest(&path, &key, out, &set)
        }
        Command::Verify {
            envelope,
            store,
            public_key,
            input,
            output,
        } => {
            let set = load_plugins(&cli.plugin_dirs);
            airlock::verify(&envelope, store, public_key, input.zip(output), &set)
        }
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
                store,
            }) => {
                let set = load_plugins(&cli.plugin_dirs);
                airlock::pin_plugin(&store.path(), &name, version, any_build, remove, &set)
            }
            AirlockCommand::Pin(PinCommand::Rules {
                name,
                requirement,
                remove,
                store,
            }) => airlock::pin_rules(&store.path(), &name, requirement.as_deref(), remove),
            AirlockCommand::Pull { path, store } => airlock::pull(&store.path(), &path),
            AirlockCommand::Scan { sha256, key, store } => {
                let set = load_plugins(&cli.plugin_dirs);
                warn_refused(&set);
                airlock::scan_staged(&store.path(), &sha256, &key, &set)
            }
            AirlockCommand::Accept {
                sha256,
                rows,
                reason,
                key,
                expires,
                store,
            } => airlock::accept(&store.path(), &sha256, &rows, &reason, &key, expires),
            AirlockCommand::Promote { sha256, store } => airlock::promote(&store.path(), &sha256),
            AirlockCommand::Log { store } => airlock::log(&store.path()),
            AirlockCommand::Convert {
                checkpoint,
                attestation,
                key,
                rules,
                store,
            } => {
                if let Some(r) = &rules {
                    // A --rules this socair does not implement is a usage error (exit 2).
                    Rules::parse(r).map_err(Fatal)?;
                }
                let set = load_plugins(&cli.plugin_dirs);
                warn_refused(&set);
                airlock::convert(
                    &store.path(),
                    &checkpoint,
                    &attestation,
                    &key,
                    rules.as_deref(),
                    &set,
                )
            }
        },
    }
}

/// Commands that only use plugins still say that a plugin file was refused.
fn warn_refused(set: &PluginSet) {
    for r in &set.refused {
        eprintln!(
            "socair: warning: plugin {} refused: {}",
            r.path.display(),
            r.reason
        );
    }
}
