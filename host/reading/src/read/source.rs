//! Input files: local files, read through a memory map where one can be made and through
//! `pread` otherwise, and objects in object storage (`s3://`, `https://`), read in ranges
//! ([`crate::read::remote`]).
//!
//! Long runs of bytes (hashing a whole file, a tensor) are read with `pread` into a buffer
//! even when the file is mapped: a map's touched pages count as the process's resident memory
//! (and against a container's memory limit) until it is unmapped, so hashing a 1 GiB file
//! through it would hold 1 GiB; read into a buffer, it holds one chunk. Giving the pages back
//! as a walk goes (`MADV_DONTNEED`) bounds that too, but SHA-256 reading the map directly ran
//! 39% slower per byte here (perf, 1 GiB in the page cache, one core) than on the chunk
//! `pread` leaves in the cache: the copy costs less than it saves. The map serves the readers'
//! small reads.
//!
//! This module holds the crate's only `unsafe`: creating the map.

use crate::base::cloud;
use crate::base::digest::hex;
use crate::base::pread;
use crate::base::progress::Progress;
use crate::read::remote::RemoteObject;
use crate::read::tap::{PartialDigest, Tap};
use sha2::{Digest, Sha256};
use socair_plugin_api::{abi_stable::std_types::RResult, ByteSource, PluginError, PluginErrorKind};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Chunk size for streaming reads and hashing: big enough to amortise calls, small enough that
/// a chunk stays in the core's cache while it is hashed, widened or written (SHA-256 of 1 GiB
/// read in 1 MiB pieces took 0.77-0.91 s here, in 256 KiB pieces 0.68-0.77 s).
pub const CHUNK: usize = 256 << 10;

/// The longest read served from a file's map; longer ones are read with `pread`.
const MAPPED_READ_MAX: usize = 64 << 10;

/// An open input file.
pub struct InputFile {
    path: PathBuf,
    len: u64,
    backing: Backing,
    /// The digest its readers' reads compute, once started ([`crate::read::tap`]).
    tap: Tap,
}

/// Where an input's bytes come from.
enum Backing {
    /// A local file, and its map when one was made.
    Local {
        file: File,
        map: Option<memmap2::Mmap>,
    },
    /// An object in object storage.
    Remote(Box<RemoteObject>),
}

impl std::fmt::Debug for InputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .field(
                "backing",
                &match &self.backing {
                    Backing::Local { map, .. } if map.is_some() => "mapped",
                    Backing::Local { .. } => "read",
                    Backing::Remote(_) => "object storage",
                },
            )
            .finish()
    }
}

/// Whether `path` is the URL of an object (`s3://`, `https://`, `http://`) rather than a
/// local path.
pub fn is_remote(path: &Path) -> bool {
    path.to_str().is_some_and(cloud::is_url)
}

impl InputFile {
    /// Opens `path` read-only and maps it when possible.
    pub fn open(path: &Path) -> io::Result<InputFile> {
        InputFile::open_with(path, true)
    }

    /// Opens the object at `url`.
    pub fn open_remote(url: &str) -> io::Result<InputFile> {
        let at = cloud::parse(url).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(InputFile::of_object(RemoteObject::open(at)?))
    }

    /// Opens the object at `url`, whose size a request just gave (no second request for it).
    pub fn open_remote_of_size(url: &str, len: u64) -> io::Result<InputFile> {
        let at = cloud::parse(url).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(InputFile::of_object(RemoteObject::of_size(at, len)))
    }

    fn of_object(object: RemoteObject) -> InputFile {
        InputFile {
            path: PathBuf::from(object.location().url()),
            len: object.len(),
            backing: Backing::Remote(Box::new(object)),
            tap: Tap::default(),
        }
    }

    /// Opens `path` read-only, mapped only when `map` is set (an object's URL is read in
    /// ranges). Streaming copies read through a buffer instead: a map's touched pages count
    /// as the process's resident memory, and a copy has no use for them once written.
    pub fn open_with(path: &Path, map: bool) -> io::Result<InputFile> {
        if let Some(url) = path.to_str().filter(|p| cloud::is_url(p)) {
            return InputFile::open_remote(url);
        }
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let len = meta.len();
        let map = if !map || len == 0 || std::env::var_os("SOCAIR_NO_MMAP").is_some() {
            None
        } else {
            map_file(&file)
        };
        Ok(InputFile {
            path: path.to_owned(),
            len,
            backing: Backing::Local { file, map },
            tap: Tap::default(),
        })
    }

