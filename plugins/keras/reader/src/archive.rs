//! A `.keras` archive, as `keras/src/saving/saving_lib.py` (keras 3.15.1) writes and reads it
//! with Python's `zipfile`: `metadata.json`, `config.json`, then `model.weights.h5` (or
//! `model.weights.npz`) and `assets/…`, every member stored (`zipfile.ZipFile(fileobj, "w")`
//! compresses nothing). `_load_model_from_fileobj` reads `config.json` and the weights
//! member by name; `zipfile`'s index keeps the last of two members of one name, so a name
//! listed twice is a FAIL (two readers read two configs).
//!
//! A stored `model.weights.h5` is read in place (its tensors are ranges of the archive); a
//! deflated one (an archive re-zipped by another tool) is inflated within a budget and its
//! tensors held inline.

use crate::grammar::{self, Dialect};
use crate::{h5model, Analysis, Findings};
use socair_hdf5::{self as hdf5, ReadAt, Severity};
use socair_pickle::pickle;
use socair_plugin_kit::companion::{self, Companion};
use socair_plugin_kit::zip::crc::{crc32, crc32_of_range};
use socair_plugin_kit::zip::headers::CentralHeader;
use socair_plugin_kit::zip::links;
use socair_plugin_kit::zip::CENTRAL_LEN;
use std::collections::HashSet;
use std::io::{self, Read, Seek, SeekFrom};
use zip::{CompressionMethod, ZipArchive};

/// The members Keras writes first, in order (`_save_model_to_fileobj`).
pub const CONFIG: &str = "config.json";
/// See [`CONFIG`].
pub const METADATA: &str = "metadata.json";
/// The weights member.
pub const WEIGHTS: &str = "model.weights.h5";
/// The weights member in NumPy form (`weights_format="npz"`).
pub const WEIGHTS_NPZ: &str = "model.weights.npz";

/// Bytes inflated out of an archive of `len` bytes: 32 MiB + 4x its size (as the archive
/// plugin's budget).
pub fn budget_for(len: u64) -> u64 {
    socair_plugin_kit::model::memory_share(len, 2)
}

/// A [`ReadAt`] read as `Read + Seek`, for the zip crate.
struct Reader<'a, S: ReadAt + ?Sized> {
    src: &'a S,
    pos: u64,
}

impl<S: ReadAt + ?Sized> Clone for Reader<'_, S> {
    fn clone(&self) -> Self {
        Reader {
            src: self.src,
            pos: self.pos,
        }
    }
}

impl<S: ReadAt + ?Sized> Read for Reader<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.src.size().saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let part = buf.get_mut(..n).unwrap_or_default();
        self.src
            .read_exact_at(self.pos, part)
            .map_err(io::Error::other)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<S: ReadAt + ?Sized> Seek for Reader<'_, S> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.src.size().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| io::Error::other("seek before the start"))?;
        Ok(self.pos)
    }
}

/// A window of another source: an archive's stored member.
struct Window<'a, S: ReadAt + ?Sized> {
    src: &'a S,
    start: u64,
    len: u64,
}

impl<S: ReadAt + ?Sized> ReadAt for Window<'_, S> {
    fn size(&self) -> u64 {
        self.len
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        if offset
            .checked_add(buf.len() as u64)
            .is_none_or(|end| end > self.len)
        {
            return Err("read past the end of the member".into());
        }
        self.src.read_exact_at(self.start + offset, buf)
    }
    /// Hints pass through to the archive, moved to where the member lies (those past its end
    /// are left out): an HDF5 member in object storage is read ahead like an HDF5 file.
    fn prefetch(&self, ranges: &[(u64, u64)]) -> bool {
        let inside: Vec<(u64, u64)> = ranges
            .iter()
            .filter(|&&(offset, _)| offset < self.len)
            .map(|&(offset, n)| (self.start + offset, n.min(self.len - offset)))
            .collect();
        self.src.prefetch(&inside)
    }
}

/// Reads the `.keras` archive in `bytes` (an archive's member): every tensor inline.
pub fn read_bytes(bytes: &[u8], reviewed: &[String]) -> Analysis {
    let mut a = read(bytes, true, reviewed);
    h5model::inline(&mut a, bytes, 0);
    a
}

