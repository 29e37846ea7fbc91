//! The signing and store commands: `keygen`, `attest`, `verify`, `airlock …`.

use crate::cli::{Fatal, EXIT_NEGATIVE, EXIT_OK};
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
    files: Option<(PathBuf, PathBuf)>,
    plugins: &PluginSet,
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
            if let Some((input, output)) = &files {
                if statement.predicate_type != signing::DERIVATION_PREDICATE {
                    return Err(Fatal(
                        "--input/--output apply to a derivation record".into(),
                    ));
                }
                let problems = recheck_derivation(&statement, input, output, plugins)?;
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
    let pin = crate::store::PluginPin { version, sha256 };
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
        policy
            .pins
            .check_loaded(plugins)
            .map_err(StoreError::Refused)?;
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

/// The derivation record's predicate (`https://socair.ai/derivation/v1`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivationPredicate {
    /// Rule sets, name → version.
    pub rules: std::collections::BTreeMap<String, String>,
    /// The input.
    pub input: DerivationInput,
    /// The input's byte order and what was done about it.
    pub byte_order: String,
    /// Every tensor written.
    pub tensors: Vec<DerivedTensor>,
    /// `alias → kept name`.
    pub aliases: std::collections::BTreeMap<String, String>,
    /// What the input held that the output does not carry.
    pub not_carried: Vec<String>,
}

/// The input of a derivation.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivationInput {
    /// Its file name.
    pub name: String,
    /// Its sha256 (the attested subject).
    pub sha256: String,
    /// sha256 of the attestation envelope the conversion relied on.
    pub attestation_sha256: String,
    /// The attestation's NOT_TESTED checks (conversion does not require them accepted).
    pub not_tested: Vec<String>,
}

/// One tensor of a derivation.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedTensor {
    /// Its name in the output.
    pub name: String,
    /// Its dtype.
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// sha256 of its bytes (little-endian, as in the output).
    pub sha256: String,
    /// Where they are in the input.
    pub source: DerivedSource,
    /// For a tensor gathered into row-major order (`socair-convert/2`): how, so a reviewer can
    /// redo it from the input alone. Absent for every tensor copied as it lies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gathered: Option<Gathered>,
}

/// How a non-contiguous tensor was gathered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gathered {
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Its strides in elements, outermost first, as the checkpoint records them.
    pub strides: Vec<u64>,
    /// Its storage offset in elements (the source's `offset_bytes` / `element_size`).
    pub storage_offset_elements: u64,
    /// Bytes per element.
    pub element_size: u64,
    /// The procedure, in words.
    pub procedure: String,
}

/// What `gathered.procedure` says: the check a reviewer runs (docs/convert-v2.md).
pub const GATHER_PROCEDURE: &str = "for each flat index i from 0 to numel-1 in row-major order: split i into an index per dimension (innermost dimension varies fastest); the element's byte offset in the record is offset_bytes + element_size * sum(index[k] * strides[k]); read element_size bytes there (reversing each swap unit when byte_order says the input is big-endian); the sha256 of the concatenation is the tensor's sha256";

/// A tensor's place in the input.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedSource {
    /// The zip record.
    pub record: String,
    /// Offset of the first byte in the record.
    pub offset_bytes: u64,
    /// Length (for a gathered tensor: the span from its first element to the end of its
    /// furthest one).
    pub size_bytes: u64,
    /// Where `offset_bytes` of the record lies in the input file, for inputs whose records are
    /// not zip records (torch-legacy storages). Absent for zip inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_offset_bytes: Option<u64>,
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
    let keyid = signing::keyid(&key.verifying_key());
    let mut subject = None;
    let result = convert_inner(
        &store,
        checkpoint,
        attestation,
        (&key, &keyid),
        rules,
        plugins,
        &mut subject,
    );
    let mut e = LogEntry::new("convert", if result.is_ok() { "ok" } else { "refused" });
    e.subject = subject;
    e.key = Some(keyid);
    e.name = checkpoint
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    match &result {
        Ok((out_sha, _, _)) => e.output = Some(out_sha.clone()),
        Err(err) => e.detail = Some(err.to_string()),
    }
    store.append(e).map_err(fatal)?;
    match result {
        Ok((out_sha, name, rules)) => {
            println!("{out_sha}");
            eprintln!(
                "socair: converted under {}: incoming/{out_sha}/{name} with derivation.dsse.json",
                rules.id()
            );
            Ok(EXIT_OK)
        }
        Err(e) => finish(Err(e)),
    }
}

