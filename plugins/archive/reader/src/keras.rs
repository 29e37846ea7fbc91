//! Keras members of an archive: a `.keras` archive (its first members are Keras', as
//! `socair_plugin_kit::zip::claims::keras_claims` says) or an HDF5 file (a legacy `.h5`
//! model, weights) is judged by the Keras plugin's library (`socair-keras`), the same rules
//! that plugin applies to such a file of its own: its findings join this walk's, placed
//! under the member. Its weights are located but not fingerprinted here (this plugin reports
//! no tensors); extracted, the file is the Keras plugin's.
//!
//! A zip the Keras plugin does not claim (`keras_claims` looks at its first members only) is
//! still one `keras.saving.load_model` loads when its top level holds a `config.json`
//! (keras 3.15.1 `keras/src/saving/saving_api.py` `load_model`: any path ending in `.keras`
//! that `zipfile.is_zipfile` accepts; `saving_lib.py` `_load_model_from_fileobj` reads
//! `config.json` and builds the model from it (`_model_from_config` →
//! `deserialize_keras_object`) before it looks for the weights, whatever else the zip holds,
//! `metadata.json` never read). So every top-level `config.json` of a zip walked here is
//! judged as Keras reads it ([`Walk::keras_config`]), as the Keras plugin judges its own.

use crate::scan::Walk;
use socair_hdf5::Severity as H5Severity;
use socair_pickle::pickle::Severity;
use socair_plugin_kit::zip::claims::keras_claims;

impl Walk {
    /// Judges `text`, a top-level `config.json` of the zip at `prefix`, as
    /// `deserialize_keras_object` reads it: an object with `class_name` and `config` is built,
    /// any other JSON object or list is walked and every such object in it built (keras
    /// 3.15.1 `serialization_lib.py`: `if "class_name" not in config or "config" not in
    /// config: return {key: deserialize_keras_object(value) …}`), so a plain config (a
    /// transformers `config.json`) holds nothing Keras builds and yields nothing.
    pub(crate) fn keras_config(&mut self, prefix: &str, text: &[u8]) {
        let file = format!("member {prefix}config.json");
        let reviewed = self.reviewed().to_vec();
        let out = socair_keras::grammar::judge_document(
            text,
            &file,
            socair_keras::grammar::Dialect::Keras3,
            &reviewed,
        );
        for f in &out.found.shown {
            let reason = format!("{} (keras.saving.load_model builds the model from the config.json of any zip it is given)", f.reason);
            match f.severity {
                H5Severity::Fail => {
                    self.a
                        .structure
                        .add_with(Severity::Fail, f.place.clone(), || reason)
                }
                H5Severity::Lead => {
                    self.a
                        .unchecked
                        .add_with(Severity::Lead, f.place.clone(), || reason)
                }
            }
        }
        let hidden = out.found.more;
        if hidden > 0 {
            let sev = if out.found.worst == Some(H5Severity::Fail) {
                Severity::Fail
            } else {
                Severity::Lead
            };
            self.a.unchecked.add_with(sev, file, || {
                format!("{hidden} more findings of the Keras grammar, not listed")
            });
        }
    }

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
                    .add_with(Severity::Fail, at, || reason.to_owned()),
                H5Severity::Lead => walk
                    .a
                    .unchecked
                    .add_with(Severity::Lead, at, || reason.to_owned()),
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
