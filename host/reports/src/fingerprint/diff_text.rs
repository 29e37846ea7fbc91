//! The comparison in words: one function, [`summary`], that the command line prints (and
//! that a plain-words report for every command can reuse).

use crate::fingerprint::diff::{Comparison, Outcome, Pair, Side, Transform};
use std::fmt::Write;

/// How many tensors each list in the summary names at most.
pub const DEFAULT_LIMIT: usize = 10;

fn side_name(s: &Side) -> String {
    match &s.alias_of {
        Some(of) => format!("{} (alias of {})", s.name, of),
        None => s.name.clone(),
    }
}

/// A number short enough to read: four significant digits.
pub fn short(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    if (1e-3..1e5).contains(&a) {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    } else {
        format!("{x:.3e}")
    }
}

/// Why a pair has no numbers, in a few words (empty when it says nothing).
fn no_numbers(p: &Pair) -> String {
    p.numbers_missing
        .as_ref()
        .map(|w| format!("no numbers: {w}"))
        .unwrap_or_default()
}

/// What the numbers of a pair say, in a few words.
pub fn numbers_line(p: &Pair) -> String {
    let Some(n) = &p.numbers else {
        return no_numbers(p);
    };
    let mut s = format!(
        "{} of {} elements changed, max |Δ| {}",
        n.elements_changed,
        n.elements,
        short(n.max_abs_delta)
    );
    if let Some(l2) = n.relative_l2 {
        let _ = write!(s, ", relative L2 {}", short(l2));
    }
    if let Some(c) = n.cosine {
        let _ = write!(s, ", cosine {c:.6}");
    }
    if n.nonfinite_changed > 0 {
        let _ = write!(s, ", {} NaN/inf changed", n.nonfinite_changed);
    }
    if n.narrower_is_rounded_wider == Some(false) && p.outcome == Outcome::Differs {
        s.push_str(", not a rounding of the wider side");
    }
    s
}

/// What a quantized pair's numbers say, in a few words: the errors against the blocks'
/// bounds and, beyond them, the rows.
pub fn quantized_line(p: &Pair) -> String {
    let Some(n) = &p.quantized else {
        return no_numbers(p);
    };
    let mut s = format!(
        "max error {}, RMS {} (bound RMS {}, {} bound)",
        short(n.max_abs_error),
        short(n.rms_error),
        short(n.rms_bound),
        n.bound.replace('_', "-")
    );
    // The lines told of: columns when only they stand out, else rows.
    let (what, listed, beyond, total) = if n.outlier_columns > 0 && n.outlier_rows == 0 {
        (
            "column",
            &n.columns_listed,
            n.columns_beyond_bound,
            n.columns,
        )
    } else {
        ("row", &n.rows_listed, n.rows_beyond_bound, n.rows)
    };
    if n.elements_beyond_bound > 0 {
        let _ = write!(
            s,
            "; {} of {} elements in {beyond} of {total} {what}s beyond their block's bound (up to {}x)",
            n.elements_beyond_bound,
            n.elements,
            short(n.max_error_over_bound)
        );
    }
    if n.imatrix {
        s.push_str("; quantized under an importance matrix");
    }
    if !n.same_weights {
        let lines: Vec<String> = listed
            .iter()
            .take(5)
            .map(|r| {
                format!(
                    "{what} {} (max error {} vs bound {})",
                    r.row,
                    short(r.max_abs_error),
                    short(r.bound_at_max)
                )
            })
            .collect();
        if !lines.is_empty() {
            let _ = write!(s, ": {}", lines.join(", "));
            if beyond > lines.len() as u64 {
                s.push_str(", …");
            }
        }
    }
    s
}

/// What was undone to line a pair up, as a suffix.
fn transform_suffix(p: &Pair) -> &'static str {
    match p.transform {
        Some(Transform::Unpermute) => ", after undoing llama.cpp's Q/K permutation",
        Some(Transform::Transpose) => ", transposed",
        None => "",
    }
}

/// How a pair holds the same weights, in a few words.
pub fn how(p: &Pair) -> String {
    let mut s = match p.outcome {
        Outcome::Identical => "identical".to_owned(),
        Outcome::SameValues => format!(
            "same values ({} vs {})",
            p.artifact.dtype, p.reference.dtype
        ),
        Outcome::SameValuesAfterUnpermute => {
            "same values after undoing llama.cpp's Q/K permutation".into()
        }
        Outcome::SameValuesTransposed => "same values transposed".into(),
        Outcome::LowerPrecision => {
            format!(
                "same values at lower precision ({} vs {}, rounded to nearest even{})",
                p.artifact.dtype,
                p.reference.dtype,
                transform_suffix(p)
            )
        }
        Outcome::Differs => "differs".into(),
        Outcome::NotComparable => format!(
            "not comparable ({} vs {})",
            p.artifact.dtype, p.reference.dtype
        ),
        Outcome::SameWeightsQuantized => format!(
            "same weights, quantized ({} vs {}{})",
            p.artifact.dtype,
            p.reference.dtype,
            transform_suffix(p)
        ),
        Outcome::DiffersBeyondQuantization => format!(
            "differs beyond quantization ({} vs {}{})",
            p.artifact.dtype,
            p.reference.dtype,
            transform_suffix(p)
        ),
    };
    if p.renamed {
        let _ = write!(s, ", named {} in the reference", side_name(&p.reference));
    } else if let Some(of) = &p.reference.alias_of {
        let _ = write!(s, " (in the reference, an alias of {of})");
    }
    s
}

