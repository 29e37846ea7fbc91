//! The gate (`Assess`): a staged artifact's attestation verifies under a `scan` key, is about
//! these bytes, was made by plugins and rules the pins accept, holds no FAIL or LEAD row, and
//! every NOT_TESTED row is covered by an unexpired acceptance from an `accept` key; then
//! promotion moves it to `promoted/<sha256>/`.

use crate::airlock::clock;
use crate::airlock::error::StoreError;
use crate::airlock::log::LogEntry;
use crate::airlock::policy::Policy;
use crate::airlock::review::check_covered;
use crate::airlock::signing::{self, Statement};
use crate::airlock::store::{Area, Store, ACCEPTANCES, ATTESTATION};
use crate::base::digest::hex;
use crate::base::output;
use crate::report::document::{Report, Row};
use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The gate (`Assess`) for promotion: `Ok(())` or the condition that failed.
pub fn assess(store: &Store, sha: &str) -> Result<(), StoreError> {
    assess_with(store, sha, None)
}

/// [`assess`], with the staged bytes' digest when it was computed already (`now`), rather
/// than rehashing them.
pub fn assess_with(store: &Store, sha: &str, now: Option<&str>) -> Result<(), StoreError> {
    let verdict = assess_attestation_with(store, sha, now)?;
    let refused = |why: String| Err(StoreError::Refused(why));
    for row in &verdict.rows {
        match row.status.as_str() {
            "FAIL" | "LEAD" => {
                return refused(format!(
                    "the attestation's {:?} row is {}: {}",
                    row.check, row.status, row.summary
                ))
            }
            _ => {}
        }
    }
    let uncovered: Vec<&str> = verdict
        .rows
        .iter()
        .filter(|r| r.status == "NOT_TESTED")
        .map(|r| r.check.as_str())
        .filter(|check| !verdict.accepted.iter().any(|a| a == check))
        .collect();
    if !uncovered.is_empty() {
        return refused(format!(
            "NOT_TESTED rows with no valid, unexpired acceptance from an `accept` key: {}",
            uncovered.join(", ")
        ));
    }
    Ok(())
}

/// Runs the gate and moves the artifact to `promoted/<sha256>/` (see [`Store::promote`]:
/// a rename locally; a copy hashed as it passes, then a conditional marker, on object
/// storage).
///
/// Returns whether this call promoted it: `false` when it was promoted already (by an earlier
/// run, perhaps one that stopped before logging it, or by another machine), which is logged.
pub fn promote(store: &Store, sha: &str) -> Result<bool, StoreError> {
    let already = |store: &Store| {
        let mut e = LogEntry::new("promote", "ok");
        e.subject = Some(sha.to_owned());
        e.detail = Some("already promoted".into());
        store.append(e)
    };
    if store.is_promoted(sha)? {
        already(store)?;
        return Ok(false);
    }
    let result = store.promote(sha, |now| assess_with(store, sha, now));
    if let Ok(false) = result {
        already(store)?;
        return Ok(false);
    }
    let mut e = LogEntry::new("promote", if result.is_ok() { "ok" } else { "refused" });
    e.subject = Some(sha.to_owned());
    if let Err(err) = &result {
        e.detail = Some(err.to_string());
    }
    store.append(e)?;
    result
}

/// What the gate read from an attestation.
pub struct Assessed {
    /// The report's rows.
    pub rows: Vec<Row>,
    /// Checks covered by valid acceptances.
    pub accepted: Vec<String>,
    /// sha256 of the attestation envelope's bytes.
    pub attestation_sha256: String,
}

/// Verifies the attestation of a staged artifact (role `scan`, subject = the staged bytes
/// now) and gathers the acceptances that cover it.
pub fn assess_attestation(store: &Store, sha: &str) -> Result<Assessed, StoreError> {
    assess_attestation_with(store, sha, None)
}

