//! OpenSSF Model Signing (OMS v1.0), both ways: signatures that the `model_signing` package
//! (sigstore/model-transparency) verifies, and its key-signed signatures verified here.
//!
//! The layers, as model_signing 1.1.1 writes them: a Sigstore bundle v0.3
//! (`application/vnd.dev.sigstore.bundle.v0.3+json`) whose verification material names the
//! public key by a hint and carries no certificate or log entry ([`bundle`]), holding a DSSE
//! envelope signed with ECDSA ([`key`]) over an in-toto Statement v1 whose predicate
//! `https://model_signing/signature/v1.0` lists the model's files (or shards) with their
//! digests, and whose one subject is the root digest over them ([`payload`]). The model is
//! walked and hashed as model_signing does ([`manifest`]); [`sign`] and [`verify`] put it
//! together.
//!
//! Every rule here mirrors model_signing 1.1.1 (`src/model_signing/`), cited where it applies,
//! and is proved against bundles that package wrote (`fixtures/oms/`).

pub mod bundle;
pub mod key;
pub mod manifest;
pub mod payload;
pub mod sign;
pub mod subject;
pub mod verify;

/// The predicate type of an OMS v1.0 signature (`_signing/signing.py` `_PREDICATE_TYPE`).
pub const PREDICATE_TYPE: &str = "https://model_signing/signature/v1.0";
/// The predicate type of model_signing 0.2's signatures, which v1.x still reads
/// (`_PREDICATE_TYPE_COMPAT`); not read here.
pub const PREDICATE_TYPE_V0_2: &str = "https://model_signing/Digests/v0.1";
/// The bundle media type model_signing writes and requires for key-signed bundles
/// (`_signing/sign_sigstore_pb.py` `_BUNDLE_MEDIA_TYPE`).
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

/// Why a model cannot be signed or a signature cannot be checked.
#[derive(Debug, thiserror::Error)]
pub enum OmsError {
    /// A file or directory cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// Where.
        path: String,
        /// What.
        source: std::io::Error,
    },
    /// Something in the model that model_signing refuses to hash (a symbolic link, a FIFO, a
    /// name that is not UTF-8).
    #[error("{path}: {why}")]
    Unhashable {
        /// Where.
        path: String,
        /// Why.
        why: String,
    },
    /// A key that cannot be used.
    #[error("{path}: {why}")]
    Key {
        /// The key file.
        path: String,
        /// Why.
        why: String,
    },
}
