//! Input files: local files, read through a memory map where one can be made and through
//! `pread` otherwise, and objects in object storage (`s3://`, `https://`), read in ranges
//! ([`crate::read::remote`]).
//!
//! Long runs of bytes (hashing a whole file, a tensor) are read with `pread` into a buffer
//! even when the file is mapped: a map's touched pages count as the process's resident memory
//! (and against a container's memory limit) until it is unmapped, so hashing a 1 GiB file
//! through it would hold 1 GiB; read into a buffer, it holds one chunk. The map serves the
//! readers' small reads.
//!
//! This module holds the crate's only `unsafe`: creating the map.

use crate::base::cloud;
use crate::base::digest::hex;
use crate::base::progress::Progress;
use crate::read::remote::RemoteObject;
use sha2::{Digest, Sha256};
use socair_plugin_api::{abi_stable::std_types::RResult, ByteSource, PluginError, PluginErrorKind};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Chunk size for streaming reads and hashing: big enough to amortise calls, small enough to
/// stay in cache while a chunk is widened.
pub const CHUNK: usize = 1 << 20;

/// The longest read served from a file's map; longer ones are read with `pread`.
const MAPPED_READ_MAX: usize = 64 << 10;

/// An open input file.
pub struct InputFile {
    path: PathBuf,
    len: u64,
    backing: Backing,
}

/// Where an input's bytes come from.
enum Backing {
    /// A local file, and its map when one was made.
    Local {
        file: File,
        map: Option<memmap2::Mmap>,
    },
    /// An object in object storage.
    Remote(RemoteObject),
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
        let object = RemoteObject::open(at)?;
        Ok(InputFile {
            path: PathBuf::from(object.location().url()),
            len: object.len(),
            backing: Backing::Remote(object),
        })
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
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&end| end <= self.len)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "bytes {offset}..+{} are past the end of the {}-byte file",
                        buf.len(),
                        self.len
                    ),
                )
            })?;
        match &self.backing {
            // Small reads (headers, a zip directory) come from the map; long ones (a reader
            // checking a whole record's CRC-32) are read, so that their pages do not stay
            // resident in this process (see the module's comment).
            Backing::Local { map: Some(map), .. } if buf.len() < MAPPED_READ_MAX => {
                buf.copy_from_slice(&map[offset as usize..end as usize]);
                Ok(())
            }
            Backing::Local { file, .. } => file.read_exact_at(buf, offset),
            Backing::Remote(object) => object.read_exact_at(offset, buf),
        }
    }

    /// Calls `each` with consecutive chunks of the bytes `offset..offset+len`, at most
    /// [`CHUNK`] bytes each and a multiple of `granule` bytes except possibly the last.
    pub fn for_each_chunk(
        &self,
        offset: u64,
        len: u64,
        mut each: impl FnMut(&[u8]),
    ) -> io::Result<()> {
        let end = offset
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
            })?;
        match &self.backing {
            // Read, not mapped, whatever the map: see the module's comment on resident memory.
            Backing::Local { file, .. } => {
                let mut buf = vec![0u8; CHUNK.min(len as usize)];
                let mut at = offset;
                while at < end {
                    let n = (end - at).min(CHUNK as u64) as usize;
                    file.read_exact_at(&mut buf[..n], at)?;
                    each(&buf[..n]);
                    at += n as u64;
                }
            }
            Backing::Remote(object) => object.for_each_chunk(offset, end, CHUNK, each)?,
        }
        Ok(())
    }
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

/// Serves an [`InputFile`] to plugins through the plugin API's `ByteSource`.
impl ByteSource for InputFile {
    fn file_len(&self) -> u64 {
        self.len
    }

    fn read_at(
        &self,
        offset: u64,
        mut buf: socair_plugin_api::abi_stable::std_types::RSliceMut<'_, u8>,
    ) -> RResult<(), PluginError> {
        self.read_exact_at(offset, buf.as_mut_slice())
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
