//! Symbolic-link members: a central directory entry whose external attributes hold a Unix
//! `st_mode` of type `S_IFLNK` (`0o120000` in the high 16 bits, as Info-ZIP's `zip -y` and
//! any writer that sets `ZipInfo.external_attr` write it). The member's data is the link's
//! target.
//!
//! Readers disagree on what such a member is, which is the point of naming it:
//!
//! * CPython's `zipfile` (3.11, `Lib/zipfile.py` `ZipFile._extract_member`) and therefore
//!   `shutil.unpack_archive` (`Lib/shutil.py` `_unpack_zipfile`) write the target's text as a
//!   regular file; `ZipFile.open`/`read` (how Keras reads `config.json` and its weights)
//!   return that text; torch's reader (miniz) reads the bytes too;
//! * Info-ZIP `unzip` 6.0 (`unix/unix.c` `mapattr` reads the mode from the high 16 bits;
//!   `extract.c` then `unix/unix.c` `set_symlnk`/`close_outfile` create the link) and
//!   libarchive (`archive_read_support_format_zip.c`: `AE_IFLNK` entries become symlinks,
//!   what `bsdtar -x` and most desktop extractors use) create a symbolic link whose target is
//!   that text, and whatever later opens the extracted member (a model loader reading
//!   `model.weights.h5`, `config.json`, a tokenizer) reads the file the link names.
//!
//! So a link is never plain data: one whose target leaves the extraction directory (an
//! absolute path, a drive letter, or `..` components climbing above the archive's root from
//! the link's own directory) makes an extracted model read a file of the machine (a FAIL);
//! one that stays inside still makes two extractors produce two different trees (a LEAD).
//! The mode is read whatever host the entry names: `unzip` takes the high 16 bits from
//! other hosts' entries too when they are set (`mapattr`, the `FS_FAT_` family with Unix
//! bits), and a writer chooses the host byte freely.

use super::headers::CentralHeader;

/// The file type bits of a Unix `st_mode`.
pub const S_IFMT: u32 = 0o170_000;
/// A symbolic link's type.
pub const S_IFLNK: u32 = 0o120_000;

/// Whether the entry is a symbolic link (its high 16 external-attribute bits say `S_IFLNK`).
pub fn is_symlink(h: &CentralHeader) -> bool {
    mode_is_symlink(h.external)
}

/// Whether external attributes `external` hold a Unix mode of type `S_IFLNK`.
pub fn mode_is_symlink(external: u32) -> bool {
    (external >> 16) & S_IFMT == S_IFLNK
}

/// How a link's target lies against the archive's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// It resolves inside the extraction directory.
    Inside,
    /// It leaves it; the words say how.
    Escapes(&'static str),
}

/// Judges the target `target` of the link member named `name` (both as the archive holds
/// them; `/` and `\` both separate, as Windows extractors read them).
pub fn judge(name: &[u8], target: &[u8]) -> Target {
    if target.is_empty() {
        return Target::Escapes("an empty target, which extractors resolve differently");
    }
    if target.contains(&0) {
        return Target::Escapes("a NUL byte in its target, which extractors cut differently");
    }
    if matches!(target.first(), Some(b'/' | b'\\')) {
        return Target::Escapes("an absolute target");
    }
    if target.get(1) == Some(&b':') && target.first().is_some_and(u8::is_ascii_alphabetic) {
        return Target::Escapes("a target on a drive letter");
    }
    // The link's directory, then the target's components from it.
    let seps = |b: &u8| *b == b'/' || *b == b'\\';
    let dir: Vec<&[u8]> = {
        let mut parts: Vec<&[u8]> = name.split(seps).collect();
        parts.pop();
        parts
    };
    let mut depth: i64 = 0;
    for c in dir
        .iter()
        .chain(target.split(seps).collect::<Vec<_>>().iter())
    {
        match *c {
            b"" | b"." => {}
            b".." => {
                depth -= 1;
                if depth < 0 {
                    return Target::Escapes(
                        "a target whose `..` components climb above the archive's root",
                    );
                }
            }
            _ => depth += 1,
        }
    }
    Target::Inside
}

/// The words of the finding for the link member `name` to `target`, and whether it is a
/// FAIL (its target escapes).
pub fn finding(name: &[u8], target: &[u8]) -> (bool, String) {
    let shown = String::from_utf8_lossy(&target[..target.len().min(512)]).into_owned();
    match judge(name, target) {
        Target::Escapes(how) => (true, format!("a symbolic link (Unix mode S_IFLNK in its external attributes) to {shown:?}, {how}: unzip and libarchive extract it as a link, so whatever reads the extracted member reads that file of the machine, while Python's zipfile reads the target's text as the member")),
        Target::Inside => (false, format!("a symbolic link (Unix mode S_IFLNK in its external attributes) to {shown:?}: unzip and libarchive extract it as a link to that member, Python's zipfile as a file holding the target's text, so extractors give loaders different files")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_that_leave_the_root_escape() {
        assert_eq!(judge(b"a/link", b"b/c"), Target::Inside);
        assert_eq!(judge(b"a/link", b"../b"), Target::Inside);
        assert_eq!(judge(b"a/b/link", b"../../x"), Target::Inside);
        assert!(matches!(judge(b"link", b"../x"), Target::Escapes(_)));
        assert!(matches!(judge(b"a/link", b"../../x"), Target::Escapes(_)));
        assert!(matches!(
            judge(b"a/link", b"b/../../../x"),
            Target::Escapes(_)
        ));
        assert!(matches!(judge(b"link", b"/etc/passwd"), Target::Escapes(_)));
        assert!(matches!(judge(b"link", b"\\x"), Target::Escapes(_)));
        assert!(matches!(judge(b"link", b"C:x"), Target::Escapes(_)));
        assert!(matches!(judge(b"link", b""), Target::Escapes(_)));
        assert!(matches!(judge(b"link", b"a\0b"), Target::Escapes(_)));
        assert!(matches!(
            judge(b"a\\link", b"..\\..\\x"),
            Target::Escapes(_)
        ));
        assert_eq!(judge(b"link", b"./x/./y"), Target::Inside);
    }

    #[test]
    fn the_mode_is_the_high_sixteen_bits() {
        assert!(mode_is_symlink(0o120_777 << 16));
        assert!(!mode_is_symlink(0o100_644 << 16));
        assert!(!mode_is_symlink(0o040_755 << 16 | 0x10));
        assert!(
            !mode_is_symlink(0o120_777),
            "the low bits are DOS attributes"
        );
        let (fail, why) = finding(b"model.weights.h5", b"/etc/passwd");
        assert!(fail && why.contains("/etc/passwd"), "{why}");
        let (fail, why) = finding(b"a/w.bin", b"v.bin");
        assert!(!fail && why.contains("v.bin"), "{why}");
    }
}
