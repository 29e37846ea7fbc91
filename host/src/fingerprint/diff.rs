//! `socair tensors diff`: compares two models tensor by tensor (seed `tensor-fingerprints.txt`,
//! `docs/diff.md`).
//!
//! Each tensor is used once; names a safetensors file records as aliases of one of its
//! tensors (`__metadata__`, what `socair convert` writes for tied weights) take part as
//! tensors of their own, holding the named tensor's values.
//!
//! 1. By name (in the same file when there is one): identical (same dtype, shape and bytes),
//!    same values (same shape, equal values in another float dtype), lower precision (one
//!    side is the other rounded to its narrower float type), differs (another shape or other
//!    contents, with numbers when both sides are models), or not comparable (no encoding in
//!    common, such as a quantized type against a float).
//! 2. By content, for what is left: identical bytes, equal values in another float dtype, or
//!    equal values once llama.cpp's Q/K row permutation is undone (either side may be the
//!    GGUF) pair two tensors under different names, marked renamed.
//! 3. When both sides are models, by values for what is still left: candidates with the same
//!    order-free statistics (within rounding) are compared in full, as they are, transposed
//!    (2-D), or unpermuted; equal values or a rounded copy pair them. Then a quantized tensor
//!    and a float one of the same role (same shape, and the nearest dequantized statistics or
//!    the only candidate in the same layer) pair as not comparable.
//!
//! What is left is only in the artifact or only in the reference.

use crate::fingerprint::manifest::{TensorEntry, TensorManifest, TensorsError};
use crate::fingerprint::numeric::{self, Alignment, FlatTensor, Moments, Numbers};
use crate::fingerprint::unpermute::Unpermuted;
use crate::read::artifact::{Artifact, ReaderChoice};
use crate::read::plugins::PluginSet;
use crate::read::source::InputFile;
use rayon::prelude::*;
use serde::Serialize;
use socair_plugin_api::{OpenedFile, ReadOptions, TensorDescriptor};
use std::collections::{BTreeMap, HashMap};

/// The comparison's schema name. Still v1: every v1 field keeps its meaning; fields and
/// outcome values were added (`docs/diff.md` lists them).
pub const SCHEMA: &str = "socair.tensors.diff/v1";

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "socair.tensors.diff",
        version: "1",
        id: SCHEMA,
        summary: "tensor-by-tensor comparison: by name (aliases included), then by content (renamed, unpermuted), then by values (rounded, transposed, quantized roles), then what is left",
    }
}

/// How a pair compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Same dtype, shape and bytes.
    Identical,
    /// Same shape, equal values in another float dtype.
    SameValues,
    /// Equal values once llama.cpp's Q/K row permutation is undone.
    SameValuesAfterUnpermute,
    /// Equal values once one 2-D side is transposed.
    SameValuesTransposed,
    /// One side is the other rounded to its narrower float type (to nearest, ties to even);
    /// `transform` says whether it was also transposed or unpermuted.
    LowerPrecision,
    /// Another shape, or other contents.
    Differs,
    /// No encoding in common.
    NotComparable,
}

/// What was undone to line the two tensors up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// llama.cpp's Q/K row permutation.
    Unpermute,
    /// A 2-D transposition (GPT-2's Conv1D weights in llama.cpp).
    Transpose,
}

/// How the two tensors of a pair were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// The same name.
    Name,
    /// The same name, one of them an alias a safetensors file records.
    Alias,
    /// Equal bytes or values under different names.
    Content,
    /// Equal values after a transform, or a rounded copy, found by comparing values.
    Values,
    /// A quantized and a float tensor of the same role: same shape, and the nearest
    /// dequantized statistics or the only candidate in the layer.
    Role,
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
    /// When the name is an alias the file records: the tensor it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<String>,
}