fn convert_inner(
    store: &Store,
    checkpoint: &Path,
    attestation: &Path,
    (key, keyid): (&ed25519_dalek::SigningKey, &str),
    rules: Option<&str>,
    plugins: &PluginSet,
    subject: &mut Option<String>,
) -> Result<(String, String, crate::convert::Rules), StoreError> {
    let refused = StoreError::Refused;
    let policy = store.policy()?;
    // The plugins loaded must be the ones the deployment pins.
    policy.pins.check_loaded(plugins).map_err(refused)?;
    // The rules: --rules or the newest, within the deployment's pin.
    let rules = crate::convert::Rules::select(rules, &policy.pins).map_err(refused)?;
    if !policy
        .roles_of(keyid)
        .is_some_and(|r| r.iter().any(|r| r == "derive"))
    {
        return Err(refused(format!(
            "key {keyid} is not in the store's trust policy with role `derive`"
        )));
    }
    // 1. The attestation verifies through the gate's own check.
    let att = std::fs::read(attestation)
        .map_err(|e| StoreError::Unusable(format!("{}: {e}", attestation.display())))?;
    let (statement, report) = crate::store::verify_scan_attestation(&policy, &att)?;
    let sha = statement.subject_sha256().unwrap_or_default().to_owned();
    *subject = Some(sha.clone());
    if report.artifact.format == "model directory" {
        return Err(refused(
            "the attestation is a model directory's: convert takes one checkpoint file and that file's own attestation".into(),
        ));
    }
    // 2. No FAIL or LEAD row. 3. The Pickle row PASSes.
    if let Some(r) = report
        .rows
        .iter()
        .find(|r| r.status == "FAIL" || r.status == "LEAD")
    {
        return Err(refused(format!(
            "the attestation's {:?} row is {}",
            r.check, r.status
        )));
    }
    if !report
        .rows
        .iter()
        .any(|r| r.check == crate::scan::PICKLE_CHECK && r.status == "PASS")
    {
        return Err(refused(
            "the attestation has no PASSing Pickle opcode scan row".into(),
        ));
    }
    // 4. Copy into the work area, hashing while copying: only the attested bytes are read.
    let size = std::fs::metadata(checkpoint)
        .map_err(|e| StoreError::Unusable(format!("{}: {e}", checkpoint.display())))?
        .len();
    let work_base = store.root.join("work");
    std::fs::create_dir_all(&work_base).map_err(|e| StoreError::Unusable(e.to_string()))?;
    crate::convert::check_room(&work_base.join("x"), size).map_err(refused)?;
    let work = store.scratch("work", "convert-")?;
    let name = report.artifact.name.clone();
    let copy = work.path().join(&name);
    // Scratch: a crash discards it, so it is not fsynced.
    let copied = crate::store::copy_hashing_with(checkpoint, &copy, false)?;
    if copied != sha {
        return Err(refused(format!(
            "{} hashes to {copied}, not the attested subject {sha}: it is not the file that was scanned",
            checkpoint.display()
        )));
    }
    // 5. Conversion re-runs the Pickle check on the copy with no reviewed classes.
    let stem = Path::new(&name)
        .file_stem()
        .map_or(name.clone(), |s| s.to_string_lossy().into_owned());
    let out_name = format!("{stem}.safetensors");
    crate::fault::point("convert.copied");
    let tmp = store.scratch(".tmp", "convert-")?;
    let out = tmp.path().join(&out_name);
    let from = match report.artifact.format.as_str() {
        f @ ("torch-zip" | "torch-legacy") => f,
        other => {
            return Err(refused(format!(
                "the attested artifact is {other}; airlock convert takes torch checkpoints (torch-zip, torch-legacy)"
            )))
        }
    };
    let done = crate::convert::convert_path(&copy, &out, from, "safetensors", plugins, rules)
        .map_err(StoreError::Unusable)?
        .map_err(refused)?;

    let tensors = done
        .conversion
        .tensors
        .iter()
        .zip(&done.tensor_sha256)
        .map(|(t, sha)| DerivedTensor {
            name: t.name.clone(),
            dtype: t.dtype.clone(),
            shape: t.shape.clone(),
            sha256: sha.clone(),
            source: DerivedSource {
                record: t.origin.as_ref().map_or_else(String::new, |o| o.0.clone()),
                offset_bytes: t.origin.as_ref().map_or(0, |o| o.1),
                size_bytes: t.extent,
                file_offset_bytes: (from == "torch-legacy").then_some(t.offset),
            },
            gathered: t.gather.as_ref().map(|g| Gathered {
                shape: g.shape.clone(),
                strides: g.strides.clone(),
                storage_offset_elements: t.origin.as_ref().map_or(0, |o| o.1) / g.elem,
                element_size: g.elem,
                procedure: GATHER_PROCEDURE.into(),
            }),
        })
        .collect();
    let predicate = DerivationPredicate {
        rules: [
            ("socair-convert".to_owned(), rules.version().to_string()),
            ("socair-wo".to_owned(), "1".to_owned()),
        ]
        .into(),
        input: DerivationInput {
            name: name.clone(),
            sha256: sha.clone(),
            attestation_sha256: crate::fingerprint::hex(&Sha256::digest(&att)),
            not_tested: report
                .rows
                .iter()
                .filter(|r| r.status == "NOT_TESTED")
                .map(|r| r.check.clone())
                .collect(),
        },
        byte_order: if done.conversion.swapped {
            "big (swapped to little-endian; tensor hashes are of the little-endian bytes)".into()
        } else {
            "little".into()
        },
        tensors,
        aliases: done.conversion.aliases.iter().cloned().collect(),
        not_carried: done.conversion.not_carried.clone(),
    };
    let statement = Statement::new(
        &out_name,
        &done.sha256,
        signing::DERIVATION_PREDICATE,
        serde_json::to_value(&predicate).expect("plain data"),
    );
    let envelope = crate::output::to_json_bytes(&signing::sign(
        &serde_json::to_vec(&statement).expect("plain data"),
        key,
    ));
    crate::output::write_new(&tmp.path().join(crate::store::DERIVATION), &envelope)
        .map_err(|e| StoreError::Unusable(e.to_string()))?;
    crate::fault::point("convert.written");
    let dest = store.root.join("incoming").join(&done.sha256);
    if dest.join(&out_name).is_file() && dest.join(crate::store::DERIVATION).is_file() {
        // Converted by an earlier run (the output is named by its hash, so it is these bytes).
        return Ok((done.sha256, out_name, rules));
    }
    if dest.exists() {
        return Err(refused(format!(
            "incoming/{} exists but is incomplete",
            done.sha256
        )));
    }
    let tmp_path = tmp.keep();
    std::fs::rename(&tmp_path, &dest).map_err(|e| {
        let _ = std::fs::remove_dir_all(&tmp_path);
        StoreError::Unusable(format!("{}: {e}", dest.display()))
    })?;
    crate::fault::point("convert.renamed");
    Ok((done.sha256, out_name, rules))
}

