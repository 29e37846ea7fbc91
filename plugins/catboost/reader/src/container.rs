//! The `.cbm` container as CatBoost 1.2.10 writes and reads it (`catboost/libs/model/model.cpp`,
//! `TFullModel::Save` and `TFullModel::Load`; `catboost.CatBoost.load_model(fname)` reaches
//! `Load` through `ReadModel` and `TBinaryModelLoader`, which reads the file as a stream):
//!
//! 1. the four bytes `CBM1` (`MODEL_FILE_DESCRIPTOR_CHARS`, compared as a `ui32`);
//! 2. the core's size, `::LoadSize` (`util/ysaveload.h`: a `ui32`; `0xFFFFFFFF` escapes to a
//!    `ui64`, which no model needs: a FlatBuffers buffer is under 2 GiB), then the core, a
//!    `TModelCore` FlatBuffers buffer that `VerifyTModelCoreBuffer` checks (depth 64, 256M
//!    tables) before anything reads it;
//! 3. one model part per `ModelPartIds` entry, in that order, each read from where the previous
//!    one ended: `static_provider_v1` (`TStaticCtrProvider::Load` -> `TCtrData::Load`: a
//!    `LoadSize` count of CTR tables, each a `LoadSize` length and a `TCtrValueTable` buffer that
//!    `TCtrValueTable::LoadSolid` reads with `GetRoot`, unverified), `text_process_v2\0`
//!    (`NCB::TTextProcessingCollection::Load`) and `embed_process_1\0`
//!    (`NCB::TEmbeddingProcessingCollection::Load`); any other id makes the loader throw.
//!
//! Nothing after the last part is read: bytes there are refused (the file would say more than
//! CatBoost loads). The two processing collections (tokenizers, dictionaries, text and
//! embedding calcers, each in its own serialization after a 16-byte identifier and a `ui64`
//! header size) are not modeled: socair checks their identifier and header size and says the
//! rest is unread, which leaves whatever follows them unchecked too.

use crate::flatbuf::{Buffer, Fault, Res, UndefinedField, Unheld};
use crate::schema::{self, Core, CtrTable, Shared};

/// The file's first four bytes.
pub const MAGIC: &[u8; 4] = b"CBM1";

/// `CURRENT_CORE_FORMAT_STRING` (sic), the only `FormatVersion` the loader accepts
/// (`TFullModel::DefaultFullModelInit`).
pub const FORMAT_VERSION: &[u8] = b"FlabuffersModel_v1";

/// `TStaticCtrProvider::ModelPartId()`.
pub const CTR_PART: &[u8] = b"static_provider_v1";

/// `TTextProcessingCollection::GetStringIdentifier()`: its 16-byte identifier, NUL included.
pub const TEXT_PART: &[u8] = b"text_process_v2\0";

/// `TEmbeddingProcessingCollection::GetStringIdentifier()`, NUL included.
pub const EMBEDDING_PART: &[u8] = b"embed_process_1\0";

/// The escape `::SaveSize` writes before a 64-bit size.
const SIZE_ESCAPE: u32 = u32::MAX;

/// A CTR table and the file offset of its buffer.
#[derive(Debug, Clone)]
pub struct PlacedCtrTable {
    /// The table.
    pub table: CtrTable,
    /// The file offset of its buffer's first byte.
    pub base: u64,
}

/// A processing collection socair does not model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collection {
    /// `text` or `embedding`.
    pub kind: &'static str,
    /// Its first byte.
    pub at: u64,
    /// Its header's size.
    pub header_len: u64,
}

