//! The reader alone on hostile `.npz` shapes (`socair_test_support::npz_shapes`): zip bombs
//! (members that inflate a thousandfold, members that inflate past what they declare) and a
//! flood of tiny members. Each shape is generated and written to a file, and `bounds-numpy` (a
//! program of `socair-tests`) reads it and runs the reader and the plugin's `opened_file` glue,
//! the whole plugin side of one `open`. Its peak RSS, CPU time and output are checked against
//! 64 MiB + 8x the input, 5 s per 30 MB and 8x the input (`socair_test_support::measure`). The
//! same shapes run end to end in `tests/tests/numpy.rs`.

#![allow(clippy::unwrap_used)]

use socair_numpy::{read, span::Span};
use socair_test_support::measure::{plugin_alone, TARGET};
use socair_test_support::npz_shapes::*;

#[test]
fn npz_deflated_members_a_thousand_times_the_archive() {
    plugin_alone("npz-bomb", "npz-bomb.npz", npz_bomb(TARGET), "bounds-numpy");
}

#[test]
fn npz_members_inflating_past_their_declared_size() {
    plugin_alone(
        "npz-lying-bomb",
        "npz-lying-bomb.npz",
        npz_lying_bomb(TARGET),
        "bounds-numpy",
    );
}

#[test]
fn npz_a_flood_of_tiny_members() {
    plugin_alone(
        "npz-flood",
        "npz-flood.npz",
        npz_flood(TARGET),
        "bounds-numpy",
    );
}

/// The shapes say what they should: the bomb inflates within the budget, the lying members
/// are refused, the flood is read whole (checked on small versions, in process).
#[test]
fn the_shapes_are_what_they_claim() {
    let bomb = npz_bomb(200_000);
    let o = read::read_npz(Span::file_bytes(&bomb), false, &[]);
    let inflated: usize = o
        .tensors
        .iter()
        .map(|t| match &t.bytes {
            read::Bytes::Inline(b) => b.len(),
            read::Bytes::Range { .. } => 0,
        })
        .sum();
    assert!(inflated as u64 <= read::inflate_budget(bomb.len() as u64));
    assert!(
        !o.tensors.is_empty() && !o.unread.is_empty(),
        "{:?}",
        o.unread.len()
    );
    assert_eq!(o.worst(), Some(read::Severity::Lead));

    let lying = npz_lying_bomb(50_000);
    let o = read::read_npz(Span::file_bytes(&lying), false, &[]);
    assert!(o.tensors.is_empty());
    assert_eq!(o.worst(), Some(read::Severity::Fail));
    assert!(o.findings[0]
        .reason
        .contains("inflates past the 1000 bytes"));

    let flood = npz_flood(100_000);
    let o = read::read_npz(Span::file_bytes(&flood), false, &[]);
    assert_eq!(o.worst(), None, "{:?}", o.findings.first());
    assert!(o.tensors.len() > 400, "{}", o.tensors.len());
    let flood = npz_flood(TARGET);
    let o = read::read_npz(Span::file_bytes(&flood), false, &[]);
    assert_eq!(o.worst(), None, "{:?}", o.findings.first());
    assert_eq!(o.tensors.len(), 0xfffe);
}
