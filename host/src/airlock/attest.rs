//! Signed scans: a report signed as an in-toto Statement in a DSSE envelope, on its own
//! (`socair attest`) or for an artifact staged in the store (`socair airlock scan`, which reads
//! with the pinned plugins and applies the store's reviews of pickle globals).

use crate::airlock::error::StoreError;
use crate::airlock::log::LogEntry;
use crate::airlock::review::reviewed_classes;
use crate::airlock::signing::{self, Statement};
use crate::airlock::store::{Area, Store, ATTESTATION};
use crate::base::output;
use crate::read::artifact::ArtifactError;
use crate::read::plugins::PluginSet;
use crate::report::document::Report;
use crate::report::scan::{scan, ScanOptions};
use ed25519_dalek::SigningKey;
use std::path::Path;

/// What a scan attestation names as its subject.
#[derive(Debug, Clone, Default)]
pub enum AttestSubject {
    /// The report's own digest: `socair.modeldir/v1`, or a file's sha256.
    #[default]
    Report,
    /// The OMS root digest, leaving out these paths besides model_signing's defaults.
    OmsRoot(Vec<String>),
}

/// Scans `path` and signs the report as an in-toto Statement about `subject`; returns the
/// envelope bytes and the report.
pub fn attest(
    path: &Path,
    plugins: &PluginSet,
    options: &ScanOptions,
    key: &SigningKey,
    subject: &AttestSubject,
) -> Result<(Vec<u8>, Report), ArtifactError> {
    let report = scan(path, plugins, options)?;
    // Only a report about every byte names a subject: one whose digest was not computed
    // (a header-only scan of a remote object) is never signed.
    if report.artifact.sha256.len() != 64 {
        return Err(ArtifactError::Io {
            path: path.to_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the scan did not hash every byte, so there is no subject to sign",
            ),
        });
    }
    let mut statement = Statement::new(
        &report.artifact.name,
        &report.artifact.sha256,
        signing::SCAN_PREDICATE,
        serde_json::to_value(&report).expect("plain data"),
    );
    if let AttestSubject::OmsRoot(ignore) = subject {
        let oms =
            crate::airlock::oms::subject::subject(path, ignore).map_err(|e| ArtifactError::Io {
                path: path.to_owned(),
                source: std::io::Error::other(format!(
                    "the OMS root digest cannot be computed: {e}"
                )),
            })?;
        statement.subject = vec![oms];
    }
    let body = serde_json::to_vec(&statement).expect("plain data");
    let envelope = signing::sign(&body, key);
    Ok((output::to_json_bytes(&envelope), report))
}

/// Whether a report holds a FAIL or LEAD row (a negative verdict).
pub fn is_negative(report: &Report) -> bool {
    report
        .rows
        .iter()
        .any(|r| r.status == "FAIL" || r.status == "LEAD")
}

/// The rows of a report in one line: `PASS Format and structure, LEAD Pickle opcode scan`.
pub fn verdicts(report: &Report) -> String {
    report
        .rows
        .iter()
        .map(|r| format!("{} {}", r.status, r.check))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `socair airlock scan`: scans a staged artifact with a key of role `scan`, stores the signed
/// attestation beside it, and logs the outcome.
pub fn scan_staged(
    store: &Store,
    sha: &str,
    key: &SigningKey,
    plugins: &PluginSet,
) -> Result<Report, StoreError> {
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
        let name = store.staged(sha)?;
        // The pins decide who reads; the store's reviews are the globals a person cleared.
        let reviewed = reviewed_classes(store, &policy)?;
        let options = ScanOptions {
            readers: policy.pins.reader_choice(plugins),
            reviewed: (!reviewed.is_empty()).then_some(reviewed),
            ..ScanOptions::default()
        };
        let (bytes, report) = attest(
            &store.artifact_path(Area::Incoming, sha, &name),
            plugins,
            &options,
            key,
            &AttestSubject::Report,
        )
        .map_err(|e| StoreError::Unusable(e.to_string()))?;
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
    e.detail = Some(match &result {
        Ok(report) => verdicts(report),
        Err(err) => err.to_string(),
    });
    store.append(e)?;
    result
}
