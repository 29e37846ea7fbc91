//! The Sigstore bundle of a key-signed model signature: read and written as model_signing
//! 1.1.1 does (`_signing/sign_ec_key.py` `Signer.sign` and `Verifier._verify_bundle`,
//! `_signing/sign_sigstore_pb.py`, the `sigstore_models` classes it writes with).
//!
//! ```json
//! {"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json",
//!  "verificationMaterial":{"publicKey":{"hint":"<sha256 of the SPKI PEM>"},"tlogEntries":[]},
//!  "dsseEnvelope":{"payload":"<base64>","payloadType":"application/vnd.in-toto+json",
//!                  "signatures":[{"sig":"<base64 of the DER signature>","keyid":""}]}}
//! ```
//!
//! The payload is the statement's bytes exactly as signed; the signature is over
//! `PAE(payloadType, payload)`. A verifier checks the media type, the key hint against the
//! key it was given (a bundle without a hint is model_signing's older form, still read), then
//! the first signature (model_signing reads `signatures[0]` only).

use crate::signing::{decode_base64, no_duplicate_keys, PAYLOAD_TYPE};
use base64::Engine;
use serde::{Deserialize, Serialize};

/// Bundles larger than this are refused before they are parsed: model_signing's bundles
/// hold one digest per file or shard (a 100,000-file model's is about 20 MB).
pub const MAX_BUNDLE_BYTES: u64 = 64 << 20;

/// What signs the bundle, as its verification material says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Material {
    /// A public key given apart, named by an optional hint (`model_signing sign key`).
    PublicKey(Option<String>),
    /// A certificate or a chain (`sign sigstore`, `sign certificate`): not verified here.
    Certificate,
}

/// A bundle read, not yet verified.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// `mediaType`.
    pub media_type: String,
    /// What signs it.
    pub material: Material,
    /// How many transparency-log entries it carries.
    pub tlog_entries: usize,
    /// The DSSE payload type.
    pub payload_type: String,
    /// The payload bytes.
    pub payload: Vec<u8>,
    /// The first signature's bytes, when there is one that decodes.
    pub signature: Option<Vec<u8>>,
}

#[derive(Deserialize)]
struct Probe {
    #[serde(rename = "mediaType")]
    media_type: Option<Value>,
}

type Value = serde_json::Value;

#[derive(Deserialize)]
struct BundleIn {
    #[serde(rename = "mediaType")]
    media_type: String,
    #[serde(rename = "verificationMaterial")]
    verification_material: MaterialIn,
    #[serde(rename = "dsseEnvelope")]
    dsse_envelope: Option<EnvelopeIn>,
    #[serde(rename = "messageSignature")]
    message_signature: Option<Value>,
}

#[derive(Deserialize)]
struct MaterialIn {
    #[serde(rename = "publicKey")]
    public_key: Option<PublicKeyIn>,
    #[serde(rename = "x509CertificateChain")]
    chain: Option<Value>,
    certificate: Option<Value>,
    #[serde(rename = "tlogEntries", default)]
    tlog_entries: Vec<Value>,
}

#[derive(Deserialize)]
struct PublicKeyIn {
    hint: Option<String>,
}

#[derive(Deserialize)]
struct EnvelopeIn {
    payload: String,
    #[serde(rename = "payloadType")]
    payload_type: String,
    signatures: Vec<SignatureIn>,
}

#[derive(Deserialize)]
struct SignatureIn {
    sig: String,
}

/// Whether `bytes` are a Sigstore bundle: a JSON object whose `mediaType` names one (a DSSE
/// envelope has no `mediaType`).
pub fn is_bundle(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Probe>(bytes).is_ok_and(|p| {
        p.media_type
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|m| m.starts_with("application/vnd.dev.sigstore.bundle"))
    })
}

