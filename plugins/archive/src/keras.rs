//! Keras members of an archive: a `.keras` archive (its first members are Keras', as
//! `socair_plugin_kit::zip::claims::keras_claims` says) or an HDF5 file (a legacy `.h5`
//! model, weights) is judged by the Keras plugin's library (`socair-keras`), the same rules
//! that plugin applies to such a file of its own: its findings join this walk's, placed
//! under the member. Its weights are located but not fingerprinted here (this plugin reports
//! no tensors); extracted, the file is the Keras plugin's.

use crate::scan::Walk;
use socair_hdf5::Severity as H5Severity;
use socair_pickle::pickle::Severity;
use socair_plugin_kit::zip::claims::keras_claims;

impl Walk {
    /// Judges `bytes`, the member at `place`, when it is a Keras archive or an HDF5 file;
    /// false when it is neither.
    pub(crate) fn keras(&mut self, place: &str, bytes: &[u8]) -> bool {
        let head = bytes.get(..bytes.len().min(4096)).unwrap_or_default();
        let reviewed = self.reviewed().to_vec();
        let a = if keras_claims(head) {
            socair_keras::archive::read_bytes(bytes, &reviewed)
        } else if socair_hdf5::detect(head) {
            socair_keras::h5model::read_bytes(bytes, &reviewed)
        } else {
            return false;
        };
        let mut clean = true;
        let mut add = |walk: &mut Walk, severity: H5Severity, at: &str, reason: &str| {
            clean = false;
            let at = format!("{place} {at}");
            match severity {
                H5Severity::Fail => walk
                    .a
                    .structure
                    .add(Severity::Fail, at, || reason.to_owned()),
                H5Severity::Lead => walk
                    .a
                    .unchecked
                    .add(Severity::Lead, at, || reason.to_owned()),
            }
        };
        if let Some(r) = &a.refused {
            add(self, r.severity, &r.place, &r.reason);
        }
        let config = a.config.iter().flat_map(|o| o.found.shown.iter());
        for f in a
            .structure
            .shown
            .iter()
            .chain(config)
            .chain(&a.members.shown)
        {
            add(self, f.severity, &f.place, &f.reason);
        }
        for (name, why) in &a.unread {
            add(
                self,
                H5Severity::Lead,
                &format!("dataset /{name}"),
                &format!("not located: {why}"),
            );
        }
        if clean {
            self.a.data += 1;
        }
        true
    }
}
