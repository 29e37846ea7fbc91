//! The layout of a CRFsuite model, checked as CRFsuite reads it (chokkan/crfsuite 0.12,
//! lib/crf/src/crf1d_model.c: `crf1dm_new_impl` reads the header, `crf1dm_get_labelref`,
//! `crf1dm_get_attrref` and `crf1dm_get_feature` the chunks, `cqdb_reader` in
//! lib/cqdb/src/cqdb.c the string databases), every offset, count and index checked against
//! the file and its chunk. All integers are little-endian u32 (`read_uint32`), weights f64.

use socair_plugin_kit::model::Severity;

/// The file magic (`FILEMAGIC`).
pub const MAGIC: &[u8] = b"lCRF";
/// The model type (`MODELTYPE`) and version (`VERSION_NUMBER`) crf1dmw writes.
const MODEL_TYPE: &[u8] = b"FOMC";
const VERSION: u32 = 100;
/// `HEADER_SIZE`, `CHUNK_SIZE`, `FEATURE_SIZE`.
const HEADER_SIZE: usize = 48;
const CHUNK_SIZE: usize = 12;
const FEATURE_SIZE: usize = 20;
/// cqdb.c: `CHUNKID`, `BYTEORDER_CHECK`, `NUM_TABLES`, and `OFFSET_DATA` (a 24-byte header
/// and 256 table references of 8 bytes), the least a CQDB chunk holds.
const CQDB_ID: &[u8] = b"CQDB";
const CQDB_BYTEORDER: u32 = 0x6244_5371;
const CQDB_TABLES: usize = 256;
const CQDB_DATA: usize = 24 + 8 * CQDB_TABLES;

/// What a well-formed model holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Model {
    /// Labels (the header's `num_labels`).
    pub labels: u32,
    /// Attributes (`num_attrs`).
    pub attributes: u32,
    /// Features (the FEAT chunk's count: crf1dmw_close writes the header's `num_features` as 0).
    pub features: u32,
    /// Where the FEAT chunk starts.
    pub off_features: usize,
}

