//! A model package's `Manifest.json`, as coremltools 9.0's `ModelPackage`
//! (modelpackage/src/ModelPackage.cpp) reads it: `fileFormatVersion` (at most 1.0.0,
//! `validate`), `itemInfoEntries` (each item's `path`, `name`, `author`, `description`; the
//! item's file is `Data/<path>`, joined as `std::filesystem::path` joins, so an absolute path
//! or one with `..` is a file outside the package), and `rootModelIdentifier`, the item Core ML
//! loads as the model.
//!
//! The JSON is read strictly (a key given twice is a FAIL: nlohmann's json, which
//! `ModelPackage` parses with, keeps one of the two and another reader may keep the other). The
//! root model is a finding about its file (`Finding::file`): the host makes it a note when the
//! scanned directory holds that file and socair reads it. coremltools finds the weights as the
//! item named `weights` by `com.apple.CoreML` (`_try_get_weights_dir_path`,
//! coremltools/models/utils.py), where the model file's blobs (`@model_path/weights/...`) are
//! located beside the root model: when the two differ, that is a LEAD.

use crate::model::links::leaves;
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_plugin_kit::json::{Json, DUPLICATE_KEY};
use socair_plugin_kit::reading::Reading;
use socair_plugin_kit::Severity;

/// The format this reader reads.
pub const FORMAT: &str = "coreml-manifest";

/// The largest manifest read (coremltools writes a few hundred bytes).
pub const MAX_MANIFEST: u64 = 16 << 20;

/// Whether `head` starts as a model package's manifest: a JSON object naming
/// `fileFormatVersion` and `itemInfoEntries`.
pub fn looks_like_manifest(head: &[u8], file_len: u64) -> bool {
    let text = String::from_utf8_lossy(head);
    file_len <= MAX_MANIFEST
        && text.trim_start().starts_with('{')
        && text.contains("\"fileFormatVersion\"")
        && text.contains("\"itemInfoEntries\"")
}

fn string<'a>(object: &'a [(String, Json)], key: &str) -> Option<&'a str> {
    object
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| match v {
            Json::String(s) => Some(s.as_str()),
            _ => None,
        })
}

/// Reads the manifest `bytes`.
pub fn read(bytes: &[u8]) -> OpenedFile {
    let mut r = Reading::new(FORMAT, bytes.len() as u64);
    let mut root_file = None;
    match serde_json::from_slice::<Json>(bytes) {
        Err(e) => {
            let duplicate = e.to_string().starts_with(DUPLICATE_KEY);
            r.note("malformed", Severity::Fail, || "file".into(), || {
                if duplicate {
                    format!("{e}: JSON readers keep different ones of the two, so readers may see different packages")
                } else {
                    format!("not JSON: {e}")
                }
            });
        }
        Ok(Json::Object(top)) => root_file = judge(&top, &mut r),
        Ok(other) => r.note(
            "malformed",
            Severity::Fail,
            || "file".into(),
            || format!("the manifest is {}, not an object", other.kind()),
        ),
    }
    let root = root_file.clone().unwrap_or_default();
    let mut opened = r.finish(|status| match status {
        RowStatus::Pass => format!("Core ML model package manifest: its root model is {root}"),
        RowStatus::Fail => "a Core ML model package manifest naming files outside the package, or malformed".into(),
        _ => format!("a Core ML model package manifest with parts socair does not prove safe (root model {root})"),
    });
    // A manifest whose one LEAD is its root model reads the same when the host finds that
    // file in the scanned package and makes the finding a note.
    let only_root = opened.rows.iter().all(|r| {
        r.findings.iter().all(|f| {
            f.severity != socair_plugin_api::Severity::Lead
                || f.place.as_str() == "rootModelIdentifier"
        })
    });
    if let Some(file) = root_file {
        for row in opened
            .rows
            .iter_mut()
            .filter(|r| r.status == RowStatus::Lead && only_root)
        {
            row.summary = format!(
                "Core ML model package manifest: Core ML loads the package's model from {file}"
            )
            .into();
        }
        for f in opened.rows.iter_mut().flat_map(|r| r.findings.iter_mut()) {
            if f.place.as_str() == "rootModelIdentifier" {
                f.file = abi_stable::std_types::ROption::RSome(file.as_str().into());
            }
        }
    }
    opened
}

