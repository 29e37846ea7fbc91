//! Keys, DSSE envelopes and in-toto Statements.
//!
//! * Keys are Ed25519 (ed25519-dalek 2): private keys as PKCS#8 PEM written with mode 0600,
//!   public keys as SPKI PEM. A key's id is the hex SHA-256 of its 32-byte raw public key.
//! * An envelope is DSSE v1: the signature is Ed25519 over
//!   `PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body`; the payload is
//!   carried base64-encoded exactly as signed, verified before it is parsed, and never
//!   re-serialized. Standard and URL-safe base64 (padded or not) are accepted on input.
//!   Verification uses `verify_strict` (weak keys and malleable signatures refused).
//! * The body is an in-toto Statement v1.

use base64::Engine;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The DSSE payload type of an in-toto Statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The in-toto Statement type.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// Predicate type of a scan attestation.
pub const SCAN_PREDICATE: &str = "https://socair.ai/scan/v1";
/// Predicate type of an acceptance.
pub const ACCEPTANCE_PREDICATE: &str = "https://socair.ai/acceptance/v1";
/// The predicate type of a review of a pickle global (`socair airlock review add`).
pub const REVIEW_PREDICATE: &str = "https://socair.ai/review/v1";
/// Predicate type of a signed tensor manifest (its predicate is the `socair.tensors/v1`
/// manifest, its subject the model).
pub const TENSORS_PREDICATE: &str = "https://socair.ai/tensors/v1";
/// Predicate type of a derivation record.
pub const DERIVATION_PREDICATE: &str = "https://socair.ai/derivation/v1";

/// Why a key, envelope or signature is refused.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// A key file cannot be read or is not what it must be.
    #[error("{path}: {reason}")]
    Key {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The envelope is malformed.
    #[error("not a valid DSSE envelope: {0}")]
    Envelope(String),
    /// No signature verifies.
    #[error("{0}")]
    Unverified(String),
    /// Writing a key failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// `PAE(type, body)` as DSSE v1 defines it.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + payload_type.len() + 32);
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(payload_type.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload_type.as_bytes());
    out.push(b' ');
    out.extend_from_slice(body.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(body);
    out
}

/// The key id: hex SHA-256 of the raw 32-byte public key.
pub fn keyid(key: &VerifyingKey) -> String {
    crate::base::digest::hex(&Sha256::digest(key.as_bytes()))
}

/// Generates a key pair and writes `path` (PKCS#8 v1 PEM, 0600, never overwriting) and
/// `path.pub` (SPKI PEM, 0644). Returns the key id.
///
/// The private key is written as a PKCS#8 v1 `PrivateKeyInfo` (RFC 5208), without the
/// optional public key of v2 (RFC 5958): OpenSSL and Python's `cryptography` read v1, and
/// refuse the v2 form ed25519-dalek writes by default. Both forms are read back.
pub fn keygen(path: &Path) -> Result<String, SigningError> {
    refuse_existing(path)?;
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let v1 = ed25519_dalek::pkcs8::KeypairBytes {
        secret_key: key.to_bytes(),
        public_key: None,
    };
    let private = v1
        .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| SigningError::Key {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
    let public = key
        .verifying_key()
        .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| SigningError::Key {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
    write_key_pair(path, &private, &public)?;
    Ok(keyid(&key.verifying_key()))
}

/// Refuses to write a key where `path` or `path.pub` already exists.
pub fn refuse_existing(path: &Path) -> Result<(), SigningError> {
    for p in [path.to_owned(), public_path(path)] {
        if std::fs::symlink_metadata(&p).is_ok() {
            return Err(SigningError::Key {
                path: p.display().to_string(),
                reason: "already exists: socair keygen never overwrites a key (choose another --out, or move the old key away first)".into(),
            });
        }
    }
    Ok(())
}

/// Writes a key pair: `path` (the private key's PEM, mode 0600, created new) and `path.pub`
/// (the public key's PEM, 0644, never replacing a file). When the public key cannot be
/// written the private key is removed again.
pub fn write_key_pair(path: &Path, private: &str, public: &str) -> Result<(), SigningError> {
    refuse_existing(path)?;
    let pub_path = public_path(path);
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |source| SigningError::Io { path: p, source }
    };
    {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        // Created 0600 on unix. Elsewhere there is no mode: on Windows the file takes the ACLs
        // of its directory (under the user's profile, the user's own).
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(path).map_err(io(path))?;
        f.write_all(private.as_bytes()).map_err(io(path))?;
        f.sync_all().map_err(io(path))?;
    }
    let written = crate::base::output::write_new(&pub_path, public.as_bytes());
    #[cfg(unix)]
    let written = written.and_then(|()| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pub_path, std::fs::Permissions::from_mode(0o644))
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(path);
        return Err(io(&pub_path)(e));
    }
    Ok(())
}

/// `K.pub` for a private key file `K`.
pub fn public_path(path: &Path) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".pub");
    s.into()
}

