//! The signing and store commands: `keygen`, `attest`, `verify`, `airlock …`. Each runs the
//! library's operation, prints what a person needs to know, and returns the exit code.

use crate::airlock::attest::{self, is_negative, verdicts};
use crate::airlock::derive;
use crate::airlock::gate;
use crate::airlock::pins::PluginPin;
use crate::airlock::policy::ROLES;
use crate::airlock::signing::{self, Statement};
use crate::airlock::store::Store;
use crate::airlock::{clock, store};
use crate::base::output::write_atomically;
use crate::cli::exit::{fatal, finish, refused, Fatal, EXIT_NEGATIVE, EXIT_OK};
use crate::read::artifact::ReaderChoice;
use crate::read::plugins::PluginSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `socair keygen --out K`.
pub fn keygen(out: &Path) -> Result<u8, Fatal> {
    let id = signing::keygen(out).map_err(fatal)?;
    println!("{id}");
    eprintln!(
        "socair: wrote {} (private, mode 0600) and {} (public); keyid {id}",
        out.display(),
        signing::public_path(out).display()
    );
    Ok(EXIT_OK)
}

/// `socair attest <path> --key K [--out A]`.
pub fn attest(
    path: &Path,
    key: &Path,
    out: Option<PathBuf>,
    plugins: &PluginSet,
    readers: &ReaderChoice,
) -> Result<u8, Fatal> {
    let key = signing::load_signing_key(key).map_err(fatal)?;
    let (bytes, report) = attest::attest(path, plugins, readers, &key).map_err(fatal)?;
    let out = out.unwrap_or_else(|| {
        let mut s = path.as_os_str().to_owned();
        s.push(".attestation.dsse.json");
        PathBuf::from(s)
    });
    write_atomically(&out, &bytes).map_err(|e| Fatal(format!("{}: {e}", out.display())))?;
    eprintln!(
        "socair: signed the scan of {:?} (sha256 {}) with key {}: {}",
        report.artifact.name,
        report.artifact.sha256,
        signing::keyid(&key.verifying_key()),
        out.display()
    );
    Ok(if is_negative(&report) {
        EXIT_NEGATIVE
    } else {
        EXIT_OK
    })
}

/// `socair verify <envelope> [--store S | --pub P]`: prints the verified statement.
pub fn verify(
    envelope: &Path,
    store: Option<PathBuf>,
    public: Option<PathBuf>,
    files: Option<(PathBuf, PathBuf)>,
    plugins: &PluginSet,
) -> Result<u8, Fatal> {
    let bytes =
        std::fs::read(envelope).map_err(|e| Fatal(format!("{}: {e}", envelope.display())))?;
    let keys = match (public, store) {
        (Some(p), _) => vec![signing::load_public_key(&p).map_err(fatal)?],
        (None, store) => {
            let store = Store::open(&store::default_path(store)).map_err(fatal)?;
            let policy = store.policy().map_err(fatal)?;
            let mut keys = Vec::new();
            for role in ROLES {
                keys.extend(policy.keys_with_role(role).map_err(fatal)?);
            }
            keys
        }
    };
    match signing::verify(&bytes, &keys) {
        Ok(v) => {
            let statement = match Statement::parse(&v.payload) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("socair: refused: {}: {e}", envelope.display());
                    return Ok(EXIT_NEGATIVE);
                }
            };
            // The payload exactly as signed: never re-serialized.
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&v.payload).map_err(fatal)?;
            stdout.write_all(b"\n").map_err(fatal)?;
            if let Some((input, output)) = &files {
                if statement.predicate_type != signing::DERIVATION_PREDICATE {
                    return Err(Fatal(
                        "--input/--output apply to a derivation record".into(),
                    ));
                }
                let problems = derive::recheck_derivation(&statement, input, output, plugins)
                    .map_err(Fatal)?;
                for p in &problems {
                    eprintln!("socair: mismatch: {p}");
                }
                if !problems.is_empty() {
                    return Ok(EXIT_NEGATIVE);
                }
                eprintln!("socair: every tensor of the record re-hashes equal from the input and the output");
            }
            eprintln!(
                "socair: {} verifies: signed by key {}; {} about {} (sha256 {})",
                envelope.display(),
                v.keyid,
                statement.predicate_type,
                statement
                    .subject
                    .first()
                    .map_or("nothing", |s| s.name.as_str()),
                statement.subject_sha256().unwrap_or("?")
            );
            Ok(EXIT_OK)
        }
        Err(signing::SigningError::Envelope(e)) => {
            Err(Fatal(format!("{}: {e}", envelope.display())))
        }
        Err(e) => {
            eprintln!("socair: refused: {}: {e}", envelope.display());
            Ok(EXIT_NEGATIVE)
        }
    }
}

/// `socair airlock init`.
pub fn init(store: &Path) -> Result<u8, Fatal> {
    Store::init(store).map_err(fatal)?;
    eprintln!("socair: created the store {}", store.display());
    Ok(EXIT_OK)
}

/// `socair airlock trust K.pub --role R[,R]`.
pub fn trust(store: &Path, public: &Path, roles: &[String]) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let id = store.trust(public, roles).map_err(fatal)?;
    eprintln!("socair: trusted key {id} for {}", roles.join(", "));
    Ok(EXIT_OK)
}

