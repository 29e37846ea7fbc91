//! The comparison's first passes, from the manifests alone: by name (preferring the same
//! file), then by content (identical bytes, identical values, values after undoing the Q/K
//! permutation on either side); then the value passes when both sides are models, and the
//! document assembled.

use super::assemble::assemble;
use super::document::{Comparison, MatchedBy, Outcome, Pair, Transform};
use super::sides::{entries, Entry, Pairing, SideInput};
use super::values::by_values_pass;
use crate::fingerprint::manifest::{TensorEntry, TensorManifest};
use crate::fingerprint::unpermute::Unpermuted;
use std::collections::HashMap;

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

/// Compares two sides.
pub fn compare(artifact: &SideInput<'_>, reference: &SideInput<'_>) -> Comparison {
    let a = entries(artifact.manifest);
    let r = entries(reference.manifest);
    let mut p = Pairing {
        a_used: vec![false; a.len()],
        r_used: vec![false; r.len()],
        pairs: Vec::new(),
    };

    // 1. By name, preferring the same file.
    by_name_pass(&a, &r, &mut p);

    // 2. By content, for what is left: identical bytes first, then identical values, then
    //    values after undoing the Q/K permutation (either side's).
    by_content_pass(artifact, &a, &r, &mut p);
    // The reference's unpermuted values against the artifact's values.
    if reference.unpermuted.is_some_and(|u| !u.is_empty()) {
        reference_unpermuted_pass(reference, &a, &r, &mut p);
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

/// A pair of two entries, renamed unless matched by name or alias; its numbers come later.
fn new_pair(
    ea: &Entry<'_>,
    er: &Entry<'_>,
    outcome: Outcome,
    matched_by: MatchedBy,
    transform: Option<Transform>,
) -> Pair {
    Pair {
        outcome,
        renamed: !matches!(matched_by, MatchedBy::Name | MatchedBy::Alias),
        matched_by,
        transform,
        artifact: ea.side(),
        reference: er.side(),
        numbers: None,
        numbers_missing: None,
        quantized: None,
    }
}

/// Pass 1: pairs tensors of one name, first within the same file, then across files.
fn by_name_pass(a: &[Entry<'_>], r: &[Entry<'_>], p: &mut Pairing) {
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
}

/// The values hash of `e` with the GGUF Q/K permutation undone, when `side` holds one.
fn unpermuted_of(side: &SideInput<'_>, e: &Entry<'_>) -> Option<String> {
    side.unpermuted?
        .get(&(e.t.file.clone(), e.t.name.clone()))
        .cloned()
}

/// Pass 2: pairs what is left by content: identical bytes, identical values, then the artifact's
/// values with the Q/K permutation undone.
fn by_content_pass(artifact: &SideInput<'_>, a: &[Entry<'_>], r: &[Entry<'_>], p: &mut Pairing) {
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
}

/// Pass 2 the other way: the reference's values with the Q/K permutation undone against the
/// artifact's values.
fn reference_unpermuted_pass(
    reference: &SideInput<'_>,
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    p: &mut Pairing,
) {
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
