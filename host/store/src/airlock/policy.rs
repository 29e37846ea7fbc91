//! The trust policy (`policy.json`): trusted keys with their roles, and the pins.

use crate::airlock::error::StoreError;
use crate::airlock::pins::Pins;
use crate::airlock::signing;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The policy's schema name.
pub const POLICY_SCHEMA: &str = "socair.policy/v1";
/// Roles a key may hold: `reference` signs tensor manifests that scans and diffs compare
/// with (`socair tensors --sign`).
pub const ROLES: &[&str] = &["scan", "accept", "derive", "reference"];

/// A trusted key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedKey {
    /// hex SHA-256 of the raw public key.
    pub keyid: String,
    /// Its roles.
    pub roles: Vec<String>,
    /// SPKI PEM.
    pub public_key: String,
}

/// The trust policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Always [`POLICY_SCHEMA`].
    pub schema: String,
    /// Trusted keys.
    pub keys: Vec<TrustedKey>,
    /// Pins.
    #[serde(default)]
    pub pins: Pins,
}

/// Parses a policy document (`name` says where it came from, for messages).
pub fn parse(bytes: &[u8], name: &str) -> Result<Policy, StoreError> {
    let p: Policy =
        serde_json::from_slice(bytes).map_err(|e| StoreError::Unusable(format!("{name}: {e}")))?;
    if p.schema != POLICY_SCHEMA {
        return Err(StoreError::Unusable(format!(
            "{name}: schema {:?}, expected {POLICY_SCHEMA}",
            p.schema
        )));
    }
    Ok(p)
}

impl Policy {
    /// The keys holding `role`.
    pub fn keys_with_role(
        &self,
        role: &str,
    ) -> Result<Vec<ed25519_dalek::VerifyingKey>, StoreError> {
        self.keys
            .iter()
            .filter(|k| k.roles.iter().any(|r| r == role))
            .map(|k| {
                signing::parse_public_key(&k.public_key, Path::new("policy.json"))
                    .map_err(|e| StoreError::Unusable(e.to_string()))
            })
            .collect()
    }

    /// The roles of the key with `keyid`.
    pub fn roles_of(&self, keyid: &str) -> Option<&[String]> {
        self.keys
            .iter()
            .find(|k| k.keyid == keyid)
            .map(|k| k.roles.as_slice())
    }
}
