//! The signing and store commands: `keygen`, `attest`, `verify`, `airlock …`. Each runs the
//! library's operation, prints what a person needs to know, and returns the exit code.

use crate::airlock::attest::{self, is_negative, verdicts};
use crate::airlock::derive;
use crate::airlock::gate;
use crate::airlock::listing;
use crate::airlock::log::{extends, Head};
use crate::airlock::pins::PluginPin;
use crate::airlock::review;
use crate::airlock::signing;
use crate::airlock::store::Store;
use crate::airlock::verify::{self, Checks, Keys, VerifyError};
use crate::airlock::{clock, store};
use crate::base::output::write_atomically;
use crate::cli::exit::{fatal, refused, Fatal, EXIT_NEGATIVE, EXIT_OK};
use crate::cli::human;
use crate::cli::output::{emit, for_a_person};
use crate::read::plugins::PluginSet;
use crate::report::scan::ScanOptions;
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
    options: &ScanOptions,
    json: bool,
    subject: &attest::AttestSubject,
) -> Result<u8, Fatal> {
    let key = signing::load_signing_key(key).map_err(fatal)?;
    let (bytes, report) = attest::attest(path, plugins, options, &key, subject).map_err(fatal)?;
    // Beside the file; for an object, or a snapshot of the Hugging Face cache (which holds
    // only what huggingface_hub writes), in the current directory under the artifact's name.
    let out = out.unwrap_or_else(|| {
        use crate::read::hfcache;
        let elsewhere = crate::read::source::is_remote(path)
            || hfcache::is_uri(path)
            || hfcache::Snapshot::of(path).is_some()
            || path.parent().and_then(hfcache::Snapshot::of).is_some();
        let mut s = if elsewhere {
            std::ffi::OsString::from(report.artifact.name.replace('/', "--"))
        } else {
            path.as_os_str().to_owned()
        };
        s.push(".attestation.dsse.json");
        PathBuf::from(s)
    });
    write_atomically(&out, &bytes).map_err(|e| Fatal(format!("{}: {e}", out.display())))?;
    let keyid = signing::keyid(&key.verifying_key());
    if for_a_person(json, None) {
        emit(
            None,
            human::attest_report(&report, &out.display().to_string(), &keyid).as_bytes(),
        )?;
    } else {
        eprintln!(
            "socair: signed the scan of {:?} (sha256 {}) with key {keyid}: {}; verdict signed: {}",
            report.artifact.name,
            report.artifact.sha256,
            out.display(),
            verdicts(&report)
        );
    }
    Ok(if is_negative(&report) {
        EXIT_NEGATIVE
    } else {
        EXIT_OK
    })
}

/// `socair verify <envelope> [ARTIFACT] [--store S | --pub P]`: prints the payload as signed,
/// the signed rows, and every condition that fails.
pub fn verify(
    envelope: &Path,
    store: Option<PathBuf>,
    public: Option<PathBuf>,
    checks: Checks<'_>,
    plugins: &PluginSet,
    json: bool,
) -> Result<u8, Fatal> {
    let bytes =
        std::fs::read(envelope).map_err(|e| Fatal(format!("{}: {e}", envelope.display())))?;
    let policy;
    let keys = match (public, store) {
        (Some(p), _) => Keys::One(signing::load_public_key(&p).map_err(fatal)?),
        (None, store) => {
            let store = Store::open(&store::default_path(store)).map_err(fatal)?;
            policy = store.policy().map_err(fatal)?;
            Keys::Store(&policy)
        }
    };
    report_verification(
        verify::verify(envelope, &bytes, keys, checks, plugins),
        envelope,
        json,
    )
}

