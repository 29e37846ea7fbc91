//! The signing and store commands: `keygen`, `attest`, `verify`, `airlock …`.

use crate::cli::{Fatal, EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK};
use crate::plugins::PluginSet;
use crate::scan::{scan, Report, ScanOptions};
use crate::signing::{self, Statement};
use crate::store::{AcceptancePredicate, LogEntry, Store, StoreError, ACCEPTANCES, ATTESTATION};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn fatal(e: impl std::fmt::Display) -> Fatal {
    Fatal(e.to_string())
}

/// Maps a store result to an exit code, printing a refusal.
fn finish(result: Result<(), StoreError>) -> Result<u8, Fatal> {
    match result {
        Ok(()) => Ok(EXIT_OK),
        Err(StoreError::Refused(why)) => {
            eprintln!("socair: refused: {why}");
            Ok(EXIT_NEGATIVE)
        }
        Err(StoreError::Unusable(why)) => Err(Fatal(why)),
    }
}

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

/// Scans `path` and signs the report as an in-toto Statement; returns the envelope bytes and
/// the report.
pub fn attest_bytes(
    path: &Path,
    plugins: &PluginSet,
    key: &ed25519_dalek::SigningKey,
) -> Result<(Vec<u8>, Report), Fatal> {
    let report = scan(path, plugins, &ScanOptions::default()).map_err(fatal)?;
    let statement = Statement::new(
        &report.artifact.name,
        &report.artifact.sha256,
        signing::SCAN_PREDICATE,
        serde_json::to_value(&report).expect("plain data"),
    );
    let body = serde_json::to_vec(&statement).expect("plain data");
    let envelope = signing::sign(&body, key);
    Ok((crate::output::to_json_bytes(&envelope), report))
}

fn negative(report: &Report) -> bool {
    report
        .rows
        .iter()
        .any(|r| r.status == "FAIL" || r.status == "LEAD")
}