fn key_error(path: &Path, what: &str, e: impl std::fmt::Display) -> SigningError {
    let text = e.to_string();
    let reason = if text.contains("OID") || text.contains("algorithm") {
        format!("not an Ed25519 {what} (another algorithm's key?): {text}")
    } else {
        format!("not a valid {what}: {text}")
    };
    SigningError::Key {
        path: path.display().to_string(),
        reason,
    }
}

/// Loads a private key (PKCS#8 PEM).
pub fn load_signing_key(path: &Path) -> Result<SigningKey, SigningError> {
    let text = std::fs::read_to_string(path).map_err(|e| SigningError::Key {
        path: path.display().to_string(),
        reason: format!("cannot read it: {e}"),
    })?;
    if text.contains("BEGIN PUBLIC KEY") {
        return Err(SigningError::Key {
            path: path.display().to_string(),
            reason: "this is a public key; signing needs the private key file".into(),
        });
    }
    SigningKey::from_pkcs8_pem(&text)
        .map_err(|e| key_error(path, "PKCS#8 PEM Ed25519 private key", e))
}

/// Parses a public key (SPKI PEM) from text; `origin` names it in errors.
pub fn parse_public_key(text: &str, origin: &Path) -> Result<VerifyingKey, SigningError> {
    if text.contains("PRIVATE KEY") {
        return Err(SigningError::Key {
            path: origin.display().to_string(),
            reason: "this is a private key; give the .pub file".into(),
        });
    }
    let key = VerifyingKey::from_public_key_pem(text)
        .map_err(|e| key_error(origin, "SPKI PEM Ed25519 public key", e))?;
    if key.is_weak() {
        return Err(SigningError::Key {
            path: origin.display().to_string(),
            reason: "a weak Ed25519 key (small-order point): refused".into(),
        });
    }
    Ok(key)
}

/// Loads a public key (SPKI PEM).
pub fn load_public_key(path: &Path) -> Result<VerifyingKey, SigningError> {
    let text = std::fs::read_to_string(path).map_err(|e| SigningError::Key {
        path: path.display().to_string(),
        reason: format!("cannot read it: {e}"),
    })?;
    parse_public_key(&text, path)
}

/// A DSSE envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Base64 of the payload bytes.
    pub payload: String,
    /// The payload type.
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// Signatures.
    pub signatures: Vec<EnvelopeSignature>,
}

/// One signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeSignature {
    /// The key id (a hint, never trusted).
    #[serde(default)]
    pub keyid: String,
    /// Base64 of the signature.
    pub sig: String,
}

/// Decodes standard or URL-safe base64, padded or not.
pub fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    for engine in [&STANDARD, &URL_SAFE, &STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        if let Ok(b) = engine.decode(s) {
            return Ok(b);
        }
    }
    Err("not base64".into())
}

/// Signs `body` as an in-toto DSSE envelope.
pub fn sign(body: &[u8], key: &SigningKey) -> Envelope {
    use base64::engine::general_purpose::STANDARD;
    let sig: Signature = key.sign(&pae(PAYLOAD_TYPE, body));
    Envelope {
        payload: STANDARD.encode(body),
        payload_type: PAYLOAD_TYPE.into(),
        signatures: vec![EnvelopeSignature {
            keyid: keyid(&key.verifying_key()),
            sig: STANDARD.encode(sig.to_bytes()),
        }],
    }
}

