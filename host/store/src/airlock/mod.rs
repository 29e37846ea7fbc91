//! The airlock: the store and what guards it. Keys and DSSE envelopes ([`signing`], from the
//! signing crate, as are OpenSSF model signing bundles, [`oms`]), the
//! trust policy ([`policy`]) and its pins ([`pins`]), the chained activity log ([`log`]), the
//! store's staging and scratch areas ([`store`]) over its two [`backend`]s, a directory
//! ([`file_backend`], [`files`]) and object storage ([`bucket_backend`], [`bucket`], with its
//! log of claimed entries, [`bucket_log`]), signed scans ([`attest`]), the gate with its
//! acceptances and promotion ([`gate`]), the Hub repositories pulled `--as` ([`repos`]),
//! conversion with a signed derivation record
//! ([`derive`]), the answer to "can I trust this file?" ([`verify`]), timestamps ([`clock`])
//! and the typed errors ([`error`]). May use `base`,
//! `read`, `fingerprint`, `report`, `convert` and the signing crate; never `cli`. Nothing here prints: each
//! operation returns its outcome or a [`error::StoreError`].

pub mod attest;
pub mod backend;
pub mod bucket;
pub mod bucket_backend;
pub mod bucket_log;
pub mod clock;
pub mod derive;
pub mod error;
pub mod file_backend;
pub mod files;
pub mod gate;
pub mod listing;
pub mod log;
pub mod pins;
pub mod policy;
pub mod repos;
pub mod review;
pub mod store;
pub mod store_layout;
#[cfg(test)]
mod store_tests;
pub mod verify;

pub use socair_signing::{oms, signing};
