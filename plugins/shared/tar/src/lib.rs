//! What CPython's `tarfile.open(fileobj=f, mode="r:", format=tarfile.PAX_FORMAT)` does with
//! the first bytes of a file, mirrored from `Lib/tarfile.py` without running Python.
//!
//! `torch.load` (torch/serialization.py `_legacy_load`) tries torch's oldest format first: when
//! the file is a real file at offset 0 it calls `legacy_load`, which opens the file with that
//! call, and it reads the file as pickles only when that raises a `tarfile.TarError`. So a legacy
//! pickle whose first bytes `tarfile` opens is never read as pickles by torch: it is read as a
//! tar (with `weights_only=False` torch unpickles the tar's `pickle` member, with
//! `weights_only=True` it refuses the file). And when `tarfile.open` raises anything else
//! (`ValueError`, `IndexError`, `OverflowError`, `MemoryError`, `RecursionError`), torch.load
//! fails before it reads any pickle.
//!
//! Only the first member matters: `TarFile.__init__` reads it with `TarFile.next`, and at offset
//! 0 `next` turns `InvalidHeaderError`, `EmptyHeaderError` and `TruncatedHeaderError` into
//! `ReadError` (a `TarError`) only while `TarFile.offset` is still 0, turns every
//! `SubsequentHeaderError` into `ReadError`, treats an all-NUL block (`EOFHeaderError`) as an
//! empty archive that opens, and lets every other exception through. The first member is read
//! by `TarInfo.fromtarfile` → `frombuf` (checksum, numeric fields through `nti`) →
//! `_proc_member`: GNU long names and links, GNU sparse headers, pax extended and global headers
//! (each reading the next header recursively), and `_proc_builtin`.
//!
//! CPython changed this code over the versions torch runs on; each [`Profile`] is one
//! behaviour, and [`cpython_tarfile_opens`] takes them all: if any supported Python opens the
//! bytes as a tar, they are a tar. Reads follow `io.BytesIO` (what the differential test feeds
//! CPython); where a real file object (what torch passes) would differ — a buffered read of far
//! more than the file holds allocates the request first and may raise `MemoryError` — the
//! verdict says so. Every read is bounded by the file, nesting by [`MAX_DEPTH`].
//!
//! This file holds the verdict over every profile; the parts apart are the profiles
//! (`profile`), one `tarfile.open` under one profile with the chain of headers it reads and
//! the walk over every member `TarFile.getmembers` lists (`open`), one header block as
//! `frombuf` reads it (`header`), pax extended headers (`pax`), Python's exceptions and
//! `int()` as far as the model needs them (`py`). torch's tar checkpoint, read from those
//! members, is the torch-zip reader's (`tar_checkpoint`).

mod header;
mod open;
mod pax;
mod profile;
mod py;
#[cfg(test)]
mod tests;

use open::run;
pub use open::{open_outcome, walk, Opening, TarMember, WalkEnd, HUGE_READ, MAX_DEPTH};
pub use profile::{profile_for, Profile, PROFILES};
pub use py::python_int_of_bytes;

use socair_plugin_api::ReadAt;

/// What torch does with the bytes, over every supported CPython.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TarVerdict {
    /// Every supported CPython raises a `TarError`: torch.load goes on to read the pickles.
    NotTar,
    /// Some supported CPython opens the bytes as a tar archive.
    Tar {
        /// Which releases do.
        profiles: Vec<&'static str>,
    },
    /// None opens it, but some raises an exception that is not a `TarError`: torch.load
    /// fails before reading any pickle.
    Raises {
        /// The exception and where it comes from.
        exception: String,
        /// Which releases raise it.
        profiles: Vec<&'static str>,
    },
}

/// The verdict over every supported CPython for a file's bytes (or the file's first bytes: the
/// model reads only what `tarfile` would).
pub fn cpython_tarfile_opens(head: &[u8]) -> TarVerdict {
    tarfile_verdict(head)
}

/// [`cpython_tarfile_opens`] over any byte source.
pub fn tarfile_verdict(src: &(impl ReadAt + ?Sized)) -> TarVerdict {
    let mut opened = Vec::new();
    let mut raised: Vec<(&'static str, String)> = Vec::new();
    for profile in PROFILES {
        let (outcome, huge_read) = run(src, *profile);
        match outcome {
            Opening::Opened { .. } => opened.push(profile.name),
            Opening::Raises { exception, why } => {
                raised.push((profile.name, format!("{exception} ({why})")))
            }
            Opening::ReadError(_) if huge_read => raised.push((
                profile.name,
                format!("MemoryError (a read of {HUGE_READ} bytes or more past the end of the file, which CPython's buffered file read allocates before reading)"),
            )),
            Opening::ReadError(_) => {}
        }
    }
    if !opened.is_empty() {
        TarVerdict::Tar { profiles: opened }
    } else if let Some((_, first)) = raised.first() {
        TarVerdict::Raises {
            exception: first.clone(),
            profiles: raised.iter().map(|(p, _)| *p).collect(),
        }
    } else {
        TarVerdict::NotTar
    }
}

/// The member names torch 0.1 wrote to its tar checkpoints (`_save`: `sys_info`, `pickle`,
/// `tensors`, `storages`): a tar holding one is torch's oldest format, which the torch readers
/// claim and the archive reader leaves to them.
pub const TORCH_MEMBERS: &[&[u8]] = &[b"sys_info", b"pickle", b"tensors", b"storages"];

/// Whether the first bytes of a file are a tar archive whose members (those whose headers lie
/// in `head`) include one of torch 0.1's ([`TORCH_MEMBERS`]), under any CPython profile.
pub fn looks_like_torch_tar(head: &[u8]) -> bool {
    PROFILES.iter().any(|&profile| {
        let (members, _) = walk(head, profile, 64);
        members
            .iter()
            .any(|m| TORCH_MEMBERS.contains(&m.name.as_slice()))
    })
}

/// Two CPython releases that list an archive's members differently ([`members_agreed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagree {
    /// The first release's profile.
    pub first: &'static str,
    /// A release that lists them otherwise.
    pub other: &'static str,
}

/// The members every supported CPython release lists (at most `max`), walked under each
/// profile; `Err` naming two releases that list them differently (what is extracted, or
/// unpickled, then depends on the Python that reads the archive).
pub fn members_agreed(
    src: &(impl ReadAt + ?Sized),
    max: usize,
) -> Result<(Vec<TarMember>, WalkEnd), Disagree> {
    let mut first: Option<(&'static str, Vec<TarMember>, WalkEnd)> = None;
    for &profile in PROFILES {
        let (members, end) = walk(src, profile, max);
        match &first {
            None => first = Some((profile.name, members, end)),
            Some((name, m, e)) if *m != members || *e != end => {
                return Err(Disagree {
                    first: name,
                    other: profile.name,
                })
            }
            Some(_) => {}
        }
    }
    // PROFILES is never empty; an empty walk if it were.
    Ok(first.map_or_else(|| (Vec::new(), WalkEnd::End), |(_, m, e)| (m, e)))
}