/// Re-hashes every tensor of a verified derivation record from the input (its zip record)
/// and the output; the mismatches, if any.
pub fn recheck_derivation(
    statement: &Statement,
    input: &Path,
    output: &Path,
    plugins: &PluginSet,
) -> Result<Vec<String>, Fatal> {
    let p: DerivationPredicate = serde_json::from_value(statement.predicate.clone())
        .map_err(|e| Fatal(format!("not a derivation record: {e}")))?;
    let swapped = p.byte_order.starts_with("big");
    let out_sha = crate::fingerprint::sha256_of_path(output)
        .map_err(|e| Fatal(format!("{}: {e}", output.display())))?;
    let mut problems = Vec::new();
    if statement.subject_sha256() != Some(out_sha.as_str()) {
        problems.push(format!(
            "{} hashes to {out_sha}, not the record's subject",
            output.display()
        ));
    }
    let manifest = crate::tensors::fingerprint(output, plugins).map_err(fatal)?;
    let output_tensors: std::collections::HashMap<&str, &crate::tensors::TensorEntry> = manifest
        .tensors
        .iter()
        .map(|m| (m.name.as_str(), m))
        .collect();
    // Only zip inputs have records the `zip` crate can read (legacy records say where their
    // storages lie in the file instead).
    let second_path = if p
        .tensors
        .iter()
        .any(|t| t.source.file_offset_bytes.is_none())
    {
        crate::convert::SecondPath::open(input)
    } else {
        Err("not a zip input".to_owned())
    };
    for t in &p.tensors {
        let swap = if swapped {
            crate::convert::element_layout(&t.dtype).map_or(1, |(_, u)| u)
        } else {
            1
        };
        let from_input = rehash_source(input, second_path.as_ref(), t, swap)
            .unwrap_or_else(|e| format!("unreadable: {e}"));
        if from_input != t.sha256 {
            problems.push(format!(
                "{}: the input's bytes hash to {from_input}, the record says {}",
                t.name, t.sha256
            ));
        }
        match output_tensors.get(t.name.as_str()) {
            Some(m) if m.sha256 == t.sha256 => {}
            Some(m) => problems.push(format!(
                "{}: the output's bytes hash to {}, the record says {}",
                t.name, m.sha256, t.sha256
            )),
            None => problems.push(format!("{}: not in the output", t.name)),
        }
    }
    Ok(problems)
}