fn list<'a, T: 'a>(
    out: &mut String,
    title: &str,
    items: impl ExactSizeIterator<Item = T>,
    limit: usize,
    line: impl Fn(T) -> String,
) {
    let total = items.len();
    if total == 0 {
        return;
    }
    let _ = writeln!(out, "  {title} ({total}):");
    for item in items.take(limit) {
        let _ = writeln!(out, "    {}", line(item));
    }
    if total > limit {
        let _ = writeln!(
            out,
            "    … and {} more (all are in the JSON)",
            total - limit
        );
    }
}

/// The comparison summarised for a person: the accounting on one line, then the tensors
/// that differ (largest relative change first), are not comparable or are missing, each
/// list naming at most `limit` tensors, then the verdict. Lines end in `\n`.
pub fn summary(c: &Comparison, limit: usize) -> String {
    let a = &c.accounting;
    let mut out = String::new();
    let paired = c.pairs.len();
    let _ = writeln!(
        out,
        "{:?} against {:?}: {} pairs; same weights: {} ({} identical, {} same values, {} at lower precision, {} unpermuted, {} transposed{}{}{}); {} differ{}; {} not comparable; {} only in the artifact; {} only in the reference; {} unread",
        c.artifact.name,
        c.reference.name,
        paired,
        a.same_weights(),
        a.identical,
        a.same_values,
        a.lower_precision,
        a.unpermuted,
        a.transposed,
        if c.summary.renamed > 0 {
            format!(", {} of all pairs under other names", c.summary.renamed)
        } else {
            String::new()
        },
        if c.summary.aliased > 0 {
            format!(", {} through aliases", c.summary.aliased)
        } else {
            String::new()
        },
        if a.same_weights_quantized > 0 {
            format!(", {} quantized", a.same_weights_quantized)
        } else {
            String::new()
        },
        a.differs + a.differs_beyond_quantization,
        if a.differs_beyond_quantization > 0 {
            format!(
                " ({} beyond quantization)",
                a.differs_beyond_quantization
            )
        } else {
            String::new()
        },
        a.not_comparable,
        a.only_in_artifact,
        a.only_in_reference,
        c.summary.unread
    );
    let mut differs: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::Differs)
        .collect();
    differs.sort_by(|x, y| {
        let key = |p: &Pair| {
            p.numbers
                .as_ref()
                .and_then(|n| n.relative_l2)
                .unwrap_or(f64::INFINITY)
        };
        key(y).total_cmp(&key(x))
    });
    list(&mut out, "differ", differs.into_iter(), limit, |p| {
        let name = if p.artifact.name == p.reference.name {
            side_name(&p.artifact)
        } else {
            format!("{} / {}", side_name(&p.artifact), side_name(&p.reference))
        };
        let shapes = if p.artifact.shape == p.reference.shape {
            String::new()
        } else {
            format!(" (shape {:?} vs {:?})", p.artifact.shape, p.reference.shape)
        };
        format!("{name}{shapes}: {}", numbers_line(p))
    });
    let beyond: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::DiffersBeyondQuantization)
        .collect();
    list(
        &mut out,
        "differ beyond quantization",
        beyond.into_iter(),
        limit,
        |p| {
            format!(
                "{} ({} vs {} {}): {}",
                side_name(&p.artifact),
                p.artifact.dtype,
                p.reference.dtype,
                side_name(&p.reference),
                quantized_line(p)
            )
        },
    );
    let not_comparable: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::NotComparable)
        .collect();
    list(
        &mut out,
        "not comparable",
        not_comparable.into_iter(),
        limit,
        |p| format!("{}: {}", side_name(&p.artifact), how(p)),
    );
    let changed_way: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| {
            p.renamed
                || p.transform.is_some()
                || p.artifact.alias_of.is_some()
                || p.reference.alias_of.is_some()
                || matches!(
                    p.outcome,
                    Outcome::LowerPrecision | Outcome::SameWeightsQuantized
                )
        })
        .filter(|p| {
            !matches!(
                p.outcome,
                Outcome::Differs | Outcome::NotComparable | Outcome::DiffersBeyondQuantization
            )
        })
        .collect();
    list(
        &mut out,
        "same weights, changed in form",
        changed_way.into_iter(),
        limit,
        |p| format!("{}: {}", side_name(&p.artifact), how(p)),
    );
    list(
        &mut out,
        "only in the artifact",
        c.only_in_artifact.iter(),
        limit,
        |s| format!("{} {} {:?} ({})", s.name, s.dtype, s.shape, s.file),
    );
    list(
        &mut out,
        "only in the reference",
        c.only_in_reference.iter(),
        limit,
        |s| format!("{} {} {:?} ({})", s.name, s.dtype, s.shape, s.file),
    );
    if let Some(why) = &c.numbers_missing {
        let _ = writeln!(out, "  no numbers: {why}");
    }
    let _ = writeln!(
        out,
        "  {}",
        if c.matches {
            "every tensor matches under its own name".to_owned()
        } else if a.differs == 0
            && a.differs_beyond_quantization == 0
            && a.not_comparable == 0
            && a.only_in_artifact == 0
            && a.only_in_reference == 0
            && c.summary.unread == 0
        {
            "not a match under the same names, but every tensor is accounted for as the same weights".to_owned()
        } else {
            "they do not match".to_owned()
        }
    );
    out
}
