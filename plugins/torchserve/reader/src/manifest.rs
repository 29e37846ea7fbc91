//! `MAR-INF/MANIFEST.json`, read strictly.
//!
//! torch-model-archiver 0.12.0 writes it (model_archiver/manifest_components/manifest.py
//! `Manifest.__to_dict__`, model.py `Model.__to_dict__`): `createdOn`, `runtime` (`python`,
//! `python3` or `LSP`), `model` {`modelName`, `serializedFile`?, `handler`, `modelFile`?,
//! `modelVersion`?, `extensions`?, `requirementsFile`?, `configFile`?} and `archiverVersion`.
//! TorchServe's frontend reads it with Gson into `Manifest` (frontend/archive/.../model/
//! Manifest.java; `description` and `model.version`/`model.description` too) and refuses an
//! archive without `model`, `modelName`, `modelVersion` or `runtime` (`ModelArchive.validate`);
//! the Python worker reads it again with `json.load` (ts/model_loader.py) and the built-in
//! handlers read `model.serializedFile` and `model.modelFile` from it
//! (ts/torch_handler/base_handler.py `initialize`).
//!
//! Gson and `json.load` both keep the last of two equal keys; socair's JSON refuses them (a
//! manifest no archiver writes). A key neither reader knows is ignored by both: a LEAD.

use socair_plugin_kit::json::{Json, DUPLICATE_KEY};
use socair_plugin_kit::Severity;

/// What the manifest says, as TorchServe reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// `runtime`.
    pub runtime: Option<String>,
    /// `model.modelName`.
    pub model_name: Option<String>,
    /// `model.modelVersion`.
    pub model_version: Option<String>,
    /// `model.handler`.
    pub handler: Option<String>,
    /// `model.serializedFile`.
    pub serialized_file: Option<String>,
    /// `model.modelFile`.
    pub model_file: Option<String>,
    /// `model.requirementsFile`.
    pub requirements_file: Option<String>,
    /// `model.configFile`.
    pub config_file: Option<String>,
    /// `model.extensions`.
    pub extensions: Option<String>,
}

/// A finding about the manifest: severity, the key, why.
pub type ManifestFinding = (Severity, String, String);

const TOP_KEYS: &[&str] = &[
    "createdOn",
    "description",
    "archiverVersion",
    "runtime",
    "model",
];
const MODEL_KEYS: &[&str] = &[
    "modelName",
    "serializedFile",
    "handler",
    "modelFile",
    "modelVersion",
    "version",
    "description",
    "extensions",
    "requirementsFile",
    "configFile",
];

/// Parses the manifest; `Err` with the reason when it is no JSON object TorchServe reads.
pub fn parse(bytes: &[u8]) -> Result<(Manifest, Vec<ManifestFinding>), String> {
    let json: Json = serde_json::from_slice(bytes).map_err(|e| {
        let e = e.to_string();
        if e.starts_with(DUPLICATE_KEY) {
            format!("{e}: Gson and json.load keep the last of two equal keys, other readers the first; torch-model-archiver writes each key once")
        } else {
            format!("not JSON ({e}): TorchServe's Gson and json.load refuse it")
        }
    })?;
    let Json::Object(top) = json else {
        return Err(format!("the manifest is {}, not an object", json.kind()));
    };
    let mut m = Manifest::default();
    let mut findings = Vec::new();
    let unknown = |findings: &mut Vec<ManifestFinding>, key: String| {
        findings.push((
            Severity::Lead,
            key,
            "a key torch-model-archiver 0.12.0 never writes and TorchServe never reads: something may be hidden there".into(),
        ));
    };
    for (k, v) in &top {
        match k.as_str() {
            "runtime" => m.runtime = Some(string(v, k, &mut findings)),
            "model" => {
                let Json::Object(model) = v else {
                    return Err(format!("\"model\" is {}, not an object", v.kind()));
                };
                for (mk, mv) in model {
                    let place = format!("model.{mk}");
                    if !MODEL_KEYS.contains(&mk.as_str()) {
                        unknown(&mut findings, place);
                        continue;
                    }
                    let s = string(mv, &place, &mut findings);
                    match mk.as_str() {
                        "modelName" => m.model_name = Some(s),
                        "modelVersion" => m.model_version = Some(s),
                        "handler" => m.handler = Some(s),
                        "serializedFile" => m.serialized_file = Some(s),
                        "modelFile" => m.model_file = Some(s),
                        "requirementsFile" => m.requirements_file = Some(s),
                        "configFile" => m.config_file = Some(s),
                        "extensions" => m.extensions = Some(s),
                        _ => {}
                    }
                }
            }
            key if TOP_KEYS.contains(&key) => {
                string(v, key, &mut findings);
            }
            _ => unknown(&mut findings, k.clone()),
        }
    }
    Ok((m, findings))
}

/// A string value; anything else is a LEAD (Gson would refuse an object or array where its
/// field is a string, and read a number as its text).
fn string(v: &Json, key: &str, findings: &mut Vec<ManifestFinding>) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => {
            findings.push((
                Severity::Lead,
                key.to_string(),
                format!(
                    "{} where torch-model-archiver writes a string",
                    other.kind()
                ),
            ));
            String::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_the_archiver_writes() {
        let text = br#"{"createdOn": "07/12/2026 13:53:46", "runtime": "python", "model": {"modelName": "lin", "serializedFile": "lin.pt", "handler": "image_classifier", "modelVersion": "1.0"}, "archiverVersion": "0.12.0"}"#;
        let (m, findings) = parse(text).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(m.handler.as_deref(), Some("image_classifier"));
        assert_eq!(m.serialized_file.as_deref(), Some("lin.pt"));
        assert_eq!(m.runtime.as_deref(), Some("python"));
    }

    #[test]
    fn refuses_duplicates_and_flags_unknown_keys() {
        let dup = br#"{"model": {"handler": "a", "handler": "b"}}"#;
        assert!(parse(dup).unwrap_err().contains("duplicate key"));
        assert!(parse(b"[1]").is_err());
        assert!(parse(b"{\"model\": 3}").is_err());
        let (_, findings) =
            parse(br#"{"model": {"handler": "x", "entryPoint": "y"}, "extra": 1}"#).unwrap();
        assert_eq!(findings.len(), 2, "{findings:?}");
        let (_, findings) = parse(br#"{"model": {"handler": 3}}"#).unwrap();
        assert_eq!(findings[0].1, "model.handler");
    }
}
