//! The property the fuzz target `native_readers` checks: every reader returns on arbitrary
//! bytes (never panics); every tensor it locates lies inside the input and holds exactly its
//! shape's bytes, or has those bytes decoded, all decoded bytes together at most 8 times the
//! input.

use crate::model_read::{Bytes, ModelRead};

fn width(element: &str) -> u64 {
    match element {
        "C128" => 16,
        "F64" | "I64" | "U64" | "C64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        _ => 1,
    }
}

fn check(o: &ModelRead, len: u64) {
    let mut decoded = 0u64;
    for t in &o.tensors {
        let n = t
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .expect("shape");
        let bytes = n * width(t.element_type);
        match &t.bytes {
            Bytes::Range { offset, len: l } => {
                assert_eq!(*l, bytes, "{}", t.name);
                assert!(offset + l <= len, "{}: past the input", t.name);
            }
            Bytes::Inline(b) => {
                assert_eq!(b.len() as u64, bytes, "{}", t.name);
                decoded += bytes;
            }
        }
    }
    assert!(
        decoded <= 8 * len.max(1),
        "{decoded} bytes decoded from {len}"
    );
}

/// Every reader (and every claim) on `data`.
pub fn check_readers(data: &[u8]) {
    let len = data.len() as u64;
    let _ = crate::xgboost::looks_like_json(data);
    let _ = crate::xgboost::looks_like_ubj(data);
    let _ = crate::lightgbm::looks_like_model(data);
    let _ = crate::flax::looks_like_state(data);
    check(&crate::xgboost::read_json(data), len);
    check(&crate::xgboost::read_ubj(data), len);
    check(&crate::xgboost::read_snapshot(data), len);
    check(&crate::lightgbm::read(data), len);
    check(&crate::flax::read(data), len);
}