/// What the container holds.
#[derive(Debug, Clone, Default)]
pub struct Container {
    /// The core.
    pub core: Core,
    /// The core's size.
    pub core_len: u64,
    /// The static CTR provider's tables, when the model has that part.
    pub ctr_tables: Vec<PlacedCtrTable>,
    /// Whether the static CTR provider part is there.
    pub has_ctr_part: bool,
    /// The first processing collection met, after which nothing is read.
    pub collection: Option<Collection>,
    /// Which parts `ModelPartIds` lists, in order, as text.
    pub parts: Vec<String>,
    /// Bytes no FlatBuffers object holds that are not zero, per buffer.
    pub unheld: Vec<(String, Unheld)>,
    /// Fields the schema does not define, the first few of all buffers.
    pub undefined: Vec<UndefinedField>,
    /// All of them.
    pub undefined_total: u64,
}

fn fault(at: u64, reason: impl Into<String>) -> Fault {
    Fault {
        at,
        reason: reason.into(),
        past_bounds: false,
    }
}

/// `::LoadSize` at `pos` of `data`: the size and where what follows it starts.
fn load_size(data: &[u8], pos: usize, what: &str) -> Res<(usize, usize)> {
    let bytes: [u8; 4] = data
        .get(pos..pos + 4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            fault(
                pos as u64,
                format!("the file ends before the size of {what}"),
            )
        })?;
    let size = u32::from_le_bytes(bytes);
    if size == SIZE_ESCAPE {
        return Err(fault(
            pos as u64,
            format!("the size of {what} is 0xFFFFFFFF, the escape to a 64-bit size: no FlatBuffers buffer is that large, and util versions read it differently"),
        ));
    }
    Ok((size as usize, pos + 4))
}

/// `len` bytes of `data` from `pos`, or the fault of a file that ends before them.
fn take<'a>(data: &'a [u8], pos: usize, len: usize, what: &str) -> Res<&'a [u8]> {
    pos.checked_add(len)
        .and_then(|end| data.get(pos..end))
        .ok_or_else(|| {
            fault(
                pos as u64,
                format!(
                    "{what} claims {len} bytes from byte {pos}, past the end of the {}-byte file (CatBoost's LoadOrFail throws)",
                    data.len()
                ),
            )
        })
}

/// Reads one buffer with `walk`, then checks its objects and notes its undefined fields and
/// unheld bytes.
fn buffer<T>(
    out: &mut Container,
    bytes: &[u8],
    (base, file_len): (u64, u64),
    what: String,
    walk: impl FnOnce(&mut Buffer) -> Res<T>,
) -> Res<T> {
    let mut fb = Buffer::new(bytes, base, file_len, what.clone())?;
    let value = walk(&mut fb)?;
    out.undefined_total += fb.undefined_total;
    for u in fb.undefined.drain(..) {
        if out.undefined.len() < 16 {
            out.undefined.push(u);
        }
    }
    let unheld = fb.finish()?;
    if unheld.nonzero > 0 {
        out.unheld.push((what, unheld));
    }
    Ok(value)
}

