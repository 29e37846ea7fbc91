//! The sides read from paths: a manifest file `socair tensors` wrote, or a model fingerprinted
//! with its files kept open for the numbers; and the two compared, read in parallel. Apart
//! from the comparison, which needs only the sides.

use super::compare::compare;
use super::document::Comparison;
use super::sides::{ModelBytes, SideInput};
use crate::fingerprint::manifest::{TensorManifest, TensorsError};
use crate::fingerprint::unpermute::Unpermuted;
use crate::read::artifact::{Artifact, ReaderChoice};
use crate::read::plugins::PluginSet;
use socair_plugin_api::{OpenedFile, ReadOptions};
use std::collections::BTreeMap;

/// A side as read from a path: a manifest, or a model with its files open.
pub enum Loaded<'p> {
    /// A manifest `socair tensors` wrote.
    Manifest(TensorManifest),
    /// A model.
    Model {
        /// Its manifest.
        manifest: TensorManifest,
        /// Its GGUF Q/K values hashes, unpermuted.
        unpermuted: Unpermuted,
        /// The model.
        artifact: Box<Artifact<'p>>,
        /// Each opened file, by its index in `artifact.jobs`.
        opened: Vec<(usize, OpenedFile)>,
    },
}

impl<'p> Loaded<'p> {
    /// Reads `path`: a manifest file (read by `manifests`), or a model to fingerprint (its
    /// files stay open for the numbers).
    pub fn load(
        path: &std::path::Path,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
        manifests: ManifestReader<'_>,
    ) -> Result<Loaded<'p>, String> {
        if let Some(m) = manifests(path)? {
            return Ok(Loaded::Manifest(m));
        }
        let artifact = Artifact::resolve(path, plugins, choice).map_err(|e| e.to_string())?;
        if !artifact.is_dir && artifact.jobs.is_empty() {
            return Err(TensorsError::Unrecognised {
                path: path.to_owned(),
                readers: artifact.unreadable.first().map_or_else(
                    || crate::read::artifact::reader_names(plugins),
                    |(_, why)| why.clone(),
                ),
            }
            .to_string());
        }
        let (digest, read) = rayon::join(
            || artifact.subject_digest(),
            || -> Result<_, String> {
                let opened = artifact
                    .open_all(&ReadOptions::default())
                    .map_err(|e| e.to_string())?;
                let unpermuted = crate::fingerprint::unpermute::hash_unpermuted(&opened);
                let manifest = crate::fingerprint::manifest::manifest_of_opened(
                    &artifact,
                    &opened,
                    String::new(),
                );
                let opened: Vec<(usize, OpenedFile)> = opened
                    .into_iter()
                    .filter_map(|(job, f)| {
                        let k = artifact.jobs.iter().position(|j| std::ptr::eq(j, job))?;
                        Some((k, f))
                    })
                    .collect();
                Ok((manifest, unpermuted, opened))
            },
        );
        let (mut manifest, unpermuted, opened) = read?;
        manifest.artifact.sha256 = digest.map_err(|e| e.to_string())?;
        Ok(Loaded::Model {
            manifest,
            unpermuted,
            artifact: Box::new(artifact),
            opened,
        })
    }

    /// Its manifest.
    pub fn manifest(&self) -> &TensorManifest {
        match self {
            Loaded::Manifest(m) | Loaded::Model { manifest: m, .. } => m,
        }
    }

    /// Where its tensors' bytes are, when it is a model.
    pub fn bytes(&self) -> Option<ModelBytes<'_>> {
        let Loaded::Model {
            artifact, opened, ..
        } = self
        else {
            return None;
        };
        let mut bytes = ModelBytes::default();
        for (k, file) in opened {
            let job = &artifact.jobs[*k];
            if let Some(h) = crate::fingerprint::unpermute::permutation_heads(file) {
                bytes.permuted.insert(job.rel.clone(), h);
            }
            // llama-quantize's keys (tools/quantize/quantize.cpp: LLM_KV_QUANTIZE_IMATRIX_*).
            if file.format.as_str() == "gguf"
                && file
                    .metadata
                    .iter()
                    .any(|kv| kv.0.as_str().starts_with("quantize.imatrix."))
            {
                bytes.imatrix.insert(job.rel.clone());
            }
            for t in file.tensors.iter() {
                if let Ok(input) = artifact.input_of(job, t) {
                    bytes
                        .tensors
                        .insert((job.rel.clone(), t.name.to_string()), (input, t));
                }
            }
        }
        Some(bytes)
    }

    /// Its unpermuted Q/K values hashes, when it is a model.
    pub fn unpermuted(&self) -> Option<&Unpermuted> {
        match self {
            Loaded::Model { unpermuted, .. } => Some(unpermuted),
            Loaded::Manifest(_) => None,
        }
    }
}

