//! The saved inputs a test replays (the fuzz regressions, the committed corpora), and the
//! one-line summary a `bounds-*` program prints of what an `open` returned. Plain functions
//! over the file system and the API's types.

use socair_plugin_api::OpenedFile;
use std::path::{Path, PathBuf};

/// Every file below `dir`, depth first and sorted; none when `dir` does not exist.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, &mut out);
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// What an `open` returned, counted: tensors (and their inline bytes), unread entries,
/// findings, metadata entries, and each row's status.
pub fn summary(opened: &OpenedFile) -> String {
    let findings: usize = opened.rows.iter().map(|r| r.findings.len()).sum();
    let inline: usize = opened
        .tensors
        .iter()
        .map(|t| t.inline.as_ref().map_or(0, |b| b.len()))
        .sum();
    let statuses: Vec<String> = opened
        .rows
        .iter()
        .map(|r| format!("{:?}", r.status))
        .collect();
    format!(
        "{} tensors ({inline} inline bytes), {} unread, {findings} findings, {} metadata, rows {statuses:?}",
        opened.tensors.len(),
        opened.unread.len(),
        opened.metadata.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use socair_plugin_api::Finding;
    use socair_plugin_kit::report::refused;

    #[test]
    fn files_and_summaries() {
        let dir =
            std::env::temp_dir().join(format!("socair-test-support-saved-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("b/2"), b"").unwrap();
        std::fs::write(dir.join("a"), b"").unwrap();
        assert_eq!(files_under(&dir), vec![dir.join("a"), dir.join("b/2")]);
        assert!(files_under(&dir.join("missing")).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
        let opened = refused(
            "x",
            "bad",
            "why".into(),
            Finding::new(socair_plugin_api::Severity::Fail, "p", "r"),
        );
        assert_eq!(
            summary(&opened),
            "0 tensors (0 inline bytes), 1 unread, 1 findings, 0 metadata, rows [\"Fail\"]"
        );
    }
}
