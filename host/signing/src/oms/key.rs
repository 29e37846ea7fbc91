//! ECDSA P-256 keys and signatures, as model_signing's key signer uses them.
//!
//! model_signing 1.1.1 (`_signing/sign_ec_key.py`) reads any PEM private key the `cryptography`
//! package reads (`load_pem_private_key`: PKCS#8 `PRIVATE KEY`, SEC1 `EC PRIVATE KEY`) and any
//! SPKI `PUBLIC KEY` (`load_pem_public_key`), and accepts only elliptic-curve keys on
//! secp256r1, secp384r1 or secp521r1, signing with ECDSA and SHA-256/384/512 by curve
//! (`_check_supported_ec_key`, `get_ec_key_hash`). The signature is `cryptography`'s: DER
//! (`Ecdsa-Sig-Value`). Socair writes and reads P-256 (SHA-256) keys: PKCS#8 (or SEC1) private
//! keys, SPKI public keys; a P-384 or P-521 key is refused naming its curve.
//!
//! The bundle names the key by a hint: the hex SHA-256 of the public key's SPKI PEM text as
//! `cryptography` writes it (64-column base64, `\n` line ends) (`_get_verification_material`).

use crate::base::digest::hex;
use crate::oms::OmsError;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{DerSignature, Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{
    der::pem::LineEnding, spki::AlgorithmIdentifierRef, DecodePrivateKey, DecodePublicKey,
    EncodePrivateKey, EncodePublicKey,
};
use p256::{PublicKey, SecretKey};
use sha2::{Digest, Sha256};
use std::path::Path;

/// A new P-256 key pair: the private key as PKCS#8 PEM, the public key as SPKI PEM.
pub fn generate() -> Result<(String, String), String> {
    let secret = SecretKey::random(&mut rand_core::OsRng);
    let private = secret
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| e.to_string())?;
    let public = public_pem(&secret.public_key());
    Ok((private.to_string(), public))
}

/// The SPKI PEM text of a public key, as `cryptography` writes it.
pub fn public_pem(key: &PublicKey) -> String {
    key.to_public_key_pem(LineEnding::LF)
        .expect("a P-256 point always encodes")
}

/// The key hint model_signing writes into a bundle and checks against the public key it is
/// given: hex SHA-256 of the SPKI PEM text.
pub fn hint(key: &PublicKey) -> String {
    hex(&Sha256::digest(public_pem(key).as_bytes()))
}

/// Signs `message` with ECDSA P-256 and SHA-256; the signature in DER, as `cryptography`'s
/// `sign` returns it.
pub fn sign(key: &SigningKey, message: &[u8]) -> Vec<u8> {
    let signature: Signature = key.sign(message);
    let der: DerSignature = signature.to_der();
    der.as_bytes().to_vec()
}

/// Whether `der` is a valid ECDSA P-256/SHA-256 signature of `message` under `key`. Only DER
/// is read, as `cryptography`'s `verify` reads it; a high-S signature verifies, as it does there.
pub fn verify(key: &PublicKey, message: &[u8], der: &[u8]) -> bool {
    let Ok(signature) = Signature::from_der(der) else {
        return false;
    };
    VerifyingKey::from(key).verify(message, &signature).is_ok()
}

fn key_error(path: &Path, why: impl Into<String>) -> OmsError {
    OmsError::Key {
        path: path.display().to_string(),
        why: why.into(),
    }
}

/// What an algorithm identifier names, in words, for a refusal.
fn algorithm_words(algorithm: &AlgorithmIdentifierRef<'_>) -> String {
    let oid = algorithm.oid.to_string();
    let curve = algorithm
        .parameters_oid()
        .map(|o| o.to_string())
        .unwrap_or_default();
    match (oid.as_str(), curve.as_str()) {
        ("1.2.840.10045.2.1", "1.2.840.10045.3.1.7") => "a P-256 key".into(),
        ("1.2.840.10045.2.1", "1.3.132.0.34") => "a P-384 (secp384r1) key".into(),
        ("1.2.840.10045.2.1", "1.3.132.0.35") => "a P-521 (secp521r1) key".into(),
        ("1.2.840.10045.2.1", other) => format!("an elliptic-curve key on curve {other}"),
        ("1.3.101.112", _) => "an Ed25519 key".into(),
        ("1.2.840.113549.1.1.1", _) => "an RSA key".into(),
        (other, _) => format!("a key of algorithm {other}"),
    }
}

