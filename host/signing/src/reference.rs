//! Signed tensor manifests: a `socair.tensors/v1` manifest as the predicate of an in-toto
//! Statement whose subject is the model's digest, in a DSSE envelope (`socair tensors M --sign
//! --key K`). Accepted wherever a manifest is (`scan --reference`, `SOCAIR_TENSOR_REFERENCE`,
//! `tensors diff`), verified first: a reference that does not verify stops the command, as
//! one that cannot be read does.

use crate::fingerprint::manifest::{self, TensorManifest};
use crate::signing::{self, Statement, TENSORS_PREDICATE};
use ed25519_dalek::{SigningKey, VerifyingKey};
use std::path::Path;

/// A manifest signed as an in-toto Statement about the model it describes; the envelope's
/// bytes.
pub fn sign_manifest(manifest: &TensorManifest, key: &SigningKey) -> Vec<u8> {
    let statement = Statement::new(
        &manifest.artifact.name,
        &manifest.artifact.sha256,
        TENSORS_PREDICATE,
        serde_json::to_value(manifest).expect("plain data"),
    );
    let body = serde_json::to_vec(&statement).expect("plain data");
    crate::base::output::to_json_bytes(&signing::sign(&body, key))
}

/// Whether `bytes` look like a DSSE envelope (a JSON object with a `payloadType`), so that a
/// signed manifest is never taken for a model or an unsigned manifest.
pub fn is_envelope(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
        && serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()
            .is_some_and(|v| v.get("payloadType").is_some())
}

/// A verified signed manifest: the manifest and the key that signed it.
#[derive(Debug, Clone)]
pub struct SignedManifest {
    /// The manifest, as signed.
    pub manifest: TensorManifest,
    /// The id of the key whose signature verified.
    pub keyid: String,
}

/// Verifies a signed manifest's envelope against `keys` and reads its manifest; an error
/// names `origin` and why (no trusted signature, another predicate, a subject that is not the
/// manifest's model).
pub fn open_signed_manifest(
    bytes: &[u8],
    keys: &[VerifyingKey],
    origin: &Path,
) -> Result<SignedManifest, String> {
    let at = |why: String| format!("{}: signed tensor manifest: {why}", origin.display());
    if keys.is_empty() {
        return Err(at(
            "no public key to verify it with (--reference-pub KEY.pub, or SOCAIR_TENSOR_REFERENCE_PUB)"
                .into(),
        ));
    }
    let verified = signing::verify(bytes, keys).map_err(|e| at(e.to_string()))?;
    let statement = Statement::parse(&verified.payload).map_err(at)?;
    if statement.predicate_type != TENSORS_PREDICATE {
        return Err(at(format!(
            "predicate type {:?}, not a tensor manifest ({TENSORS_PREDICATE:?})",
            statement.predicate_type
        )));
    }
    if statement.predicate.get("schema").and_then(|s| s.as_str()) != Some(manifest::SCHEMA) {
        return Err(at(format!(
            "the predicate is not a {} manifest",
            manifest::SCHEMA
        )));
    }
    let manifest: TensorManifest = serde_json::from_value(statement.predicate.clone())
        .map_err(|e| at(format!("not a valid {} manifest: {e}", manifest::SCHEMA)))?;
    // The subject is what the signer vouches for: it must be the manifest's own model.
    if statement.subject.len() != 1
        || statement.subject_sha256() != Some(manifest.artifact.sha256.as_str())
    {
        return Err(at(format!(
            "the statement's subject is not the manifest's model (sha256 {})",
            manifest.artifact.sha256
        )));
    }
    Ok(SignedManifest {
        manifest,
        keyid: verified.keyid,
    })
}

/// Reads `path` as a manifest for a comparison: a signed one verified against `keys`, else an
/// unsigned one (`Ok(None)`: not a manifest, a model).
pub fn read_any_manifest(
    path: &Path,
    keys: &[VerifyingKey],
) -> Result<Option<TensorManifest>, String> {
    if path.is_file() {
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        // A manifest is JSON that names tensors; an envelope of one is read whole to verify,
        // so only a file that starts like one is read.
        if len > 0 && starts_with_brace(path) {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            if is_envelope(&bytes) {
                return open_signed_manifest(&bytes, keys, path).map(|s| Some(s.manifest));
            }
        }
    }
    crate::fingerprint::diff::read_manifest(path)
}

fn starts_with_brace(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = f.read(&mut head).unwrap_or(0);
    head[..n].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::manifest::TensorManifest;

    fn manifest() -> TensorManifest {
        serde_json::from_value(serde_json::json!({
            "schema": manifest::SCHEMA,
            "artifact": {"name": "m.safetensors", "format": "safetensors", "sha256": "ab".repeat(32)},
            "value_encoding": "float32-le-bits/v1",
            "tensors": [],
            "unread": []
        }))
        .unwrap()
    }

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_bytes(&[seed; 32])
    }

    #[test]
    fn a_signed_manifest_verifies_and_reads_back() {
        let m = manifest();
        let env = sign_manifest(&m, &key(1));
        assert!(is_envelope(&env));
        let got =
            open_signed_manifest(&env, &[key(1).verifying_key()], Path::new("r.json")).unwrap();
        assert_eq!(got.manifest, m);
        assert_eq!(got.keyid, signing::keyid(&key(1).verifying_key()));
    }

    #[test]
    fn another_key_or_a_changed_payload_does_not_verify() {
        let env = sign_manifest(&manifest(), &key(1));
        let other = open_signed_manifest(&env, &[key(2).verifying_key()], Path::new("r.json"));
        assert!(other.unwrap_err().contains("no signature verifies"));
        // Change one character of the payload's base64.
        let mut v: serde_json::Value = serde_json::from_slice(&env).unwrap();
        let p = v["payload"].as_str().unwrap().to_owned();
        let flipped = if p.as_bytes()[10] == b'A' { "B" } else { "A" };
        v["payload"] = format!("{}{}{}", &p[..10], flipped, &p[11..]).into();
        let tampered = serde_json::to_vec(&v).unwrap();
        let e = open_signed_manifest(&tampered, &[key(1).verifying_key()], Path::new("r.json"));
        assert!(e.is_err());
        let none = open_signed_manifest(&env, &[], Path::new("r.json"));
        assert!(none.unwrap_err().contains("no public key"));
    }

    #[test]
    fn a_statement_about_another_model_is_refused() {
        let m = manifest();
        let statement = Statement::new(
            "m.safetensors",
            &"cd".repeat(32),
            TENSORS_PREDICATE,
            serde_json::to_value(&m).unwrap(),
        );
        let env = crate::base::output::to_json_bytes(&signing::sign(
            &serde_json::to_vec(&statement).unwrap(),
            &key(1),
        ));
        let e = open_signed_manifest(&env, &[key(1).verifying_key()], Path::new("r.json"));
        assert!(e
            .unwrap_err()
            .contains("subject is not the manifest's model"));
    }
}