/// Reads the `.keras` archive `src`; `read_data` checks the weights member's CRC-32 and
/// assembles chunks out of row-major order.
pub fn read<S: ReadAt + ?Sized>(src: &S, read_data: bool, reviewed: &[String]) -> Analysis {
    let reader = Reader { src, pos: 0 };
    let mut zip = match ZipArchive::new(reader) {
        Ok(z) => z,
        Err(e) => {
            return crate::refused(
                "a Keras archive",
                "archive".into(),
                format!(
                    "not a zip archive Python's zipfile reads ({e}): nothing in it was checked"
                ),
            )
        }
    };
    let mut a = Analysis {
        kind: "a Keras 3 archive".into(),
        no_config: format!("no {CONFIG} member: Keras cannot load the archive"),
        ..Analysis::default()
    };
    if zip.offset() != 0 {
        a.structure.add(Severity::Fail, "archive", format!("its central directory places the archive {} bytes after where its records lie: bytes were inserted before it, and readers that go by the local headers read other members", zip.offset()));
    }
    let links = names(
        src,
        zip.central_directory_start(),
        zip.len(),
        &mut a.structure,
    );
    let mut budget = budget_for(src.size());
    let mut seen_weights = false;
    for i in 0..zip.len() {
        let Ok(f) = zip.by_index_raw(i) else {
            a.structure.add(
                Severity::Fail,
                "archive",
                format!("entry {i} of its central directory cannot be read"),
            );
            continue;
        };
        let name = f.name().to_owned();
        let (method, size, start, crc, encrypted) = (
            f.compression(),
            f.size(),
            f.data_start(),
            f.crc32(),
            f.encrypted(),
        );
        let place = format!("member {name}");
        drop(f);
        if name.starts_with('/') || name.split(['/', '\\']).any(|c| c == "..") {
            a.structure.add(Severity::Fail, &place, "a path that leaves the directory it is extracted to (an absolute path or a `..` component)");
        }
        if encrypted {
            a.members.add(
                Severity::Lead,
                &place,
                "encrypted: nothing in it was checked",
            );
            continue;
        }
        if name.ends_with('/') && size == 0 {
            continue;
        }
        // A symbolic link's data is its target: read as bytes, never as weights in place.
        let link = links.contains(&name);
        let stored = method == CompressionMethod::Stored && !link;
        if name == WEIGHTS && stored {
            a.record = Some((WEIGHTS.to_owned(), start));
        }
        if name == WEIGHTS && stored && !read_data {
            seen_weights = true;
            weights(src, start, size, 0, &mut a, reviewed, false);
            continue;
        }
        if name == WEIGHTS && stored {
            seen_weights = true;
            match crc32_of_range(src, start, size) {
                Ok(actual) if actual != crc => a.structure.add(Severity::Fail, &place, format!("the CRC-32 of its bytes is {actual:08x}, the central directory records {crc:08x}: zipfile refuses to read it")),
                Ok(_) => {}
                Err(e) => a.structure.add(Severity::Fail, &place, format!("its bytes cannot be read ({})", e.message)),
            }
            weights(src, start, size, 0, &mut a, reviewed, true);
            continue;
        }
        if size > budget {
            a.members.add(Severity::Lead, &place, format!("declares {size} bytes inflated, more than the {budget} left of what socair inflates for this archive (32 MiB + 4x its size): nothing in it was checked"));
            continue;
        }
        let mut bytes = Vec::new();
        let read = zip.by_index(i).map_err(|e| e.to_string()).and_then(|m| {
            m.take(size + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| e.to_string())
        });
        budget = budget.saturating_sub(bytes.len() as u64);
        if let Err(e) = read {
            if bytes.len() as u64 != size {
                a.structure.add(
                    Severity::Fail,
                    &place,
                    format!("cannot be inflated ({e}): nothing in it was checked"),
                );
                continue;
            }
        }
        if bytes.len() as u64 != size || crc32(&bytes) != crc {
            a.structure.add(Severity::Fail, &place, format!("its bytes ({} of them) do not match the {size} bytes and CRC-32 {crc:08x} the central directory records: zipfile refuses to read it", bytes.len()));
            continue;
        }
        if link {
            let (fail, why) = links::finding(name.as_bytes(), &bytes);
            let severity = if fail { Severity::Fail } else { Severity::Lead };
            a.structure.add(severity, &place, why);
        }
        member(&name, &bytes, &mut a, reviewed, &mut seen_weights);
    }
    if !seen_weights && a.config.is_some() {
        a.structure.add(Severity::Lead, "archive", format!("no {WEIGHTS} member: Keras refuses an archive without weights (\"Expected a model.weights.h5 or model.weights.npz file\")"));
    }
    a
}

