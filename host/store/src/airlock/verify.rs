//! `socair verify`: can I trust this file? An envelope's signature is only the first
//! condition. With a store, the signer's role must fit what it signed (a scan by a `scan` key,
//! an acceptance by an `accept` key, a derivation by a `derive` key, a tensor manifest by a
//! `reference` key); with an artifact, its
//! bytes must hash to the statement's subject; with a derivation record's input, the input's
//! bytes must hash to the record's; and a scan attestation must hold no FAIL or LEAD row.
//! Every condition that does not hold is listed, the first one first.

use crate::airlock::derive::{recheck_derivation, DerivationPredicate};
use crate::airlock::files::digest_of_path;
use crate::airlock::policy::{Policy, ROLES};
use crate::airlock::signing::{self, SigningError, Statement};
use crate::read::plugins::PluginSet;
use crate::read::source::sha256_of_path;
use crate::report::document::Report;
use ed25519_dalek::VerifyingKey;
pub use socair_signing::verification::{Verification, VerifyError};
use std::path::Path;

/// Whose keys an envelope is verified against.
pub enum Keys<'a> {
    /// One public key: no roles to check.
    One(VerifyingKey),
    /// A store's trust policy: every trusted key, and the role the signer must hold.
    Store(&'a Policy),
}

/// What to check besides the signature.
#[derive(Debug, Default, Clone, Copy)]
pub struct Checks<'a> {
    /// The signature alone (the meaning `socair verify` had before these checks).
    pub signature_only: bool,
    /// A file or model directory that must hash to the subject.
    pub artifact: Option<&'a Path>,
    /// A derivation record's input, whose sha256 must be the record's.
    pub input: Option<&'a Path>,
    /// With `input`: the output, to re-hash every tensor from both.
    pub output: Option<&'a Path>,
}

/// The role a key must hold to sign a statement of `predicate_type`.
pub fn role_for(predicate_type: &str) -> Option<&'static str> {
    match predicate_type {
        signing::SCAN_PREDICATE => Some("scan"),
        signing::ACCEPTANCE_PREDICATE => Some("accept"),
        signing::DERIVATION_PREDICATE => Some("derive"),
        signing::TENSORS_PREDICATE => Some("reference"),
        _ => None,
    }
}

/// Verifies `envelope` (the bytes of the file at `name`) under `keys`, then runs `checks`.
pub fn verify(
    name: &Path,
    envelope: &[u8],
    keys: Keys<'_>,
    checks: Checks<'_>,
    plugins: &PluginSet,
) -> Result<Verification, VerifyError> {
    let trusted = match &keys {
        Keys::One(k) => vec![*k],
        Keys::Store(policy) => {
            let mut all = Vec::new();
            for role in ROLES {
                all.extend(
                    policy
                        .keys_with_role(role)
                        .map_err(|e| VerifyError::Unusable(e.to_string()))?,
                );
            }
            all
        }
    };
    let verified = signing::verify(envelope, &trusted).map_err(|e| match e {
        SigningError::Envelope(why) => VerifyError::Unusable(format!(
            "{} is not a DSSE envelope ({why}): socair verify reads the .dsse.json files that attest, airlock scan, accept and convert write",
            name.display()
        )),
        other => VerifyError::Unsigned(format!("{}: {other}", name.display())),
    })?;
    let mut v = Verification {
        keyid: verified.keyid,
        payload: verified.payload,
        statement: None,
        rows: Vec::new(),
        held: vec!["the signature verifies".into()],
        problems: Vec::new(),
    };
    let statement = match Statement::parse(&v.payload) {
        Ok(s) => s,
        Err(e) => {
            v.problems.push(e);
            return Ok(v);
        }
    };
    if statement.predicate_type == signing::SCAN_PREDICATE {
        match serde_json::from_value::<Report>(statement.predicate.clone()) {
            Ok(report) => v.rows = report.rows,
            Err(e) => v
                .problems
                .push(format!("the scan predicate is not a socair report: {e}")),
        }
    }
    if checks.signature_only {
        v.statement = Some(statement);
        return Ok(v);
    }
    // The signer's role fits what it signed.
    if let Keys::Store(policy) = &keys {
        match role_for(&statement.predicate_type) {
            Some(role) => {
                if policy
                    .roles_of(&v.keyid)
                    .is_some_and(|r| r.iter().any(|r| r == role))
                {
                    v.held
                        .push(format!("the signer holds the role `{role}` in the store"));
                } else {
                    v.problems.push(format!(
                        "the signer, key {}, does not hold the role `{role}` that a {} needs in the store's trust policy",
                        v.keyid, statement.predicate_type
                    ));
                }
            }
            None => v.problems.push(format!(
                "the predicate type {:?} is none socair signs, so no role can vouch for it",
                statement.predicate_type
            )),
        }
    }
    // The artifact is the subject.
    if let Some((held, problems)) = checks
        .artifact
        .and_then(|a| crate::airlock::oms::subject::check(&statement, a))
    {
        // The subject is the OMS root digest: `oms::subject` checks it and the report's own.
        v.held.extend(held);
        v.problems.extend(problems);
    } else if let Some(artifact) = checks.artifact {
        let subject = statement.subject_sha256().unwrap_or("");
        match digest_of_path(artifact) {
            Ok(sha) if sha == subject => v.held.push(format!(
                "{} hashes to the subject, {sha}",
                artifact.display()
            )),
            Ok(sha) => v.problems.push(format!(
                "{} hashes to {sha}, not the subject {subject}: it is not the artifact that was signed",
                artifact.display()
            )),
            Err(e) => v.problems.push(format!("{}: {e}", artifact.display())),
        }
    }
    // A derivation record's input and output.
    if let Some(input) = checks.input {
        if statement.predicate_type != signing::DERIVATION_PREDICATE {
            v.problems
                .push("--input applies to a derivation record".into());
        } else {
            match serde_json::from_value::<DerivationPredicate>(statement.predicate.clone()) {
                Err(e) => v.problems.push(format!("not a derivation record: {e}")),
                Ok(record) => match sha256_of_path(input) {
                    Ok(sha) if sha == record.input.sha256 => v.held.push(format!(
                        "{} hashes to the record's input, {sha}",
                        input.display()
                    )),
                    Ok(sha) => v.problems.push(format!(
                        "{} hashes to {sha}, not the record's input {}",
                        input.display(),
                        record.input.sha256
                    )),
                    Err(e) => v.problems.push(format!("{}: {e}", input.display())),
                },
            }
            if let Some(output) = checks.output.or(checks.artifact) {
                match recheck_derivation(&statement, input, output, plugins) {
                    Ok(mismatches) if mismatches.is_empty() => v.held.push(
                        "every tensor of the record re-hashes equal from the input and the output"
                            .into(),
                    ),
                    Ok(mismatches) => v.problems.extend(mismatches),
                    Err(e) => v.problems.push(e),
                }
            }
        }
    }
    // A scan attestation vouches only for what it found clean.
    for r in v
        .rows
        .iter()
        .filter(|r| r.status == "FAIL" || r.status == "LEAD")
    {
        v.problems.push(format!(
            "the signed report's {:?} row is {}: {}",
            r.check, r.status, r.summary
        ));
    }
    v.statement = Some(statement);
    Ok(v)
}