/// A verified envelope: the payload bytes exactly as signed, and the key that signed them.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The payload bytes.
    pub payload: Vec<u8>,
    /// The id of the key whose signature verified.
    pub keyid: String,
}

/// Verifies an envelope's bytes against `keys`; the first signature that verifies with
/// `verify_strict` under one of them wins (key ids only narrow which keys are tried).
pub fn verify(envelope_bytes: &[u8], keys: &[VerifyingKey]) -> Result<Verified, SigningError> {
    let env: Envelope = serde_json::from_slice(envelope_bytes)
        .map_err(|e| SigningError::Envelope(e.to_string()))?;
    if env.payload_type != PAYLOAD_TYPE {
        return Err(SigningError::Envelope(format!(
            "payloadType {:?}, expected {PAYLOAD_TYPE:?}",
            env.payload_type
        )));
    }
    if env.signatures.is_empty() {
        return Err(SigningError::Envelope("no signatures".into()));
    }
    let payload = decode_base64(&env.payload)
        .map_err(|e| SigningError::Envelope(format!("payload is {e}")))?;
    let message = pae(&env.payload_type, &payload);
    for s in &env.signatures {
        let Ok(bytes) = decode_base64(&s.sig) else {
            continue;
        };
        let Ok(sig) = Signature::from_slice(&bytes) else {
            continue;
        };
        for key in keys {
            let id = keyid(key);
            if !s.keyid.is_empty() && s.keyid != id {
                continue;
            }
            if key.verify_strict(&message, &sig).is_ok() {
                return Ok(Verified { payload, keyid: id });
            }
        }
    }
    Err(SigningError::Unverified(
        "no signature verifies under a trusted key (untrusted signer, or the payload or signature was changed)".into(),
    ))
}

/// Checks that no JSON object in `json` holds a key twice (at any depth), streaming: no tree
/// is built.
pub fn no_duplicate_keys(json: &[u8]) -> Result<(), String> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
    struct Unique;
    impl<'de> DeserializeSeed<'de> for Unique {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Unique {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut keys = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !keys.insert(key.clone()) {
                    return Err(serde::de::Error::custom(format!(
                        "the key {key:?} appears twice in one object"
                    )));
                }
                map.next_value_seed(Unique)?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Unique)?.is_some() {}
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
    let mut de = serde_json::Deserializer::from_slice(json);
    Unique.deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(())
}

/// An in-toto Statement v1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// Always [`STATEMENT_TYPE`].
    #[serde(rename = "_type")]
    pub statement_type: String,
    /// What it is about.
    pub subject: Vec<Subject>,
    /// The predicate type.
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    /// The predicate.
    pub predicate: serde_json::Value,
}

/// A subject: a name and its digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// Name.
    pub name: String,
    /// Digests by algorithm.
    pub digest: std::collections::BTreeMap<String, String>,
    /// What the digest is of, when it is not socair's own digest (an in-toto
    /// ResourceDescriptor's `annotations`): see `airlock::oms::subject`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<serde_json::Value>,
}

impl Statement {
    /// A statement about one subject.
    pub fn new(
        name: &str,
        sha256: &str,
        predicate_type: &str,
        predicate: serde_json::Value,
    ) -> Statement {
        Statement {
            statement_type: STATEMENT_TYPE.into(),
            subject: vec![Subject {
                name: name.into(),
                digest: [("sha256".to_owned(), sha256.to_owned())].into(),
                annotations: None,
            }],
            predicate_type: predicate_type.into(),
            predicate,
        }
    }

