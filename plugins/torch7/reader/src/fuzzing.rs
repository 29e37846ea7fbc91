//! The properties the fuzz target checks, shared with the regression test.

use crate::{claims, read_torch7};

/// The reader on arbitrary bytes: it returns, never panics, one row at least as bad as its
/// worst listed finding, tensors whose ranges lie inside the input and whose bytes match
/// their shapes, inline bytes within the input's size; the claim returns too.
pub fn check_reader(data: &[u8]) {
    let _ = claims(data, data.len() as u64);
    let opened = read_torch7(data, data.len() as u64);
    assert_eq!(opened.rows.len(), 1);
    let row = &opened.rows[0];
    let worst = row
        .findings
        .iter()
        .map(|f| f.severity.row_status().badness())
        .max()
        .unwrap_or(0);
    assert!(row.status.badness() >= worst, "{row:?}");
    let mut inline = 0u64;
    for t in opened.tensors.iter() {
        for r in t.ranges.iter() {
            assert!(
                r.offset
                    .checked_add(r.len)
                    .is_some_and(|e| e <= data.len() as u64),
                "{t:?}"
            );
        }
        let elem = match t.dtype.as_str() {
            "U8" | "I8" => 1,
            "I16" | "F16" => 2,
            "I32" | "F32" => 4,
            _ => 8,
        };
        let numel: u64 = t.shape.iter().product();
        let held: u64 = match t.inline.as_ref().into_option() {
            Some(b) => b.len() as u64,
            None => t.ranges.iter().map(|r| r.len).sum(),
        };
        inline += t.inline.as_ref().map_or(0, |b| b.len() as u64);
        if t.strides.is_none() {
            assert_eq!(held, numel * elem, "{t:?}");
        }
    }
    assert!(inline <= data.len() as u64);
}