/// Reads a bundle's structure (nothing is verified here).
pub fn read(bytes: &[u8]) -> Result<Bundle, String> {
    no_duplicate_keys(bytes)?;
    let b: BundleIn = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let m = &b.verification_material;
    let material = match (&m.public_key, m.chain.is_some() || m.certificate.is_some()) {
        (Some(k), false) => Material::PublicKey(k.hint.clone().filter(|h| !h.is_empty())),
        (None, true) => Material::Certificate,
        _ => {
            return Err(
                "its verificationMaterial must hold exactly one of publicKey, x509CertificateChain or certificate"
                    .into(),
            )
        }
    };
    let Some(envelope) = b.dsse_envelope else {
        return Err(if b.message_signature.is_some() {
            "it signs a message digest (messageSignature), not a DSSE envelope: it is no model signature".into()
        } else {
            "it holds no dsseEnvelope".into()
        });
    };
    let payload =
        decode_base64(&envelope.payload).map_err(|e| format!("its DSSE payload is {e}"))?;
    let signature = envelope
        .signatures
        .first()
        .and_then(|s| decode_base64(&s.sig).ok());
    Ok(Bundle {
        media_type: b.media_type,
        material,
        tlog_entries: m.tlog_entries.len(),
        payload_type: envelope.payload_type,
        payload,
        signature,
    })
}

#[derive(Serialize)]
struct BundleOut<'a> {
    #[serde(rename = "mediaType")]
    media_type: &'a str,
    #[serde(rename = "verificationMaterial")]
    verification_material: MaterialOut<'a>,
    #[serde(rename = "dsseEnvelope")]
    dsse_envelope: EnvelopeOut,
}

#[derive(Serialize)]
struct MaterialOut<'a> {
    #[serde(rename = "publicKey")]
    public_key: PublicKeyOut<'a>,
    #[serde(rename = "tlogEntries")]
    tlog_entries: [(); 0],
}

#[derive(Serialize)]
struct PublicKeyOut<'a> {
    hint: &'a str,
}

#[derive(Serialize)]
struct EnvelopeOut {
    payload: String,
    #[serde(rename = "payloadType")]
    payload_type: &'static str,
    signatures: [SignatureOut; 1],
}

#[derive(Serialize)]
struct SignatureOut {
    sig: String,
    keyid: &'static str,
}

/// A key-signed bundle: compact JSON in model_signing's field order, with a newline.
pub fn write(hint: &str, payload: &[u8], signature: &[u8]) -> Vec<u8> {
    use base64::engine::general_purpose::STANDARD;
    let bundle = BundleOut {
        media_type: crate::oms::BUNDLE_MEDIA_TYPE,
        verification_material: MaterialOut {
            public_key: PublicKeyOut { hint },
            tlog_entries: [],
        },
        dsse_envelope: EnvelopeOut {
            payload: STANDARD.encode(payload),
            payload_type: PAYLOAD_TYPE,
            signatures: [SignatureOut {
                sig: STANDARD.encode(signature),
                keyid: "",
            }],
        },
    };
    let mut bytes = serde_json::to_vec(&bundle).expect("plain data");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_bundles_read_back_and_are_told_from_envelopes() {
        let bytes = write(
            &"ab".repeat(32),
            b"{\"x\":1}",
            &[0x30, 0x06, 1, 2, 3, 4, 5, 6],
        );
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(text.starts_with(
            "{\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":{\"publicKey\":{\"hint\":\"abab"
        ));
        assert!(text.contains("\"tlogEntries\":[]},\"dsseEnvelope\":{\"payload\":\"eyJ4IjoxfQ==\",\"payloadType\":\"application/vnd.in-toto+json\",\"signatures\":[{\"sig\":\"MAYBAgMEBQY=\",\"keyid\":\"\"}]}}"));
        assert!(is_bundle(&bytes));
        let b = read(&bytes).unwrap();
        assert_eq!(b.material, Material::PublicKey(Some("ab".repeat(32))));
        assert_eq!(b.payload, b"{\"x\":1}");
        assert_eq!(b.signature.unwrap(), [0x30, 0x06, 1, 2, 3, 4, 5, 6]);
        assert!(!is_bundle(
            br#"{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[]}"#
        ));
        assert!(!is_bundle(b"not json"));
    }

    #[test]
    fn certificates_and_message_signatures_are_named() {
        let cert = br#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"certificate":{"rawBytes":"AA=="},"tlogEntries":[{}]},"dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"AA=="}]}}"#;
        let b = read(cert).unwrap();
        assert_eq!(b.material, Material::Certificate);
        assert_eq!(b.tlog_entries, 1);
        let msg = br#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"x"}},"messageSignature":{}}"#;
        assert!(read(msg).unwrap_err().contains("messageSignature"));
        let dup = br#"{"mediaType":"a","mediaType":"b"}"#;
        assert!(read(dup).unwrap_err().contains("twice"));
    }
}