/// Judges the manifest's keys; the root model's file, relative to the manifest.
fn judge(top: &[(String, Json)], r: &mut Reading) -> Option<String> {
    let version = string(top, "fileFormatVersion").unwrap_or("");
    if version.split('.').collect::<Vec<_>>() != ["1", "0", "0"] {
        r.note("versions", Severity::Lead, || "fileFormatVersion".into(), || {
            format!("file format version {version:?}: coremltools 9.0's ModelPackage reads 1.0.0 and refuses newer ones")
        });
    }
    let entries: &[(String, Json)] = match top.iter().find(|(k, _)| k == "itemInfoEntries") {
        Some((_, Json::Object(e))) => e,
        _ => &[],
    };
    let mut items = Vec::new();
    for (id, entry) in entries {
        let place = || format!("itemInfoEntries.{}", socair_plugin_kit::bounded::short(id));
        let Json::Object(fields) = entry else {
            r.note("items", Severity::Lead, place, || {
                "an item that is not an object: Core ML refuses the package".into()
            });
            continue;
        };
        let keys = ["path", "name", "author", "description"].map(|k| string(fields, k));
        let [Some(path), Some(name), Some(author), Some(_)] = keys else {
            r.note("items", Severity::Lead, place, || "an item without its path, name, author and description: Core ML refuses the package (Invalid itemInfo)".into());
            continue;
        };
        if leaves(path) || path.is_empty() {
            r.note("items outside the package", Severity::Fail, place, || {
                format!("the item {name:?} lies at {path:?}, outside the package's Data directory: Core ML opens it there")
            });
            continue;
        }
        items.push((id.as_str(), path, name, author));
    }
    r.metadata
        .push(("coreml.items".into(), items.len().to_string()));
    let root_id = string(top, "rootModelIdentifier").unwrap_or("");
    let Some(&(_, root, ..)) = items.iter().find(|(id, ..)| *id == root_id) else {
        r.note("root model", Severity::Lead, || "rootModelIdentifier".into(), || {
            format!("the root model {root_id:?} is not an item of the package: Core ML cannot load it")
        });
        return None;
    };
    let file = format!("Data/{root}");
    r.note("root model", Severity::Lead, || "rootModelIdentifier".into(), || {
        format!("Core ML loads the package's model from {file:?}; socair reads it as a file of the scanned package")
    });
    r.metadata.push(("coreml.root_model".into(), file.clone()));
    let beside = match root.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/weights"),
        None => "weights".into(),
    };
    if let Some(&(_, w, ..)) = items
        .iter()
        .find(|(_, _, name, author)| *name == "weights" && *author == "com.apple.CoreML")
    {
        if w.trim_end_matches('/') != beside {
            r.note("weights elsewhere", Severity::Lead, || "itemInfoEntries".into(), || {
                format!("coremltools reads the model's weights from Data/{w}, Core ML from beside the model (Data/{beside}), where socair locates them: the two may read different weights")
            });
        }
    }
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WRITTEN: &str = r#"{
    "fileFormatVersion": "1.0.0",
    "itemInfoEntries": {
        "A": {"author": "com.apple.CoreML", "description": "CoreML Model Weights", "name": "weights", "path": "com.apple.CoreML/weights"},
        "B": {"author": "com.apple.CoreML", "description": "CoreML Model Specification", "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"}
    },
    "rootModelIdentifier": "B"
}"#;

    #[test]
    fn a_written_manifest_names_its_root_model() {
        assert!(looks_like_manifest(
            WRITTEN.as_bytes(),
            WRITTEN.len() as u64
        ));
        let o = read(WRITTEN.as_bytes());
        let row = &o.rows[0];
        assert_eq!(row.status, RowStatus::Lead);
        assert_eq!(row.findings.len(), 1);
        assert_eq!(
            row.findings[0]
                .file
                .as_ref()
                .map(|f| f.as_str())
                .into_option(),
            Some("Data/com.apple.CoreML/model.mlmodel")
        );
    }

    #[test]
    fn paths_outside_duplicates_and_moved_weights_are_judged() {
        let outside = WRITTEN.replace("com.apple.CoreML/model.mlmodel", "../../etc/model.mlmodel");
        assert_eq!(read(outside.as_bytes()).rows[0].status, RowStatus::Fail);
        let absolute = WRITTEN.replace("com.apple.CoreML/weights", "/tmp/weights");
        assert_eq!(read(absolute.as_bytes()).rows[0].status, RowStatus::Fail);
        let twice = WRITTEN.replace(
            "\"rootModelIdentifier\": \"B\"",
            "\"rootModelIdentifier\": \"B\", \"rootModelIdentifier\": \"A\"",
        );
        assert_eq!(read(twice.as_bytes()).rows[0].status, RowStatus::Fail);
        let moved = WRITTEN.replace("com.apple.CoreML/weights", "other/weights");
        let o = read(moved.as_bytes());
        assert!(o.rows[0]
            .findings
            .iter()
            .any(|f| f.reason.as_str().contains("may read different weights")));
        assert!(!looks_like_manifest(b"{\"a\": 1}", 8));
    }
}