/// Prints a verification (of a socair envelope or an OpenSSF model signature) and returns the
/// exit code: 0 when every condition holds, 1 when one fails or no trusted key signed, 2 when
/// the file could not be used.
pub fn report_verification(
    verification: Result<verify::Verification, VerifyError>,
    envelope: &Path,
    json: bool,
) -> Result<u8, Fatal> {
    let v = match verification {
        Ok(v) => v,
        Err(VerifyError::Unusable(why)) => return Err(Fatal(why)),
        Err(VerifyError::Unsigned(why)) => {
            eprintln!("socair: refused: {why}");
            return Ok(EXIT_NEGATIVE);
        }
    };
    if for_a_person(json, None) {
        emit(
            None,
            human::verify_report(&v, &envelope.display().to_string()).as_bytes(),
        )?;
        return Ok(if v.problems.is_empty() {
            EXIT_OK
        } else {
            EXIT_NEGATIVE
        });
    }
    // The payload exactly as signed: never re-serialized.
    let mut payload = v.payload.clone();
    payload.push(b'\n');
    emit(None, &payload)?;
    if let Some(statement) = &v.statement {
        eprintln!(
            "socair: {} is signed by key {}: {} about {} (sha256 {})",
            envelope.display(),
            v.keyid,
            statement.predicate_type,
            statement
                .subject
                .first()
                .map_or("nothing", |s| s.name.as_str()),
            statement.subject_sha256().unwrap_or("?")
        );
    }
    for r in &v.rows {
        eprintln!(
            "socair: signed row: {} {}: {}",
            r.status, r.check, r.summary
        );
    }
    for h in &v.held {
        eprintln!("socair: holds: {h}");
    }
    match v.problems.split_first() {
        None => {
            eprintln!(
                "socair: {} verifies: every condition holds",
                envelope.display()
            );
            Ok(EXIT_OK)
        }
        Some((first, rest)) => {
            eprintln!("socair: refused: {first}");
            for p in rest {
                eprintln!("socair: also: {p}");
            }
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
        (Some(v), Some(p)) => (v, (!any_build).then(|| p.sha256().to_owned())),
        (Some(v), None) if any_build => (v, None),
        (None, Some(p)) => (
            format!("={}", p.manifest.version),
            (!any_build).then(|| p.sha256().to_owned()),
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

/// `socair airlock pull <path> [--as REPO [--revision R]]`.
pub fn pull(
    store: &Path,
    source: &Path,
    as_repo: Option<&str>,
    revision: &str,
) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    if let Some(repo) = as_repo {
        // Checked before anything is copied: a bad id leaves nothing staged.
        crate::airlock::repos::check_repo_id(repo).map_err(Fatal)?;
        crate::airlock::repos::check_revision(revision).map_err(Fatal)?;
    }
    match store.pull(source) {
        Ok((sha, name)) => {
            println!("{sha}");
            eprintln!("socair: staged {name:?} as incoming/{sha}/{name}");
            if let Some(repo) = as_repo {
                match crate::airlock::repos::record(&store, &sha, &name, source, repo, revision) {
                    Ok(rec) => eprintln!(
                        "socair: recorded {repo}@{revision} as commit {} ({} files); `socair serve` serves it once it is promoted",
                        rec.commit,
                        rec.files.len()
                    ),
                    Err(e) => return refused(e),
                }
            }
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock scan <sha256> --key K`.
pub fn scan_staged(store: &Path, sha: &str, key: &Path, plugins: &PluginSet) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let sha = store.resolve(sha).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    match attest::scan_staged(&store, &sha, &key, plugins) {
        Ok(report) => {
            if for_a_person(false, None) {
                emit(None, human::scan_report(&report).as_bytes())?;
            }
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
    let sha = store.resolve(sha).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    if reason.trim().is_empty() {
        return Err(Fatal("--reason must say why the gap is accepted".into()));
    }
    let expires = expiry(expires)?;
    match gate::accept(&store, &sha, checks, reason, &key, expires) {
        Ok(id) => {
            eprintln!("socair: acceptance {id} stored for {}", checks.join(", "));
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// Parses `--expires`: a future time, as RFC 3339 UTC.
fn expiry(expires: Option<String>) -> Result<Option<String>, Fatal> {
    match expires {
        Some(t) => {
            let secs = clock::parse(&t).map_err(Fatal)?;
            if secs <= clock::now() {
                return Err(Fatal(format!("--expires {t} is already past")));
            }
            Ok(Some(clock::format(secs)))
        }
        None => Ok(None),
    }
}

/// `socair airlock review add CLASS --reason R --key K [--expires T]`.
pub fn review_add(
    store: &Path,
    class: &str,
    reason: &str,
    key: &Path,
    expires: Option<String>,
    plugins: &PluginSet,
) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    if reason.trim().is_empty() {
        return Err(Fatal("--reason must say why loading it is safe".into()));
    }
    let expires = expiry(expires)?;
    match review::add(&store, class, reason, &key, expires, plugins) {
        Ok(id) => {
            println!("{id}");
            eprintln!(
                "socair: review {id} stored: {class} is reviewed; later `airlock scan`s accept it"
            );
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock review ls`.
pub fn review_ls(store: &Path) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let policy = store.policy().map_err(fatal)?;
    let reviews = review::valid(&store, &policy).map_err(fatal)?;
    for r in &reviews {
        let p = &r.predicate;
        println!(
            "{}  {}  signed by {} on {}{}: {}",
            &r.id[..16],
            p.class,
            &p.signer[..16.min(p.signer.len())],
            p.time,
            p.expires
                .as_deref()
                .map_or(String::new(), |t| format!(", until {t}")),
            p.reason
        );
    }
    eprintln!("socair: {} valid review(s)", reviews.len());
    Ok(EXIT_OK)
}

/// `socair airlock review remove ID --key K`.
pub fn review_remove(store: &Path, id: &str, key: &Path) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let key = signing::load_signing_key(key).map_err(fatal)?;
    match review::remove(&store, id, &key) {
        Ok(r) => {
            eprintln!("socair: withdrew review {} of {}", r.id, r.predicate.class);
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock promote <sha256>`.
pub fn promote(store: &Path, sha: &str) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let sha = store.resolve(sha).map_err(fatal)?;
    match gate::promote(&store, &sha) {
        Ok(true) => {
            eprintln!("socair: promoted {sha} to promoted/{sha}/");
            Ok(EXIT_OK)
        }
        Ok(false) => {
            eprintln!("socair: {sha} is already promoted (promoted/{sha}/)");
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock ls`: staged and promoted artifacts with their verdicts.
pub fn ls(store: &Path, json: bool) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let listed = listing::list(&store).map_err(fatal)?;
    if json || !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        emit(None, &crate::base::output::to_json_bytes(&listed))?;
    } else {
        let mut text = String::new();
        for l in &listed {
            text.push_str(&format!(
                "{:<8}  {}  {}\n          {}{}{}\n",
                l.state,
                &l.sha256[..16],
                l.name,
                l.verdict,
                if l.acceptances > 0 {
                    format!("; {} acceptance(s)", l.acceptances)
                } else {
                    String::new()
                },
                if l.derived {
                    "; made by a conversion"
                } else {
                    ""
                }
            ));
        }
        if listed.is_empty() {
            text.push_str("the store holds nothing yet: `socair airlock pull FILE` stages one\n");
        }
        emit(None, text.as_bytes())?;
    }
    Ok(EXIT_OK)
}

/// `socair airlock export <sha256> <dest>`.
pub fn export(store: &Path, sha: &str, dest: &Path) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let sha = store.resolve(sha).map_err(fatal)?;
    match listing::export(&store, &sha, dest) {
        Ok(to) => {
            eprintln!(
                "socair: exported {sha} to {}; it hashes to its sha256",
                to.display()
            );
            Ok(EXIT_OK)
        }
        Err(e) => refused(e),
    }
}

/// `socair airlock log [--head | --since HEAD]`: prints the log and checks it (its chain, line
/// endings, head record and logged policy changes); `--head` prints only its head, to anchor
/// elsewhere; `--since` checks that it extends an anchored head.
pub fn log(store: &Path, head: bool, since: Option<&str>, json: bool) -> Result<u8, Fatal> {
    let store = Store::open(store).map_err(fatal)?;
    let anchor = since.map(Head::parse).transpose().map_err(Fatal)?;
    let check = store.read_log().map_err(fatal)?;
    if !head && anchor.is_none() && for_a_person(json, None) {
        emit(None, human::log_report(&check).as_bytes())?;
        return Ok(if check.holds() {
            EXIT_OK
        } else {
            EXIT_NEGATIVE
        });
    }
    if head {
        println!("{}", check.head().text());
    } else if anchor.is_none() {
        for l in &check.lines {
            println!("{l}");
        }
    }
    if check.torn > 0 {
        eprintln!(
            "socair: warning: the log ends in {} bytes of an incomplete line (an append a crash interrupted); it is not an entry, and the next append removes it",
            check.torn
        );
    }
    for n in &check.notes {
        eprintln!("socair: note: {n}");
    }
    let mut code = EXIT_OK;
    if let Some((line, why)) = &check.broken {
        eprintln!("socair: the activity log's chain breaks at line {line}: {why}");
        code = EXIT_NEGATIVE;
    }
    for p in &check.problems {
        eprintln!("socair: the activity log was edited: {p}");
        code = EXIT_NEGATIVE;
    }
    if let Some(anchor) = &anchor {
        match extends(&check, anchor) {
            Ok(()) if code == EXIT_OK => eprintln!(
                "socair: the log extends the anchored head {} by {} lines",
                anchor.text(),
                check.lines.len() - anchor.lines
            ),
            Ok(()) => {}
            Err(why) => {
                eprintln!("socair: the log does not extend the anchored head: {why}");
                code = EXIT_NEGATIVE;
            }
        }
    } else if code == EXIT_OK {
        eprintln!(
            "socair: {} log entries; the chain holds; head {}",
            check.lines.len(),
            check.head().text()
        );
    }
    Ok(code)
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
