//! The properties the fuzz targets check, shared with the test that replays every saved
//! corpus entry and crash (`tests/fuzz_regressions.rs`), so that CI checks exactly what the
//! fuzzer checked.

use crate::header::parse_header;
use crate::writer::{inputs_of, plan};

/// The reader on arbitrary bytes: it returns (never panics), and what it accepts has every
/// tensor inside the file and the data section owned exactly.
pub fn check_reader(data: &[u8]) {
    if let Ok(h) = parse_header(data, data.len() as u64) {
        let data_len = data.len() as u64 - h.data_start();
        let mut spans: Vec<(u64, u64)> = h.tensors.iter().map(|t| (t.begin, t.end)).collect();
        spans.sort_unstable();
        let mut at = 0;
        for (begin, end) in spans {
            assert_eq!(begin, at, "accepted a hole or an overlap");
            assert!(end >= begin);
            at = end;
        }
        assert_eq!(at, data_len, "accepted bytes no tensor owns");
    }
}

/// Whatever the reader accepts, the writer re-plans into a file the reader accepts again, with
/// the same tensors and metadata.
pub fn check_writer_round_trip(data: &[u8]) {
    let Ok(h) = parse_header(data, data.len() as u64) else {
        return;
    };
    let (tensors, metadata) = inputs_of(&h);
    let p = plan(&tensors, &metadata).expect("an accepted header re-plans");
    let mut file = p.header.clone();
    file.resize(
        usize::try_from(p.total_len).expect("fits: it came from memory"),
        0,
    );
    let again = parse_header(&file, file.len() as u64).expect("the writer's output parses");
    let mut before: Vec<_> = h
        .tensors
        .iter()
        .map(|t| (&t.name, t.dtype, &t.shape))
        .collect();
    let mut after: Vec<_> = again
        .tensors
        .iter()
        .map(|t| (&t.name, t.dtype, &t.shape))
        .collect();
    before.sort();
    after.sort();
    assert_eq!(before, after);
    assert_eq!(again.metadata.unwrap_or_default(), metadata);
}
