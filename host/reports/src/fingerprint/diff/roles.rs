//! The last value pass: a quantized tensor and a float one of the same role. Candidates have
//! the same element count and a shape that lines up; those of the same layer, then those with
//! the nearest dequantized statistics, are measured against the quantization's bounds, and the
//! first within them pairs as the same weights, quantized. When none is, the one measured
//! nearest (at most half its elements beyond the bounds: an edit), else the nearest statistics
//! or the only candidate in the same layer, pairs with its measurement: beyond the
//! quantization, or not comparable when it cannot be measured. With the layer of a tensor
//! name, which the HTML page groups by too.

use super::document::{MatchedBy, Outcome, Pair, Transform};
use super::quantized;
use super::sides::{Entry, ModelBytes, NewPair, Pairing};
use crate::fingerprint::numeric::{self, Alignment, Moments};
use crate::fingerprint::quantized::QuantizedTensor;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// Candidates measured in full per quantized tensor, its layer's first.
const MEASURED_PER_TENSOR: usize = 4;
/// How far apart (relative to the values' size) a candidate's statistics may be from the
/// dequantized ones to pair when no candidate is within the bounds: the coarsest types
/// (2 bits) move sums by up to about an eighth.
const ROLE_PRECISION: f64 = 0.125;

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
    let dequantized = |bytes: &ModelBytes<'_>, e: &Entry<'_>| -> Option<Moments> {
        let (file, t) = bytes.tensors.get(&(e.t.file.clone(), e.t.name.clone()))?;
        QuantizedTensor::new(file, t).ok()?.moments().ok()
    };
    let quantized_a: Vec<usize> = (0..a.len())
        .filter(|&i| !p.a_used[i] && a[i].is_quantized())
        .collect();
    let quantized_r: Vec<usize> = (0..r.len())
        .filter(|&j| !p.r_used[j] && r[j].is_quantized())
        .collect();
    let qa: HashMap<usize, Moments> = quantized_a
        .par_iter()
        .filter_map(|&i| dequantized(ab, &a[i]).map(|m| (i, m)))
        .collect();
    let qr: HashMap<usize, Moments> = quantized_r
        .par_iter()
        .filter_map(|&j| dequantized(rb, &r[j]).map(|m| (j, m)))
        .collect();
    // Quantized artifact tensors against float reference ones, then the other way.
    for artifact_quantized in [true, false] {
        let (qs, fs, q_moments, f_moments) = if artifact_quantized {
            let fs = (0..r.len()).filter(|&j| !p.r_used[j] && r[j].is_float());
            (&quantized_a, fs.collect::<Vec<_>>(), &qa, mr)
        } else {
            let fs = (0..a.len()).filter(|&i| !p.a_used[i] && a[i].is_float());
            (&quantized_r, fs.collect::<Vec<_>>(), &qr, ma)
        };
        let side = Side {
            a,
            r,
            ab,
            rb,
            artifact_quantized,
        };
        let mut f_taken: HashSet<usize> = HashSet::new();
        for &q in qs {
            let q_used = if artifact_quantized {
                p.a_used[q]
            } else {
                p.r_used[q]
            };
            if q_used {
                continue;
            }
            let ranked = side.ranked(q, &fs, &f_taken, q_moments.get(&q), f_moments);
            let Some((f, pair)) = side.choose(q, &ranked, new_pair) else {
                continue;
            };
            f_taken.insert(f);
            let (i, j) = if artifact_quantized { (q, f) } else { (f, q) };
            p.a_used[i] = true;
            p.r_used[j] = true;
            p.pairs.push((i, j, pair));
        }
    }
}

/// The two sides, told which holds the quantized tensors.
struct Side<'s, 'e, 'b> {
    a: &'s [Entry<'e>],
    r: &'s [Entry<'e>],
    ab: &'s ModelBytes<'b>,
    rb: &'s ModelBytes<'b>,
    artifact_quantized: bool,
}

/// A float candidate for a quantized tensor.
struct Ranked {
    /// Its index on its side.
    f: usize,
    /// How far its statistics are from the dequantized ones (infinite: not comparable).
    order: f64,
    /// That distance when within [`ROLE_PRECISION`].
    near: Option<f64>,
    /// Whether it is in the quantized tensor's layer.
    same_layer: bool,
}

