//! The comparison document made from the pairs found: what is left only on either side, the
//! counts by outcome and by what makes two tensors the same weights, and whether the two
//! sides match. Apart from the passes that find the pairs.

use super::document::{
    Accounting, Comparison, Named, Outcome, Pair, Side, Summary, Transform, SCHEMA,
};
use super::sides::{Entry, Pairing, SideInput};
use crate::fingerprint::manifest::TensorManifest;

pub(super) fn assemble(
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
            Outcome::SameWeightsQuantized => summary.same_weights_quantized += 1,
            Outcome::DiffersBeyondQuantization => summary.differs_beyond_quantization += 1,
            _ => {}
        }
        match (p.transform, p.outcome) {
            (_, Outcome::NotComparable) => accounting.not_comparable += 1,
            (_, Outcome::SameWeightsQuantized) => accounting.same_weights_quantized += 1,
            (_, Outcome::DiffersBeyondQuantization) => accounting.differs_beyond_quantization += 1,
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
