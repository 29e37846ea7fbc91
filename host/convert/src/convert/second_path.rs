//! The second path through a zip input: the `zip` crate reads a tensor's storage record
//! (checking its CRC-32) independently of the plugin that located it, so verification and a
//! reviewer's recheck do not take the first reader's word.

use crate::base::digest::hex;
use crate::read::layout::{self, Strided};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// A zip archive opened once for the second path; [`SecondPath::hash`] may be called from many
/// threads, each reading through its own clone (the central directory is shared, not re-read:
/// re-reading it per tensor made checkpoints of many tensors quadratic).
#[derive(Clone, Debug)]
pub struct SecondPath {
    archive: zip::ZipArchive<SharedFile>,
    path: std::path::PathBuf,
}

impl SecondPath {
    /// Opens `zip_path` with the `zip` crate.
    pub fn open(zip_path: &Path) -> Result<Self, String> {
        let f =
            std::fs::File::open(zip_path).map_err(|e| format!("{}: {e}", zip_path.display()))?;
        let archive = zip::ZipArchive::new(SharedFile {
            file: std::sync::Arc::new(f),
            pos: 0,
        })
        .map_err(|e| format!("{}: the zip crate cannot read it: {e}", zip_path.display()))?;
        Ok(Self {
            archive,
            path: zip_path.to_owned(),
        })
    }

    /// Reads `len` bytes at `offset` of `record` with the `zip` crate, handing them to `use_bytes`
    /// as a reader, then reads the rest of the record so the crate checks its CRC-32.
    pub fn with_record<T>(
        &self,
        record: &str,
        offset: u64,
        len: u64,
        use_bytes: impl FnOnce(&mut dyn Read) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut archive = self.archive.clone();
        let mut entry = archive
            .by_name(record)
            .map_err(|e| format!("{}: record {record}: {e}", self.path.display()))?;
        let size = entry.size();
        if offset.checked_add(len).is_none_or(|e| e > size) {
            return Err(format!(
                "record {record} holds {size} bytes, not {offset}+{len}"
            ));
        }
        let recorded = entry.crc32();
        std::io::copy(&mut (&mut entry).take(offset), &mut std::io::sink())
            .map_err(|e| crc_refusal(&self.path, record, recorded, &e))?;
        let result = use_bytes(&mut (&mut entry).take(len))?;
        std::io::copy(&mut entry, &mut std::io::sink())
            .map_err(|e| crc_refusal(&self.path, record, recorded, &e))?;
        Ok(result)
    }

    /// Reads through the `zip` crate, so that it checks their CRC-32s, the storage records
    /// (`PREFIX/data/…`, the records torch-zip's reader skips when it reads headers only) that
    /// no tensor's check reads: those `read` names, by record name. At most `budget` bytes are
    /// read in all; a record beyond it is refused, not passed unchecked.
    pub fn check_storage_records(
        &self,
        read: &std::collections::HashSet<&str>,
        budget: u64,
    ) -> Result<(), String> {
        let mut archive = self.archive.clone();
        // By index, not by name: of two records with one name, the one a tensor's check did not
        // read is checked too.
        let read_at: std::collections::HashSet<usize> = read
            .iter()
            .filter_map(|name| archive.index_for_name(name))
            .collect();
        let mut left = budget;
        for i in (0..archive.len()).filter(|i| !read_at.contains(i)) {
            let mut entry = archive
                .by_index(i)
                .map_err(|e| format!("{}: record {i}: {e}", self.path.display()))?;
            let name = entry.name().to_owned();
            if !name
                .split_once('/')
                .is_some_and(|(_, rel)| rel.starts_with("data/"))
            {
                continue;
            }
            let recorded = entry.crc32();
            let n = std::io::copy(
                &mut (&mut entry).take(left.saturating_add(1)),
                &mut std::io::sink(),
            )
            .map_err(|e| crc_refusal(&self.path, &name, recorded, &e))?;
            if n > left {
                return Err(format!(
                    "record {name}: storage records no tensor carries hold more than {budget} bytes: not checked, so not converted"
                ));
            }
            left -= n;
        }
        Ok(())
    }

    /// The tensor's bytes read from its storage record with the `zip` crate (which checks the
    /// record's CRC-32 as it reads), swapped like the output, hashed.
    pub fn hash(&self, record: &str, offset: u64, len: u64, swap: usize) -> Result<String, String> {
        self.with_record(record, offset, len, |bytes| {
            let mut h = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut left = len;
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                bytes
                    .read_exact(&mut buf[..n])
                    .map_err(|e| format!("record {record}: {e}"))?;
                if swap > 1 {
                    for e in buf[..n].chunks_exact_mut(swap) {
                        e.reverse();
                    }
                }
                h.update(&buf[..n]);
                left -= n as u64;
            }
            Ok(hex(&h.finalize()))
        })
    }

    /// A gathered tensor: the `zip` crate finds the record and checks its CRC-32 over all its
    /// bytes; the elements are then read at the record's data offset, each one's place computed
    /// from its index ([`layout::gathered_sha256_by_index`]), swapped like the output.
    pub fn hash_gathered(
        &self,
        record: &str,
        offset: u64,
        g: &Strided,
        swap: usize,
    ) -> Result<String, String> {
        let mut archive = self.archive.clone();
        let mut entry = archive
            .by_name(record)
            .map_err(|e| format!("{}: record {record}: {e}", self.path.display()))?;
        let data_start = entry.data_start();
        let recorded = entry.crc32();
        std::io::copy(&mut entry, &mut std::io::sink())
            .map_err(|e| crc_refusal(&self.path, record, recorded, &e))?;
        let located = Strided {
            base: data_start
                .checked_add(offset)
                .ok_or_else(|| format!("record {record}: offset {offset} overflows"))?,
            ..g.clone()
        };
        let file = self.archive.clone().into_inner().file;
        layout::gathered_sha256_by_index(&located, swap, |at, buf| {
            crate::base::pread::read_exact_at(&file, buf, at)
        })
        .map_err(|e| format!("record {record}: {e}"))
    }
}

/// A record the `zip` crate would not read to its end, in words: its CRC-32 not holding is
/// the usual reason (the bytes changed after they were written, or were written without one).
fn crc_refusal(path: &Path, record: &str, recorded: u32, e: &std::io::Error) -> String {
    let place = format!(
        "reading the input by the second path: {}: record {record}",
        path.display()
    );
    if e.to_string().to_ascii_lowercase().contains("checksum") {
        let why = if recorded == 0 {
            "written without CRC-32s, as torch's set_crc32_options(False) writes; socair converts only records whose CRC-32 holds"
        } else {
            "the input's bytes changed after they were written"
        };
        format!("{place}: its CRC-32 does not hold (recorded {recorded:#010x}): {why}")
    } else {
        format!("{place}: {e}")
    }
}

/// Whether the file starts like a zip archive.
pub fn is_zip(path: &Path) -> bool {
    let mut head = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head == *b"PK\x03\x04"
}

/// A file shared between clones, each with its own position (reads are positioned, `pread`).
#[derive(Clone, Debug)]
struct SharedFile {
    file: std::sync::Arc<std::fs::File>,
    pos: u64,
}

impl Read for SharedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = crate::base::pread::read_at(&self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for SharedFile {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let len = self.file.metadata()?.len();
        let target = match to {
            std::io::SeekFrom::Start(n) => Some(n),
            std::io::SeekFrom::End(d) => len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}
