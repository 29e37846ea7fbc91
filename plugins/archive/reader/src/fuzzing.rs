//! The properties the fuzz target (`fuzz/fuzz_targets/archive_reader.rs`) checks, kept here so
//! that the tests replay every saved input through them.

use crate::{detect, opened, scan, SEVEN_Z_FORMAT, ZIP_FORMAT};
use socair_plugin_api::RowStatus;

/// Claims and walks `data` as the plugin would, as a zip and as a 7z archive: no panic,
/// inflation and decoding within the budget, findings bounded, and a walk that found nothing
/// wrong says so only when every member was checked.
pub fn check_reader(data: &[u8]) {
    let head = &data[..data.len().min(4096)];
    let _ = detect::claim(head, data.len() as u64);
    for (a, format) in [
        (scan::scan_bytes(data, scan::Scope::data(&[])), ZIP_FORMAT),
        (
            scan::scan_7z_bytes(data, scan::Scope::data(&[])),
            SEVEN_Z_FORMAT,
        ),
    ] {
        assert!(a.inflated <= a.budget, "inflated past the budget");
        for list in [&a.structure, &a.unchecked, &a.pickle] {
            assert!(list.shown.len() <= socair_plugin_kit::bounded::FINDINGS_PER_ROW);
        }
        let opened = opened(&a, format);
        assert!(opened.tensors.is_empty());
        if opened.rows[0].status == RowStatus::Pass {
            assert!(a.structure.worst.is_none() && a.unchecked.worst.is_none());
            assert!(a.archives + a.sevenz_archives >= 1);
        }
    }
}