    /// Another handle on the open local file (none for an object in object storage): a
    /// loader maps the very file that was read, not whatever its path names by then.
    pub fn try_clone_file(&self) -> Option<io::Result<File>> {
        match &self.backing {
            Backing::Local { file, .. } => Some(file.try_clone()),
            Backing::Remote(_) => None,
        }
    }

    /// Whether it is an object in object storage.
    pub fn is_remote(&self) -> bool {
        matches!(self.backing, Backing::Remote(_))
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its length when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fills `buf` from `offset`; an error if the bytes do not all exist.
    pub fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = self.check_range(offset, buf.len() as u64)?;
        match &self.backing {
            // Small reads (headers, a zip directory) come from the map; long ones (a reader
            // checking a whole record's CRC-32) are read, so that their pages do not stay
            // resident in this process (see the module's comment).
            Backing::Local { map: Some(map), .. } if buf.len() < MAPPED_READ_MAX => {
                buf.copy_from_slice(&map[offset as usize..end as usize]);
                Ok(())
            }
            Backing::Local { file, .. } => pread::read_exact_at(file, buf, offset),
            Backing::Remote(object) => object.read_exact_at(offset, buf),
        }
    }

    /// Calls `each` with consecutive chunks of the bytes `offset..offset+len`, at most
    /// [`CHUNK`] bytes each and a multiple of `granule` bytes except possibly the last.
    pub fn for_each_chunk(&self, offset: u64, len: u64, each: impl FnMut(&[u8])) -> io::Result<()> {
        let end = self.check_range(offset, len)?;
        match &self.backing {
            // Read, not mapped, whatever the map: see the module's comment.
            Backing::Local { file, .. } => in_chunks(
                offset,
                end,
                |at, buf| pread::read_exact_at(file, buf, at),
                each,
            )?,
            Backing::Remote(object) => object.for_each_chunk(offset, end, CHUNK, each)?,
        }
        Ok(())
    }

    /// Says which ranges `(offset, len)` a reader is about to read: an object in object
    /// storage fetches them together ([`RemoteObject::prefetch`]); a local file needs nothing.
    pub fn prefetch(&self, ranges: &[(u64, u64)]) {
        if let Backing::Remote(object) = &self.backing {
            object.prefetch(ranges);
        }
    }

    /// Before a reader opens it: when it is a zip in object storage, the local headers its
    /// central directory lists (which a zip reader reads one after another) are fetched
    /// together, once ([`crate::read::zip_hints`]).
    pub fn prefetch_zip_headers(&self) {
        let Backing::Remote(object) = &self.backing else {
            return;
        };
        if object.len() <= crate::read::remote::WHOLE_OBJECT || object.announced() {
            return;
        }
        let hints =
            crate::read::zip_hints::local_headers(self.len, |at, buf| self.read_exact_at(at, buf));
        object.prefetch(&hints.unwrap_or_default());
    }
}

impl InputFile {
    /// An error unless `offset..offset+len` lies in the file; else where it ends.
    fn check_range(&self, offset: u64, len: u64) -> io::Result<u64> {
        offset
            .checked_add(len)
            .filter(|&end| end <= self.len)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "bytes {offset}..+{len} are past the end of the {}-byte file",
                        self.len
                    ),
                )
            })
    }
}

impl InputFile {
    /// Starts computing its SHA-256 from the bytes readers read through it
    /// ([`crate::read::tap`]): a reader's reads then hash them as they go.
    pub fn start_digest(&self) {
        self.tap.start(self.len);
    }

    /// Stops hashing the readers' reads, and gives the hash they computed so far, to be
    /// finished ([`InputFile::finish_digest`]); one from the first byte if none was started.
    pub fn take_digest(&self) -> PartialDigest {
        self.tap.take(self.len)
    }

    /// The file's hex SHA-256: `partial` (its first bytes' hash, [`InputFile::take_digest`])
    /// continued with the rest of the file.
    pub fn finish_digest(&self, partial: &PartialDigest) -> io::Result<String> {
        let from = partial.hashed().min(self.len);
        partial.finish_with(|each| {
            if !self.is_remote() {
                return self.for_each_chunk(from, self.len - from, each);
            }
            // Through the object's cache and read-ahead: what a reader fetched last (a zip's
            // central directory, at the end) is not fetched again.
            in_chunks(from, self.len, |at, buf| self.read_exact_at(at, buf), each)
        })
    }
}