/// `socair attest <path> --key K [--out A]`.
pub fn attest(
    path: &Path,
    key: &Path,
    out: Option<PathBuf>,
    plugins: &PluginSet,
) -> Result<u8, Fatal> {
    let key = signing::load_signing_key(key).map_err(fatal)?;
    let (bytes, report) = attest_bytes(path, plugins, &key)?;
    let out = out.unwrap_or_else(|| {
        let mut s = path.as_os_str().to_owned();
        s.push(".attestation.dsse.json");
        PathBuf::from(s)
    });
    crate::output::write_atomically(&out, &bytes)
        .map_err(|e| Fatal(format!("{}: {e}", out.display())))?;
    eprintln!(
        "socair: signed the scan of {:?} (sha256 {}) with key {}: {}",
        report.artifact.name,
        report.artifact.sha256,
        signing::keyid(&key.verifying_key()),
        out.display()
    );
    Ok(if negative(&report) {
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
) -> Result<u8, Fatal> {
    let bytes =
        std::fs::read(envelope).map_err(|e| Fatal(format!("{}: {e}", envelope.display())))?;
    let keys = match (public, store) {
        (Some(p), _) => vec![signing::load_public_key(&p).map_err(fatal)?],
        (None, store) => {
            let store = Store::open(&crate::store::default_path(store)).map_err(fatal)?;
            let policy = store.policy().map_err(fatal)?;
            let mut keys = Vec::new();
            for role in crate::store::ROLES {
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
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&v.payload).map_err(fatal)?;
            stdout.write_all(b"\n").map_err(fatal)?;
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

/// `socair airlock pull <path>`.
pub fn pull(store: &Path, source: &Path) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    match store.pull(source) {
        Ok((sha, name)) => {
            println!("{sha}");
            eprintln!("socair: staged {name:?} as incoming/{sha}/{name}");
            Ok(EXIT_OK)
        }
        Err(e) => finish(Err(e)),
    }
}

/// `socair airlock scan <sha256> --key K`.
pub fn scan_staged(store: &Path, sha: &str, key: &Path, plugins: &PluginSet) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    let keyid = signing::keyid(&key.verifying_key());
    let result = (|| -> Result<Report, StoreError> {
        let policy = store.policy()?;
        if !policy
            .roles_of(&keyid)
            .is_some_and(|r| r.iter().any(|r| r == "scan"))
        {
            return Err(StoreError::Refused(format!(
                "key {keyid} is not in the store's trust policy with role `scan`"
            )));
        }
        let (dir, name) = store.staged(sha)?;
        let (bytes, report) = attest_bytes(&dir.join(&name), plugins, &key)
            .map_err(|Fatal(e)| StoreError::Unusable(e))?;
        if report.artifact.sha256 != sha {
            return Err(StoreError::Refused(format!(
                "the staged bytes hash to {}, not {sha}: they changed after the pull",
                report.artifact.sha256
            )));
        }
        store.put_beside(sha, ATTESTATION, &bytes)?;
        Ok(report)
    })();
    let mut e = LogEntry::new("scan", if result.is_ok() { "ok" } else { "refused" });
    e.subject = Some(sha.to_owned());
    e.key = Some(keyid);
    match &result {
        Ok(report) => {
            e.detail = Some(
                report
                    .rows
                    .iter()
                    .map(|r| format!("{} {}", r.status, r.check))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        Err(err) => e.detail = Some(err.to_string()),
    }
    store.append(e).map_err(fatal)?;
    match result {
        Ok(report) => {
            eprintln!(
                "socair: signed attestation stored: {}",
                report
                    .rows
                    .iter()
                    .map(|r| format!("{} {}", r.status, r.check))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Ok(if negative(&report) {
                EXIT_NEGATIVE
            } else {
                EXIT_OK
            })
        }
        Err(e) => finish(Err(e)),
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
    let keyid = signing::keyid(&key.verifying_key());
    if reason.trim().is_empty() {
        return Err(Fatal("--reason must say why the gap is accepted".into()));
    }
    let expires = match expires {
        Some(t) => {
            let secs = crate::clock::parse(&t).map_err(Fatal)?;
            if secs <= crate::clock::now() {
                return Err(Fatal(format!("--expires {t} is already past")));
            }
            Some(crate::clock::format(secs))
        }
        None => None,
    };
    let result = (|| -> Result<String, StoreError> {
        let policy = store.policy()?;
        if !policy
            .roles_of(&keyid)
            .is_some_and(|r| r.iter().any(|r| r == "accept"))
        {
            return Err(StoreError::Refused(format!(
                "key {keyid} is not in the store's trust policy with role `accept`"
            )));
        }
        let assessed = crate::store::assess_attestation(&store, sha)?;
        for check in checks {
            match assessed.rows.iter().find(|r| &r.check == check) {
                Some(r) if r.status == "NOT_TESTED" => {}
                Some(r) => {
                    return Err(StoreError::Refused(format!(
                        "the {check:?} row is {}, not NOT_TESTED: only a gap can be accepted",
                        r.status
                    )))
                }
                None => {
                    return Err(StoreError::Refused(format!(
                        "the attestation has no {check:?} row"
                    )))
                }
            }
        }
        let predicate = AcceptancePredicate {
            subject_sha256: sha.to_owned(),
            accepted_checks: checks.to_vec(),
            reason: reason.to_owned(),
            attestation_sha256: assessed.attestation_sha256.clone(),
            signer: keyid.clone(),
            time: crate::clock::format(crate::clock::now()),
            expires: expires.clone(),
        };
        let (_, name) = store.staged(sha)?;
        let statement = Statement::new(
            &name,
            sha,
            signing::ACCEPTANCE_PREDICATE,
            serde_json::to_value(&predicate).expect("plain data"),
        );
        let env = crate::output::to_json_bytes(&signing::sign(
            &serde_json::to_vec(&statement).expect("plain data"),
            &key,
        ));
        let id = crate::fingerprint::hex(&Sha256::digest(&env));
        store.put_beside(sha, &format!("{ACCEPTANCES}/{id}.dsse.json"), &env)?;
        Ok(id)
    })();
    let mut e = LogEntry::new("accept", if result.is_ok() { "ok" } else { "refused" });
    e.subject = Some(sha.to_owned());
    e.key = Some(keyid);
    e.detail = Some(match &result {
        Ok(_) => format!("accepted {}: {reason}", checks.join(", ")),
        Err(err) => err.to_string(),
    });
    store.append(e).map_err(fatal)?;
    match result {
        Ok(id) => {
            eprintln!("socair: acceptance {id} stored for {}", checks.join(", "));
            Ok(EXIT_OK)
        }
        Err(e) => finish(Err(e)),
    }
}

/// `socair airlock promote <sha256>`.
pub fn promote(store: &Path, sha: &str) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let code = finish(store.promote(sha))?;
    if code == EXIT_OK {
        eprintln!("socair: promoted {sha} to promoted/{sha}/");
    }
    Ok(code)
}

/// `socair airlock log`: prints the log and verifies its chain.
pub fn log(store: &Path) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    match store.read_log().map_err(fatal)? {
        Ok(lines) => {
            for l in &lines {
                println!("{l}");
            }
            eprintln!("socair: {} log entries; the chain holds", lines.len());
            Ok(EXIT_OK)
        }
        Err((line, why)) => {
            eprintln!("socair: the activity log's chain breaks at line {line}: {why}");
            Ok(EXIT_NEGATIVE)
        }
    }
}

/// Exit code for a fatal error, for callers outside the CLI.
pub const FATAL: u8 = EXIT_ERROR;
