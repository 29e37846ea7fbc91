//! `socair tensors diff`: compares two models tensor by tensor (seed `tensor-fingerprints.txt`).
//!
//! Each tensor is used once. First by name (in the same file when there is one): identical
//! (same dtype, shape and bytes), same values (same shape, values equal in another float
//! dtype), differs (another shape or other contents), or not comparable (no encoding in
//! common, such as a quantized type against a float). Then by content, for what is left:
//! identical bytes, or identical values in another float dtype with the same shape, pair two
//! tensors under different names, marked renamed; a GGUF Q/K projection whose values match
//! once llama.cpp's row permutation is undone is `same values after unpermute`. What is left
//! is only in the artifact or only in the reference.

use crate::fingerprint::manifest::{TensorEntry, TensorManifest};
use crate::fingerprint::unpermute::Unpermuted;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The comparison's schema name.
pub const SCHEMA: &str = "socair.tensors.diff/v1";

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "socair.tensors.diff",
        version: "1",
        id: SCHEMA,
        summary: "tensor-by-tensor comparison: by name, then by content (renamed), then what is left",
    }
}

/// How a pair compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Same dtype, shape and bytes.
    Identical,
    /// Same shape, equal values in another float dtype.
    SameValues,
    /// Equal values once llama.cpp's Q/K row permutation is undone.
    SameValuesAfterUnpermute,
    /// Another shape, or other contents.
    Differs,
    /// No encoding in common.
    NotComparable,
}

/// One side of a pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    /// File.
    pub file: String,
    /// Name.
    pub name: String,
    /// Dtype.
    pub dtype: String,
    /// Shape.
    pub shape: Vec<u64>,
}

impl Side {
    fn of(t: &TensorEntry) -> Side {
        Side {
            file: t.file.clone(),
            name: t.name.clone(),
            dtype: t.dtype.clone(),
            shape: t.shape.clone(),
        }
    }
}

/// A paired tensor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pair {
    /// How they compare.
    pub outcome: Outcome,
    /// Paired by content, not by name.
    pub renamed: bool,
    /// The artifact's tensor.
    pub artifact: Side,
    /// The reference's tensor.
    pub reference: Side,
}

/// Counts per outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Identical under their own name.
    pub identical: usize,
    /// Same values under their own name.
    pub same_values: usize,
    /// Paired by content under different names.
    pub renamed: usize,
    /// Of those, matched after undoing llama.cpp's Q/K permutation.
    pub same_values_after_unpermute: usize,
    /// Same name, other contents or shape.
    pub differs: usize,
    /// Same name, no encoding in common.
    pub not_comparable: usize,
    /// Only in the artifact.
    pub only_in_artifact: usize,
    /// Only in the reference.
    pub only_in_reference: usize,
    /// Files or tensors either side could not read.
    pub unread: usize,
}

/// What a side is called in the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    /// Its name.
    pub name: String,
    /// Its format.
    pub format: String,
    /// Its subject digest.
    pub sha256: String,
}

/// The comparison document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The artifact compared.
    pub artifact: Named,
    /// The reference.
    pub reference: Named,
    /// The values encoding both sides use.
    pub value_encoding: String,
    /// Whether every tensor on both sides matches under its own name.
    pub matches: bool,
    /// Counts.
    pub summary: Summary,
    /// Every pair, sorted by the artifact's file and name.
    pub pairs: Vec<Pair>,
    /// Tensors only the artifact holds.
    pub only_in_artifact: Vec<Side>,
    /// Tensors only the reference holds.
    pub only_in_reference: Vec<Side>,
}

/// Takes the first unused index of `list`.
fn take(list: Option<&Vec<usize>>, used: &mut [bool]) -> Option<usize> {
    let j = list?.iter().copied().find(|&j| !used[j])?;
    used[j] = true;
    Some(j)
}

fn compare(a: &TensorEntry, r: &TensorEntry) -> Outcome {
    if a.shape != r.shape {
        return Outcome::Differs;
    }
    if a.dtype == r.dtype {
        return if a.sha256 == r.sha256 {
            Outcome::Identical
        } else {
            Outcome::Differs
        };
    }
    match (&a.values, &r.values) {
        (Some(x), Some(y)) if x == y => Outcome::SameValues,
        (Some(_), Some(_)) => Outcome::Differs,
        _ => Outcome::NotComparable,
    }
}

