//! Members that are model files of another plugin's format, opened here as far as their
//! pickles go, because a loader reads the pickles in them wherever they lie:
//!
//! * **a torch zip checkpoint** (`torch.save`'s zip, a member such as `inner.pt`, or the
//!   `serialized_state_dict.pt` of a torch 2.7 `torch.export` zip): walked as a zip whose
//!   `*.pkl` records (`data.pkl`, which `torch.load` unpickles; TorchScript's `constants.pkl`
//!   and `bytecode.pkl`) go through the pickle machine, findings placed as
//!   `member outer.zip!/inner.pt!/archive/data.pkl byte N`; `code/` records make it a
//!   TorchScript archive (a FAIL, as the torch-zip plugin judges one: `torch.jit.load`
//!   compiles and runs that code); its other records (storages, `version`, `byteorder`, …) are
//!   what the torch-zip plugin checks when it reads the file on its own, which one LEAD says;
//! * **a `.npy` array** (a member of an `.npz` nested here, or of a zip `np.load` reads as
//!   one whatever its first member's name): an object array's pickle (`np.load(...,
//!   allow_pickle=True)` runs `pickle.load` on what follows the header) goes through the
//!   machine at its byte in the member; the array itself is a LEAD (the numpy plugin
//!   fingerprints `.npy` and `.npz` files it reads on their own);
//! * **a Keras archive** (`keras.saving.save_model`, keras 3.15.1 `saving_lib.py`
//!   `_save_model_to_fileobj`: `metadata.json` with `keras_version`, `config.json`, and
//!   `model.weights.h5` or `model.weights.npz`, `assets/`): Keras rebuilds the model from
//!   `config.json`, importing and calling what it names: the config is judged by the Keras
//!   grammar (`crate::keras`), and the archive is a LEAD, its weights not read here.

use crate::scan::Walk;
use socair_pickle::pickle::Severity;
use socair_plugin_kit::zip::claims::torch_record_name;

/// The `.npy` magic.
const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Where the data of the `.npy` bytes starts and its header text, when they are one
/// (format 1.0: a 16-bit header length; 2.0 and 3.0: 32-bit; numpy 2.4
/// `_format_impl.py`, `_read_array_header`).
pub(crate) fn npy_data(bytes: &[u8]) -> Option<(usize, &[u8])> {
    if !bytes.starts_with(NPY_MAGIC) {
        return None;
    }
    let (len_at, width) = match bytes.get(6)? {
        1 => (8usize, 2usize),
        2 | 3 => (8, 4),
        _ => return None,
    };
    let field = bytes.get(len_at..len_at + width)?;
    let len = field
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    let start = len_at + width;
    let end = start.checked_add(len)?;
    Some((end, bytes.get(start..end)?))
}

/// Whether a `.npy` header's `descr` may hold Python objects: an `O` in its value (`'|O'`,
/// a structured field of type `'O'`). A field name with an `O` in it matches too; the data is
/// then run as a pickle only when it looks like one.
fn descr_holds_objects(header: &[u8]) -> bool {
    let text = String::from_utf8_lossy(header);
    let Some(at) = text.find("'descr'").or_else(|| text.find("\"descr\"")) else {
        return false;
    };
    let rest = &text[at + 7..];
    let end = [
        "'fortran_order'",
        "\"fortran_order\"",
        "'shape'",
        "\"shape\"",
    ]
    .iter()
    .filter_map(|k| rest.find(k))
    .min()
    .unwrap_or(rest.len());
    rest[..end].contains('O')
}

impl Walk {
    /// Notes what a top-level member of the archive at `prefix` says about it being Keras's.
    pub(crate) fn keras_sign(&mut self, name: &str, bytes: &[u8], prefix: &str) {
        let signs = self.keras.entry(prefix.to_owned()).or_default();
        match name {
            "config.json" => {
                signs.config = true;
                signs.config_texts.push(bytes.to_vec());
            }
            "metadata.json" => {
                signs.version = serde_json::from_slice::<serde_json::Value>(bytes)
                    .ok()
                    .and_then(|v| v.get("keras_version").map(|k| k.to_string()));
            }
            "model.weights.h5" | "model.weights.npz" => signs.weights = Some(name.to_owned()),
            _ => {}
        }
    }

