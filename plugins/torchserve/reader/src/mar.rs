//! The zip of a `.mar` as TorchServe extracts it.
//!
//! torch-model-archiver writes it with CPython's `zipfile` (deflated, or stored with
//! `--archive-format zip-store`; model_archiver 0.12.0 `model_packaging_utils.archive`), and
//! TorchServe's frontend extracts it with Java's `ZipInputStream` (frontend/archive/.../utils/
//! ZipUtils.java `unzip`), which walks the **local** headers from the start of the file and
//! never reads the central directory, writing each entry to `new File(dest, name)`. Other
//! tools (and this reader's `zip` crate) go by the central directory. So the archive is read
//! by the central directory and held to what makes both readings the same: local headers that
//! follow one another from byte 0 in central-directory order, each with the central
//! directory's name (and method and sizes when it records them), then the central directory;
//! no name twice. A name that climbs out of the model directory (`..`, an absolute path) is
//! written outside it by an extractor that does not check, as that one does not: a FAIL.

use socair_plugin_api::ReadAt;
use socair_plugin_kit::zip::{Fields, CENTRAL_MAGIC, LOCAL_MAGIC};
use socair_plugin_kit::Severity;
use std::collections::HashMap;
use std::io::Read;
use zip::ZipArchive;

/// One member, as the central directory lists it.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its name.
    pub name: String,
    /// Its index in the central directory.
    pub index: usize,
    /// Its uncompressed size.
    pub size: u64,
    /// A directory entry.
    pub is_dir: bool,
}

/// A finding of the zip layer: severity, place, reason.
pub type ZipFinding = (Severity, String, String);

/// Reads a `ReadAt` source as `Read + Seek`, for the zip crate (the kit's).
pub use socair_plugin_kit::source_reader::SourceReader;

/// An opened archive.
pub struct Mar<'a, S: ReadAt + ?Sized> {
    archive: ZipArchive<SourceReader<'a, S>>,
    /// Its members.
    pub members: Vec<Member>,
    /// What the zip layer found.
    pub findings: Vec<ZipFinding>,
}

/// The most members an archive may list.
pub const MAX_MEMBERS: usize = 100_000;

/// Opens the archive; `Err` when the zip crate cannot read its central directory.
pub fn open<S: ReadAt + ?Sized>(src: &S) -> Result<Mar<'_, S>, String> {
    let mut archive =
        ZipArchive::new(SourceReader::new(src)).map_err(|e| format!("not a readable zip: {e}"))?;
    if archive.len() > MAX_MEMBERS {
        return Err(format!(
            "{} members, more than the {MAX_MEMBERS} socair reads",
            archive.len()
        ));
    }
    let mut members = Vec::with_capacity(archive.len());
    let mut findings = Vec::new();
    let mut locals = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        let f = archive
            .by_index_raw(index)
            .map_err(|e| format!("central directory entry {index}: {e}"))?;
        let raw = f.name_raw().to_vec();
        let name = match String::from_utf8(raw.clone()) {
            Ok(n) => n,
            Err(_) => {
                findings.push((
                    Severity::Lead,
                    format!("central directory entry {index}"),
                    "a name that is not UTF-8: Java's ZipInputStream decodes names as UTF-8 and readers disagree on the rest".into(),
                ));
                String::from_utf8_lossy(&raw).into_owned()
            }
        };
        if f.encrypted() {
            findings.push((
                Severity::Lead,
                format!("member {name:?}"),
                "encrypted: neither TorchServe nor socair reads it".into(),
            ));
        }
        locals.push(Local {
            header: f.header_start(),
            data: f.data_start(),
            compressed: f.compressed_size(),
            size: f.size(),
            crc: f.crc32(),
            method: compression_code(f.compression()),
            name: raw,
        });
        members.push(Member {
            name,
            index,
            size: f.size(),
            is_dir: f.is_dir(),
        });
    }
    check_names(&members, &mut findings);
    check_tiling(src, &mut locals, &mut findings);
    Ok(Mar {
        archive,
        members,
        findings,
    })
}

fn compression_code(c: zip::CompressionMethod) -> u16 {
    #[allow(deprecated)]
    match c {
        zip::CompressionMethod::Stored => 0,
        zip::CompressionMethod::Deflated => 8,
        other => other.to_u16(),
    }
}

impl<S: ReadAt + ?Sized> Mar<'_, S> {
    /// A member's bytes, at most `limit` of them; its CRC-32 is checked.
    pub fn read(&mut self, index: usize, limit: u64) -> Result<Vec<u8>, String> {
        let f = self.archive.by_index(index).map_err(|e| e.to_string())?;
        if f.size() > limit {
            return Err(format!(
                "{} bytes, more than the {limit} socair inflates for it",
                f.size()
            ));
        }
        let mut out = Vec::with_capacity(usize::try_from(f.size()).unwrap_or(0).min(1 << 24));
        f.take(limit.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| e.to_string())?;
        if out.len() as u64 > limit {
            return Err(format!(
                "inflates past the {limit} bytes its header declares"
            ));
        }
        Ok(out)
    }
}

