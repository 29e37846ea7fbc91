//! Keras' HDF5 files: a legacy `.h5` model (Keras 2 / tf-keras `model.save("m.h5")`: the
//! `model_config` and `training_config` attributes of the root group, written by
//! `tf_keras/src/saving/legacy/hdf5_format.py` `save_model_to_hdf5`, judged by the legacy
//! grammar), a weights file (`save_weights`: `layer_names` on the root; Keras 3's
//! `model.weights.h5`: groups of `vars`), or any other HDF5 file. Every dataset is a weight
//! named by its HDF5 path.

use crate::grammar::{self, Dialect};
use crate::{Analysis, Bytes, Tensor};
use socair_hdf5::{self as hdf5, Finding, Kind, Order, ReadAt, Severity, Storage, Type, Value};

/// The HDF5 reader's options: data read or not, and the plugin filters `reviewed` accepts
/// (`hdf5.filter.N`).
pub fn options(read_data: bool, reviewed: &[String]) -> hdf5::Options {
    hdf5::Options {
        read_data,
        accepted_filters: hdf5::model::accepted_filters(reviewed),
    }
}

/// Reads the HDF5 file `src` as a Keras file.
pub fn read<S: ReadAt + ?Sized>(src: &S, read_data: bool, reviewed: &[String]) -> Analysis {
    match hdf5::read(src, options(read_data, reviewed)) {
        Ok(file) => analyse(file, 0, "", reviewed),
        Err(e) => crate::refused(
            "an HDF5 file",
            e.place,
            format!("{}: not an HDF5 file the HDF5 library reads as socair does, so nothing in it was checked", e.reason),
        ),
    }
}

/// Reads the HDF5 file held in `bytes` (an archive's member): every tensor inline.
pub fn read_bytes(bytes: &[u8], reviewed: &[String]) -> Analysis {
    let mut a = read(bytes, true, reviewed);
    inline(&mut a, bytes, 0);
    a
}

/// Turns the tensors' ranges into inline bytes, from `bytes`, which start at offset `start`
/// of the file the ranges count in.
pub fn inline(a: &mut Analysis, bytes: &[u8], start: u64) {
    a.record = None;
    for t in &mut a.tensors {
        if let Bytes::Ranges(ranges) = &t.bytes {
            let mut out = Vec::new();
            for &(at, len) in ranges {
                let from = at.saturating_sub(start) as usize;
                if let Some(part) = bytes.get(from..from.saturating_add(len as usize)) {
                    out.extend_from_slice(part);
                }
            }
            t.bytes = Bytes::Inline(out);
        }
    }
}

/// The analysis of a read HDF5 file whose ranges count from `base` in the opened file;
/// places are prefixed with `label` (`model.weights.h5 `) when it is an archive's member.
/// The file is consumed: its datasets' assembled bytes become the tensors' without a copy.
pub fn analyse(file: hdf5::File, base: u64, label: &str, reviewed: &[String]) -> Analysis {
    let mut a = Analysis::default();
    let place = |p: &str| format!("{label}{p}");
    for f in &file.findings.shown {
        a.structure.push(Finding {
            place: place(&f.place),
            // The other file a finding is about is judged beside this file's own: not for a
            // member of an archive, whose loader reads it from no directory of the scan.
            file: f.file.clone().filter(|_| label.is_empty()),
            ..f.clone()
        });
    }
    if file.findings.more > 0 {
        a.structure.add(
            file.worst().unwrap_or(Severity::Lead),
            place("/"),
            format!("{} more findings not listed", file.findings.more),
        );
    }
    judge_config(&mut a, &file, label, reviewed);
    take_datasets(&mut a, file.objects, base, label);
    if a.config.is_none() && a.no_config.is_empty() {
        a.no_config = "no model_config to judge".into();
    }
    a
}

