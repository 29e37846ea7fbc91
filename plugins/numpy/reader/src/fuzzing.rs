//! The properties the fuzz target (`fuzz/fuzz_targets/numpy_reader.rs`) checks, shared with
//! the regression test (`tests/fuzz_regressions.rs`).

use crate::detect::{looks_like_npy, looks_like_npz};
use crate::opened_file;
use crate::read::{self, Bytes, NumpyRead};
use crate::span::Span;

fn element_size(element_type: &str) -> Option<u64> {
    Some(match element_type {
        "BOOL" | "I8" | "U8" => 1,
        "I16" | "U16" | "F16" => 2,
        "I32" | "U32" | "F32" => 4,
        "I64" | "U64" | "F64" | "C64" => 8,
        "C128" => 16,
        _ => return None,
    })
}

/// What a reader returned holds together: every range lies inside the file and holds exactly
/// the shape's elements (strided ranges too), inline bytes hold exactly the shape and stay
/// within the inflation budget, and the glue turns it into rows without panicking.
fn check_outcome(data: &[u8], out: NumpyRead) {
    let mut inline_total = 0u64;
    for t in &out.tensors {
        let size = t.itemsize;
        if let Some(el) = t.element_type {
            assert_eq!(element_size(el), Some(size), "{}: {el}", t.name);
        }
        // The host gathers a strided layout by its element type's size: only those have one.
        assert!(
            t.strides.is_none() || t.element_type.is_some_and(|e| e != "C128"),
            "{}: strided without an element size the host knows",
            t.name
        );
        let numel = t
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .expect("the shape's size fits");
        let len = numel.checked_mul(size).expect("the size fits");
        match &t.bytes {
            Bytes::Range { offset, len: l } => {
                assert_eq!(*l, len, "{}: range length and shape", t.name);
                let end = offset.checked_add(*l).expect("no overflow");
                assert!(end <= data.len() as u64, "{}: past the end", t.name);
            }
            Bytes::Inline(b) => {
                assert_eq!(b.len() as u64, len, "{}: inline length and shape", t.name);
                assert!(t.strides.is_none(), "inline bytes are row-major");
                inline_total += len;
            }
        }
        if let Some(strides) = &t.strides {
            assert_eq!(strides.len(), t.shape.len());
        }
    }
    // Inflated bytes within the budget; column-major arrays of dtypes the host has no element
    // size for, copied from the file in row-major order, within the file's length.
    assert!(inline_total <= read::inflate_budget(data.len() as u64) + data.len() as u64);
    let findings = out.findings.len();
    let unread = out.unread.len();
    let opened = opened_file(out);
    assert!(!opened.rows.is_empty());
    assert_eq!(opened.unread.len(), unread);
    assert!(opened.rows.iter().map(|r| r.findings.len()).sum::<usize>() >= findings);
}

/// Both readers on arbitrary bytes (the one its detection picks, and the other too): they
/// return, never panic, and what they return holds together.
pub fn check_reader(data: &[u8]) {
    let npy = read::read_npy(Span::file_bytes(data), &[]);
    check_outcome(data, npy);
    let npz = read::read_npz(Span::file_bytes(data), false, &[]);
    check_outcome(data, npz);
    let _ = (looks_like_npy(data), looks_like_npz(data));
}
