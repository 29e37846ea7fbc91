//! The command line: the only room that prints or knows exit codes. The arguments
//! ([`args`]), the dispatch of each command to the library (this file, and [`airlock`] for the
//! signing and store commands), documents on standard output ([`output`]), the plugin listing
//! ([`listing`]), progress bars on a terminal ([`progress`]) and the exit codes ([`exit`]).
//! May use every other room; none uses it.

pub mod airlock;
pub mod args;
pub mod batch;
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

use crate::airlock::attest::verdicts;
use crate::base::output::to_json_bytes;
use crate::convert::convert_path;
use crate::convert::rules::Rules;
use crate::fingerprint::{diff, diff_html, diff_text, manifest};
use crate::read::artifact::ReaderChoice;
use crate::read::plugins::{self, PluginSet};
use crate::report::reference::{read_reference, REFERENCE_ENV};
use crate::report::scan::{read_reviewed, scan, ScanOptions};
use listing::PluginListing;
use output::{emit, for_a_person};
use std::path::PathBuf;
use std::process::ExitCode;

/// Findings printed to standard error after a document; the document holds them all.
const STDERR_FINDINGS: usize = 50;

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
    let mut readers = ReaderChoice {
        named: cli.reader.clone(),
        ..ReaderChoice::default()
    };
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
        Command::Bom {
            paths,
            each,
            profile,
            out,
        } => {
            ask_profile(&mut readers, profile.as_deref());
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            let options = ScanOptions {
                readers,
                ..ScanOptions::default()
            };
            let batch = batch::Batch {
                paths,
                each,
                format: Format::Cyclonedx,
                out,
                json: false,
                options,
            };
            batch::run(batch, &set)
        }
        Command::Scan {
            mut paths,
            each,
            format,
            header_only,
            reviewed_classes,
            profile,
            reference,
            out,
            json,
        } => {
            ask_profile(&mut readers, profile.as_deref());
            let reviewed = reviewed_list(reviewed_classes)?;
            // --reference, else the older SOCAIR_TENSOR_REFERENCE.
            let reference = reference.or_else(|| {
                std::env::var_os(REFERENCE_ENV)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
            });
            let reference = match reference {
                Some(p) => Some(read_reference(&p).map_err(Fatal)?),
                None => None,
            };
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            if format == Format::Text && (json || out.is_some()) {
                return Err(Fatal(
                    "--format text prints plain words to standard output: not with --json or --out"
                        .into(),
                ));
            }
            let single = matches!(format, Format::Report | Format::Text);
            if !single || paths.len() != 1 || !each.is_empty() {
                if reference.is_some() && (paths.len() != 1 || !each.is_empty()) {
                    return Err(Fatal(
                        "--reference compares one model with its manifest: give one path".into(),
                    ));
                }
                let options = ScanOptions {
                    header_only,
                    reviewed,
                    reference,
                    readers,
                    digest_not_computed: None,
                };
                let batch = batch::Batch {
                    paths,
                    each,
                    format,
                    out,
                    json,
                    options,
                };
                return batch::run(batch, &set);
            }
            let path = paths.remove(0);
            let report = scan(
                &path,
                &set,
                &ScanOptions {
                    header_only,
                    reviewed,
                    reference,
                    readers,
                    digest_not_computed: None,
                },
            )
            .map_err(|e| Fatal(e.to_string()))?;
            say_fetched(report.artifact.size_bytes);
            if let Some(why) = &report.scope.digest {
                eprintln!("socair: the subject digest was {why}");
            }
            if format == Format::Text || for_a_person(json, out.as_deref()) {
                emit(None, human::scan_report(&report).as_bytes())?;
            } else {
                emit(out.as_deref(), &to_json_bytes(&report))?;
                eprintln!(
                    "socair: scanned {} {:?} (sha256 {}): {}",
                    report.artifact.format,
                    report.artifact.name,
                    &report.artifact.sha256[..16.min(report.artifact.sha256.len())],
                    verdicts(&report)
                );
                let findings: Vec<String> = report
                    .rows
                    .iter()
                    .flat_map(|r| {
                        r.findings.iter().map(move |f| {
                            format!(
                                "socair: {} {}: {}: {}",
                                r.status,
                                r.check,
                                f.place,
                                f.reason_text()
                            )
                        })
                    })
                    .collect();
                for f in findings.iter().take(STDERR_FINDINGS) {
                    eprintln!("{f}");
                }
                if findings.len() > STDERR_FINDINGS {
                    eprintln!(
                        "socair: and {} more findings (in the report)",
                        findings.len() - STDERR_FINDINGS
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
            let comparison =
                diff::compare_paths(&artifact, &reference, &set, &readers).map_err(Fatal)?;
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
            json,
            action: None,
        } => {
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            let manifest =
                manifest::fingerprint(&path, &set, &readers).map_err(|e| Fatal(e.to_string()))?;
            say_fetched(0);
            if for_a_person(json, out.as_deref()) {
                emit(None, human::tensors_report(&manifest).as_bytes())?;
            } else {
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
                for u in manifest.unread.iter().take(STDERR_FINDINGS) {
                    match &u.tensor {
                        Some(t) => {
                            eprintln!("socair: unread: {} tensor {t:?}: {}", u.file, u.reason)
                        }
                        None => eprintln!("socair: unread: {}: {}", u.file, u.reason),
                    }
                }
                if manifest.unread.len() > STDERR_FINDINGS {
                    eprintln!(
                        "socair: and {} more unread (in the manifest)",
                        manifest.unread.len() - STDERR_FINDINGS
                    );
                }
            }
            Ok(if manifest.unread.is_empty() {
                EXIT_OK
            } else {
                EXIT_NEGATIVE
            })
        }
        Command::Tensors { .. } => Err(Fatal("socair tensors needs a path".into())),
        Command::Keygen { out, algorithm } => match algorithm {
            args::KeyAlgorithm::Ed25519 => airlock::keygen(&out),
            args::KeyAlgorithm::EcdsaP256 => oms::keygen(&out),
        },
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
        } => {
            let rules = Rules::select(rules.as_deref(), None).map_err(Fatal)?;
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            match convert_path(&src, &dst, &from, &to, &set, &readers, rules).map_err(Fatal)? {
                Ok(done) => {
                    eprintln!(
                        "socair: converted {} ({from}) to {} ({to}) under {}: {} {}, {} {}, sha256 {}",
                        src.display(),
                        dst.display(),
                        done.rules.id(),
                        done.conversion.tensors.len(),
                        if done.conversion.tensors.len() == 1 { "tensor" } else { "tensors" },
                        done.conversion.aliases.len(),
                        if done.conversion.aliases.len() == 1 { "alias" } else { "aliases" },
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
        Command::Attest {
            path,
            key,
            out,
            reviewed_classes,
            profile,
            json,
            subject,
            oms_ignore,
        } => {
            ask_profile(&mut readers, profile.as_deref());
            let subject = match subject {
                args::SubjectKind::Modeldir if oms_ignore.is_empty() => {
                    crate::airlock::attest::AttestSubject::Report
                }
                args::SubjectKind::Modeldir => {
                    return Err(Fatal("--oms-ignore goes with --subject oms".into()))
                }
                args::SubjectKind::Oms => crate::airlock::attest::AttestSubject::OmsRoot(
                    crate::airlock::oms::sign::resolve_ignore(&path, &oms_ignore)
                        .map_err(|e| Fatal(e.to_string()))?,
                ),
            };
            let options = ScanOptions {
                reviewed: reviewed_list(reviewed_classes)?,
                readers,
                ..ScanOptions::default()
            };
            let set = load_plugins(&cli.plugin_dirs);
            warn_refused(&set);
            airlock::attest(&path, &key, out, &set, &options, json, &subject)
        }
        Command::Verify {
            envelope,
            artifact,
            store,
            public_key,
            signature_only,
            input,
            output,
            json,
        } => {
            let set = load_plugins(&cli.plugin_dirs);
            let checks = crate::airlock::verify::Checks {
                signature_only,
                artifact: output.as_deref().or(artifact.as_deref()),
                input: input.as_deref(),
                output: output.as_deref(),
            };
            // An OpenSSF model signature (a Sigstore bundle) is told apart by its mediaType.
            if let Some(bytes) = oms::read_bundle(&envelope) {
                return oms::verify(&envelope, &bytes, store, public_key, checks, json);
            }
            airlock::verify(&envelope, store, public_key, checks, &set, json)
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
            AirlockCommand::Review(ReviewCommand::Add {
                class,
                reason,
                key,
                expires,
                store,
            }) => {
                let set = load_plugins(&cli.plugin_dirs);
                airlock::review_add(&store.path(), &class, &reason, &key, expires, &set)
            }
            AirlockCommand::Review(ReviewCommand::Ls { store }) => {
                airlock::review_ls(&store.path())
            }
            AirlockCommand::Review(ReviewCommand::Remove { id, key, store }) => {
                airlock::review_remove(&store.path(), &id, &key)
            }
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

/// `--profile NAME`: asks the plugins for the profile's rule set (a rule set they run only
/// when asked: `base::rules::OPT_IN`).
fn ask_profile(readers: &mut ReaderChoice, profile: Option<&str>) {
    let Some(name) = profile else { return };
    if let Some((_, rule_set, version)) = crate::base::rules::PROFILES
        .iter()
        .find(|(n, _, _)| *n == name)
    {
        readers
            .rules
            .insert((*rule_set).to_owned(), (*version).to_owned());
    }
}

/// Reads `--reviewed-classes`.
fn reviewed_list(file: Option<PathBuf>) -> Result<Option<Vec<String>>, Fatal> {
    file.map(|f| {
        read_reviewed(&f).map_err(|e| {
            Fatal(format!(
                "{}: cannot read reviewed classes: {e}",
                f.display()
            ))
        })
    })
    .transpose()
}

/// After reading from object storage: how many bytes were fetched, and what share of the
/// artifact's `size` (when known) that is.
fn say_fetched(size: u64) {
    let requests = crate::base::cloud::requests();
    if requests == 0 {
        return;
    }
    let fetched = crate::base::cloud::bytes_fetched();
    let share = if size > 0 {
        format!(" of {size} ({:.4}%)", fetched as f64 * 100.0 / size as f64)
    } else {
        String::new()
    };
    let trips = crate::base::cloud::round_trips();
    eprintln!(
        "socair: fetched {fetched} bytes{share} from object storage in {requests} range requests ({trips} round trips waited for, one after another)"
    );
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
