//! Signed scans in the store: `socair airlock scan` reads a staged artifact with the pinned
//! plugins, applies the store's reviews of pickle globals, and stores the signed attestation
//! beside it. The signing itself is the signing crate's, re-exported here.

pub use socair_signing::attest::*;

use crate::airlock::error::StoreError;
use crate::airlock::log::LogEntry;
use crate::airlock::review::reviewed_classes;
use crate::airlock::signing;
use crate::airlock::store::{Area, Store, ATTESTATION};
use crate::read::plugins::PluginSet;
use crate::report::document::Report;
use crate::report::scan::ScanOptions;
use ed25519_dalek::SigningKey;

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
