//! `socair verify model.sig MODEL --pub P`: a key-signed model_signing bundle checked as
//! `model_signing verify key MODEL --signature model.sig --public_key P` checks it
//! (model_signing 1.1.1 `verifying.Config.verify`, `_cli.py` `_verify_private_key`):
//!
//! 1. the bundle: media type v0.3, the key hint (when there is one) against the key given,
//!    the first signature over `PAE(payloadType, payload)`, an in-toto payload type;
//! 2. the payload: an OMS v1.0 statement whose resources hash to its root digest;
//! 3. the model hashed again as the signature's serialization says, leaving out the git paths,
//!    the signature file when it lies in the model, and the ignore paths the signature records;
//! 4. the manifests compared: every file added, removed or changed is named.
//!
//! Where socair is stricter: it refuses a signature whose ignore paths cover the whole model
//! (model_signing verifies it against any directory), a resource listed twice, and names
//! model_signing never writes; it follows no symbolic link but a Hugging Face cache snapshot's
//! links into its repository's blobs (`manifest::list`), whatever the signature says of links.

use crate::oms::bundle::{self, Material};
use crate::oms::manifest::{self, Method, GIT_PATHS};
use crate::oms::payload::{self, ModelPayload};
use crate::oms::sign::inside;
use crate::oms::{key, OmsError, BUNDLE_MEDIA_TYPE};
use crate::signing::{pae, Statement, PAYLOAD_TYPE};
use crate::verification::{Verification, VerifyError};
use p256::PublicKey;
use std::path::Path;

/// How many names of each kind (added, removed, changed, ignored) are listed; the rest are
/// counted.
const NAMES_LISTED: usize = 100;

fn unusable(name: &Path, why: impl std::fmt::Display) -> VerifyError {
    VerifyError::Unusable(format!("{}: {why}", name.display()))
}

/// Checks the bundle's signature and statement; returns the verification so far (the
/// signature held) and the payload when it is an OMS statement.
fn check_signature(
    name: &Path,
    bytes: &[u8],
    public: &PublicKey,
) -> Result<(Verification, Option<ModelPayload>), VerifyError> {
    let b = bundle::read(bytes).map_err(|why| {
        unusable(
            name,
            format!("a Sigstore bundle that cannot be read: {why}"),
        )
    })?;
    if b.media_type != BUNDLE_MEDIA_TYPE {
        return Err(unusable(
            name,
            format!(
                "a Sigstore bundle of media type {:?}: model_signing's key-signed signatures are {BUNDLE_MEDIA_TYPE:?}",
                b.media_type
            ),
        ));
    }
    let Material::PublicKey(hint) = &b.material else {
        return Err(unusable(
            name,
            "signed with a certificate (model_signing sign sigstore or certificate): socair verifies key-signed signatures (model_signing sign key); use model_signing verify sigstore or certificate",
        ));
    };
    let keyid = key::hint(public);
    if let Some(h) = hint {
        if *h != keyid {
            return Err(VerifyError::Unsigned(format!(
                "{}: signed by another key: the bundle names key {h}, the public key given is {keyid}",
                name.display()
            )));
        }
    }
    if b.payload_type != PAYLOAD_TYPE {
        return Err(unusable(
            name,
            format!(
                "its DSSE payloadType is {:?}, expected {PAYLOAD_TYPE:?}",
                b.payload_type
            ),
        ));
    }
    let verified = b
        .signature
        .as_deref()
        .is_some_and(|sig| key::verify(public, &pae(&b.payload_type, &b.payload), sig));
    if !verified {
        return Err(VerifyError::Unsigned(format!(
            "{}: the signature does not verify under the public key {keyid} (the payload or the signature was changed, or another key signed it)",
            name.display()
        )));
    }
    let mut v = Verification {
        keyid: keyid.clone(),
        payload: b.payload,
        statement: None,
        rows: Vec::new(),
        held: vec![format!(
            "the signature verifies under the P-256 key {keyid}{}",
            if hint.is_none() {
                " (the bundle names no key: model_signing's older form)"
            } else {
                ""
            }
        )],
        problems: Vec::new(),
    };
    v.statement = Statement::parse(&v.payload).ok();
    match payload::parse(&v.payload) {
        Ok(p) => {
            v.held.push(format!(
                "the signed manifest is consistent: its {} resources hash to the root digest {}",
                p.resources.len(),
                p.root
            ));
            Ok((v, Some(p)))
        }
        Err(e) => {
            v.problems.push(e);
            Ok((v, None))
        }
    }
}