/// Calls `each` with the bytes `offset..end` in consecutive pieces of at most [`CHUNK`]
/// bytes, each filled by `read(at, buf)` into one buffer.
fn in_chunks(
    offset: u64,
    end: u64,
    read: impl Fn(u64, &mut [u8]) -> io::Result<()>,
    mut each: impl FnMut(&[u8]),
) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK.min(end.saturating_sub(offset) as usize)];
    let mut at = offset;
    while at < end {
        let n = (end - at).min(CHUNK as u64) as usize;
        read(at, &mut buf[..n])?;
        each(&buf[..n]);
        at += n as u64;
    }
    Ok(())
}

#[allow(unsafe_code)]
fn map_file(file: &File) -> Option<memmap2::Mmap> {
    // SAFETY: the map is read-only and private to this process, and only ever read as bytes.
    // What memmap2 cannot promise is that no other process truncates or rewrites the file while
    // it is mapped: a truncation would raise SIGBUS and a rewrite would change the bytes under
    // us. socair reads files that are at rest (the airlock store copies artifacts before it
    // reads them); a concurrent writer is outside what it promises, as for ripgrep and the
    // safetensors loaders that map files the same way. Mapping is skipped with SOCAIR_NO_MMAP.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    // Sequential access is the common pattern; the advice only tunes read-ahead.
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

/// Bytes in memory served to plugins as a file (a probe the host builds itself).
#[derive(Debug, Clone)]
pub struct MemoryBytes(pub Vec<u8>);

impl ByteSource for MemoryBytes {
    fn file_len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(
        &self,
        offset: u64,
        mut buf: socair_plugin_api::abi_stable::std_types::RSliceMut<'_, u8>,
    ) -> RResult<(), PluginError> {
        let out = buf.as_mut_slice();
        let slice = usize::try_from(offset)
            .ok()
            .and_then(|start| self.0.get(start..start.checked_add(out.len())?));
        match slice {
            Some(bytes) => {
                out.copy_from_slice(bytes);
                RResult::ROk(())
            }
            None => RResult::RErr(PluginError::new(
                PluginErrorKind::Io,
                format!("{} bytes at {offset} lie past the end", out.len()),
            )),
        }
    }
}

/// The most ranges one hint from a plugin names, and the most bytes of each taken from it: a
/// hint comes from a reader reading a hostile file. The remote object fetches a hint's first
/// batch at once and the rest only as reads reach them ([`RemoteObject::prefetch`]), so a
/// hint never makes the host fetch much more than the reads it announces would.
const HINT_RANGES: usize = 16 << 10;
const HINT_RANGE_BYTES: u64 = 4 << 10;

/// Serves an [`InputFile`] to plugins through the plugin API's `ByteSource`.
impl ByteSource for InputFile {
    fn file_len(&self) -> u64 {
        self.len
    }

    fn prefetch(
        &self,
        ranges: socair_plugin_api::abi_stable::std_types::RSlice<
            '_,
            socair_plugin_api::abi_stable::std_types::Tuple2<u64, u64>,
        >,
    ) -> bool {
        let Backing::Remote(_) = &self.backing else {
            return false;
        };
        let ranges: Vec<(u64, u64)> = ranges
            .iter()
            .take(HINT_RANGES)
            .map(|r| (r.0, r.1.min(HINT_RANGE_BYTES)))
            .collect();
        self.prefetch(&ranges);
        true
    }

    fn read_at(
        &self,
        offset: u64,
        mut buf: socair_plugin_api::abi_stable::std_types::RSliceMut<'_, u8>,
    ) -> RResult<(), PluginError> {
        let out = buf.as_mut_slice();
        self.tap
            .before_read(offset, |at, gap| self.read_exact_at(at, gap));
        self.read_exact_at(offset, out)
            .map(|()| self.tap.after_read(offset, out))
            .map_err(|e| PluginError::new(PluginErrorKind::Io, e.to_string()))
            .into()
    }
}

/// Hex SHA-256 of a whole file, streamed (with a progress bar when it is large).
pub fn hash_file(file: &InputFile) -> io::Result<String> {
    hash_file_counted(file, &Progress::bytes(file.len(), "hashing"))
}

/// Hex SHA-256 of a whole file, streamed, counting its bytes into `progress`.
pub fn hash_file_counted(file: &InputFile, progress: &Progress) -> io::Result<String> {
    let mut h = Sha256::new();
    file.for_each_chunk(0, file.len(), |chunk| {
        h.update(chunk);
        progress.add(chunk.len() as u64);
    })?;
    Ok(hex(&h.finalize()))
}

/// Hex SHA-256 of the file at `path`, streamed.
pub fn sha256_of_path(path: &Path) -> io::Result<String> {
    hash_file(&InputFile::open(path)?)
}

/// The companion rules (`socair_plugin_kit::companion`) read a file the host opened through
/// this: its length, its first bytes, all of it.
impl socair_plugin_kit::companion::Contents for InputFile {
    fn len(&self) -> u64 {
        InputFile::len(self)
    }
    fn head(&self, buf: &mut [u8]) -> Result<(), String> {
        self.read_exact_at(0, buf).map_err(|e| e.to_string())
    }
    fn all(&self) -> Result<std::borrow::Cow<'_, [u8]>, String> {
        let mut bytes = vec![0u8; InputFile::len(self) as usize];
        self.read_exact_at(0, &mut bytes)
            .map_err(|e| e.to_string())?;
        Ok(std::borrow::Cow::Owned(bytes))
    }
}

