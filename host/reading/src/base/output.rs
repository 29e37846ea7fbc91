//! Writing documents: pretty JSON with a trailing newline, written atomically to a file (a
//! temporary name in the same directory, fsync, rename), so a destination path never holds a
//! half-written document.

use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Serializes `value` as pretty JSON with a trailing newline.
pub fn to_json_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("serializing plain data cannot fail");
    bytes.push(b'\n');
    bytes
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temporary(path, bytes, true)
}

/// Writes `bytes` to a new file at `path` (refusing to replace one), atomically.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temporary(path, bytes, false)
}

/// A temporary file in the same directory, written, fsynced and renamed into place (over an
/// existing file only when `replace`), then the directory fsynced.
fn write_via_temporary(path: &Path, bytes: &[u8], replace: bool) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Named after this process, so that a later run can remove it if this one is killed.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".socair-{}-", std::process::id()))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    // Documents (reports, manifests, signed envelopes, the policy) are for others to read:
    // 0644, not the 0600 a temporary file is created with. Private keys are written apart.
    // Elsewhere there is no mode: the file takes the ACLs its directory passes on (Windows).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.as_file().sync_all()?;
    if replace {
        tmp.persist(path).map_err(|e| e.error)?;
    } else {
        tmp.persist_noclobber(path).map_err(|e| e.error)?;
    }
    // Make the rename itself durable.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