/// One member's bytes, other than stored weights.
fn member(
    name: &str,
    bytes: &[u8],
    a: &mut Analysis,
    reviewed: &[String],
    seen_weights: &mut bool,
) {
    let place = format!("member {name}");
    match name {
        CONFIG => a.config = Some(grammar::judge(bytes, CONFIG, Dialect::Keras3, reviewed)),
        METADATA => match grammar::parse(bytes) {
            Ok(serde_json::Value::Object(m)) => {
                for (k, v) in m {
                    if let Some(s) = v.as_str() {
                        if k == "keras_version" {
                            a.kind = format!("a Keras 3 archive (keras {s})");
                        }
                        a.metadata.push((k, s.to_owned()));
                    }
                }
            }
            _ => a.structure.add(
                Severity::Lead,
                &place,
                "not a JSON object: Keras writes its version and date there",
            ),
        },
        WEIGHTS => {
            *seen_weights = true;
            let mut inner = Analysis::default();
            weights(bytes, 0, bytes.len() as u64, 0, &mut inner, reviewed, true);
            h5model::inline(&mut inner, bytes, 0);
            a.structure.extend(inner.structure);
            a.tensors.extend(inner.tensors);
            a.unread.extend(inner.unread);
            a.data.extend(inner.data);
            a.deferred.extend(inner.deferred);
            if let Some(r) = inner.refused {
                a.structure.add(r.severity, r.place, r.reason);
            }
        }
        WEIGHTS_NPZ => {
            *seen_weights = true;
            a.members.add(Severity::Lead, &place, "weights in NumPy .npz form (weights_format=\"npz\"): the numpy plugin reads them as a file of their own; extract it and scan it: not fingerprinted here");
        }
        _ => {
            let head = &bytes[..bytes.len().min(4096)];
            if pickle::looks_like_pickle(head, bytes.len() as u64) {
                let (found, _) = crate::pickles::scan_pickle(bytes, reviewed);
                for (sev, at, reason) in found {
                    a.members.add(sev, format!("{place} {at}"), reason);
                }
                a.members.add(Severity::Lead, &place, "a pickle, which Keras never writes into an archive and does not load: its opcodes were scanned; a person should ask why it is there");
                return;
            }
            match companion::classify(
                name,
                bytes,
                "no reader models this member of a Keras archive",
            ) {
                Companion::Data(_) => a.data_members += 1,
                Companion::Lead(reason) => a.members.add(Severity::Lead, &place, reason),
                // A chat template that reaches Python internals, in a JSON or .jinja member.
                Companion::Fail { findings, .. } => {
                    for (at, reason) in findings {
                        a.members
                            .add(Severity::Fail, format!("{place} {at}"), reason);
                    }
                }
            }
        }
    }
}

/// The weights member at `start` (`size` bytes) of `src`; ranges count from `base + start`.
fn weights<S: ReadAt + ?Sized>(
    src: &S,
    start: u64,
    size: u64,
    base: u64,
    a: &mut Analysis,
    reviewed: &[String],
    read_data: bool,
) {
    let window = Window {
        src,
        start,
        len: size,
    };
    match hdf5::read(&window, crate::h5model::options(read_data, reviewed)) {
        Ok(file) => {
            let inner = h5model::analyse(file, base + start, &format!("{WEIGHTS} "), reviewed);
            a.structure.extend(inner.structure);
            a.tensors.extend(inner.tensors);
            a.unread.extend(inner.unread);
            a.data.extend(inner.data);
            a.deferred.extend(inner.deferred);
            if inner.config.is_some() {
                a.structure.add(Severity::Lead, format!("member {WEIGHTS}"), "it holds a model_config attribute, which Keras 3 weights never do: not judged here");
            }
        }
        Err(e) => a.structure.add(
            Severity::Fail,
            format!("member {WEIGHTS} {}", e.place),
            format!(
                "{}: not an HDF5 file h5py reads as socair does; its weights were not read",
                e.reason
            ),
        ),
    }
}

/// The central directory's names, walked entry by entry from `start` (the zip crate's index
/// keeps one entry per name): a name listed twice, exactly or ignoring ASCII case, is a FAIL.
/// Returns the names of the entries that are symbolic links (`zip::links`).
fn names<S: ReadAt + ?Sized>(
    src: &S,
    start: u64,
    indexed: usize,
    out: &mut Findings,
) -> HashSet<String> {
    let mut links = HashSet::new();
    let mut exact = HashSet::new();
    let mut folded = HashSet::new();
    let mut at = start;
    let mut count = 0usize;
    let mut fixed = [0u8; CENTRAL_LEN as usize];
    while src.read_exact_at(at, &mut fixed).is_ok() {
        let Some(h) = CentralHeader::parse(&fixed) else {
            break;
        };
        let mut name = vec![0u8; usize::from(h.name_len)];
        if src.read_exact_at(at + CENTRAL_LEN, &mut name).is_err() {
            break;
        }
        let shown = String::from_utf8_lossy(&name).into_owned();
        if links::is_symlink(&h) {
            links.insert(shown.clone());
        }
        if !exact.insert(name.clone()) {
            out.add(Severity::Fail, format!("member {shown}"), "listed twice in the central directory: zipfile's index keeps the last, other readers the first, so two readers load two different members");
        } else if !folded.insert(name.to_ascii_lowercase()) {
            out.add(Severity::Fail, format!("member {shown}"), "differs from another member only in ASCII case: extracted on a case-insensitive file system one replaces the other");
        }
        count += 1;
        at += CENTRAL_LEN + h.variable_len() as u64;
    }
    if count != indexed && exact.len() == count {
        out.add(Severity::Fail, "archive", format!("its central directory holds {count} entries where the zip crate indexes {indexed}: readers see different members"));
    }
    links
}
