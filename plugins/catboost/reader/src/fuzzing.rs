//! The property the fuzz target `catboost_reader` checks, shared with the test that replays
//! every saved corpus entry and fixture (`tests/fuzz_regressions.rs`): the reader returns on any
//! bytes (never panics), and every tensor it locates lies inside the input and holds exactly its
//! shape's bytes; the claim never panics either.

use crate::{looks_like_cbm, read};

fn width(element: &str) -> u64 {
    match element {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "U16" | "I16" => 2,
        _ => 1,
    }
}

/// The reader on `data`.
pub fn check_reader(data: &[u8]) {
    let _ = looks_like_cbm(data, data.len() as u64);
    let m = read(data);
    if m.refused.is_some() {
        assert!(m.tensors.is_empty(), "a refused file locates nothing");
        return;
    }
    let len = data.len() as u64;
    for t in &m.tensors {
        let n: u64 = t.shape.iter().product();
        assert_eq!(n * width(t.element_type), t.len, "{}", t.name);
        assert!(t.offset + t.len <= len, "{}: past the input", t.name);
    }
}