    /// After an archive's members were opened: a zip's top-level `config.json` judged as
    /// Keras reads it (`crate::keras`: `keras.saving.load_model` loads any zip with one), and
    /// a LEAD when the members are a Keras archive's.
    pub(crate) fn keras_verdict(&mut self, prefix: &str, here: &str, zip: bool) {
        let Some(signs) = self.keras.remove(prefix) else {
            return;
        };
        if zip {
            for text in &signs.config_texts {
                self.keras_config(prefix, text);
            }
        }
        let (true, Some(version)) = (signs.config, signs.version) else {
            return;
        };
        let weights = match signs.weights {
            Some(w) => format!(", its weights in {w} (not read)"),
            None => String::new(),
        };
        self.a.unchecked.add_with(Severity::Lead, here.to_owned(), || {
            format!("a Keras archive (keras.saving.save_model: config.json and metadata.json with keras_version {version}{weights}) whose first members are not the ones Keras writes first, so the Keras plugin did not claim it: its config.json was judged by the Keras grammar here, but its weights were not read; extract it and scan it as a .keras file")
        });
    }

    /// A `.npy` member: its object array's pickle scanned; the array a LEAD.
    pub(crate) fn npy(&mut self, place: &str, bytes: &[u8]) {
        let Some((data_at, header)) = npy_data(bytes) else {
            self.a.unchecked.add_with(Severity::Lead, place.to_owned(), || {
                "starts with the .npy magic but its header does not lie in it: nothing in it was checked".into()
            });
            return;
        };
        let data = bytes.get(data_at..).unwrap_or_default();
        let head = &data[..data.len().min(4096)];
        let objects = descr_holds_objects(header)
            && socair_pickle::pickle::looks_like_pickle(head, data.len() as u64);
        if objects {
            self.pickle_at(place, data, data_at as u64, self.profile);
        }
        self.a.unchecked.add_with(Severity::Lead, place.to_owned(), || {
            format!(
                "a NumPy .npy array{}: socair fingerprints .npy and .npz files the numpy plugin reads on their own, not arrays inside another archive; extract it and scan it",
                if objects {
                    " of Python objects (its pickle scanned in the pickle row)"
                } else {
                    ""
                }
            )
        });
    }

    /// What a member of a nested torch checkpoint (the walk of `prefix`) is: its `*.pkl`
    /// records through the machine; `code/` records make it TorchScript. `true` when the
    /// member was judged here.
    pub(crate) fn torch_record(&mut self, name: &str, bytes: &[u8], prefix: &str) -> bool {
        if !self.torch_prefixes.contains(prefix) {
            return false;
        }
        let rel = name.split_once('/').map_or(name, |(_, r)| r);
        let place = format!("member {prefix}{name}");
        if rel.ends_with(".pkl") {
            // A torch checkpoint's pickle: socair-wo alone, as torch reads it.
            self.pickle_at(&place, bytes, 0, socair_pickle::pickle::Profile::Torch);
            return true;
        }
        if rel.starts_with("code/") {
            self.a.pickle.add_with(Severity::Fail, place, || {
                "a TorchScript archive (torch.jit.save): torch.load hands it to the TorchScript loader, which compiles and runs its code; it is never a weights-only checkpoint".into()
            });
            return true;
        }
        // Storages and torch's own records are the torch-zip plugin's to check; anything
        // else in the checkpoint is opened like any member.
        torch_record_name(name.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_headers_and_object_descrs() {
        let mut v1 = b"\x93NUMPY\x01\x00".to_vec();
        let h = b"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n";
        v1.extend_from_slice(&(h.len() as u16).to_le_bytes());
        v1.extend_from_slice(h);
        v1.extend_from_slice(b"\x80\x02N.");
        let (at, header) = npy_data(&v1).unwrap();
        assert_eq!(&v1[at..], b"\x80\x02N.");
        assert!(descr_holds_objects(header));
        assert!(!descr_holds_objects(
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
        ));
        assert!(descr_holds_objects(
            b"{'descr': [('a', '<f4'), ('b', '|O')], 'fortran_order': False, 'shape': (3,), }"
        ));
        // The shape's tuple after the descr is not the descr.
        assert!(!descr_holds_objects(b"{'shape': (3,), 'descr': '<f4'}"));
        assert_eq!(npy_data(&v1[..20]), None);
        assert_eq!(npy_data(b"\x93NUMPY\x04\x00\x00\x00"), None);
    }
}