/// Names TorchServe's extraction writes outside the model directory, or twice.
fn check_names(members: &[Member], findings: &mut Vec<ZipFinding>) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut folded: HashMap<String, usize> = HashMap::new();
    for m in members {
        let n = m.name.as_str();
        let climbs = n.starts_with('/')
            || n.starts_with('\\')
            || n.as_bytes().get(1) == Some(&b':')
            || n.split(['/', '\\']).any(|seg| seg == "..");
        if climbs {
            findings.push((
                Severity::Fail,
                format!("member {n:?}"),
                "a name that leaves the model directory: TorchServe's ZipUtils.unzip writes each entry to new File(dest, name) without checking it (pytorch/serve frontend/archive/.../utils/ZipUtils.java), so extracting the archive writes a file elsewhere on the host".into(),
            ));
        }
        if n.bytes().any(|b| b < 0x20) {
            findings.push((
                Severity::Lead,
                format!("member {n:?}"),
                "a name with a control character, which no archiver writes".into(),
            ));
        }
        if seen.insert(n, m.index).is_some() {
            findings.push((
                Severity::Fail,
                format!("member {n:?}"),
                "named twice: ZipInputStream extracts both and the last one stays on disk, while readers that go by the central directory read the first".into(),
            ));
        } else if folded.insert(n.to_lowercase(), m.index).is_some() {
            findings.push((
                Severity::Lead,
                format!("member {n:?}"),
                "a name another member has but for case: on a case-insensitive file system one overwrites the other".into(),
            ));
        }
    }
}

/// A member's local header, as the central directory places and describes it.
struct Local {
    header: u64,
    data: u64,
    compressed: u64,
    size: u64,
    crc: u32,
    method: u16,
    name: Vec<u8>,
}

/// The local headers must follow one another from byte 0, in the central directory's order,
/// each describing its member as the central directory does, the central directory right after
/// the last: what `ZipInputStream` walks is then what the central directory lists.
fn check_tiling(
    src: &(impl ReadAt + ?Sized),
    locals: &mut [Local],
    findings: &mut Vec<ZipFinding>,
) {
    let mut fail = |place: String, reason: String| {
        findings.push((Severity::Fail, place, format!("{reason}: TorchServe's extraction (Java's ZipInputStream, which walks the local headers from the start of the file) and readers that go by the central directory would see different members")));
    };
    let in_order = locals.windows(2).all(|w| w[0].header < w[1].header);
    locals.sort_by_key(|l| l.header);
    if !in_order {
        fail(
            "central directory".into(),
            "the central directory lists the members in another order than they lie in the file"
                .into(),
        );
    }
    let mut expected = 0u64;
    for l in locals.iter() {
        let place = format!("member {:?}", String::from_utf8_lossy(&l.name));
        if l.header != expected {
            return fail(place, format!("its local header is at byte {} where the previous member ends at byte {expected}", l.header));
        }
        let mut fixed = [0u8; 30];
        if src.read_exact_at(l.header, &mut fixed).is_err() || fixed[..4] != LOCAL_MAGIC {
            return fail(
                place,
                "no local header where the central directory says".into(),
            );
        }
        let mut f = Fields::at(&fixed, 6);
        let flags = f.u16();
        let method = f.u16();
        let _time_date = f.u32();
        let crc = f.u32();
        let compressed = f.u32();
        let size = f.u32();
        let name_len = u64::from(f.u16());
        let mut name = vec![0u8; name_len as usize];
        if src.read_exact_at(l.header + 30, &mut name).is_err() || name != l.name {
            return fail(
                place,
                "its local header names another member than the central directory".into(),
            );
        }
        let described = flags & 8 != 0
            || (crc == l.crc
                && (u64::from(compressed) == l.compressed || compressed == u32::MAX)
                && (u64::from(size) == l.size || size == u32::MAX));
        if method != l.method || !described {
            return fail(place, "its local header describes it otherwise than the central directory (method, CRC-32 or sizes)".into());
        }
        let mut end = l.data.saturating_add(l.compressed);
        if flags & 8 != 0 {
            let mut sig = [0u8; 4];
            if src.read_exact_at(end, &mut sig).is_ok() && sig == [0x50, 0x4b, 0x07, 0x08] {
                end += 4;
            }
            let zip64 = l.compressed >= u64::from(u32::MAX) || l.size >= u64::from(u32::MAX);
            end += if zip64 { 20 } else { 12 };
        }
        expected = end;
    }
    let mut sig = [0u8; 4];
    let next_ok = src.read_exact_at(expected, &mut sig).is_ok()
        && (sig == CENTRAL_MAGIC || (locals.is_empty() && sig == [0x50, 0x4b, 0x05, 0x06]));
    if !next_ok {
        fail(
            format!("byte {expected}"),
            "something other than the central directory follows the last member (ZipInputStream would read another entry there, or stop)".into(),
        );
    }
}
