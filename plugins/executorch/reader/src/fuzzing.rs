//! The properties the fuzz target checks, shared with the test that replays every saved
//! corpus entry and crash (`tests/fuzz_regressions.rs`), so that CI checks exactly what the
//! fuzzer checked.

use crate::program::read;

/// The reader on arbitrary bytes: it returns (never panics); every constant it locates lies
/// inside the file; a refusal is a FAIL with a finding; and the plugin's report is built.
pub fn check_reader(data: &[u8]) {
    let r = read(data, data.len() as u64);
    for c in &r.constants {
        let end = c.offset.checked_add(c.len).expect("no overflow");
        assert!(end <= data.len() as u64, "a constant past the end");
    }
    if r.stopped && r.findings.worst == Some(socair_plugin_kit::model::Severity::Fail) {
        assert!(r.constants.is_empty() || !r.findings.shown.is_empty());
    }
    let opened = crate::opened_file(r);
    assert_eq!(opened.rows.len(), 1);
}
