//! The properties the fuzz target (`fuzz/fuzz_targets/archive_reader.rs`) checks, kept here so
//! that the tests replay every saved input through them.

use crate::{detect, opened, scan, stream, tar, SEVEN_Z_FORMAT, ZIP_FORMAT};
use socair_plugin_api::{MemberBytes, RowStatus};

/// Claims and walks `data` as the plugin would, as a zip and as a 7z archive: no panic,
/// inflation and decoding within the budget, findings bounded, members handed back inside the
/// file (a span) or within what the host let them hold (decoded), and a walk that found
/// nothing wrong says so only when every member was checked.
pub fn check_reader(data: &[u8]) {
    let head = &data[..data.len().min(4096)];
    let _ = detect::claim(head, data.len() as u64);
    let hand_back = 1 << 16;
    let scope = scan::Scope {
        hand_back,
        ..scan::Scope::data(&[])
    };
    for (a, format) in [
        (scan::scan_bytes(data, scope), ZIP_FORMAT),
        (scan::scan_7z_bytes(data, scope), SEVEN_Z_FORMAT),
    ] {
        assert!(a.inflated <= a.budget, "inflated past the budget");
        let mut decoded = 0u64;
        for h in &a.handed {
            match &h.bytes {
                scan::HandedBytes::Span { offset, len } => assert!(
                    offset
                        .checked_add(*len)
                        .is_some_and(|e| e <= data.len() as u64),
                    "a member past the file"
                ),
                scan::HandedBytes::Decoded(b) => decoded += b.len() as u64,
            }
        }
        assert!(decoded <= hand_back, "handed back past the host's budget");
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

/// Claims and reads `data` as a tar and as a compressed stream (the container readers, fuzz
/// target `container_readers`): no panic; every member handed back in place lies inside the
/// file; what a stream decodes stays within the budget it was given; a container whose row
/// passes holds no member it left unread.
pub fn check_containers(data: &[u8]) {
    let head = &data[..data.len().min(4096)];
    let _ = tar::claims(head);
    let _ = stream::claims(head, data.len() as u64);
    let budget = 1 << 20;
    for c in [tar::open(data), stream::open(data, budget)] {
        let mut decoded = 0u64;
        for m in c.members.iter() {
            match &m.bytes {
                MemberBytes::Range(r) => assert!(
                    r.offset
                        .checked_add(r.len)
                        .is_some_and(|e| e <= data.len() as u64),
                    "a member past the file"
                ),
                MemberBytes::Decoded(b) => decoded += b.len() as u64,
            }
        }
        assert!(decoded <= budget, "decoded past the budget");
        assert!(
            c.opened.rows[0].findings.len() <= socair_plugin_kit::bounded::FINDINGS_PER_ROW + 1
        );
        if c.opened.rows[0].status == RowStatus::Pass {
            assert!(!c.members.is_empty() || c.opened.format.as_str() == tar::TAR_FORMAT);
        }
    }
}