/// `socair airlock pin plugin <name>`.
pub fn pin_plugin(
    store: &Path,
    name: &str,
    version: Option<String>,
    any_build: bool,
    remove: bool,
    plugins: &PluginSet,
) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    if remove {
        store.pin_plugin(name, None).map_err(fatal)?;
        eprintln!("socair: plugin {name} is no longer pinned");
        return Ok(EXIT_OK);
    }
    let loaded = plugins.loaded.iter().find(|p| p.manifest.name == name);
    let (version, sha256) = match (version, loaded) {
        (Some(v), Some(p)) => (v, (!any_build).then(|| p.sha256.clone())),
        (Some(v), None) if any_build => (v, None),
        (None, Some(p)) => (
            format!("={}", p.manifest.version),
            (!any_build).then(|| p.sha256.clone()),
        ),
        _ => {
            return Err(Fatal(format!(
                "plugin {name} is not loaded, so its version and library cannot be read (see `socair plugins`; pin a version with --version and --any-build)"
            )))
        }
    };
    let pin = PluginPin { version, sha256 };
    store.pin_plugin(name, Some(pin.clone())).map_err(fatal)?;
    eprintln!(
        "socair: pinned plugin {name} {}{}",
        pin.version,
        pin.sha256
            .as_deref()
            .map_or(String::new(), |h| format!(", library sha256 {h}"))
    );
    Ok(EXIT_OK)
}

/// `socair airlock pin rules <name> <requirement>`.
pub fn pin_rules(
    store: &Path,
    name: &str,
    requirement: Option<&str>,
    remove: bool,
) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let requirement = match (requirement, remove) {
        (_, true) => None,
        (Some(r), false) => Some(r),
        (None, false) => {
            return Err(Fatal(format!(
                "a requirement for {name} is needed (\"=1\"), or --remove"
            )))
        }
    };
    store.pin_rules(name, requirement).map_err(fatal)?;
    match requirement {
        Some(r) => eprintln!("socair: pinned rule set {name} {r}"),
        None => eprintln!("socair: rule set {name} is no longer pinned"),
    }
    Ok(EXIT_OK)
}

/// `socair airlock pull <path>`.
pub fn pull(store: &Path, source: &Path) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    match store.pull(source) {
        Ok((sha, name)) => {
            println!("{sha}");
            eprintln!("socair: staged {name:?} as incoming/{sha}/{name}");
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock scan <sha256> --key K`.
pub fn scan_staged(store: &Path, sha: &str, key: &Path, plugins: &PluginSet) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    match attest::scan_staged(&store, sha, &key, plugins) {
        Ok(report) => {
            eprintln!("socair: signed attestation stored: {}", verdicts(&report));
            Ok(if is_negative(&report) {
                EXIT_NEGATIVE
            } else {
                EXIT_OK
            })
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock accept <sha256> --row CHECK --reason TEXT --key K [--expires T]`.
pub fn accept(
    store: &Path,
    sha: &str,
    checks: &[String],
    reason: &str,
    key: &Path,
    expires: Option<String>,
) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    if reason.trim().is_empty() {
        return Err(Fatal("--reason must say why the gap is accepted".into()));
    }
    let expires = match expires {
        Some(t) => {
            let secs = clock::parse(&t).map_err(Fatal)?;
            if secs <= clock::now() {
                return Err(Fatal(format!("--expires {t} is already past")));
            }
            Some(clock::format(secs))
        }
        None => None,
    };
    match gate::accept(&store, sha, checks, reason, &key, expires) {
        Ok(id) => {
            eprintln!("socair: acceptance {id} stored for {}", checks.join(", "));
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock promote <sha256>`.
pub fn promote(store: &Path, sha: &str) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let code = finish(gate::promote(&store, sha))?;
    if code == EXIT_OK {
        eprintln!("socair: promoted {sha} to promoted/{sha}/");
    }
    Ok(code)
}

/// `socair airlock log`: prints the log and verifies its chain.
pub fn log(store: &Path) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    match store.log().read().map_err(fatal)? {
        Ok(log) => {
            for l in &log.lines {
                println!("{l}");
            }
            if log.torn > 0 {
                eprintln!(
                    "socair: warning: the log ends in {} bytes of an incomplete line (an append a crash interrupted); it is not an entry, and the next append removes it",
                    log.torn
                );
            }
            eprintln!("socair: {} log entries; the chain holds", log.lines.len());
            Ok(EXIT_OK)
        }
        Err((line, why)) => {
            eprintln!("socair: the activity log's chain breaks at line {line}: {why}");
            Ok(EXIT_NEGATIVE)
        }
    }
}

/// `socair airlock convert <checkpoint> --attestation A --key K`.
pub fn convert(
    store_path: &Path,
    checkpoint: &Path,
    attestation: &Path,
    key: &Path,
    rules: Option<&str>,
    plugins: &PluginSet,
) -> Result<u8, Fatal> {
    let store = Store::open(store_path).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    match derive::convert(&store, checkpoint, attestation, &key, rules, plugins) {
        Ok((out_sha, name, rules)) => {
            println!("{out_sha}");
            eprintln!(
                "socair: converted under {}: incoming/{out_sha}/{name} with derivation.dsse.json",
                rules.id()
            );
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}