    /// Parses a statement from verified payload bytes. A key that appears twice in one object
    /// anywhere in the payload is refused: readers disagree on which value counts (serde's
    /// last-wins maps, other tools' first-wins), as they would for a safetensors header.
    pub fn parse(payload: &[u8]) -> Result<Statement, String> {
        no_duplicate_keys(payload)
            .map_err(|e| format!("payload is not an in-toto Statement: {e}"))?;
        let s: Statement = serde_json::from_slice(payload)
            .map_err(|e| format!("payload is not an in-toto Statement: {e}"))?;
        if s.statement_type != STATEMENT_TYPE {
            return Err(format!(
                "statement _type {:?}, expected {STATEMENT_TYPE:?}",
                s.statement_type
            ));
        }
        Ok(s)
    }

    /// The first subject's sha256.
    pub fn subject_sha256(&self) -> Option<&str> {
        self.subject
            .first()?
            .digest
            .get("sha256")
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_matches_the_dsse_spec_vector() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        assert!(
            pae(PAYLOAD_TYPE, b"{}").starts_with(b"DSSEv1 28 application/vnd.in-toto+json 2 {}")
        );
    }

    #[test]
    fn sign_verify_and_tamper() {
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let other = SigningKey::from_bytes(&[8u8; 32]);
        let env = sign(b"{\"a\":1}", &key);
        let bytes = serde_json::to_vec(&env).unwrap();
        let v = verify(&bytes, &[other.verifying_key(), key.verifying_key()]).unwrap();
        assert_eq!(v.payload, b"{\"a\":1}");
        assert_eq!(v.keyid, keyid(&key.verifying_key()));
        assert!(verify(&bytes, &[other.verifying_key()]).is_err());
        // A changed payload fails.
        let mut tampered = env.clone();
        tampered.payload = base64::engine::general_purpose::STANDARD.encode(b"{\"a\":2}");
        assert!(verify(
            &serde_json::to_vec(&tampered).unwrap(),
            &[key.verifying_key()]
        )
        .is_err());
        // URL-safe, unpadded base64 is accepted.
        let mut url = env.clone();
        url.payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b"{\"a\":1}");
        url.signatures[0].sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(decode_base64(&env.signatures[0].sig).unwrap());
        assert!(verify(&serde_json::to_vec(&url).unwrap(), &[key.verifying_key()]).is_ok());
    }

    #[test]
    fn duplicate_keys_anywhere_are_refused() {
        let ok = br#"{"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"p","predicate":{"a":[{"b":1},{"b":2}]}}"#;
        assert!(Statement::parse(ok).is_ok());
        for bad in [
            &br#"{"_type":"https://in-toto.io/Statement/v1","_type":"x","subject":[],"predicateType":"p","predicate":{}}"#[..],
            br#"{"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"p","predicate":{"rows":[{"status":"FAIL","status":"PASS"}]}}"#,
            br#"{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"x","digest":{"sha256":"a","sha256":"b"}}],"predicateType":"p","predicate":{}}"#,
        ] {
            let e = Statement::parse(bad).unwrap_err();
            assert!(e.contains("appears twice"), "{e}");
        }
    }

    #[test]
    fn keygen_writes_pkcs8_v1_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        let id = keygen(&path).unwrap();
        let pem = std::fs::read_to_string(&path).unwrap();
        let der = ed25519_dalek::pkcs8::spki::der::pem::decode_vec(pem.as_bytes())
            .unwrap()
            .1;
        // SEQUENCE { INTEGER 0 (v1), AlgorithmIdentifier, OCTET STRING } and nothing after.
        assert_eq!(&der[..5], &[0x30, 0x2e, 0x02, 0x01, 0x00]);
        assert_eq!(der.len(), 48);
        let key = load_signing_key(&path).unwrap();
        assert_eq!(keyid(&key.verifying_key()), id);
        let again = keygen(&path).unwrap_err().to_string();
        assert!(again.contains("already exists"), "{again}");
        // The v2 form (with the public key) is still read.
        let v2 = key
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap();
        let p2 = dir.path().join("v2");
        std::fs::write(&p2, v2.as_bytes()).unwrap();
        assert_eq!(load_signing_key(&p2).unwrap().to_bytes(), key.to_bytes());
    }
}
