//! The properties the fuzz target checks, shared with the regression test.

use crate::{native, yaml};
use socair_plugin_api::RowStatus;

/// The YAML judge and the executable magic on arbitrary bytes: they return, never panic; the
/// YAML row's status is the worst finding's; a row that FAILs lists a FAIL first; every
/// listed finding names its place; and a file the magic calls native starts with one of the
/// magics.
pub fn check_reader(data: &[u8]) {
    let judged = yaml::judge(data);
    let opened = yaml::opened_file(&judged);
    assert_eq!(opened.rows.len(), 1);
    let row = &opened.rows[0];
    if judged.unread.is_none() {
        assert_eq!(row.status, judged.findings.status());
        assert!(row.findings.len() <= socair_plugin_kit::bounded::FINDINGS_PER_ROW + 34);
    }
    if row.status == RowStatus::Fail {
        assert_eq!(row.findings[0].severity, socair_plugin_api::Severity::Fail);
    }
    assert!(row.findings.iter().all(|f| !f.place.is_empty()));
    if let Some(n) = native::identify_head(data, data.len() as u64) {
        assert!(
            data.starts_with(b"\x7fELF")
                || data.starts_with(b"MZ")
                || data.starts_with(&[0xca, 0xfe, 0xba])
                || matches!(
                    data.get(..4),
                    Some([0xfe, 0xed, 0xfa, 0xce | 0xcf] | [0xce | 0xcf, 0xfa, 0xed, 0xfe])
                ),
            "{}",
            n.what
        );
        assert_eq!(native::identify(data), Some(n));
    }
}
