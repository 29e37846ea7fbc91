//! The properties the fuzz target checks, shared with the regression test.

use crate::read_crfsuite;

/// The reader on arbitrary bytes: it returns, never panics, one row at least as bad as its
/// worst listed finding, and at most the weights tensor, inline, 8 bytes per feature.
pub fn check_reader(data: &[u8]) {
    let opened = read_crfsuite(data, data.len() as u64);
    assert_eq!(opened.rows.len(), 1);
    let row = &opened.rows[0];
    let worst = row
        .findings
        .iter()
        .map(|f| f.severity.row_status().badness())
        .max()
        .unwrap_or(0);
    assert!(row.status.badness() >= worst, "{row:?}");
    assert!(opened.tensors.len() <= 1);
    for t in opened.tensors.iter() {
        let inline = t.inline.as_ref().map(|b| b.len() as u64).into_option();
        assert_eq!(inline, t.shape.first().map(|n| n * 8));
        assert!(inline.unwrap_or(0) <= data.len() as u64);
    }
}