#[cfg(test)]
mod tap_tests {
    //! The digest computed from readers' reads ([`crate::read::tap`]), through a file.
    use super::*;
    use crate::base::digest::hex;
    use crate::read::tap::GAP_FILL;
    use sha2::{Digest, Sha256};
    use socair_plugin_api::{
        abi_stable::{sabi_trait::TD_Opaque, sabi_types::RRef, std_types::RSliceMut},
        ByteSource_TO,
    };

    /// Reads `(offset, len)` as a reader does, in the order given, then finishes the digest.
    fn digest_after(data: &[u8], reads: &[(u64, usize)]) -> (String, u64) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, data).unwrap();
        let input = InputFile::open(f.path()).unwrap();
        input.start_digest();
        let source = ByteSource_TO::from_ptr(RRef::new(&input), TD_Opaque);
        for &(offset, len) in reads {
            let mut buf = vec![0u8; len];
            let got = source
                .read_at(offset, RSliceMut::from_mut_slice(&mut buf))
                .into_result();
            if (offset as usize + len) <= data.len() {
                got.unwrap();
                assert_eq!(buf, data[offset as usize..offset as usize + len]);
            } else {
                assert!(got.unwrap_err().message.contains("past the end"));
            }
        }
        // The host's own reads are not the reader's: they leave the hash alone.
        let mut head = [0u8; 1];
        input.read_exact_at(0, &mut head).unwrap();
        let partial = input.take_digest();
        (input.finish_digest(&partial).unwrap(), partial.hashed())
    }

    #[test]
    fn the_digest_is_the_files_whatever_the_reads() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let want = hex(&Sha256::digest(&data));
        let len = data.len() as u64;
        // What, the reads `(offset, len)`, and how many first bytes they leave hashed.
        type Case = (&'static str, Vec<(u64, usize)>, u64);
        let cases: Vec<Case> = vec![
            ("nothing read", vec![], 0),
            (
                "in order",
                vec![(0, 1 << 20), (1 << 20, 1 << 20), (2 << 20, 10)],
                (2 << 20) + 10,
            ),
            // A zip: its end first (far ahead: only served), then each record with a small
            // gap before it (filled), a re-read behind (nothing new), overlapping reads.
            (
                "like a zip",
                vec![
                    (len - 100, 100),
                    (0, 30),
                    (40, 500_000),
                    (100, 50),
                    (500_000, 1000),
                    (510_000, 600_000),
                ],
                1_110_000,
            ),
            (
                "a jump past the gap limit",
                vec![(0, 10), (10 + GAP_FILL + 1, 5)],
                10,
            ),
            ("a read past the end", vec![(0, 10), (len - 5, 10)], 10),
            ("everything", vec![(0, data.len())], len),
        ];
        for (what, reads, hashed) in cases {
            let (got, at) = digest_after(&data, &reads);
            assert_eq!(got, want, "{what}");
            assert_eq!(at, hashed, "{what}: bytes hashed as they were read");
        }
    }

    #[test]
    fn without_a_start_the_digest_is_of_the_whole_file() {
        let data = b"0123456789".to_vec();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, &data).unwrap();
        let input = InputFile::open(f.path()).unwrap();
        let partial = input.take_digest();
        assert_eq!(partial.hashed(), 0);
        assert_eq!(
            input.finish_digest(&partial).unwrap(),
            hex(&Sha256::digest(&data))
        );
    }
}