/// The feature weights in feature order, as crf1dm_get_feature's `read_float` reads them: the
/// last 8 bytes (an f64, little-endian) of each 20-byte record of a checked model.
pub fn weights(b: &[u8], m: &Model) -> Vec<u8> {
    let mut out = Vec::with_capacity(m.features as usize * 8);
    for i in 0..m.features as usize {
        let at = m.off_features + CHUNK_SIZE + i * FEATURE_SIZE + 12;
        out.extend_from_slice(b.get(at..at + 8).unwrap_or_default());
    }
    out
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// A problem: where and why.
type Problem = (String, String);

fn past_end(what: &str, at: usize, need: usize, len: usize) -> Problem {
    (
        format!("byte {at}"),
        format!("{what} needs {need} bytes at byte {at}, past the end of the {len}-byte file: crf1dm reads it without a bounds check, outside its buffer"),
    )
}

/// Checks `b`, noting each problem through `note`; the model's counts when nothing FAILs.
pub fn check(b: &[u8], note: &mut dyn FnMut(Severity, String, String)) -> Option<Model> {
    let len = b.len();
    if len <= HEADER_SIZE || !b.starts_with(MAGIC) {
        note(Severity::Fail, "byte 0".into(), format!("a file of {len} bytes that is not a CRFsuite model: crf1dm_new_impl refuses a file not longer than its {HEADER_SIZE}-byte header, and every model starts with \"lCRF\""));
        return None;
    }
    let h: Vec<u32> = (0..11).map(|i| u32_at(b, 4 + 4 * i).unwrap_or(0)).collect();
    let (size, version) = (h[0] as usize, h[2]);
    let (labels, attributes) = (h[4], h[5]);
    let (off_features, off_labels, off_attrs, off_labelrefs, off_attrrefs) = (
        h[6] as usize,
        h[7] as usize,
        h[8] as usize,
        h[9] as usize,
        h[10] as usize,
    );
    if b.get(8..12) != Some(MODEL_TYPE) || version != VERSION {
        note(Severity::Lead, "byte 8".into(), format!("model type {:?} version {version}, not the FOMC 100 that crf1dmw writes: crf1dm_new reads it as FOMC 100 anyway", String::from_utf8_lossy(b.get(8..12).unwrap_or_default())));
    }
    if size > len {
        note(Severity::Fail, "byte 4".into(), format!("the header says the file is {size} bytes, past the end of the {len}-byte file: the file is cut"));
    } else if size < len {
        note(Severity::Lead, "byte 4".into(), format!("the header says the file is {size} bytes, but it is {len}: {} bytes after it that no reader reads", len - size));
    }
    let chunks = [
        ("the label CQDB", off_labels, CQDB_DATA),
        ("the attribute CQDB", off_attrs, CQDB_DATA),
        ("the label references (LFRF)", off_labelrefs, CHUNK_SIZE),
        ("the attribute references (AFRF)", off_attrrefs, CHUNK_SIZE),
        ("the features (FEAT)", off_features, CHUNK_SIZE),
    ];
    let mut failed = false;
    let mut extents = vec![("the header", 0usize, HEADER_SIZE)];
    for (what, off, least) in chunks {
        let declared = u32_at(b, off.saturating_add(4)).unwrap_or(0) as usize;
        let end = off.checked_add(declared.max(least));
        match end {
            Some(end) if end <= len => extents.push((what, off, end)),
            _ => {
                let inside = extents.iter().find(|e| e.1 <= off && off < e.2);
                let (p, r) = match inside {
                    Some(e) => (format!("byte {off}"), format!("{what} starts at byte {off}, which overlaps {} (bytes {}..{}): its size is read from the other chunk's bytes", e.0, e.1, e.2)),
                    None => past_end(what, off, declared.max(least), len),
                };
                note(Severity::Fail, p, r);
                failed = true;
            }
        }
    }
    for (i, a) in extents.iter().enumerate() {
        for c in extents.iter().skip(i + 1) {
            if a.1 < c.2 && c.1 < a.2 {
                note(Severity::Fail, format!("byte {}", c.1), format!("{} (bytes {}..{}) overlaps {} (bytes {}..{}): crf1dmw writes each chunk once, after the last; readers of overlapping chunks read one set of bytes as two things", c.0, c.1, c.2, a.0, a.1, a.2));
                failed = true;
            }
        }
    }
    if failed {
        return None;
    }
    let mut problems = Vec::new();
    let features = features(b, off_features, labels, attributes, &mut problems);
    cqdb(b, "the label CQDB", off_labels, &mut problems);
    cqdb(b, "the attribute CQDB", off_attrs, &mut problems);
    if let Some(features) = features {
        refs(b, b"LFRF", off_labelrefs, labels, features, &mut problems);
        refs(
            b,
            b"AFRF",
            off_attrrefs,
            attributes,
            features,
            &mut problems,
        );
    }
    let ok = problems.is_empty() && features.is_some();
    for (p, r) in problems {
        note(Severity::Fail, p, r);
    }
    ok.then_some(Model {
        labels,
        attributes,
        features: features.unwrap_or(0),
        off_features,
    })
}

/// The FEAT chunk (`crf1dm_get_feature`): its count, when every record's labels and attribute
/// are in range (the tagger indexes its label and attribute arrays with them).
fn features(b: &[u8], off: usize, labels: u32, attrs: u32, out: &mut Vec<Problem>) -> Option<u32> {
    if b.get(off..off + 4) != Some(b"FEAT") {
        out.push((
            format!("byte {off}"),
            "the feature chunk does not start with \"FEAT\"".into(),
        ));
        return None;
    }
    let size = u32_at(b, off + 4)? as usize;
    let num = u32_at(b, off + 8)?;
    let need = (num as usize)
        .checked_mul(FEATURE_SIZE)
        .and_then(|n| n.checked_add(CHUNK_SIZE));
    if need.is_none_or(|n| n > size) {
        out.push((format!("byte {off}"), format!("the feature chunk declares {num} features of {FEATURE_SIZE} bytes in {size} bytes: crf1dm_get_feature reads past it")));
        return None;
    }
    for i in 0..num as usize {
        let at = off + CHUNK_SIZE + i * FEATURE_SIZE;
        let (t, src, dst) = (u32_at(b, at)?, u32_at(b, at + 4)?, u32_at(b, at + 8)?);
        let src_limit = if t == 0 { attrs } else { labels };
        if t > 1 || src >= src_limit || dst >= labels {
            out.push((format!("byte {at} (feature {i})"), format!("feature {i} has type {t}, source {src}, destination {dst}: type 0 (attribute to label) or 1 (label to label) with indices below {attrs} attributes and {labels} labels is what crf1dmw writes; the tagger indexes its arrays with them, outside their bounds")));
            return None;
        }
    }
    Some(num)
}

/// A CQDB string database (`cqdb_reader`): its header, tables, records and backward links.
fn cqdb(b: &[u8], what: &str, off: usize, out: &mut Vec<Problem>) {
    let mut bad =
        |at: usize, why: String| out.push((format!("byte {at}"), format!("{what}: {why}")));
    if b.get(off..off + 4) != Some(CQDB_ID) || u32_at(b, off + 12) != Some(CQDB_BYTEORDER) {
        bad(off, "not a CQDB chunk (its id or byte-order mark differ): cqdb_reader refuses it and the model has no strings there".into());
        return;
    }
    let size = u32_at(b, off + 4).unwrap_or(0) as usize;
    let bwd_offset = u32_at(b, off + 20).unwrap_or(0) as usize;
    let mut records = 0usize;
    for t in 0..CQDB_TABLES {
        let at = off + 24 + 8 * t;
        let (Some(table), Some(num)) = (u32_at(b, at), u32_at(b, at + 4)) else {
            return;
        };
        let (table, num) = (table as usize, num as usize);
        records += num / 2;
        if table == 0 {
            continue;
        }
        if num
            .checked_mul(8)
            .and_then(|n| n.checked_add(table))
            .is_none_or(|e| e > size)
        {
            return bad(
                at,
                format!(
                    "hash table {t} ({num} buckets at {table}) runs past the chunk's {size} bytes"
                ),
            );
        }
        for k in 0..num {
            let rec = u32_at(b, off + table + 8 * k + 4).unwrap_or(0) as usize;
            if rec == 0 {
                continue;
            }
            let ksize = u32_at(b, off.saturating_add(rec).saturating_add(4));
            let end = ksize.and_then(|k| rec.checked_add(8)?.checked_add(k as usize));
            if end.is_none_or(|e| e > size) {
                return bad(
                    off + table + 8 * k,
                    format!("a record at {rec} runs past the chunk's {size} bytes"),
                );
            }
        }
    }
    if bwd_offset != 0
        && records
            .checked_mul(4)
            .and_then(|n| n.checked_add(bwd_offset))
            .is_none_or(|e| e > size)
    {
        bad(
            off + 20,
            format!(
                "the backward links ({records} at {bwd_offset}) run past the chunk's {size} bytes"
            ),
        );
    }
}

/// A feature reference chunk (`crf1dm_get_labelref`, `crf1dm_get_attrref`): one offset per
/// label or attribute (crf1dmw writes two more for the labels: BOS and EOS), each to a count and that many feature ids below `features`.
fn refs(b: &[u8], id: &[u8], off: usize, count: u32, features: u32, out: &mut Vec<Problem>) {
    let name = String::from_utf8_lossy(id);
    let mut bad = |at: usize, why: String| {
        out.push((format!("byte {at}"), format!("the {name} chunk: {why}")))
    };
    if b.get(off..off + 4) != Some(id) {
        return bad(off, format!("does not start with {name:?}"));
    }
    let size = u32_at(b, off + 4).unwrap_or(0) as usize;
    let num = u32_at(b, off + 8).unwrap_or(0);
    let end = off + size;
    let table_end = (num as usize)
        .checked_mul(4)
        .and_then(|n| n.checked_add(off + CHUNK_SIZE));
    if num < count || table_end.is_none_or(|t| t > end) {
        return bad(off, format!("{num} entries in {size} bytes for {count} items: the tagger looks up each of the {count} by index"));
    }
    for i in 0..num as usize {
        let at = off + CHUNK_SIZE + 4 * i;
        let list = u32_at(b, at).unwrap_or(0) as usize;
        if list == 0 && i >= count as usize {
            // The BOS and EOS entries, which crf1dmw leaves unwritten (0).
            continue;
        }
        let n = u32_at(b, list).map(|n| n as usize);
        let list_end = n.and_then(|n| n.checked_mul(4)?.checked_add(list.checked_add(4)?));
        if list < off || list_end.is_none_or(|e| e > end) {
            return bad(
                at,
                format!("the reference list of item {i} at byte {list} lies outside the chunk"),
            );
        }
        for k in 0..n.unwrap_or(0) {
            let fid = u32_at(b, list + 4 + 4 * k).unwrap_or(u32::MAX);
            if fid >= features {
                return bad(
                    list + 4 + 4 * k,
                    format!("item {i} refers to feature {fid}, past the {features} features"),
                );
            }
        }
    }
}