/// Reads the container: the magic, the core and each model part. A fault anywhere is the
/// file's refusal.
pub fn read(data: &[u8]) -> Res<(Container, Shared)> {
    if data.get(..4) != Some(MAGIC.as_slice()) {
        return Err(fault(0, "the file does not start with CBM1, which CatBoost's loader requires (\"Incorrect model file descriptor\")"));
    }
    let (core_len, core_at) = load_size(data, 4, "the model core")?;
    let core_bytes = take(data, core_at, core_len, "the model core")?;
    let mut out = Container {
        core_len: core_len as u64,
        ..Container::default()
    };
    let mut shared = Shared::default();
    out.core = buffer(
        &mut out,
        core_bytes,
        (core_at as u64, data.len() as u64),
        "the model core".into(),
        |fb| schema::core(fb, &mut shared),
    )?;
    let version = out.core.format_version.clone().unwrap_or_default();
    if version != FORMAT_VERSION {
        return Err(fault(
            core_at as u64,
            format!(
                "the core's FormatVersion is {:?}, not FlabuffersModel_v1: CatBoost's loader refuses it (\"Unsupported model format\")",
                String::from_utf8_lossy(&version)
            ),
        ));
    }
    let mut pos = core_at + core_len;
    let ids = out.core.part_ids.clone();
    let mut seen = std::collections::HashSet::new();
    for (id, at) in &ids {
        if !seen.insert(id.as_slice()) {
            return Err(fault(
                *at,
                format!(
                    "ModelPartIds lists {:?} twice: CatBoost loads it twice and keeps the second, readers that stop at the first read another model",
                    String::from_utf8_lossy(id)
                ),
            ));
        }
        out.parts.push(
            String::from_utf8_lossy(id)
                .trim_end_matches('\0')
                .to_owned(),
        );
    }
    for (id, at) in &ids {
        if id == CTR_PART {
            out.has_ctr_part = true;
            pos = ctr_part(data, pos, &mut out, &mut shared)?;
        } else if id == TEXT_PART || id == EMBEDDING_PART {
            let kind = if id == TEXT_PART { "text" } else { "embedding" };
            out.collection = Some(collection(data, pos, id, kind)?);
            return Ok((out, shared));
        } else {
            return Err(fault(
                *at,
                format!(
                    "ModelPartIds lists {:?}, a part CatBoost 1.2.10 does not know: its loader throws (\"Got unknown partId\")",
                    String::from_utf8_lossy(id)
                ),
            ));
        }
    }
    if pos < data.len() {
        return Err(fault(
            pos as u64,
            format!(
                "{} bytes follow the model's last part; CatBoost's loader never reads them, so the file carries data the model does not account for",
                data.len() - pos
            ),
        ));
    }
    Ok((out, shared))
}

/// The static CTR provider from `pos`: where it ends.
fn ctr_part(data: &[u8], pos: usize, out: &mut Container, shared: &mut Shared) -> Res<usize> {
    let (count, mut pos) = load_size(data, pos, "the CTR table count")?;
    // A table takes at least its size and the smallest buffer.
    if count > data.len().saturating_sub(pos) / (4 + crate::flatbuf::MIN_BUFFER) {
        return Err(fault(
            (pos - 4) as u64,
            format!(
                "the static CTR provider claims {count} tables, which would run past the end of the {}-byte file",
                data.len()
            ),
        ));
    }
    for i in 0..count {
        let (len, at) = load_size(data, pos, &format!("CTR table {i}"))?;
        let bytes = take(data, at, len, &format!("CTR table {i}"))?;
        let place = (at as u64, data.len() as u64);
        let table = buffer(out, bytes, place, format!("CTR table {i}"), |fb| {
            schema::ctr_table(fb, shared)
        })?;
        out.ctr_tables.push(PlacedCtrTable {
            table,
            base: at as u64,
        });
        pos = at + len;
    }
    Ok(pos)
}

/// A processing collection's identifier and header size (`DefaultInit`, `LoadHeader`): the
/// identifier is compared whole (`"Couldn't load magic"`); no padding follows it (the 16 bytes
/// already meet `SerializationAlignment`).
fn collection(data: &[u8], pos: usize, id: &[u8], kind: &'static str) -> Res<Collection> {
    let found = take(
        data,
        pos,
        id.len(),
        &format!("the {kind} processing collection's identifier"),
    )?;
    if found != id {
        return Err(fault(
            pos as u64,
            format!(
                "the {kind} processing collection does not start with its identifier {:?}: CatBoost's loader refuses it (\"Couldn't load magic\")",
                String::from_utf8_lossy(id)
            ),
        ));
    }
    let header = take(
        data,
        pos + id.len(),
        8,
        &format!("the {kind} collection's header size"),
    )?;
    let header_len = u64::from_le_bytes(header.try_into().unwrap_or_default());
    let rest = (data.len() - pos - id.len() - 8) as u64;
    if header_len > rest {
        return Err(fault(
            (pos + id.len()) as u64,
            format!("the {kind} collection's header claims {header_len} bytes, past the end of the file"),
        ));
    }
    Ok(Collection {
        kind,
        at: pos as u64,
        header_len,
    })
}