/// Names, at most [`NAMES_LISTED`] of them, then how many more.
fn listed(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(NAMES_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMES_LISTED {
        s.push_str(&format!(" and {} more", names.len() - NAMES_LISTED));
    }
    s
}

/// Verifies the bundle `bytes` (the file `name`) under `public`, then, with `model`, the
/// model against the manifest it signs.
pub fn verify(
    name: &Path,
    bytes: &[u8],
    public: &PublicKey,
    model: Option<&Path>,
) -> Result<Verification, VerifyError> {
    let (mut v, signed) = check_signature(name, bytes, public)?;
    let (Some(model), Some(signed)) = (model, signed) else {
        return Ok(v);
    };
    let s = &signed.serialization;
    if s.hash_type != "sha256" {
        v.problems.push(format!(
            "the signature hashes with {:?}: socair hashes models with sha256 (model_signing's default)",
            s.hash_type
        ));
        return Ok(v);
    }
    let mut ignore: Vec<String> = GIT_PATHS.iter().map(|p| (*p).to_owned()).collect();
    ignore.extend(inside(model, name));
    ignore.extend(s.ignore_paths.iter().cloned());
    let hashed = manifest::list(model, &ignore)
        .and_then(|listing| Ok((manifest::hash(&listing, s.method)?, listing)));
    let (actual, listing) = match hashed {
        Ok(x) => x,
        Err(e @ OmsError::Unhashable { .. }) => {
            v.problems.push(e.to_string());
            return Ok(v);
        }
        Err(e) => return Err(VerifyError::Unusable(e.to_string())),
    };
    let d = manifest::compare(&signed.resources, &actual);
    let what = match s.method {
        Method::Files => "file",
        Method::Shards(_) => "shard",
    };
    for (n, signed_digest, actual_digest) in d.changed.iter().take(NAMES_LISTED) {
        v.problems.push(format!(
            "{n} changed since it was signed: it hashes to {actual_digest}, the signature says {signed_digest}"
        ));
    }
    if d.changed.len() > NAMES_LISTED {
        v.problems.push(format!(
            "and {} more {what}s changed",
            d.changed.len() - NAMES_LISTED
        ));
    }
    let plural = |n: usize| {
        if n == 1 {
            what.to_owned()
        } else {
            format!("{what}s")
        }
    };
    match d.added.as_slice() {
        [] => {}
        [one] => v.problems.push(format!(
            "{one} was added after the model was signed: the signature does not cover it"
        )),
        many => v.problems.push(format!(
            "{} {} were added after the model was signed (the signature does not cover them): {}",
            many.len(),
            plural(many.len()),
            listed(many)
        )),
    }
    match d.removed.as_slice() {
        [] => {}
        [one] => v.problems.push(format!(
            "{one} is missing: the signature lists it, the model no longer has it"
        )),
        many => v.problems.push(format!(
            "{} {} are missing (the signature lists them, the model no longer has them): {}",
            many.len(),
            plural(many.len()),
            listed(many)
        )),
    }
    if d.is_empty() {
        v.held.push(format!(
            "{} matches the signature: {} {what}{} hashed again, every digest equal",
            model.display(),
            actual.len(),
            if actual.len() == 1 { "" } else { "s" }
        ));
    }
    if !listing.ignored.is_empty() {
        v.held.push(format!(
            "left out, as model_signing leaves them out (the signature does not cover them): {}",
            listed(&listing.ignored)
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oms::sign::sign;

    #[test]
    fn no_changed_byte_of_a_bundle_verifies_another_payload() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m");
        std::fs::create_dir_all(model.join("sub")).unwrap();
        std::fs::write(model.join("w.bin"), b"weights").unwrap();
        std::fs::write(model.join("sub/c.json"), b"{}").unwrap();
        let (private, _) = key::generate().unwrap();
        let signing_key = {
            use p256::pkcs8::DecodePrivateKey;
            p256::ecdsa::SigningKey::from(p256::SecretKey::from_pkcs8_pem(&private).unwrap())
        };
        let public: PublicKey = signing_key.verifying_key().into();
        let sig_path = dir.path().join("model.sig");
        let signed = sign(&model, &signing_key, &sig_path, &[]).unwrap();
        let original = verify(&sig_path, &signed.bundle, &public, Some(&model)).unwrap();
        assert!(original.problems.is_empty(), "{:?}", original.problems);
        let mut accepted = 0;
        for i in 0..signed.bundle.len() {
            let mut bytes = signed.bundle.clone();
            bytes[i] ^= 0x01;
            if let Ok(v) = verify(&sig_path, &bytes, &public, Some(&model)) {
                if v.problems.is_empty() {
                    // Only a change that leaves the signed payload as it was (a field name
                    // a verifier may ignore, such as the key hint's) can still verify.
                    assert_eq!(v.payload, original.payload, "byte {i}");
                    accepted += 1;
                }
            }
        }
        assert!(accepted < signed.bundle.len() / 10, "{accepted}");
        // A file changed in the model, named.
        std::fs::write(model.join("w.bin"), b"weightz").unwrap();
        let v = verify(&sig_path, &signed.bundle, &public, Some(&model)).unwrap();
        assert_eq!(v.problems.len(), 1);
        assert!(
            v.problems[0].starts_with("w.bin changed"),
            "{:?}",
            v.problems
        );
    }
}