impl Side<'_, '_, '_> {
    fn quantized(&self, q: usize) -> &Entry<'_> {
        if self.artifact_quantized {
            &self.a[q]
        } else {
            &self.r[q]
        }
    }

    fn float(&self, f: usize) -> &Entry<'_> {
        if self.artifact_quantized {
            &self.r[f]
        } else {
            &self.a[f]
        }
    }

    /// The free floats that can hold `q`'s weights: those of its layer first, then by how near
    /// their statistics are to its dequantized ones.
    fn ranked(
        &self,
        q: usize,
        fs: &[usize],
        taken: &HashSet<usize>,
        q_moments: Option<&Moments>,
        f_moments: &HashMap<usize, Moments>,
    ) -> Vec<Ranked> {
        let elements = |e: &Entry<'_>| e.t.shape.iter().try_fold(1u64, |x, &d| x.checked_mul(d));
        let lines_up =
            |x: &[u64], y: &[u64]| x == y || numeric::applies(Alignment::Transposed, x, y);
        let eq = self.quantized(q);
        let layer = layer_of(eq.name);
        let mut ranked: Vec<Ranked> = fs
            .iter()
            .copied()
            .filter(|f| !taken.contains(f))
            .filter(|&f| {
                let ef = self.float(f);
                elements(ef) == elements(eq) && lines_up(&eq.t.shape, &ef.t.shape)
            })
            .map(|f| {
                let distance = |precision: f64| {
                    q_moments
                        .zip(f_moments.get(&f))
                        .and_then(|(m, fm)| m.distance(fm, precision))
                };
                Ranked {
                    f,
                    order: distance(1.0).unwrap_or(f64::INFINITY),
                    near: distance(ROLE_PRECISION),
                    same_layer: layer_of(self.float(f).name) == layer,
                }
            })
            .collect();
        ranked.sort_by(|x, y| {
            y.same_layer
                .cmp(&x.same_layer)
                .then(x.order.total_cmp(&y.order))
        });
        ranked
    }

    /// Measures `q` against `f`, as the artifact and reference sides hold them.
    fn measure(&self, q: usize, f: usize) -> Result<quantized::Measured, String> {
        let (ea, er) = if self.artifact_quantized {
            (&self.a[q], &self.r[f])
        } else {
            (&self.a[f], &self.r[q])
        };
        quantized::measure(ea, er, self.ab, self.rb)
    }

    /// The float `q` pairs with and the pair. The first candidates (its layer's, then the
    /// nearest statistics) are measured: the first within the bounds pairs; else the measured
    /// one with the fewest elements beyond them, when at most half are (an edit, not another
    /// tensor); else the nearest statistics within [`ROLE_PRECISION`] or the only candidate in
    /// the layer, with its measurement.
    fn choose(&self, q: usize, ranked: &[Ranked], new_pair: &NewPair<'_>) -> Option<(usize, Pair)> {
        let first: Vec<usize> = ranked
            .iter()
            .take(MEASURED_PER_TENSOR)
            .map(|c| c.f)
            .collect();
        let mut measured: Vec<(usize, Result<quantized::Measured, String>)> =
            first.par_iter().map(|&f| (f, self.measure(q, f))).collect();
        let beyond = |m: &Result<quantized::Measured, String>| match m {
            Ok((n, _)) if n.elements > 0 => {
                Some(n.elements_beyond_bound as f64 / n.elements as f64)
            }
            _ => None,
        };
        let within = measured
            .iter()
            .position(|(_, m)| matches!(m, Ok((n, _)) if n.same_weights));
        let least = measured
            .iter()
            .enumerate()
            .filter_map(|(k, (_, m))| beyond(m).map(|b| (b, k)))
            .filter(|(b, _)| *b <= 0.5)
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .map(|(_, k)| k);
        let (f, result) = match within.or(least) {
            Some(k) => measured.swap_remove(k),
            None => {
                let nearest = ranked
                    .iter()
                    .filter(|c| c.near.is_some())
                    .min_by(|x, y| x.order.total_cmp(&y.order));
                let same_layer: Vec<&Ranked> = ranked.iter().filter(|c| c.same_layer).collect();
                let f = match (nearest, same_layer.as_slice()) {
                    (Some(c), _) => c.f,
                    (None, [c]) => c.f,
                    _ => return None,
                };
                match measured.iter().position(|(g, _)| *g == f) {
                    Some(k) => measured.swap_remove(k),
                    None => (f, self.measure(q, f)),
                }
            }
        };
        let (ea, er) = if self.artifact_quantized {
            (&self.a[q], &self.r[f])
        } else {
            (&self.a[f], &self.r[q])
        };
        let transform = (ea.t.shape != er.t.shape).then_some(Transform::Transpose);
        let mut pair = new_pair(ea, er, Outcome::NotComparable, MatchedBy::Role, transform);
        quantized::record(&mut pair, result);
        Some((f, pair))
    }
}
