//! A TensorFlow checkpoint's index (`*.index`, a SavedModel's `variables/variables.index`):
//! a table ([`crate::sstable`]) whose first entry, under the empty key, is a
//! `BundleHeaderProto` and every other a `BundleEntryProto` naming where one tensor's bytes
//! lie in the data shards `<prefix>.data-<shard>-of-<shards>`
//! (`tensorflow/core/util/tensor_bundle/tensor_bundle.cc` at v2.21.0, `BundleReader`).
//!
//! Each numeric tensor becomes a descriptor whose `file` is its shard, named relative to the
//! index by the host's `{stem}` convention (the index's own name without `.index`), so a model
//! directory's digest covers the bytes fingerprinted. What `BundleReader` refuses is refused:
//! a header that is not first or names no shard, a version it does not accept, a shard past
//! the count, a size that is not the shape's. Each entry's `crc32c` (masked CRC-32C of the
//! tensor's bytes, which `BundleReader::GetValue` checks) is not checked here: this reader
//! sees only the index, and the host hashes the data shard's bytes with SHA-256 and has no
//! hook for a checksum a reader declares; the differential tests check the fixtures' values
//! against their shards (`tests/reference_files.rs`).

use crate::decode::decode;
use crate::dtype::dtype;
use crate::dtype::DType;
use crate::outcome::Reading;
use crate::proto::schema::{BUNDLE_ENTRY, BUNDLE_HEADER};
use crate::proto::tensorflow::{BundleEntryProto, BundleHeaderProto};
use crate::sstable::{self, Entry};
use crate::tensor::{shape_of, Data, Located};
use bytes::Bytes;
use socair_plugin_api::{ByteOrder, OpenedFile, RowStatus};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::protobuf::walk::Severity;

/// The format name.
pub const FORMAT: &str = "tf-checkpoint";

/// The bundle format version TensorFlow 2.21.0 writes and reads (`kTensorBundleVersion`).
const BUNDLE_VERSION: i32 = 1;

/// The key of the object graph a TF2 checkpoint keeps (`_CHECKPOINTABLE_OBJECT_GRAPH`).
const OBJECT_GRAPH_KEY: &[u8] = b"_CHECKPOINTABLE_OBJECT_GRAPH";

/// The largest index read: the table's blocks are read whole.
pub const MAX_INDEX_LEN: u64 = 1 << 31;