/// Why a key of another algorithm or curve cannot sign or verify a model_signing bundle here.
fn not_p256(what: &str) -> String {
    format!(
        "{what}: OpenSSF model signatures are made with elliptic-curve keys, and socair signs and verifies P-256 (make one with `socair keygen --algorithm ecdsa-p256`)"
    )
}

fn read_text(path: &Path) -> Result<String, OmsError> {
    std::fs::read_to_string(path).map_err(|e| key_error(path, format!("cannot read it: {e}")))
}

/// Loads a P-256 private key: PKCS#8 (`PRIVATE KEY`) or SEC1 (`EC PRIVATE KEY`) PEM.
pub fn load_signing_key(path: &Path) -> Result<SigningKey, OmsError> {
    let text = read_text(path)?;
    if text.contains("BEGIN PUBLIC KEY") {
        return Err(key_error(
            path,
            "this is a public key; signing needs the private key file",
        ));
    }
    if text.contains("BEGIN ENCRYPTED PRIVATE KEY") {
        return Err(key_error(
            path,
            "an encrypted private key: socair reads unencrypted PEM keys (decrypt a copy with `openssl pkcs8 -in KEY -out PLAIN`)",
        ));
    }
    let secret = if text.contains("BEGIN EC PRIVATE KEY") {
        SecretKey::from_sec1_pem(&text)
            .map_err(|e| key_error(path, format!("not a P-256 SEC1 private key: {e}")))?
    } else {
        match SecretKey::from_pkcs8_pem(&text) {
            Ok(k) => k,
            Err(e) => {
                let what = p256::pkcs8::der::pem::decode_vec(text.as_bytes())
                    .ok()
                    .and_then(|(_, der)| {
                        p256::pkcs8::PrivateKeyInfo::try_from(der.as_slice())
                            .ok()
                            .map(|info| algorithm_words(&info.algorithm))
                    });
                return Err(key_error(
                    path,
                    match what {
                        Some(w) if w != "a P-256 key" => not_p256(&w),
                        _ => format!("not a valid PKCS#8 PEM P-256 private key: {e}"),
                    },
                ));
            }
        }
    };
    Ok(SigningKey::from(secret))
}

/// Parses a P-256 public key (SPKI PEM); `origin` names it in errors.
pub fn parse_public_key(text: &str, origin: &Path) -> Result<PublicKey, OmsError> {
    if text.contains("PRIVATE KEY") {
        return Err(key_error(
            origin,
            "this is a private key; give the .pub file",
        ));
    }
    PublicKey::from_public_key_pem(text).map_err(|e| {
        let what = p256::pkcs8::der::pem::decode_vec(text.as_bytes())
            .ok()
            .and_then(|(_, der)| {
                p256::pkcs8::spki::SubjectPublicKeyInfoRef::try_from(der.as_slice())
                    .ok()
                    .map(|info| algorithm_words(&info.algorithm))
            });
        key_error(
            origin,
            match what {
                Some(w) if w != "a P-256 key" => not_p256(&w),
                _ => format!("not a valid SPKI PEM P-256 public key: {e}"),
            },
        )
    })
}

/// Loads a P-256 public key (SPKI PEM).
pub fn load_public_key(path: &Path) -> Result<PublicKey, OmsError> {
    parse_public_key(&read_text(path)?, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_sign_and_verify_in_der() {
        let (private, public) = generate().unwrap();
        assert!(private.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        let secret = SecretKey::from_pkcs8_pem(&private).unwrap();
        let key = SigningKey::from(secret.clone());
        let public = PublicKey::from_public_key_pem(&public).unwrap();
        assert_eq!(public, secret.public_key());
        let sig = sign(&key, b"message");
        // DER: SEQUENCE { INTEGER r, INTEGER s }.
        assert_eq!(sig[0], 0x30);
        assert!(verify(&public, b"message", &sig));
        assert!(!verify(&public, b"messagf", &sig));
        // The raw 64-byte form is not what cryptography reads, and is refused here too.
        let raw = Signature::from_der(&sig).unwrap().to_bytes();
        assert!(!verify(&public, b"message", &raw));
        assert_eq!(hint(&public).len(), 64);
    }
}