/// Compares `artifact` with `reference`. `unpermuted` holds the artifact's GGUF Q/K values
/// hashes with the permutation undone, when it was read from a GGUF file.
pub fn diff(
    artifact: &TensorManifest,
    reference: &TensorManifest,
    unpermuted: &Unpermuted,
) -> Comparison {
    let a = &artifact.tensors;
    let r = &reference.tensors;
    let mut a_used = vec![false; a.len()];
    let mut r_used = vec![false; r.len()];
    let mut pairs = Vec::new();

    // 1. By name, preferring the same file.
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, t) in r.iter().enumerate() {
        by_name.entry(t.name.as_str()).or_default().push(j);
    }
    for pass_same_file in [true, false] {
        for (i, t) in a.iter().enumerate() {
            if a_used[i] {
                continue;
            }
            let Some(candidates) = by_name.get(t.name.as_str()) else {
                continue;
            };
            let found = candidates
                .iter()
                .copied()
                .find(|&j| !r_used[j] && (!pass_same_file || r[j].file == t.file));
            if let Some(j) = found {
                a_used[i] = true;
                r_used[j] = true;
                pairs.push(Pair {
                    outcome: compare(t, &r[j]),
                    renamed: false,
                    artifact: Side::of(t),
                    reference: Side::of(&r[j]),
                });
            }
        }
    }

    // 2. By content, for what is left: identical bytes first, then identical values, then
    //    values after undoing the Q/K permutation.
    let mut by_bytes: HashMap<(&str, &[u64], &str), Vec<usize>> = HashMap::new();
    let mut by_values: HashMap<(&[u64], &str), Vec<usize>> = HashMap::new();
    for (j, t) in r.iter().enumerate() {
        if r_used[j] {
            continue;
        }
        by_bytes
            .entry((t.dtype.as_str(), t.shape.as_slice(), t.sha256.as_str()))
            .or_default()
            .push(j);
        if let Some(v) = &t.values {
            by_values
                .entry((t.shape.as_slice(), v.as_str()))
                .or_default()
                .push(j);
        }
    }
    for (i, t) in a.iter().enumerate() {
        if a_used[i] {
            continue;
        }
        let found = take(
            by_bytes.get(&(t.dtype.as_str(), t.shape.as_slice(), t.sha256.as_str())),
            &mut r_used,
        )
        .map(|j| (j, Outcome::Identical))
        .or_else(|| {
            let v = t.values.as_deref()?;
            take(by_values.get(&(t.shape.as_slice(), v)), &mut r_used)
                .map(|j| (j, Outcome::SameValues))
        })
        .or_else(|| {
            let v = unpermuted.get(&(t.file.clone(), t.name.clone()))?;
            take(
                by_values.get(&(t.shape.as_slice(), v.as_str())),
                &mut r_used,
            )
            .map(|j| (j, Outcome::SameValuesAfterUnpermute))
        });
        if let Some((j, outcome)) = found {
            a_used[i] = true;
            pairs.push(Pair {
                outcome,
                renamed: true,
                artifact: Side::of(t),
                reference: Side::of(&r[j]),
            });
        }
    }

    // 3. What is left.
    let only_in_artifact: Vec<Side> = a
        .iter()
        .enumerate()
        .filter(|(i, _)| !a_used[*i])
        .map(|(_, t)| Side::of(t))
        .collect();
    let only_in_reference: Vec<Side> = r
        .iter()
        .enumerate()
        .filter(|(j, _)| !r_used[*j])
        .map(|(_, t)| Side::of(t))
        .collect();
    pairs.sort_by(|x, y| {
        (x.artifact.file.as_bytes(), x.artifact.name.as_bytes())
            .cmp(&(y.artifact.file.as_bytes(), y.artifact.name.as_bytes()))
    });

    let mut summary = Summary {
        only_in_artifact: only_in_artifact.len(),
        only_in_reference: only_in_reference.len(),
        unread: artifact.unread.len() + reference.unread.len(),
        ..Summary::default()
    };
    for p in &pairs {
        if p.renamed {
            summary.renamed += 1;
            if p.outcome == Outcome::SameValuesAfterUnpermute {
                summary.same_values_after_unpermute += 1;
            }
            continue;
        }
        match p.outcome {
            Outcome::Identical => summary.identical += 1,
            Outcome::SameValues => summary.same_values += 1,
            Outcome::Differs => summary.differs += 1,
            Outcome::NotComparable | Outcome::SameValuesAfterUnpermute => {
                summary.not_comparable += 1
            }
        }
    }
    let matches = summary.renamed == 0
        && summary.differs == 0
        && summary.not_comparable == 0
        && summary.only_in_artifact == 0
        && summary.only_in_reference == 0
        && summary.unread == 0;
    let named = |m: &TensorManifest| Named {
        name: m.artifact.name.clone(),
        format: m.artifact.format.clone(),
        sha256: m.artifact.sha256.clone(),
    };
    Comparison {
        schema: SCHEMA.into(),
        artifact: named(artifact),
        reference: named(reference),
        value_encoding: artifact.value_encoding.clone(),
        matches,
        summary,
        pairs,
        only_in_artifact,
        only_in_reference,
    }
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

/// A side of a comparison: a manifest file `socair tensors` wrote, or a model to fingerprint.
pub fn load_side(
    path: &std::path::Path,
    plugins: &crate::read::plugins::PluginSet,
    choice: &crate::read::artifact::ReaderChoice,
) -> Result<(TensorManifest, Unpermuted), String> {
    if let Some(m) = read_manifest(path)? {
        return Ok((m, Unpermuted::new()));
    }
    crate::fingerprint::manifest::fingerprint_detailed(path, plugins, choice)
        .map_err(|e| e.to_string())
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