/// A paired tensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// How they compare.
    pub outcome: Outcome,
    /// Paired by content, not by name.
    pub renamed: bool,
    /// How they were found.
    pub matched_by: MatchedBy,
    /// What was undone to line them up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
    /// The artifact's tensor.
    pub artifact: Side,
    /// The reference's tensor.
    pub reference: Side,
    /// Elements changed, max |Δ|, relative L2 and cosine: for pairs that differ or are a
    /// rounded copy, when both sides are models and their dtypes are floats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numbers: Option<Numbers>,
    /// Why a pair that differs has no numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numbers_missing: Option<String>,
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
    /// Same name, other contents or shape (a rounded copy no longer counts here).
    pub differs: usize,
    /// Same name, no encoding in common.
    pub not_comparable: usize,
    /// Only in the artifact.
    pub only_in_artifact: usize,
    /// Only in the reference.
    pub only_in_reference: usize,
    /// Files or tensors either side could not read.
    pub unread: usize,
    /// Pairs where one side is the other at lower precision, under any name.
    pub lower_precision: usize,
    /// Pairs with equal values once transposed, under any name.
    pub transposed: usize,
    /// Pairs in which one name is an alias.
    pub aliased: usize,
}

/// Every pair and leftover counted once, by what makes it the same weights or not: the
/// transform first (unpermuted, transposed: exact or rounded), then the outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Accounting {
    /// Same dtype, shape and bytes, under any name.
    pub identical: usize,
    /// Equal values in another float dtype, under any name.
    pub same_values: usize,
    /// One side rounded to the other's narrower type, no transform.
    pub lower_precision: usize,
    /// Equal (or rounded) values after undoing llama.cpp's Q/K permutation.
    pub unpermuted: usize,
    /// Equal (or rounded) values after a transposition.
    pub transposed: usize,
    /// A quantized tensor against a float one.
    pub not_comparable: usize,
    /// Other shapes or contents.
    pub differs: usize,
    /// Only in the artifact.
    pub only_in_artifact: usize,
    /// Only in the reference.
    pub only_in_reference: usize,
}

impl Accounting {
    /// Pairs that hold the same weights (exactly, or as a rounded copy).
    pub fn same_weights(&self) -> usize {
        self.identical + self.same_values + self.lower_precision + self.unpermuted + self.transposed
    }
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The artifact compared.
    pub artifact: Named,
    /// The reference.
    pub reference: Named,
    /// The values encoding both sides use.
    pub value_encoding: String,
    /// Whether every tensor on both sides matches under its own name (an alias's name
    /// included).
    pub matches: bool,
    /// Counts.
    pub summary: Summary,
    /// Every pair and leftover counted once.
    pub accounting: Accounting,
    /// Why no numbers were computed, when a side is a manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numbers_missing: Option<String>,
    /// Every pair, sorted by the artifact's file and name.
    pub pairs: Vec<Pair>,
    /// Tensors only the artifact holds.
    pub only_in_artifact: Vec<Side>,
    /// Tensors only the reference holds.
    pub only_in_reference: Vec<Side>,
}

/// The bytes of a side that is a model: each tensor's file and descriptor by `(file, name)`,
/// and the head counts of each GGUF file llama.cpp permutes.
#[derive(Default)]
pub struct ModelBytes<'a> {
    /// Where each tensor's bytes are.
    pub tensors: HashMap<(String, String), (&'a InputFile, &'a TensorDescriptor)>,
    /// `(Q heads, K heads)` per GGUF file of a permuted architecture.
    pub permuted: HashMap<String, (u64, u64)>,
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
struct Entry<'m> {
    t: &'m TensorEntry,
    name: &'m str,
    alias_of: Option<&'m str>,
}

impl Entry<'_> {
    fn side(&self) -> Side {
        Side {
            file: self.t.file.clone(),
            name: self.name.to_owned(),
            dtype: self.t.dtype.clone(),
            shape: self.t.shape.clone(),
            alias_of: self.alias_of.map(str::to_owned),
        }
    }

    fn is_float(&self) -> bool {
        numeric::Float::of(&self.t.dtype).is_some()
    }
}

