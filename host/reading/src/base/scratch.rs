//! Scratch files and directories named after the process that made them
//! (`<kind><pid>-<random>`), so that a later run can tell the leftovers of a process that died
//! (killed, or the machine stopped) from those of one still running, and remove them.

use std::path::Path;

/// A scratch directory in `dir`, named `<kind><pid>-<random>`.
pub fn scratch_dir(dir: &Path, kind: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("{kind}{}-", std::process::id()))
        .tempdir_in(dir)
}

/// The process id in a scratch name: its first `-`-separated part made only of digits.
fn pid_of(name: &str) -> Option<u32> {
    name.split('-')
        .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

/// Whether process `pid` is gone: on Linux, when `/proc` holds no entry for it.
#[cfg(target_os = "linux")]
fn is_gone(pid: u32) -> bool {
    pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// Elsewhere (macOS, Windows) there is no `/proc` to ask, and a process that may still be
/// running must keep its scratch: none is taken for gone, and leftovers stay until removed by
/// hand.
#[cfg(not(target_os = "linux"))]
fn is_gone(_pid: u32) -> bool {
    false
}

/// Removes the entries of `dir` whose names start with `prefix` and hold the id of a process
/// that is gone. Nothing refers to them: they were never trusted, never renamed into place.
pub fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(prefix) else {
            continue;
        };
        if pid_of(rest).is_some_and(is_gone) {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pids_are_read_from_scratch_names() {
        assert_eq!(super::pid_of("convert-1234-aBc9"), Some(1234));
        assert_eq!(super::pid_of("pull-77-123456"), Some(77));
        assert_eq!(super::pid_of("x-abc"), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn only_the_scratch_of_gone_processes_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A pid far above any the kernel hands out (pid_max is at most 2^22).
        std::fs::create_dir(dir.path().join(".socair-convert-99999999-abc")).unwrap();
        std::fs::write(dir.path().join(".socair-99999999-x.tmp"), b"x").unwrap();
        let mine = super::scratch_dir(dir.path(), ".socair-convert-").unwrap();
        std::fs::write(dir.path().join("model.safetensors"), b"keep").unwrap();
        super::remove_stale(dir.path(), ".socair-");
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                mine.path()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                "model.safetensors".to_owned()
            ]
        );
    }
}