/// A derived tensor's bytes read again from the input as its record describes them: through
/// the `zip` crate for a zip record, or at `file_offset_bytes` for a torch-legacy storage; a
/// gathered tensor element by element ([`GATHER_PROCEDURE`]).
fn rehash_source(
    input: &Path,
    zip: Result<&crate::convert::SecondPath, &String>,
    t: &DerivedTensor,
    swap: usize,
) -> Result<String, String> {
    let strided = |base: u64, g: &Gathered| -> Result<crate::layout::Strided, String> {
        if g.strides.len() != g.shape.len() || !(1..=16).contains(&g.element_size) {
            return Err(format!(
                "the record's layout is malformed: {} strides for {} dimensions, {}-byte elements",
                g.strides.len(),
                g.shape.len(),
                g.element_size
            ));
        }
        Ok(crate::layout::Strided {
            base,
            shape: g.shape.clone(),
            strides: g.strides.clone(),
            elem: g.element_size,
            numel: g
                .shape
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .ok_or("its shape overflows")?,
        })
    };
    let direct = || std::fs::File::open(input).map_err(|e| format!("{}: {e}", input.display()));
    match (&t.gathered, t.source.file_offset_bytes) {
        (None, None) => zip.map_err(Clone::clone)?.hash(
            &t.source.record,
            t.source.offset_bytes,
            t.source.size_bytes,
            swap,
        ),
        (Some(g), None) => zip.map_err(Clone::clone)?.hash_gathered(
            &t.source.record,
            t.source.offset_bytes,
            &strided(0, g)?,
            swap,
        ),
        (None, Some(at)) => {
            let file = direct()?;
            let mut h = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut left = t.source.size_bytes;
            let mut pos = at;
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                std::os::unix::fs::FileExt::read_exact_at(&file, &mut buf[..n], pos)
                    .map_err(|e| format!("{}: {e}", input.display()))?;
                if swap > 1 {
                    for e in buf[..n].chunks_exact_mut(swap) {
                        e.reverse();
                    }
                }
                h.update(&buf[..n]);
                left -= n as u64;
                pos += n as u64;
            }
            Ok(crate::fingerprint::hex(&h.finalize()))
        }
        (Some(g), Some(at)) => {
            let file = direct()?;
            crate::layout::gathered_sha256_by_index(&strided(at, g)?, swap, |o, b| {
                std::os::unix::fs::FileExt::read_exact_at(&file, b, o)
            })
            .map_err(|e| format!("{}: {e}", input.display()))
        }
    }
}