fn entries(m: &TensorManifest) -> Vec<Entry<'_>> {
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

/// Takes the first unused index of `list`.
fn take(list: Option<&Vec<usize>>, used: &mut [bool]) -> Option<usize> {
    let j = list?.iter().copied().find(|&j| !used[j])?;
    used[j] = true;
    Some(j)
}

fn compare_hashes(a: &TensorEntry, r: &TensorEntry) -> Outcome {
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

/// The first dotted part of a name that is a number: the layer of `blk.3.attn_q.weight`,
/// `model.layers.3.mlp.up_proj.weight` and `transformer.h.3.attn.c_attn.weight`.
pub fn layer_of(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

/// Compares `artifact` with `reference` from their manifests alone. `unpermuted` holds the
/// artifact's GGUF Q/K values hashes with the permutation undone.
pub fn diff(
    artifact: &TensorManifest,
    reference: &TensorManifest,
    unpermuted: &Unpermuted,
) -> Comparison {
    compare(
        &SideInput {
            manifest: artifact,
            unpermuted: Some(unpermuted),
            bytes: None,
        },
        &SideInput {
            manifest: reference,
            unpermuted: None,
            bytes: None,
        },
    )
}

/// Pairs found so far, by entry index on each side.
struct Pairing {
    a_used: Vec<bool>,
    r_used: Vec<bool>,
    pairs: Vec<(usize, usize, Pair)>,
}

/// How many candidate statistics comparisons the value pass makes at most: it stays
/// near-linear for 100k-tensor models whose tensors share a few shapes.
const CANDIDATE_BUDGET: u64 = 50_000_000;
/// Candidates compared in full per tensor, best statistics first.
const VERIFY_PER_TENSOR: usize = 3;

/// Compares two sides.
pub fn compare(artifact: &SideInput<'_>, reference: &SideInput<'_>) -> Comparison {
    let a = entries(artifact.manifest);
    let r = entries(reference.manifest);
    let mut p = Pairing {
        a_used: vec![false; a.len()],
        r_used: vec![false; r.len()],
        pairs: Vec::new(),
    };
    let side_of = |e: &Entry<'_>| e.side();
    let new_pair = |ea: &Entry<'_>, er: &Entry<'_>, outcome, matched_by, transform| Pair {
        outcome,
        renamed: !matches!(matched_by, MatchedBy::Name | MatchedBy::Alias),
        matched_by,
        transform,
        artifact: side_of(ea),
        reference: side_of(er),
        numbers: None,
        numbers_missing: None,
    };

    // 1. By name, preferring the same file.
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, t) in r.iter().enumerate() {
        by_name.entry(t.name).or_default().push(j);
    }
    for pass_same_file in [true, false] {
        for (i, t) in a.iter().enumerate() {
            if p.a_used[i] {
                continue;
            }
            let Some(candidates) = by_name.get(t.name) else {
                continue;
            };
            let found = candidates
                .iter()
                .copied()
                .find(|&j| !p.r_used[j] && (!pass_same_file || r[j].t.file == t.t.file));
            if let Some(j) = found {
                p.a_used[i] = true;
                p.r_used[j] = true;
                let by = if t.alias_of.is_some() || r[j].alias_of.is_some() {
                    MatchedBy::Alias
                } else {
                    MatchedBy::Name
                };
                let pair = new_pair(t, &r[j], compare_hashes(t.t, r[j].t), by, None);
                p.pairs.push((i, j, pair));
            }
        }
    }

    // 2. By content, for what is left: identical bytes first, then identical values, then
    //    values after undoing the Q/K permutation (either side's).
    let mut by_bytes: HashMap<(&str, &[u64], &str), Vec<usize>> = HashMap::new();
    let mut by_values: HashMap<(&[u64], &str), Vec<usize>> = HashMap::new();
    for (j, t) in r.iter().enumerate() {
        if p.r_used[j] {
            continue;
        }
        by_bytes
            .entry((
                t.t.dtype.as_str(),
                t.t.shape.as_slice(),
                t.t.sha256.as_str(),
            ))
            .or_default()
            .push(j);
        if let Some(v) = &t.t.values {
            by_values
                .entry((t.t.shape.as_slice(), v.as_str()))
                .or_default()
                .push(j);
        }
    }
    let unpermuted_of = |side: &SideInput<'_>, e: &Entry<'_>| -> Option<String> {
        side.unpermuted?
            .get(&(e.t.file.clone(), e.t.name.clone()))
            .cloned()
    };
    for (i, t) in a.iter().enumerate() {
        if p.a_used[i] {
            continue;
        }
        let found = take(
            by_bytes.get(&(
                t.t.dtype.as_str(),
                t.t.shape.as_slice(),
                t.t.sha256.as_str(),
            )),
            &mut p.r_used,
        )
        .map(|j| (j, Outcome::Identical))
        .or_else(|| {
            let v = t.t.values.as_deref()?;
            take(by_values.get(&(t.t.shape.as_slice(), v)), &mut p.r_used)
                .map(|j| (j, Outcome::SameValues))
        })
        .or_else(|| {
            let v = unpermuted_of(artifact, t)?;
            take(
                by_values.get(&(t.t.shape.as_slice(), v.as_str())),
                &mut p.r_used,
            )
            .map(|j| (j, Outcome::SameValuesAfterUnpermute))
        });
        if let Some((j, outcome)) = found {
            p.a_used[i] = true;
            let transform =
                (outcome == Outcome::SameValuesAfterUnpermute).then_some(Transform::Unpermute);
            let pair = new_pair(t, &r[j], outcome, MatchedBy::Content, transform);
            p.pairs.push((i, j, pair));
        }
    }
    // The reference's unpermuted values against the artifact's values.
    if reference.unpermuted.is_some_and(|u| !u.is_empty()) {
        let mut a_by_values: HashMap<(&[u64], &str), Vec<usize>> = HashMap::new();
        for (i, t) in a.iter().enumerate() {
            if let (false, Some(v)) = (p.a_used[i], &t.t.values) {
                a_by_values
                    .entry((t.t.shape.as_slice(), v.as_str()))
                    .or_default()
                    .push(i);
            }
        }
        for (j, t) in r.iter().enumerate() {
            if p.r_used[j] {
                continue;
            }
            let Some(v) = unpermuted_of(reference, t) else {
                continue;
            };
            if let Some(i) = take(
                a_by_values.get(&(t.t.shape.as_slice(), v.as_str())),
                &mut p.a_used,
            ) {
                p.r_used[j] = true;
                let pair = new_pair(
                    &a[i],
                    t,
                    Outcome::SameValuesAfterUnpermute,
                    MatchedBy::Content,
                    Some(Transform::Unpermute),
                );
                p.pairs.push((i, j, pair));
            }
        }
    }

    // 3. By values, when both sides are models.
    let numbers_missing = match (artifact.bytes, reference.bytes) {
        (Some(ab), Some(rb)) => {
            by_values_pass(&a, &r, ab, rb, &mut p, &new_pair);
            None
        }
        (None, _) => Some("the artifact is a manifest: numbers need both models' bytes".to_owned()),
        (_, None) => {
            Some("the reference is a manifest: numbers need both models' bytes".to_owned())
        }
    };

    assemble(artifact, reference, &a, &r, p, numbers_missing)
}

type NewPair<'f> =
    dyn Fn(&Entry<'_>, &Entry<'_>, Outcome, MatchedBy, Option<Transform>) -> Pair + 'f;

/// The alignments under which two tensors' values may line up: as they are, unpermuted (a Q
/// or K projection, either side the GGUF) or transposed.
fn alignments(
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

fn flat<'a>(bytes: &'a ModelBytes<'a>, e: &Entry<'_>) -> Result<FlatTensor<'a>, String> {
    let (file, t) = bytes
        .tensors
        .get(&(e.t.file.clone(), e.t.name.clone()))
        .ok_or("its bytes are not at hand")?;
    FlatTensor::new(file, t)
}

