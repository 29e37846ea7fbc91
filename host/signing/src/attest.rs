//! Signed scans: a report signed as an in-toto Statement in a DSSE envelope (`socair attest`;
//! the store crate signs a staged artifact's scan with it, `socair airlock scan`).

use crate::base::output;
use crate::read::artifact::ArtifactError;
use crate::read::plugins::PluginSet;
use crate::report::document::Report;
use crate::report::scan::{scan, ScanOptions};
use crate::signing::{self, Statement};
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
        let oms = crate::oms::subject::subject(path, ignore).map_err(|e| ArtifactError::Io {
            path: path.to_owned(),
            source: std::io::Error::other(format!("the OMS root digest cannot be computed: {e}")),
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
