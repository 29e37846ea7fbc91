//! The `socair` command: the library behind the thin `socair` binary ([`cli`]: arguments,
//! dispatch, output, progress bars and exit codes; the only room that prints). The host's
//! library crates are re-exported under their rooms' names, lowest first; each may use the
//! rooms before it, never one after it (`tests/tests/structure.rs` checks this, and that no
//! module imports another in a circle):
//!
//! * [`base`] and [`read`] (`socair-reading`): digests, documents, the rule-set registry,
//!   input files, plugins, model directories, artifacts, tensor layouts.
//! * [`fingerprint`] and [`report`] (`socair-reports`): tensor hashes and comparisons, the scan
//!   and its documents.
//! * [`convert`] (`socair-convert`): conversion rules, planning, writing, verification.
//! * the signing crate (`socair-signing`: keys, envelopes, signed scans, OpenSSF model
//!   signing), re-exported inside [`airlock`] (`socair-store`: policy, pins, the log, the
//!   store, the gate, derivation, verification).

pub use socair_convert::convert;
pub use socair_reading::{base, read, VERSION};
pub use socair_reports::{fingerprint, report};
pub use socair_store::airlock;

pub mod cli;

#[doc(hidden)]
pub mod fuzzing;

#[cfg(test)]
mod tests {
    /// Every crate's rule sets reach the command's registry (each crate registers its own
    /// with `inventory`; a crate the linker left out would lose them), each id once.
    #[test]
    fn every_crates_rule_sets_are_registered_once() {
        for id in [
            "socair.modeldir/v1",
            "float32-le-bits/v1",
            "socair.tensors/v1",
            "socair.tensors.diff/v1",
            "socair.report/v1",
            "socair-convert/3",
        ] {
            assert!(
                crate::base::rules::find(id).is_some(),
                "{id} is not registered"
            );
        }
        let all = crate::base::rules::built_in();
        let mut ids: Vec<_> = all.iter().map(|r| r.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
    }
}