/// What the file is (a legacy Keras model, Keras weights, any HDF5 file), its Keras version,
/// and its `model_config` and `training_config` judged by the grammar.
fn judge_config(a: &mut Analysis, file: &hdf5::File, label: &str, reviewed: &[String]) {
    let place = |p: &str| format!("{label}{p}");
    let root = file.object("");
    let text = |name: &str| -> Option<Result<String, String>> {
        let v = root?.attribute(name)?;
        Some(match v {
            Value::Strings(s) if s.len() == 1 => Ok(s[0].clone()),
            other => Err(format!("{other:?}").chars().take(80).collect()),
        })
    };
    for key in ["keras_version", "backend"] {
        if let Some(Ok(v)) = text(key) {
            a.metadata.push((key.to_owned(), v));
        }
    }
    let version = a
        .metadata
        .iter()
        .find(|(k, _)| k == "keras_version")
        .map(|(_, v)| format!(" (keras {v})"))
        .unwrap_or_default();
    // Keras 3 writes the legacy form too (`model.save("m.h5")`), and resolves its names in
    // its own registries when it loads one.
    let keras3 = a
        .metadata
        .iter()
        .any(|(k, v)| k == "keras_version" && v.starts_with("3."));
    let dialect = if keras3 {
        Dialect::Legacy3
    } else {
        Dialect::Legacy
    };
    let mut outcome: Option<grammar::Judged> = None;
    match text("model_config") {
        Some(Ok(config)) => {
            a.kind = format!("a legacy Keras HDF5 model{version}");
            let mut o = grammar::judge(
                config.as_bytes(),
                &place("attribute model_config"),
                dialect,
                reviewed,
            );
            if let Some(Ok(training)) = text("training_config") {
                let t = grammar::judge_document(
                    training.as_bytes(),
                    &place("attribute training_config"),
                    dialect,
                    reviewed,
                );
                o.merge(t);
            }
            outcome = Some(o);
        }
        Some(Err(v)) => {
            a.kind = format!("a legacy Keras HDF5 model{version}");
            a.structure.add(
                Severity::Lead,
                place("/ attribute model_config"),
                format!("not one string ({v}): tf-keras reads it as JSON text; not judged"),
            );
        }
        None => {
            let keras3 = file
                .objects
                .iter()
                .any(|o| o.path.ends_with("/vars") || o.path == "vars");
            a.kind = if root.and_then(|r| r.attribute("layer_names")).is_some() {
                format!("Keras weights (save_weights, HDF5){version}")
            } else if keras3 {
                "Keras 3 weights (HDF5)".to_owned()
            } else {
                a.plain_hdf5 = true;
                "an HDF5 file".to_owned()
            };
            a.no_config =
                "the file holds weights only (no model_config attribute): no config to judge"
                    .into();
        }
    }
    a.config = outcome;
}

/// The datasets, consumed: each a tensor (its ranges moved by `base`, where the file starts in
/// the opened one) or listed as unread, deferred or data, with why.
fn take_datasets(a: &mut Analysis, objects: Vec<hdf5::Object>, base: u64, label: &str) {
    for o in objects {
        let marked_bf16 = matches!(o.attribute("dtype"), Some(Value::Strings(s)) if s.len() == 1 && s[0] == "bfloat16");
        let Kind::Dataset(d) = o.kind else { continue };
        let name = o.path;
        let bf16 = matches!(d.ty, Type::Opaque { size: 2 }) && marked_bf16;
        let element = if bf16 {
            Some(("BF16", Order::Little))
        } else {
            d.ty.tensor_element()
        };
        let Some((element, order)) = element else {
            match d.storage {
                Storage::Unread(why) => a.unread.push((name, why)),
                Storage::Deferred(why) => a.deferred.push((name, why)),
                Storage::Data(what) => a.data.push((name, what)),
                // Bytes h5py returns as NumPy `void` records (no `dtype` attribute marks them
                // as bfloat16): data, located as a tensor's would be, not a tensor type.
                _ if matches!(d.ty, Type::Opaque { .. }) => a.data.push((
                    name,
                    format!(
                        "its elements are {}: data, not a tensor type",
                        d.ty.describe()
                    ),
                )),
                _ => a.unread.push((
                    name,
                    format!("its elements are {}, not a tensor type", d.ty.describe()),
                )),
            }
            continue;
        };
        let bytes = match d.storage {
            Storage::Ranges(r) => {
                Bytes::Ranges(r.iter().map(|&(at, len)| (at + base, len)).collect())
            }
            Storage::Inline(b) => Bytes::Inline(b),
            Storage::Empty => Bytes::Ranges(Vec::new()),
            // External raw storage: named in the file beside this one, which only a host that
            // scans their directory reads; an archive's member has no such neighbour.
            Storage::Elsewhere { file, ranges } if label.is_empty() => {
                Bytes::Elsewhere { file, ranges }
            }
            Storage::Elsewhere { file, .. } => {
                a.unread.push((
                    name,
                    format!(
                        "its bytes are in the external file {file:?}, beside no archive member"
                    ),
                ));
                continue;
            }
            Storage::Unread(why) => {
                a.unread.push((name, why));
                continue;
            }
            // Numbers read where they lie (a virtual dataset's, from its sources): data.
            Storage::Data(what) => {
                a.data.push((name, what));
                continue;
            }
            Storage::Deferred(why) => {
                a.deferred.push((name, why));
                continue;
            }
        };
        a.tensors.push(Tensor {
            name,
            element,
            order,
            // An array type's dimensions follow the dataset's, as NumPy's subarray dtypes.
            shape: d.dims.iter().chain(d.ty.tensor_dims()).copied().collect(),
            bytes,
        });
    }
}