/// [`assess_attestation`], with the staged bytes' digest when it was computed already.
pub fn assess_attestation_with(
    store: &Store,
    sha: &str,
    now: Option<&str>,
) -> Result<Assessed, StoreError> {
    let refused = |why: String| StoreError::Refused(why);
    store.staged(sha)?;
    let policy = store.policy()?;
    let att = store
        .read_beside(Area::Incoming, sha, ATTESTATION)?
        .ok_or_else(|| {
            refused(format!(
                "{sha} has no attestation; run `socair airlock scan`"
            ))
        })?;
    let (statement, report) = verify_scan_attestation(&policy, &att)?;
    check_covered(store, &policy, &report)?;
    if statement.subject_sha256() != Some(sha) {
        return Err(refused(format!(
            "the attestation is about {:?}, not {sha}",
            statement.subject_sha256().unwrap_or("nothing")
        )));
    }
    let now_sha = match now {
        Some(h) => h.to_owned(),
        None => store.rehash(sha)?,
    };
    if now_sha != sha {
        return Err(refused(format!(
            "the staged bytes changed after the scan: they hash to {now_sha}, the attestation's subject is {sha}"
        )));
    }
    let attestation_sha256 = hex(&Sha256::digest(&att));
    let accept_keys = policy.keys_with_role("accept")?;
    let mut accepted = Vec::new();
    {
        for bytes in store.docs_beside(Area::Incoming, sha, ACCEPTANCES)? {
            let Ok(v) = signing::verify(&bytes, &accept_keys) else {
                continue;
            };
            let Ok(s) = Statement::parse(&v.payload) else {
                continue;
            };
            let Ok(a) = serde_json::from_value::<AcceptancePredicate>(s.predicate.clone()) else {
                continue;
            };
            let fresh = a
                .expires
                .as_deref()
                .is_none_or(|t| clock::parse(t).is_ok_and(|t| t > clock::now()));
            if s.predicate_type == signing::ACCEPTANCE_PREDICATE
                && s.subject_sha256() == Some(sha)
                && a.attestation_sha256 == attestation_sha256
                && fresh
            {
                accepted.extend(a.accepted_checks);
            }
        }
    }
    Ok(Assessed {
        rows: report.rows,
        accepted,
        attestation_sha256,
    })
}

/// The gate's check of a scan attestation: it verifies under a trusted key with role `scan`,
/// is an in-toto Statement with the scan predicate, and holds a socair report made by plugins
/// and rule sets the store's pins accept. Promotion and conversion both go through it.
pub fn verify_scan_attestation(
    policy: &Policy,
    envelope: &[u8],
) -> Result<(Statement, Report), StoreError> {
    let refused = StoreError::Refused;
    let verified = signing::verify(envelope, &policy.keys_with_role("scan")?).map_err(|e| {
        refused(format!(
            "the attestation does not verify under a trusted key with role `scan`: {e}"
        ))
    })?;
    let statement = Statement::parse(&verified.payload).map_err(refused)?;
    if statement.predicate_type != signing::SCAN_PREDICATE {
        return Err(refused(format!(
            "the attestation's predicate is {:?}, not a scan",
            statement.predicate_type
        )));
    }
    let report: Report = serde_json::from_value(statement.predicate.clone()).map_err(|e| {
        refused(format!(
            "the attestation's predicate is not a socair report: {e}"
        ))
    })?;
    // The report must have been made by plugins and rules this deployment accepts.
    for p in &report.tool.plugins {
        policy
            .pins
            .check_plugin(&p.name, &p.version, &p.sha256)
            .map_err(|e| refused(format!("the attestation's scan used {e}")))?;
    }
    for (name, version) in &report.rules {
        policy
            .pins
            .check_rule(name, version)
            .map_err(|e| refused(format!("the attestation's scan ran under {e}")))?;
    }
    Ok((statement, report))
}

/// The predicate of an acceptance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptancePredicate {
    /// The accepted artifact.
    pub subject_sha256: String,
    /// The NOT_TESTED checks whose gaps are accepted.
    pub accepted_checks: Vec<String>,
    /// Why.
    pub reason: String,
    /// sha256 of the attestation envelope accepted.
    pub attestation_sha256: String,
    /// The signer's key id.
    pub signer: String,
    /// When.
    pub time: String,
    /// Until when, if it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

/// `socair airlock accept`: a signed acceptance, by a key of role `accept`, of NOT_TESTED rows
/// of one staged artifact's attestation, stored beside it and logged. `expires` is RFC 3339
/// UTC or none. Returns the acceptance's id (the sha256 of its envelope).
pub fn accept(
    store: &Store,
    sha: &str,
    checks: &[String],
    reason: &str,
    key: &SigningKey,
    expires: Option<String>,
) -> Result<String, StoreError> {
    let keyid = signing::keyid(&key.verifying_key());
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
        let assessed = assess_attestation(store, sha)?;
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
            time: clock::format(clock::now()),
            expires: expires.clone(),
        };
        let name = store.staged(sha)?;
        let statement = Statement::new(
            &name,
            sha,
            signing::ACCEPTANCE_PREDICATE,
            serde_json::to_value(&predicate).expect("plain data"),
        );
        let env = output::to_json_bytes(&signing::sign(
            &serde_json::to_vec(&statement).expect("plain data"),
            key,
        ));
        let id = hex(&Sha256::digest(&env));
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
    store.append(e)?;
    result
}
