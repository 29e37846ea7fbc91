//! The value passes, when both sides are models: pairs by name that differ get their numbers
//! (and a rounded or transposed copy is told apart), then leftover float tensors are paired
//! by order-free statistics and confirmed in full, as they are, transposed or unpermuted.
//! Apart from the passes over manifests, which need no bytes.

use super::document::{MatchedBy, Outcome, Transform};
use super::quantized;
use super::roles::role_pass;
use super::sides::{alignments, Entry, ModelBytes, NewPair, Pairing};
use crate::fingerprint::numeric::{self, Alignment, FlatTensor, Moments, Numbers};
use rayon::prelude::*;
use std::collections::HashMap;

/// How many candidate statistics comparisons the value pass makes at most: it stays
/// near-linear for 100k-tensor models whose tensors share a few shapes.
const CANDIDATE_BUDGET: u64 = 50_000_000;
/// Candidates compared in full per tensor, best statistics first.
const VERIFY_PER_TENSOR: usize = 3;

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

/// The value passes over two models: pairs by name that differ get their numbers (3a),
/// leftover floats are paired by statistics confirmed in full (3b), and a quantized tensor is
/// paired with a float one of the same role (3c).
pub(super) fn by_values_pass(
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
    p: &mut Pairing,
    new_pair: &NewPair<'_>,
) {
    // 3a. Pairs by name that differ: numbers, and a rounded or transposed copy told apart.
    numbers_by_name(a, r, ab, rb, p);

    // 3b. Leftover floats: candidates by order-free statistics, confirmed in full.
    let (left_a, left_r) = rayon::join(
        || Leftover::of(a, ab, &p.a_used),
        || Leftover::of(r, rb, &p.r_used),
    );
    let candidates = candidates(a, r, ab, rb, &left_a, &left_r);
    // Every candidate line-up compared in full, in parallel; then each tensor takes its best
    // confirmed candidate still free, in the artifact's order.
    let verified = confirm(a, r, ab, rb, &candidates);
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
    role_pass(a, r, ab, rb, p, new_pair, &left_a.moments, &left_r.moments);
}

/// Pass 3a: each pair by name of a quantized tensor and a float one is measured against the
/// blocks' bounds; each pair by name whose outcome is `Differs` gets its numbers (or why there are none),
/// and its outcome and transform when the numbers show the same weights rounded or
/// transposed.
fn numbers_by_name(
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
    p: &mut Pairing,
) {
    // A quantized tensor and a float one of one name: measured against the blocks' bounds.
    let quantized_jobs: Vec<usize> = p
        .pairs
        .iter()
        .enumerate()
        .filter(|(_, (i, j, pair))| {
            pair.outcome == Outcome::NotComparable
                && quantized::quantized_against_float(&a[*i], &r[*j])
        })
        .map(|(k, _)| k)
        .collect();
    let measured: Vec<(usize, Result<quantized::Measured, String>)> = quantized_jobs
        .par_iter()
        .map(|&k| {
            let (i, j, _) = &p.pairs[k];
            (k, quantized::measure(&a[*i], &r[*j], ab, rb))
        })
        .collect();
    for (k, result) in measured {
        quantized::record(&mut p.pairs[k].2, result);
    }
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
            (k, measure_named(&a[*i], &r[*j], ab, rb))
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
}

/// The numbers of two float tensors paired by name. As they are first; transposed only when
/// that does not show the same weights (a square matrix lines up both ways). The first
/// line-up that shows the same weights wins, else the element-wise one.
fn measure_named(
    ea: &Entry<'_>,
    er: &Entry<'_>,
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
) -> Measured {
    if !(ea.is_float() && er.is_float()) {
        return Err(format!(
            "{} against {}: numbers are computed for F32, F16 and BF16",
            ea.t.dtype, er.t.dtype
        ));
    }
    let mut first: Option<Measured> = None;
    for (al, _) in alignments(ea, er, ab, rb)
        .into_iter()
        .filter(|(al, _)| matches!(al, Alignment::Same | Alignment::Transposed))
    {
        let measured = numbers_of(ea, er, ab, rb, al).map(|n| (n, al));
        if matches!(&measured, Ok((n, al)) if same_weights(n, *al).is_some()) {
            return measured;
        }
        first.get_or_insert(measured);
    }
    first.unwrap_or_else(|| {
        Err(format!(
            "shapes {:?} and {:?} do not line up",
            ea.t.shape, er.t.shape
        ))
    })
}

/// One side's float tensors left unpaired, and the order-free statistics of those whose
/// values could be read.
struct Leftover {
    /// Their indices, in the side's order.
    idx: Vec<usize>,
    /// Their statistics, by index.
    moments: HashMap<usize, Moments>,
}

impl Leftover {
    /// The float tensors of `side` not `used`, with their statistics.
    fn of(side: &[Entry<'_>], bytes: &ModelBytes<'_>, used: &[bool]) -> Leftover {
        let idx: Vec<usize> = (0..side.len())
            .filter(|&i| !used[i] && side[i].is_float())
            .collect();
        let moments = idx
            .par_iter()
            .filter_map(|&i| {
                let t = flat(bytes, &side[i]).ok()?;
                numeric::float_moments(&t).ok().map(|m| (i, m))
            })
            .collect();
        Leftover { idx, moments }
    }
}

/// For each leftover artifact tensor (in order, within [`CANDIDATE_BUDGET`]), the leftover
/// reference tensors of as many elements that can line up with it, best statistics first, at
/// most [`VERIFY_PER_TENSOR`].
fn candidates(
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
    left_a: &Leftover,
    left_r: &Leftover,
) -> Vec<(usize, Vec<usize>)> {
    let (ma, mr) = (&left_a.moments, &left_r.moments);
    let mut r_by_count: HashMap<u64, Vec<usize>> = HashMap::new();
    for &j in &left_r.idx {
        if let Some(m) = mr.get(&j) {
            r_by_count.entry(m.elements).or_default().push(j);
        }
    }
    let mut budget = CANDIDATE_BUDGET;
    let mut candidates: Vec<(usize, Vec<usize>)> = Vec::new();
    for &i in &left_a.idx {
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
    candidates
}

/// Every candidate compared in full under each line-up, in parallel: per artifact tensor,
/// the candidates that show the same weights (the first line-up that does).
fn confirm(
    a: &[Entry<'_>],
    r: &[Entry<'_>],
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
    candidates: &[(usize, Vec<usize>)],
) -> Vec<(usize, Vec<Confirmed>)> {
    candidates
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
        .collect()
}