/// Reads a path as a manifest (`Ok(None)`: not one): [`read_manifest`], or a reader that also
/// verifies signed manifests (the signing crate's).
pub type ManifestReader<'a> =
    &'a (dyn Fn(&std::path::Path) -> Result<Option<TensorManifest>, String> + Sync);

/// Compares the models (or manifests, read by `manifests`) at two paths, reading both in
/// parallel.
pub fn compare_paths(
    artifact: &std::path::Path,
    reference: &std::path::Path,
    plugins: &PluginSet,
    choice: &ReaderChoice,
    manifests: ManifestReader<'_>,
) -> Result<Comparison, String> {
    let (a, r) = rayon::join(
        || Loaded::load(artifact, plugins, choice, manifests),
        || Loaded::load(reference, plugins, choice, manifests),
    );
    let (a, r) = (a?, r?);
    let (ab, rb) = (a.bytes(), r.bytes());
    Ok(compare(
        &SideInput {
            manifest: a.manifest(),
            unpermuted: a.unpermuted(),
            bytes: ab.as_ref(),
        },
        &SideInput {
            manifest: r.manifest(),
            unpermuted: r.unpermuted(),
            bytes: rb.as_ref(),
        },
    ))
}

/// The file formats a manifest's tensors come from, judged from the manifest's own format
/// and, for a model directory, its files' extensions.
pub fn tensor_formats(m: &TensorManifest) -> std::collections::BTreeSet<String> {
    if m.artifact.format != "model directory" {
        return [m.artifact.format.clone()].into();
    }
    let mut formats: BTreeMap<String, ()> = BTreeMap::new();
    for t in &m.tensors {
        let ext = t.file.rsplit_once('.').map_or("", |(_, e)| e);
        let format = match ext {
            "safetensors" => "safetensors",
            "gguf" => "gguf",
            "onnx" => "onnx",
            _ => "torch-zip",
        };
        formats.insert(format.into(), ());
    }
    formats.into_keys().collect()
}

/// Reads `path` as a manifest when it is one: a JSON file whose `schema` is
/// `socair.tensors/v1`. `Ok(None)` for anything that is not JSON (a model file); an error
/// for JSON that claims to be a manifest and is not a valid one.
pub fn read_manifest(path: &std::path::Path) -> Result<Option<TensorManifest>, String> {
    if !path.is_file() {
        return Ok(None);
    }
    let mut head = [0u8; 1];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if f.read(&mut head)
            .map_err(|e| format!("{}: {e}", path.display()))?
            == 0
        {
            return Ok(None);
        }
    }
    if head[0] != b'{' {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(_) => return Ok(None),
    };
    if value.get("payloadType").is_some() {
        return Err(format!(
            "{}: a signed tensor manifest (a DSSE envelope): it is read only once verified, with its signer's public key (--reference-pub KEY.pub)",
            path.display()
        ));
    }
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(crate::fingerprint::manifest::SCHEMA) => {
            serde_json::from_value(value).map(Some).map_err(|e| {
                format!(
                    "{}: not a valid {} manifest: {e}",
                    path.display(),
                    crate::fingerprint::manifest::SCHEMA
                )
            })
        }
        Some(other) => Err(format!(
            "{}: a {other} document, not a {} manifest",
            path.display(),
            crate::fingerprint::manifest::SCHEMA
        )),
        None => Ok(None),
    }
}
