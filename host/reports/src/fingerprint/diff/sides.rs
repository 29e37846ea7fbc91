//! The two sides as the passes see them: what each side brings (its manifest, its unpermuted
//! hashes, its bytes when it is a model), its entries (aliases included), and the pairs found
//! so far. Shared by every pass.

use super::document::{MatchedBy, Outcome, Pair, Side, Transform};
use crate::fingerprint::manifest::{TensorEntry, TensorManifest};
use crate::fingerprint::numeric::{self, Alignment};
use crate::fingerprint::unpermute::Unpermuted;
use crate::read::source::InputFile;
use socair_plugin_api::TensorDescriptor;
use std::collections::HashMap;

/// The bytes of a side that is a model: each tensor's file and descriptor by `(file, name)`,
/// and the head counts of each GGUF file llama.cpp permutes.
#[derive(Default)]
pub struct ModelBytes<'a> {
    /// Where each tensor's bytes are.
    pub tensors: HashMap<(String, String), (&'a InputFile, &'a TensorDescriptor)>,
    /// `(Q heads, K heads)` per GGUF file of a permuted architecture.
    pub permuted: HashMap<String, (u64, u64)>,
    /// GGUF files whose metadata says an importance matrix steered their quantization
    /// (`quantize.imatrix.*`, which llama-quantize writes).
    pub imatrix: std::collections::HashSet<String>,
}

/// One side of a comparison.
pub struct SideInput<'a> {
    /// Its manifest.
    pub manifest: &'a TensorManifest,
    /// Values hashes of its GGUF Q/K tensors with the permutation undone.
    pub unpermuted: Option<&'a Unpermuted>,
    /// Its bytes, when it is a model.
    pub bytes: Option<&'a ModelBytes<'a>>,
}

/// A tensor on one side: its own entry, or an alias holding the named entry's values.
#[derive(Clone, Copy)]
pub(super) struct Entry<'m> {
    pub(super) t: &'m TensorEntry,
    pub(super) name: &'m str,
    pub(super) alias_of: Option<&'m str>,
}

impl Entry<'_> {
    pub(super) fn side(&self) -> Side {
        Side {
            file: self.t.file.clone(),
            name: self.name.to_owned(),
            dtype: self.t.dtype.clone(),
            shape: self.t.shape.clone(),
            alias_of: self.alias_of.map(str::to_owned),
        }
    }

    pub(super) fn is_float(&self) -> bool {
        numeric::Float::of(&self.t.dtype).is_some()
    }

    /// Whether its type is one of ggml's block-quantized ones.
    pub(super) fn is_quantized(&self) -> bool {
        crate::fingerprint::quantized::quantized_format(&self.t.dtype).is_some()
    }
}

pub(super) fn entries(m: &TensorManifest) -> Vec<Entry<'_>> {
    let mut out: Vec<Entry<'_>> = m
        .tensors
        .iter()
        .map(|t| Entry {
            t,
            name: &t.name,
            alias_of: None,
        })
        .collect();
    let by_name: HashMap<(&str, &str), &TensorEntry> = m
        .tensors
        .iter()
        .map(|t| ((t.file.as_str(), t.name.as_str()), t))
        .collect();
    for a in &m.aliases {
        if by_name.contains_key(&(a.file.as_str(), a.name.as_str())) {
            continue;
        }
        if let Some(t) = by_name.get(&(a.file.as_str(), a.of.as_str())) {
            out.push(Entry {
                t,
                name: &a.name,
                alias_of: Some(&a.of),
            });
        }
    }
    out
}

/// Pairs found so far, by entry index on each side.
pub(super) struct Pairing {
    pub(super) a_used: Vec<bool>,
    pub(super) r_used: Vec<bool>,
    pub(super) pairs: Vec<(usize, usize, Pair)>,
}

pub(super) type NewPair<'f> =
    dyn Fn(&Entry<'_>, &Entry<'_>, Outcome, MatchedBy, Option<Transform>) -> Pair + 'f;

/// The alignments under which two tensors' values may line up: as they are, unpermuted (a Q
/// or K projection, either side the GGUF) or transposed.
pub(super) fn alignments(
    ea: &Entry<'_>,
    er: &Entry<'_>,
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
) -> Vec<(Alignment, Option<Transform>)> {
    use crate::fingerprint::unpermute::heads_for;
    let (sa, sr) = (&ea.t.shape, &er.t.shape);
    let mut out = Vec::new();
    if sa == sr {
        out.push((Alignment::Same, None));
        let permuted = |bytes: &ModelBytes<'_>, e: &Entry<'_>| {
            bytes
                .permuted
                .get(&e.t.file)
                .and_then(|&h| heads_for(&e.t.name, h))
        };
        if let Some(n_head) = permuted(ab, ea) {
            out.push((
                Alignment::Unpermute {
                    n_head,
                    reference_permuted: false,
                },
                Some(Transform::Unpermute),
            ));
        }
        if let Some(n_head) = permuted(rb, er) {
            out.push((
                Alignment::Unpermute {
                    n_head,
                    reference_permuted: true,
                },
                Some(Transform::Unpermute),
            ));
        }
    }
    if numeric::applies(Alignment::Transposed, sa, sr) {
        out.push((Alignment::Transposed, Some(Transform::Transpose)));
    }
    out.retain(|(al, _)| numeric::applies(*al, sa, sr));
    out
}