/// Reads a checkpoint index.
pub fn read(data: Bytes) -> OpenedFile {
    let mut out = Reading::new(FORMAT, data.len() as u64);
    let entries = match index_entries(&data) {
        Ok(e) => e,
        Err(report) => return *report,
    };
    let header = match bundle_header(&data, &entries, &mut out) {
        Ok(h) => h,
        Err(report) => return *report,
    };
    let order = if header.endianness == 1 {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    let shards = header.num_shards;
    out.metadata
        .push(("tensorflow.bundle.shards".into(), shards.to_string()));
    let mut tally = Tally::default();
    for e in &entries[1..] {
        entry(&data, e, shards, order, &mut tally, &mut out);
    }
    let Tally {
        described,
        object_graph,
    } = tally;
    let total = entries.len() - 1;
    out.finish(|status| match status {
        RowStatus::Pass => format!(
            "TensorFlow checkpoint index (tensor bundle of {shards} shard(s)): {} entries, every block's checksum verified, {} tensors located in the data shards{} (their crc32c fields not checked: the host hashes the shards' bytes)",
            thousands(total as u64),
            thousands(described),
            if object_graph { ", the object graph among them as a string tensor outside the model" } else { "" }
        ),
        RowStatus::Fail => "not a sound TensorFlow checkpoint index: TensorFlow would refuse or read it otherwise".into(),
        _ => format!(
            "TensorFlow checkpoint index with parts this reader does not prove: {} of {} entries located",
            thousands(described),
            thousands(total as u64)
        ),
    })
}

/// What the entries hold, counted for the summary.
#[derive(Default)]
struct Tally {
    /// Tensors located in the data shards.
    described: u64,
    /// Whether the TF2 object graph is among them.
    object_graph: bool,
}

/// The index's entries, or the report when the table is not sound or holds more entries
/// than this reader reads for a file of its size.
fn index_entries(data: &Bytes) -> Result<Vec<Entry>, Box<OpenedFile>> {
    let max_entries = usize::try_from(socair_plugin_kit::bounded::described_limit(
        data.len() as u64
    ))
    .unwrap_or(usize::MAX)
    .saturating_mul(4);
    match sstable::entries(data, max_entries) {
        Ok(e) => Ok(e),
        Err(e) if e.what.starts_with(sstable::TOO_MANY) => {
            // Not evidence of anything: more than this reader reads for a file of this size.
            let mut out = Reading::new(FORMAT, data.len() as u64);
            out.note(
                "entries past the budget",
                Severity::Lead,
                || format!("{} (byte {})", e.place, e.offset),
                || e.what.clone(),
            );
            Err(Box::new(out.finish(|_| "TensorFlow checkpoint index with more entries than this reader reads for a file of its size: nothing located".into())))
        }
        Err(e) => Err(Box::new(refused(
            e.to_string(),
            format!("{} (byte {})", e.place, e.offset),
        ))),
    }
}

/// The bundle header, the first entry, as `BundleReader` accepts it, or the refusal.
fn bundle_header(
    data: &Bytes,
    entries: &[Entry],
    out: &mut Reading,
) -> Result<BundleHeaderProto, Box<OpenedFile>> {
    let Some(first) = entries.first().filter(|e| e.key.is_empty()) else {
        return Err(Box::new(refused(
            "its first entry is not the bundle header (the empty key): BundleReader refuses it"
                .into(),
            "index entry 0".into(),
        )));
    };
    let header: BundleHeaderProto = match decode(&value(data, first), BUNDLE_HEADER, "header") {
        Ok((h, w)) => {
            out.walked(&w);
            h
        }
        Err(e) => {
            return Err(Box::new(refused(
                e.to_string(),
                format!("header: {}", e.place()),
            )))
        }
    };
    if let Err(why) = check_header(&header) {
        return Err(Box::new(refused(why, "header".into())));
    }
    Ok(header)
}

/// One tensor entry: located in its data shard when TensorFlow would restore it, else
/// listed as not read (and judged when TensorFlow refuses it).
fn entry(
    data: &Bytes,
    e: &Entry,
    shards: i32,
    order: ByteOrder,
    tally: &mut Tally,
    out: &mut Reading,
) {
    let name = String::from_utf8_lossy(&e.key).into_owned();
    let place = || format!("entry {:?}", short(&name));
    if e.key.first() == Some(&0) {
        // A slice of a partitioned variable, stored under an encoded slice key.
        out.unread(
            "slices of partitioned variables",
            Some(&name),
            format!(
                "{}: a slice of a partitioned variable (TF1 PartitionedVariable), not read",
                place()
            ),
            false,
        );
        return;
    }
    let entry: BundleEntryProto = match decode(&value(data, e), BUNDLE_ENTRY, "entry") {
        Ok((entry, w)) => {
            for f in w.findings {
                out.note(
                    "entry wire findings",
                    f.severity,
                    || format!("{} {}", place(), f.place),
                    || f.reason,
                );
            }
            entry
        }
        Err(err) => {
            out.note("entries that are not sound", Severity::Fail, place, || {
                err.to_string()
            });
            out.unread(
                "entries that are not sound",
                Some(&name),
                format!("{}: {err}", place()),
                false,
            );
            return;
        }
    };
    if !entry.slices.is_empty() {
        out.unread(
            "slices of partitioned variables",
            Some(&name),
            format!(
                "{}: a partitioned variable of {} slices, not read",
                place(),
                entry.slices.len()
            ),
            false,
        );
        return;
    }
    let dt = match dtype(entry.dtype) {
        Some(dt) => dt,
        // A string tensor (the object graph a TF2 checkpoint keeps under
        // `_CHECKPOINTABLE_OBJECT_GRAPH`, a vocabulary): its stored bytes (each string's
        // length, a checksum, the strings) fingerprinted as they are, outside the model.
        None if entry.dtype == 7 => DType {
            name: "DT_STRING",
            width: 0,
            element: None,
        },
        None => {
            out.unread(
                "tensors that are not numeric",
                Some(&name),
                format!(
                    "{}: a {} tensor, not a weight socair fingerprints",
                    place(),
                    crate::dtype::name(entry.dtype)
                ),
                true,
            );
            return;
        }
    };
    let outside = dt.width == 0;
    if e.key == OBJECT_GRAPH_KEY {
        tally.object_graph = true;
    }
    match restorable(&entry, shards, &dt) {
        Ok((shape, offset, len)) => {
            if !out.room() {
                return;
            }
            let file = format!("{{stem}}.data-{:05}-of-{:05}", entry.shard_id, shards);
            crate::outcome::located(
                out,
                &name,
                Located {
                    dtype: dt,
                    shape,
                    bytes: Data::Range(offset, len),
                    extra_values: false,
                },
                order,
                Some(&file),
                outside,
            );
            tally.described += 1;
        }
        Err(why) => {
            out.note("entries TensorFlow refuses", Severity::Fail, place, || {
                format!("{why}: TensorFlow refuses to restore it")
            });
            out.unread(
                "entries TensorFlow refuses",
                Some(&name),
                format!("{}: {why}", place()),
                false,
            );
        }
    }
}

/// An entry's shape and byte range `(offset, len)` in its shard, as `BundleReader` checks
/// them (a shard within the count, a size that is the shape's), or why TensorFlow refuses it.
fn restorable(
    entry: &BundleEntryProto,
    shards: i32,
    dt: &DType,
) -> Result<(Vec<u64>, u64, u64), String> {
    if entry.shard_id < 0 || entry.shard_id >= shards {
        return Err(format!(
            "shard {} of a bundle of {shards} shards",
            entry.shard_id
        ));
    }
    let (shape, n) = shape_of(entry.shape.as_ref())?;
    let size = n
        .checked_mul(dt.width)
        .ok_or("its size overflows 64 bits")?;
    let offset = u64::try_from(entry.offset).map_err(|_| format!("offset {}", entry.offset))?;
    let len = u64::try_from(entry.size).map_err(|_| format!("size {}", entry.size))?;
    if dt.width > 0 && len != size {
        return Err(format!(
            "it says it holds {len} bytes but {shape:?} elements of {} take {size} (BundleReader: \"Invalid size in bundle entry\")",
            dt.name
        ));
    }
    offset.checked_add(len).ok_or("its end overflows 64 bits")?;
    Ok((shape, offset, len))
}

fn value(data: &Bytes, e: &Entry) -> Bytes {
    data.slice(e.value.0..e.value.0 + e.value.1)
}

/// `BundleReader`'s checks of the header: at least one shard, and the versions
/// `CheckVersions` accepts (producer at least 0, min_consumer at most 1, 1 not a bad consumer).
fn check_header(h: &BundleHeaderProto) -> Result<(), String> {
    if h.num_shards < 1 {
        return Err(format!("the header names {} data shards", h.num_shards));
    }
    if h.endianness > 1 {
        return Err(format!(
            "endianness {} is neither LITTLE nor BIG",
            h.endianness
        ));
    }
    let v = h.version.clone().unwrap_or_default();
    if v.producer < 0 {
        return Err(format!(
            "checkpoint producer version {} is below 0",
            v.producer
        ));
    }
    if v.min_consumer > BUNDLE_VERSION {
        return Err(format!(
            "the checkpoint needs a reader of version {} or later; TensorFlow 2.21.0 reads version {BUNDLE_VERSION}",
            v.min_consumer
        ));
    }
    if v.bad_consumers.contains(&BUNDLE_VERSION) {
        return Err(format!(
            "the checkpoint disallows reader version {BUNDLE_VERSION}"
        ));
    }
    Ok(())
}

fn refused(reason: String, place: String) -> OpenedFile {
    socair_plugin_kit::report::refused(
        FORMAT,
        "not a sound TensorFlow checkpoint index: TensorFlow would refuse or read it otherwise",
        reason.clone(),
        socair_plugin_api::Finding::new(socair_plugin_api::Severity::Fail, place, reason),
    )
}

/// Whether `head` starts like a checkpoint index: the first entry of the first data block is
/// the bundle header under the empty key (shared 0, key length 0, a short value that parses
/// whole as a `BundleHeaderProto` naming at least one shard), and the file holds a footer.
pub fn looks_like_index(head: &[u8], file_len: u64) -> bool {
    use socair_plugin_kit::protobuf::{head::fields, read_varint};
    if file_len < sstable::FOOTER_LEN as u64 + 8 || head.len() < 4 || head[0] != 0 || head[1] != 0 {
        return false;
    }
    let mut at = 2;
    let Some(len) = read_varint(head, &mut at, head.len()) else {
        return false;
    };
    let Some(end) = usize::try_from(len).ok().and_then(|l| at.checked_add(l)) else {
        return false;
    };
    if len == 0 || len > 256 || end > head.len() {
        return false;
    }
    let value = &head[at..end];
    let Some(f) = fields(
        value,
        value.len() as u64,
        crate::proto::schema::MESSAGES,
        BUNDLE_HEADER,
    ) else {
        return false;
    };
    f.iter()
        .any(|f| f.number == 1 && f.varint.is_some_and(|v| (1..=1 << 20).contains(&v)))
        && f.iter().all(|f| f.whole)
}