/// Compares two entries in full under `alignment`.
fn numbers_of(
    ea: &Entry<'_>,
    er: &Entry<'_>,
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
    alignment: Alignment,
) -> Result<Numbers, String> {
    numeric::compare(&flat(ab, ea)?, &flat(rb, er)?, alignment)
}

/// The outcome two tensors compared in full have, if they are the same weights.
fn same_weights(n: &Numbers, alignment: Alignment) -> Option<Outcome> {
    if n.elements_changed == 0 {
        return Some(match alignment {
            Alignment::Same => Outcome::SameValues,
            Alignment::Transposed => Outcome::SameValuesTransposed,
            Alignment::Unpermute { .. } => Outcome::SameValuesAfterUnpermute,
        });
    }
    (n.narrower_is_rounded_wider == Some(true)).then_some(Outcome::LowerPrecision)
}

/// Numbers of a pair and the line-up they were taken under, or why there are none.
type Measured = Result<(Numbers, Alignment), String>;
/// A candidate confirmed in full: its index, outcome, transform and numbers.
type Confirmed = (usize, Outcome, Option<Transform>, Numbers);

fn by_values_pass(
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
    p: &mut Pairing,
    new_pair: &NewPair<'_>,
) {
    // 3a. Pairs by name that differ: numbers, and a rounded or transposed copy told apart.
    let jobs: Vec<usize> = p
        .pairs
        .iter()
        .enumerate()
        .filter(|(_, (_, _, pair))| pair.outcome == Outcome::Differs)
        .map(|(k, _)| k)
        .collect();
    let results: Vec<(usize, Measured)> = jobs
        .par_iter()
        .map(|&k| {
            let (i, j, _) = &p.pairs[k];
            let (ea, er) = (&a[*i], &r[*j]);
            if !(ea.is_float() && er.is_float()) {
                return (
                    k,
                    Err(format!(
                        "{} against {}: numbers are computed for F32, F16 and BF16",
                        ea.t.dtype, er.t.dtype
                    )),
                );
            }
            // As they are first; transposed only when that does not show the same weights
            // (a square matrix lines up both ways). The first line-up that shows the same
            // weights wins, else the element-wise one.
            let mut first: Option<Measured> = None;
            for (al, _) in alignments(ea, er, ab, rb)
                .into_iter()
                .filter(|(al, _)| matches!(al, Alignment::Same | Alignment::Transposed))
            {
                let measured = numbers_of(ea, er, ab, rb, al).map(|n| (n, al));
                if matches!(&measured, Ok((n, al)) if same_weights(n, *al).is_some()) {
                    return (k, measured);
                }
                first.get_or_insert(measured);
            }
            let best = first.unwrap_or_else(|| {
                Err(format!(
                    "shapes {:?} and {:?} do not line up",
                    ea.t.shape, er.t.shape
                ))
            });
            (k, best)
        })
        .collect();
    for (k, result) in results {
        let pair = &mut p.pairs[k].2;
        match result {
            Ok((n, al)) => {
                if let Some(outcome) = same_weights(&n, al) {
                    pair.outcome = outcome;
                }
                if al == Alignment::Transposed {
                    pair.transform = Some(Transform::Transpose);
                }
                pair.numbers = Some(n);
            }
            Err(why) => pair.numbers_missing = Some(why),
        }
    }

    // 3b. Leftover floats: candidates by order-free statistics, confirmed in full.
    let left = |used: &[bool], side: &[Entry<'_>]| -> Vec<usize> {
        (0..side.len())
            .filter(|&i| !used[i] && side[i].is_float())
            .collect()
    };
    let (la, lr) = (left(&p.a_used, a), left(&p.r_used, r));
    let moments =
        |side: &[Entry<'_>], bytes: &ModelBytes<'_>, idx: &[usize]| -> HashMap<usize, Moments> {
            idx.par_iter()
                .filter_map(|&i| {
                    let t = flat(bytes, &side[i]).ok()?;
                    numeric::float_moments(&t).ok().map(|m| (i, m))
                })
                .collect()
        };
    let (ma, mr) = rayon::join(|| moments(a, ab, &la), || moments(r, rb, &lr));
    let mut r_by_count: HashMap<u64, Vec<usize>> = HashMap::new();
    for &j in &lr {
        if let Some(m) = mr.get(&j) {
            r_by_count.entry(m.elements).or_default().push(j);
        }
    }
    let mut budget = CANDIDATE_BUDGET;
    let mut candidates: Vec<(usize, Vec<usize>)> = Vec::new();
    for &i in &la {
        let Some(m) = ma.get(&i) else { continue };
        let Some(pool) = r_by_count.get(&m.elements) else {
            continue;
        };
        if budget < pool.len() as u64 {
            break;
        }
        budget -= pool.len() as u64;
        let mut scored: Vec<(f64, usize)> = pool
            .iter()
            .filter(|&&j| !alignments(&a[i], &r[j], ab, rb).is_empty())
            .filter_map(|&j| m.distance(&mr[&j], 2f64.powi(-8)).map(|d| (d, j)))
            .collect();
        scored.sort_by(|x, y| x.0.total_cmp(&y.0));
        if !scored.is_empty() {
            candidates.push((
                i,
                scored
                    .into_iter()
                    .take(VERIFY_PER_TENSOR)
                    .map(|(_, j)| j)
                    .collect(),
            ));
        }
    }
    // Every candidate line-up compared in full, in parallel; then each tensor takes its best
    // confirmed candidate still free, in the artifact's order.
    let verified: Vec<(usize, Vec<Confirmed>)> = candidates
        .par_iter()
        .map(|(i, js)| {
            let mut ok = Vec::new();
            for &j in js {
                for (al, transform) in alignments(&a[*i], &r[j], ab, rb) {
                    if let Ok(n) = numbers_of(&a[*i], &r[j], ab, rb, al) {
                        if let Some(outcome) = same_weights(&n, al) {
                            ok.push((j, outcome, transform, n));
                            break;
                        }
                    }
                }
            }
            (*i, ok)
        })
        .collect();
    for (i, ok) in verified {
        if let Some((j, outcome, transform, n)) = ok.into_iter().find(|(j, ..)| !p.r_used[*j]) {
            p.a_used[i] = true;
            p.r_used[j] = true;
            let mut pair = new_pair(&a[i], &r[j], outcome, MatchedBy::Values, transform);
            if outcome == Outcome::LowerPrecision {
                pair.numbers = Some(n);
            }
            p.pairs.push((i, j, pair));
        }
    }

    // 3c. A quantized tensor against a float one of the same role.
    role_pass(a, r, ab, rb, p, new_pair, &ma, &mr);
}

#[allow(clippy::too_many_arguments)]
fn role_pass(
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
    p: &mut Pairing,
    new_pair: &NewPair<'_>,
    ma: &HashMap<usize, Moments>,
    mr: &HashMap<usize, Moments>,
) {
    let elements = |e: &Entry<'_>| e.t.shape.iter().try_fold(1u64, |x, &d| x.checked_mul(d));
    let lines_up = |x: &[u64], y: &[u64]| x == y || numeric::applies(Alignment::Transposed, x, y);
    // Statistics of a Q8_0 tensor's dequantized values, to pick the nearest float.
    let q8 = |bytes: &ModelBytes<'_>, e: &Entry<'_>| -> Option<Moments> {
        let (file, t) = bytes.tensors.get(&(e.t.file.clone(), e.t.name.clone()))?;
        numeric::q8_0_moments(file, t).ok()
    };
    let quantized_a: Vec<usize> = (0..a.len())
        .filter(|&i| !p.a_used[i] && !a[i].is_float())
        .collect();
    let quantized_r: Vec<usize> = (0..r.len())
        .filter(|&j| !p.r_used[j] && !r[j].is_float())
        .collect();
    let qa: HashMap<usize, Moments> = quantized_a
        .par_iter()
        .filter_map(|&i| q8(ab, &a[i]).map(|m| (i, m)))
        .collect();
    let qr: HashMap<usize, Moments> = quantized_r
        .par_iter()
        .filter_map(|&j| q8(rb, &r[j]).map(|m| (j, m)))
        .collect();
    // Quantized artifact tensors against float reference ones, then the other way.
    for artifact_quantized in [true, false] {
        let (qs, fs): (Vec<usize>, Vec<usize>) = if artifact_quantized {
            (
                quantized_a
                    .iter()
                    .copied()
                    .filter(|&i| !p.a_used[i])
                    .collect(),
                (0..r.len())
                    .filter(|&j| !p.r_used[j] && r[j].is_float())
                    .collect(),
            )
        } else {
            (
                quantized_r
                    .iter()
                    .copied()
                    .filter(|&j| !p.r_used[j])
                    .collect(),
                (0..a.len())
                    .filter(|&i| !p.a_used[i] && a[i].is_float())
                    .collect(),
            )
        };
        let (q_side, f_side) = if artifact_quantized { (a, r) } else { (r, a) };
        let (q_moments, f_moments) = if artifact_quantized {
            (&qa, mr)
        } else {
            (&qr, ma)
        };
        let mut f_taken: HashMap<usize, bool> = HashMap::new();
        for q in qs {
            let eq = &q_side[q];
            let pool: Vec<usize> = fs
                .iter()
                .copied()
                .filter(|f| !f_taken.contains_key(f))
                .filter(|&f| {
                    elements(&f_side[f]) == elements(eq)
                        && lines_up(&eq.t.shape, &f_side[f].t.shape)
                })
                .collect();
            let chosen = match q_moments.get(&q) {
                // Q8_0's error is at most half a step of 1/127 of each block's largest value.
                Some(m) => pool
                    .iter()
                    .filter_map(|&f| {
                        f_moments
                            .get(&f)
                            .and_then(|fm| m.distance(fm, 2f64.powi(-5)))
                            .map(|d| (d, f))
                    })
                    .min_by(|x, y| x.0.total_cmp(&y.0))
                    .map(|(_, f)| f),
                None => {
                    let layer = layer_of(eq.name);
                    let same_layer: Vec<usize> = pool
                        .iter()
                        .copied()
                        .filter(|&f| layer_of(f_side[f].name) == layer)
                        .collect();
                    (same_layer.len() == 1).then(|| same_layer[0])
                }
            };
            if let Some(f) = chosen {
                f_taken.insert(f, true);
                let (i, j) = if artifact_quantized { (q, f) } else { (f, q) };
                p.a_used[i] = true;
                p.r_used[j] = true;
                let transform = (a[i].t.shape != r[j].t.shape).then_some(Transform::Transpose);
                let pair = new_pair(
                    &a[i],
                    &r[j],
                    Outcome::NotComparable,
                    MatchedBy::Role,
                    transform,
                );
                p.pairs.push((i, j, pair));
            }
        }
    }
}

fn assemble(
    artifact: &SideInput<'_>,
    reference: &SideInput<'_>,
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    p: Pairing,
    numbers_missing: Option<String>,
) -> Comparison {
    // An alias left over is not a tensor missing: its values are its named tensor's.
    let only = |side: &[Entry<'_>], used: &[bool]| -> Vec<Side> {
        side.iter()
            .enumerate()
            .filter(|(i, e)| !used[*i] && e.alias_of.is_none())
            .map(|(_, e)| e.side())
            .collect()
    };
    let only_in_artifact = only(a, &p.a_used);
    let only_in_reference = only(r, &p.r_used);
    let mut pairs: Vec<Pair> = p.pairs.into_iter().map(|(_, _, pair)| pair).collect();
    pairs.sort_by(|x, y| {
        (x.artifact.file.as_bytes(), x.artifact.name.as_bytes())
            .cmp(&(y.artifact.file.as_bytes(), y.artifact.name.as_bytes()))
    });

    let mut summary = Summary {
        only_in_artifact: only_in_artifact.len(),
        only_in_reference: only_in_reference.len(),
        unread: artifact.manifest.unread.len() + reference.manifest.unread.len(),
        ..Summary::default()
    };
    let mut accounting = Accounting {
        only_in_artifact: only_in_artifact.len(),
        only_in_reference: only_in_reference.len(),
        ..Accounting::default()
    };
    for p in &pairs {
        if p.artifact.alias_of.is_some() || p.reference.alias_of.is_some() {
            summary.aliased += 1;
        }
        match p.outcome {
            Outcome::LowerPrecision => summary.lower_precision += 1,
            Outcome::SameValuesTransposed => summary.transposed += 1,
            _ => {}
        }
        match (p.transform, p.outcome) {
            (_, Outcome::NotComparable) => accounting.not_comparable += 1,
            (_, Outcome::Differs) => accounting.differs += 1,
            (Some(Transform::Unpermute), _) => accounting.unpermuted += 1,
            (Some(Transform::Transpose), _) => accounting.transposed += 1,
            (None, Outcome::Identical) => accounting.identical += 1,
            (None, Outcome::LowerPrecision) => accounting.lower_precision += 1,
            (None, _) => accounting.same_values += 1,
        }
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
            Outcome::NotComparable => summary.not_comparable += 1,
            _ => {}
        }
    }
    let matches = pairs
        .iter()
        .all(|p| !p.renamed && matches!(p.outcome, Outcome::Identical | Outcome::SameValues))
        && only_in_artifact.is_empty()
        && only_in_reference.is_empty()
        && summary.unread == 0;
    let named = |m: &TensorManifest| Named {
        name: m.artifact.name.clone(),
        format: m.artifact.format.clone(),
        sha256: m.artifact.sha256.clone(),
    };
    Comparison {
        schema: SCHEMA.into(),
        artifact: named(artifact.manifest),
        reference: named(reference.manifest),
        value_encoding: artifact.manifest.value_encoding.clone(),
        matches,
        summary,
        accounting,
        numbers_missing,
        pairs,
        only_in_artifact,
        only_in_reference,
    }
}

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
    /// Reads `path`: a manifest file, or a model to fingerprint (its files stay open for the
    /// numbers).
    pub fn load(
        path: &std::path::Path,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
    ) -> Result<Loaded<'p>, String> {
        if let Some(m) = read_manifest(path)? {
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

/// Compares the models (or manifests) at two paths, reading both in parallel.
pub fn compare_paths(
    artifact: &std::path::Path,
    reference: &std::path::Path,
    plugins: &PluginSet,
    choice: &ReaderChoice,
) -> Result<Comparison, String> {
    let (a, r) = rayon::join(
        || Loaded::load(artifact, plugins, choice),
        || Loaded::load(reference, plugins, choice),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_are_the_first_numeric_part() {
        assert_eq!(layer_of("blk.12.attn_q.weight"), Some(12));
        assert_eq!(layer_of("model.layers.3.mlp.up_proj.weight"), Some(3));
        assert_eq!(layer_of("transformer.h.0.attn.c_attn.weight"), Some(0));
        assert_eq!(layer_of("token_embd.weight"), None);
        assert_eq!(layer_of("a..b"), None);
    }
}
