//! The store's vocabulary, which the store and both its backends name: the two areas an
//! artifact can be in, the names of the documents kept beside it, and a new store's policy.
//! A leaf: it imports neither the store nor a backend.

use crate::airlock::pins::Pins;
use crate::airlock::policy::{Policy, POLICY_SCHEMA};

/// File name of a staged artifact's attestation.
pub const ATTESTATION: &str = "attestation.dsse.json";
/// File name of a converted artifact's derivation record.
pub const DERIVATION: &str = "derivation.dsse.json";
/// Directory of a staged artifact's acceptances.
pub const ACCEPTANCES: &str = "acceptances";
/// Directory of a converted artifact's derivation records, one per input
/// (`<input sha256>.dsse.json`): two inputs can convert to the same bytes.
pub const DERIVATIONS: &str = "derivations";

/// The two areas an artifact can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `incoming/`: staged, not trusted.
    Incoming,
    /// `promoted/`: passed the gate.
    Promoted,
}

impl Area {
    /// The folder's name.
    pub fn dir(self) -> &'static str {
        match self {
            Area::Incoming => "incoming",
            Area::Promoted => "promoted",
        }
    }
}

/// The policy of a new store: no key trusted, nothing pinned.
pub(crate) fn empty_policy() -> Policy {
    Policy {
        schema: POLICY_SCHEMA.into(),
        keys: Vec::new(),
        pins: Pins::default(),
    }
}
