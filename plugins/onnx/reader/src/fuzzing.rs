//! The property the fuzz target checks, shared with the test that replays every saved corpus
//! entry and crash (`tests/fuzz_regressions.rs`), so that CI checks exactly what the fuzzer
//! checked.

use crate::model::parse;

/// The reader on arbitrary bytes: it returns (never panics); every tensor it locates in the
/// file lies inside it and holds exactly its shape's bytes, or has exactly those bytes
/// decoded (`inline`, with no range), all decoded bytes together at most 8 times the input;
/// external locations are plain relative paths; and detection never claims what the reader
/// refuses outright as too short.
pub fn check_reader(data: &[u8]) {
    let _ = crate::looks_like_onnx(data, data.len() as u64);
    let Ok(model) = parse(bytes::Bytes::copy_from_slice(data)) else {
        return;
    };
    let decoded: u64 = model
        .tensors
        .iter()
        .map(|t| t.inline.as_ref().map_or(0, |b| b.len() as u64))
        .sum();
    assert!(decoded <= 8 * data.len() as u64, "{decoded} bytes decoded");
    for t in &model.tensors {
        let (_, width) = crate::model::data_type_width(t.dtype).expect("a known element type");
        let elements = t
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .expect("checked");
        if let Some(bytes) = &t.inline {
            assert!(t.ranges.is_empty() && t.file.is_none(), "{}", t.name);
            assert_eq!(
                bytes.len() as u64,
                elements * width,
                "{}: decoded bytes",
                t.name
            );
            continue;
        }
        let total: u64 = t.ranges.iter().map(|r| r.1).sum();
        assert_eq!(
            total,
            elements * width,
            "{}: ranges do not hold the shape",
            t.name
        );
        assert!(!t.ranges.is_empty());
        match &t.file {
            None => {
                for &(offset, len) in &t.ranges {
                    assert!(
                        offset + len <= data.len() as u64,
                        "{}: range past the end",
                        t.name
                    );
                }
            }
            Some(f) => assert!(crate::model::check_location(f).is_ok()),
        }
    }
}
