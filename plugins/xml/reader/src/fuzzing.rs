//! The properties the fuzz target checks, shared with the regression test.

use crate::{read_opencv_storage, read_openvino, read_pmml};

/// The three readers on arbitrary bytes: they return, never panic; every tensor located lies in
/// the weights file at a range that does not overflow; a row is at least as bad as its worst
/// listed finding (a finding past the listed ones may make it worse); the claims return.
pub fn check_reader(data: &[u8]) {
    for opened in [
        read_openvino(data),
        read_pmml(data),
        read_opencv_storage(data),
    ] {
        assert_eq!(opened.rows.len(), 1);
        let row = &opened.rows[0];
        let worst = row
            .findings
            .iter()
            .map(|f| f.severity.row_status().badness())
            .max()
            .unwrap_or(0);
        assert!(row.status.badness() >= worst, "{row:?}");
        for t in opened.tensors.iter() {
            assert_eq!(
                t.file.as_ref().map(|f| f.as_str()).into_option(),
                Some(crate::openvino::constants::WEIGHTS_FILE)
            );
            for r in t.ranges.iter() {
                assert!(r.offset.checked_add(r.len).is_some());
            }
        }
        assert!(
            opened.tensors.len() as u64
                <= socair_plugin_kit::bounded::described_limit(data.len() as u64)
        );
    }
    let _ = (
        crate::looks_like_openvino(data),
        crate::looks_like_pmml(data),
        crate::looks_like_opencv_storage(data),
    );
}
