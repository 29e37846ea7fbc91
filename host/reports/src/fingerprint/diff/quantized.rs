//! A quantized tensor and a float one measured against each other (the rules are in
//! `fingerprint::quantized`): under each line-up the two shapes allow (as they are, with
//! llama.cpp's Q/K permutation undone, transposed), the best measured (within the bounds,
//! else the fewest elements past them). Used for pairs by name (pass 3a) and to confirm
//! candidates of the same role (pass 3c).

use super::document::{Outcome, Pair, Transform};
use super::sides::{alignments, Entry, ModelBytes};
use crate::fingerprint::numeric::{Alignment, FlatTensor};
use crate::fingerprint::quantized::{self, QuantizedNumbers, QuantizedTensor};

/// A measured line-up: the numbers and what was undone.
pub(super) type Measured = (QuantizedNumbers, Option<Transform>);

/// Whether one entry is block-quantized and the other a float: a pair these passes measure.
pub(super) fn quantized_against_float(ea: &Entry<'_>, er: &Entry<'_>) -> bool {
    (ea.is_quantized() && er.is_float()) || (ea.is_float() && er.is_quantized())
}

/// Measures artifact entry `ea` against reference entry `er` (one quantized, the other a float).
pub(super) fn measure(
    ea: &Entry<'_>,
    er: &Entry<'_>,
    ab: &ModelBytes<'_>,
    rb: &ModelBytes<'_>,
) -> Result<Measured, String> {
    let quantized_is_artifact = ea.is_quantized();
    let (eq, ef, qb, fb) = if quantized_is_artifact {
        (ea, er, ab, rb)
    } else {
        (er, ea, rb, ab)
    };
    let key = |e: &Entry<'_>| (e.t.file.clone(), e.t.name.clone());
    let (qfile, qt) = qb
        .tensors
        .get(&key(eq))
        .ok_or("its bytes are not at hand")?;
    let (ffile, ft) = fb
        .tensors
        .get(&key(ef))
        .ok_or("its bytes are not at hand")?;
    let q = QuantizedTensor::new(qfile, qt)?;
    let imatrix = qb.imatrix.contains(&eq.t.file);
    let f = FlatTensor::new(ffile, ft)?;
    // Every line-up is measured and the best kept: one within the bounds everywhere, else
    // the one that shows the same weights with the fewest elements past them, else the one
    // with the fewest past them. (The first that shows the same weights is not enough: a
    // grid-only type allows a little scattered excess, which a Q projection measured without
    // undoing llama.cpp's permutation must not be judged by.)
    let mut best: Option<Result<Measured, String>> = None;
    let rank = |m: &Result<Measured, String>| match m {
        Ok((n, _)) => (
            if n.elements_beyond_bound == 0 {
                0
            } else if n.same_weights {
                1
            } else {
                2
            },
            n.elements_beyond_bound,
        ),
        Err(_) => (3, u64::MAX),
    };
    for (al, transform) in alignments(ea, er, ab, rb) {
        // The line-ups are the artifact's; the quantized side reads as the artifact.
        let al = match al {
            Alignment::Unpermute {
                n_head,
                reference_permuted,
            } if !quantized_is_artifact => Alignment::Unpermute {
                n_head,
                reference_permuted: !reference_permuted,
            },
            other => other,
        };
        let measured = quantized::compare(&q, &f, al, imatrix).map(|n| (n, transform));
        if matches!(&measured, Ok((n, _)) if n.elements_beyond_bound == 0) {
            return measured;
        }
        if best.as_ref().is_none_or(|b| rank(&measured) < rank(b)) {
            best = Some(measured);
        }
    }
    best.unwrap_or_else(|| {
        Err(format!(
            "shapes {:?} and {:?} do not line up",
            ea.t.shape, er.t.shape
        ))
    })
}

/// Sets a pair's outcome, transform and numbers from its measurement, or why there are none.
pub(super) fn record(pair: &mut Pair, measured: Result<Measured, String>) {
    match measured {
        Ok((n, transform)) => {
            pair.outcome = if n.same_weights {
                Outcome::SameWeightsQuantized
            } else {
                Outcome::DiffersBeyondQuantization
            };
            pair.transform = transform;
            pair.quantized = Some(n);
        }
        Err(why) => pair.numbers_missing = Some(why),
    }
}
