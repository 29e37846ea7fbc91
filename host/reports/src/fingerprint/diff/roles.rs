//! The last value pass: a quantized tensor and a float one of the same role (same element
//! count and a shape that lines up, then the nearest dequantized statistics, or the only
//! candidate in the same layer) pair as not comparable. With the layer of a tensor name, which
//! the HTML page groups by too.

use super::document::{MatchedBy, Outcome, Transform};
use super::sides::{Entry, ModelBytes, NewPair, Pairing};
use crate::fingerprint::numeric::{self, Alignment, Moments};
use rayon::prelude::*;
use std::collections::HashMap;

/// The first dotted part of a name that is a number: the layer of `blk.3.attn_q.weight`,
/// `model.layers.3.mlp.up_proj.weight` and `transformer.h.3.attn.c_attn.weight`.
pub fn layer_of(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn role_pass(
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
