//! The properties the fuzz target (`fuzz/fuzz_targets/archive_reader.rs`) checks, kept here so
//! that the tests replay every saved input through them.

use crate::{detect, opened_zip, scan};
use socair_plugin_api::RowStatus;

/// Claims and walks `data` as the plugin would: no panic, inflation within the budget, findings
/// bounded, and a walk that found nothing wrong says so only when every member was checked.
pub fn check_reader(data: &[u8]) {
    let head = &data[..data.len().min(4096)];
    let _ = detect::claim(head, data.len() as u64);
    let a = scan::scan_bytes(data, &[]);
    assert!(a.inflated <= a.budget, "inflated past the budget");
    for list in [&a.structure, &a.unchecked, &a.pickle] {
        assert!(list.shown.len() <= scan::MAX_LISTED);
    }
    let opened = opened_zip(&a);
    assert!(opened.tensors.is_empty());
    if opened.rows[0].status == RowStatus::Pass {
        assert!(a.structure.worst.is_none() && a.unchecked.worst.is_none());
        assert!(a.archives >= 1);
    }
}
