//! A `torch.distributed.checkpoint` directory read as `FileSystemReader` reads it (torch
//! 2.15.0, `torch/distributed/checkpoint/filesystem.py`): each `.distcp` file is items one
//! after another, located only by the `.metadata` beside it (`storage_data`: relative path,
//! offset, length). The torch-zip plugin reads the `.metadata` and gives its items
//! ([`Fact::DcpItems`]); here each item's slice of its file is handed to that plugin's readers as
//! a file of its own ([`Window`]), as `read_data` hands it to `torch.load`
//! (`_create_file_view` of the item's offset and length), and what they read replaces what
//! the `.distcp` file's reader made of the whole file (a zip whose end record is its last
//! item's, which is not the file's zip).
//!
//! * Tensor items: one tensor each (`torch.load(slice, weights_only=True)` of a `torch.save`d
//!   tensor), named by its fully qualified name (a chunk of a sharded tensor: with its
//!   offsets), its bytes' place shifted to the file's; a slice that holds anything else, or a
//!   tensor whose shape is not the chunk's (`read_data` raises on the size check), is unread
//!   and a LEAD.
//! * Bytes items: `DefaultLoadPlanner.load_bytes` calls `torch.load(bytes,
//!   weights_only=False)`: their pickles are judged by the plugin's rules as any pickle is.
//! * The layout: an item past the end of its file is a LEAD (`read_data` would fail), two
//!   items sharing bytes FAIL (the bytes are read as two things), bytes no item covers are a
//!   LEAD (no loader reads them; nothing checked them), an item through a stream transform
//!   (compression) is unread and a LEAD; a file the metadata names that is not a regular file
//!   of the directory FAILs when absent (DCP would read bytes the scan never saw) and is a
//!   LEAD when no reader claimed it. A `.metadata` scanned alone is a LEAD: its items were
//!   not read.

use crate::read::source::InputFile;
use socair_plugin_api::{
    abi_stable::{
        sabi_trait::TD_Opaque,
        sabi_types::RRef,
        std_types::{ROption, RResult, RSlice, RSliceMut, RString, RVec, Tuple2},
    },
    ByteSource, ByteSource_TO, Finding, FormatReaderBox, OpenedFile, PluginError, PluginErrorKind,
    ReadOptions, ReportRow, RowStatus, Severity, TensorDescriptor, TensorOrigin, Unread,
};
use socair_plugin_kit::report::{PICKLE_CHECK, STRUCTURE_CHECK};

use socair_plugin_api::facts::{DcpItem, DcpItemKind, Fact};

/// The format name given to a `.distcp` file read item by item.
pub const FORMAT: &str = "torch-dcp";

/// Findings listed per check and file; the rest are counted in one more.
const MAX_FINDINGS: usize = socair_plugin_kit::bounded::FINDINGS_PER_ROW;

/// How far into an item its reader is chosen (the host's `DETECT_HEAD`).
const HEAD: u64 = 4096;

/// A file an artifact's reader read, as this module needs it (the artifact's `FileJob`).
pub(super) trait Job {
    /// Its path relative to the artifact.
    fn rel(&self) -> &str;
    /// The open file.
    fn input(&self) -> &InputFile;
    /// The readers of the plugin that read it.
    fn readers(&self) -> &[FormatReaderBox];
}

/// What the artifact says of a file it holds, for [`read_items`].
pub(super) struct Directory<'a> {
    /// Whether the artifact is a directory.
    pub is_dir: bool,
    /// Whether a file of that path is a regular file of it (read by a reader or not).
    pub holds: &'a dyn Fn(&str) -> bool,
    /// The path, relative to the artifact, of a file a file's descriptor names.
    pub data_path: &'a dyn Fn(&str, &str) -> Result<String, String>,
}

/// What reports call an item.
trait Named {
    /// Its name: the fqn, and a chunk's offsets when it is not the whole tensor.
    fn name(&self) -> String;
    /// Its place: kind, name and bytes.
    fn place(&self) -> String;
}

impl Named for DcpItem {
    fn name(&self) -> String {
        match (&self.chunk, &self.sizes) {
            (ROption::RSome(c), ROption::RSome(_)) if c.iter().any(|&o| o != 0) => {
                format!("{}@{:?}", self.fqn, c.as_slice())
            }
            _ => self.fqn.to_string(),
        }
    }

    fn place(&self) -> String {
        format!(
            "{} item {:?} (bytes {}..{})",
            self.kind.as_str(),
            self.name(),
            self.offset,
            self.offset.saturating_add(self.length)
        )
    }
}

/// A slice of an open file, read as a file of its own.
struct Window<'a> {
    input: &'a InputFile,
    offset: u64,
    len: u64,
}

impl ByteSource for Window<'_> {
    fn file_len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: RSliceMut<'_, u8>) -> RResult<(), PluginError> {
        let inside = offset
            .checked_add(buf.len() as u64)
            .is_some_and(|end| end <= self.len);
        if !inside {
            return RResult::RErr(PluginError::new(
                PluginErrorKind::Io,
                format!(
                    "read of {} bytes at {offset} past the end of a {}-byte item",
                    buf.len(),
                    self.len
                ),
            ));
        }
        self.input.read_at(self.offset + offset, buf)
    }

    fn prefetch(&self, ranges: RSlice<'_, Tuple2<u64, u64>>) -> bool {
        let shifted: Vec<(u64, u64)> = ranges
            .iter()
            .map(|r| (self.offset.saturating_add(r.0), r.1))
            .collect();
        self.input.prefetch(&shifted);
        false
    }
}

/// What is said of one file: rows by check, its tensors and what was not read.
#[derive(Default)]
struct Said {
    structure: Vec<(RowStatus, String, String)>,
    pickle: Vec<(RowStatus, String, String)>,
    tensors: Vec<TensorDescriptor>,
    unread: Vec<Unread>,
    pickle_summaries: Vec<String>,
    /// The bytes items: Python values a conversion does not carry.
    not_carried: Vec<String>,
}

/// Reads the items of every `.metadata` among `all` in the `.distcp` files of `dir`, each
/// read with `options` (the artifact's rule sets in them).
pub(super) fn read_items<J: Job>(
    dir: &Directory<'_>,
    all: &mut [(J, OpenedFile)],
    options: &ReadOptions,
) {
    let metas: Vec<(usize, Vec<DcpItem>)> = all
        .iter()
        .enumerate()
        .filter_map(|(i, (_, o))| {
            o.facts.iter().find_map(|f| match f {
                Fact::DcpItems(items) => Some((i, items.to_vec())),
                _ => None,
            })
        })
        .collect();
    for (m, items) in metas {
        let meta_rel = all[m].0.rel().to_owned();
        let mut about_meta: Vec<(RowStatus, String, String)> = Vec::new();
        if !dir.is_dir {
            let why = format!("a torch.distributed.checkpoint metadata file (dcp.save's .metadata): its {} items lie in the .distcp files beside it, which dcp.load reads and this scan did not; scan the checkpoint's directory", items.len());
            all[m].1.unread.push(Unread {
                tensor: ROption::RNone,
                reason: why.as_str().into(),
                outside_model: false,
            });
            about_meta.push((RowStatus::Lead, "file".into(), why));
        } else {
            let mut by_file: std::collections::BTreeMap<String, Vec<DcpItem>> = Default::default();
            for item in items {
                match (dir.data_path)(&meta_rel, item.file.as_str()) {
                    Ok(rel) => by_file.entry(rel).or_default().push(item),
                    Err(why) => about_meta.push((
                        RowStatus::Fail,
                        item.place(),
                        format!("FileSystemReader opens the checkpoint's path joined with this item's relative_path: {why}"),
                    )),
                }
            }
            for (rel, items) in by_file {
                // Only a `.distcp` file is read as items (FileSystemWriter names every file it
                // writes so, `DEFAULT_SUFFIX`): any other file the metadata names keeps its
                // own reader's verdict, which an item reading must not replace.
                if !rel.ends_with(".distcp") {
                    about_meta.push((
                        RowStatus::Lead,
                        "storage_data".into(),
                        format!("{} items lie in {rel:?}, which is not a .distcp file (FileSystemWriter writes no other): they are not read as items, and the file is judged as itself", items.len()),
                    ));
                    continue;
                }
                let Some(j) = all.iter().position(|(job, _)| job.rel() == rel) else {
                    let (status, why) = if (dir.holds)(&rel) {
                        (
                            RowStatus::Lead,
                            "which no reader claims: its items were not read",
                        )
                    } else {
                        (RowStatus::Fail, "which is not a regular file of the directory: dcp.load would read bytes this scan never saw")
                    };
                    about_meta.push((
                        status,
                        "storage_data".into(),
                        format!("{} items lie in {rel:?}, {why}", items.len()),
                    ));
                    continue;
                };
                let said = read_file(
                    all[m].0.readers(),
                    all[j].0.input(),
                    items,
                    &meta_rel,
                    options,
                );
                all[j].1 = opened_of(said, &meta_rel);
            }
        }
        if !about_meta.is_empty() {
            let status = worst(about_meta.iter().map(|f| f.0));
            all[m].1.rows.push(row(
                STRUCTURE_CHECK,
                status,
                "the torch.distributed.checkpoint items this .metadata locates: not all read"
                    .into(),
                &about_meta,
            ));
        }
    }
}

/// Reads `items` (all in `input`) with `plugin`'s readers, each slice as `torch.load` reads it.
fn read_file(
    readers: &[FormatReaderBox],
    input: &InputFile,
    mut items: Vec<DcpItem>,
    meta_rel: &str,
    options: &ReadOptions,
) -> Said {
    let mut said = Said::default();
    let reader = |format: &str| readers.iter().find(|r| r.format() == format);
    let (zip, legacy) = (reader("torch-zip"), reader("torch-legacy"));
    items.sort_by_key(|i| (i.offset, i.length));
    let len = input.len();
    let mut covered = 0u64;
    for item in &items {
        let end = item.offset.saturating_add(item.length);
        if item.offset > covered {
            said.structure.push((
                RowStatus::Lead,
                format!("bytes {covered}..{}", item.offset.min(len)),
                format!("no item of {meta_rel} covers these bytes: dcp.load never reads them, and nothing checked them"),
            ));
        }
        let unread = |said: &mut Said, status, why: String| {
            said.unread.push(Unread {
                tensor: ROption::RSome(item.name().into()),
                reason: format!("{}: {why}", item.place()).into(),
                outside_model: false,
            });
            said.structure.push((status, item.place(), why));
        };
        if item.offset < covered {
            // Not read again: what socair reads of a file stays within its bytes.
            covered = covered.max(end);
            unread(&mut said, RowStatus::Fail, "it shares bytes with another item: FileSystemReader reads them as both (not read a second time here)".into());
            continue;
        }
        covered = covered.max(end);
        if end > len {
            unread(&mut said, RowStatus::Lead, format!("it runs past the end of the {len}-byte file: FileSystemReader's slice would be short, and torch.load fails"));
            continue;
        }
        if item.transformed {
            unread(&mut said, RowStatus::Lead, "it is read through stream transforms (transform_descriptors: a storage extension such as compression), which socair does not undo: not checked".into());
            continue;
        }
        let window = Window {
            input,
            offset: item.offset,
            len: item.length,
        };
        let mut head = vec![0u8; item.length.min(HEAD) as usize];
        let chosen = match window.read_at(0, RSliceMut::from_mut_slice(&mut head)) {
            RResult::ROk(()) => [zip, legacy]
                .into_iter()
                .flatten()
                .find(|r| r.detect(head.as_slice().into(), item.length)),
            RResult::RErr(_) => None,
        };
        let Some(chosen) = chosen else {
            unread(
                &mut said,
                RowStatus::Lead,
                "neither a torch zip nor a pickle, which is all torch.load reads: not checked"
                    .into(),
            );
            continue;
        };
        let source = ByteSource_TO::from_ptr(RRef::new(&window), TD_Opaque);
        match chosen.open(source, options.clone()).into_result() {
            Ok(opened) => take_item(&mut said, item, opened),
            Err(e) => unread(
                &mut said,
                RowStatus::Lead,
                format!("its reader failed: {e}"),
            ),
        }
    }
    if covered < len {
        said.structure.push((
            RowStatus::Lead,
            format!("bytes {covered}..{len}"),
            format!("no item of {meta_rel} covers these bytes: dcp.load never reads them, and nothing checked them"),
        ));
    }
    said
}

/// Adds what a reader made of one item's slice.
fn take_item(said: &mut Said, item: &DcpItem, opened: OpenedFile) {
    let place = item.place();
    for r in opened.rows.iter() {
        let list = match r.check.as_str() {
            PICKLE_CHECK => &mut said.pickle,
            _ => &mut said.structure,
        };
        // A reader's NOT_TESTED structure row says only that a pickle has no structure.
        if r.status == RowStatus::NotTested {
            continue;
        }
        if r.check.as_str() == PICKLE_CHECK {
            said.pickle_summaries
                .push(format!("{place}: {}", r.summary));
        }
        if r.status != RowStatus::Pass && r.findings.is_empty() {
            list.push((r.status, place.clone(), r.summary.to_string()));
        }
        for f in r.findings.iter() {
            list.push((
                status_of(f, r),
                format!("{place} {}", f.place),
                f.reason.to_string(),
            ));
        }
    }
    let shift = |mut t: TensorDescriptor, name: String| {
        for range in t.ranges.iter_mut() {
            range.offset = range.offset.saturating_add(item.offset);
        }
        t.origin = match &t.origin {
            ROption::RSome(o) => ROption::RSome(TensorOrigin {
                container: format!("{} {}", place, o.container).into(),
                offset: o.offset,
            }),
            ROption::RNone => ROption::RSome(TensorOrigin {
                container: place.as_str().into(),
                offset: t.ranges.first().map_or(0, |r| r.offset - item.offset),
            }),
        };
        t.name = name.into();
        t
    };
    if item.kind == DcpItemKind::Tensor {
        let sizes: Vec<u64> = item
            .sizes
            .as_ref()
            .map_or(&[][..], |s| s.as_slice())
            .iter()
            .map(|&s| u64::try_from(s).unwrap_or(u64::MAX))
            .collect();
        let mut tensors = opened.tensors.into_iter();
        match (tensors.next(), tensors.next(), opened.unread.is_empty()) {
            (Some(t), None, true) if t.shape.as_slice() == sizes.as_slice() => {
                said.tensors.push(shift(t, item.name()));
            }
            (Some(t), None, true) => {
                let why = format!(
                    "torch.load gives a tensor of shape {:?}, not the chunk's {sizes:?}: read_data's size check raises",
                    t.shape.as_slice()
                );
                said.unread.push(Unread {
                    tensor: ROption::RSome(item.name().into()),
                    reason: format!("{place}: {why}").into(),
                    outside_model: false,
                });
                said.structure.push((RowStatus::Lead, place, why));
            }
            _ => {
                let why = "the slice does not hold exactly one tensor, as torch.save(tensor) writes: read_data would not load it as this item".to_owned();
                said.unread.push(Unread {
                    tensor: ROption::RSome(item.name().into()),
                    reason: format!("{place}: {why}").into(),
                    outside_model: false,
                });
                said.structure.push((RowStatus::Lead, place, why));
            }
        }
        return;
    }
    // A bytes item: a Python value (its tensors, if any, outside the model), not carried.
    said.not_carried.push(format!(
        "{} (a torch.distributed.checkpoint bytes item: a pickled Python value)",
        item.fqn
    ));
    for t in opened.tensors {
        let name = format!("{}.{}", item.fqn, t.name);
        let mut t = shift(t, name);
        t.outside_model = true;
        said.tensors.push(t);
    }
    for u in opened.unread {
        said.unread.push(Unread {
            tensor: match &u.tensor {
                ROption::RSome(n) => ROption::RSome(format!("{}.{n}", item.fqn).into()),
                ROption::RNone => ROption::RNone,
            },
            reason: format!("{place}: {}", u.reason).into(),
            outside_model: true,
        });
    }
}

/// A finding's own status where its row names its findings' severities (torch-zip's pickle
/// rows), else the row's; a note (a count of findings not listed) stands under the row's.
fn status_of(f: &Finding, row: &ReportRow) -> RowStatus {
    match f.severity {
        Severity::Fail | Severity::Lead if row.names_severities => f.severity.row_status(),
        _ => row.status,
    }
}

/// The worst of some statuses (PASS for none).
fn worst(statuses: impl Iterator<Item = RowStatus>) -> RowStatus {
    statuses
        .max_by_key(|s| s.badness())
        .unwrap_or(RowStatus::Pass)
}

/// A row of `check` with `findings` `(status, place, reason)`, at most [`MAX_FINDINGS`]
/// listed (the worst first), each with its severity named in reports.
fn row(
    check: &str,
    status: RowStatus,
    summary: String,
    findings: &[(RowStatus, String, String)],
) -> ReportRow {
    let mut listed: Vec<&(RowStatus, String, String)> =
        findings.iter().filter(|f| f.0 != RowStatus::Pass).collect();
    listed.sort_by_key(|f| std::cmp::Reverse(f.0 == RowStatus::Fail));
    let more = listed.len().saturating_sub(MAX_FINDINGS);
    let mut out: Vec<Finding> = listed
        .iter()
        .take(MAX_FINDINGS)
        .map(|(s, place, reason)| {
            let severity = if *s == RowStatus::Fail {
                Severity::Fail
            } else {
                Severity::Lead
            };
            Finding::new(severity, place.as_str(), reason.as_str())
        })
        .collect();
    if more > 0 {
        out.push(Finding::new(
            Severity::Note,
            "(the rest of the file)",
            format!("… and {more} more findings"),
        ));
    }
    ReportRow {
        check: check.into(),
        status,
        summary: summary.into(),
        findings: out.into(),
        names_severities: true,
    }
}

/// The file's reading, item by item, as the plugin API reports it.
fn opened_of(said: Said, meta_rel: &str) -> OpenedFile {
    let n = said.pickle_summaries.len();
    let structure_status = worst(said.structure.iter().map(|f| f.0));
    let structure_summary = match structure_status {
        RowStatus::Pass => format!(
            "a torch.distributed.checkpoint data file: {n} items at the offsets and lengths {meta_rel} gives, every byte in one item, each slice read as FileSystemReader.read_data hands it to torch.load (torch 2.15.0); {} tensors",
            said.tensors.len()
        ),
        _ => format!(
            "a torch.distributed.checkpoint data file, its items located by {meta_rel}: {} finding(s) in its layout or its items",
            said.structure.iter().filter(|f| f.0 != RowStatus::Pass).count()
        ),
    };
    let pickle_status = worst(said.pickle.iter().map(|f| f.0));
    let pickle_summary = match pickle_status {
        RowStatus::Pass => format!(
            "each of the {n} items' pickles lies inside the rules torch.load's reading is judged by: {}",
            said.pickle_summaries
                .iter()
                .take(4)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        ),
        _ => format!(
            "{} finding(s) in the items' pickles (a tensor item is read with weights_only=True, a bytes item with weights_only=False: DefaultLoadPlanner.load_bytes)",
            said.pickle.iter().filter(|f| f.0 != RowStatus::Pass).count()
        ),
    };
    let mut rows = vec![row(
        STRUCTURE_CHECK,
        structure_status,
        structure_summary,
        &said.structure,
    )];
    if n > 0 || !said.pickle.is_empty() {
        rows.push(row(
            PICKLE_CHECK,
            pickle_status,
            pickle_summary,
            &said.pickle,
        ));
    }
    OpenedFile {
        format: FORMAT.into(),
        tensors: said.tensors.into(),
        unread: said.unread.into(),
        rows: rows.into(),
        metadata: RVec::new(),
        not_carried: said.not_carried.into_iter().map(RString::from).collect(),
        facts: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_named_by_fqn_and_chunk() {
        let item = |chunk: Option<Vec<i64>>| DcpItem {
            fqn: "w".into(),
            sizes: chunk.as_ref().map(|c| RVec::from(vec![1; c.len()])).into(),
            whole: ROption::RNone,
            chunk: chunk.map(RVec::from).into(),
            kind: DcpItemKind::Tensor,
            file: "__0_0.distcp".into(),
            offset: 10,
            length: 5,
            transformed: false,
        };
        assert_eq!(item(Some(vec![0, 0])).name(), "w");
        assert_eq!(item(Some(vec![2, 0])).name(), "w@[2, 0]");
        assert_eq!(item(None).place(), "tensor item \"w\" (bytes 10..15)");
        assert_eq!(
            worst([RowStatus::Pass, RowStatus::Lead].into_iter()),
            RowStatus::Lead
        );
        let lead = Finding::new(Severity::Lead, "p", "x");
        let note = Finding::new(Severity::Note, "p", "y");
        let mut r = ReportRow {
            check: PICKLE_CHECK.into(),
            status: RowStatus::Fail,
            summary: "s".into(),
            findings: vec![lead.clone(), note.clone()].into(),
            names_severities: true,
        };
        assert_eq!(status_of(&lead, &r), RowStatus::Lead);
        assert_eq!(status_of(&note, &r), RowStatus::Fail);
        r.names_severities = false;
        assert_eq!(status_of(&lead, &r), RowStatus::Fail);
    }

    #[test]
    fn a_window_reads_only_its_slice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let input = InputFile::open(&path).unwrap();
        let w = Window {
            input: &input,
            offset: 3,
            len: 4,
        };
        let mut buf = [0u8; 4];
        assert!(w.read_at(0, RSliceMut::from_mut_slice(&mut buf)).is_ok());
        assert_eq!(&buf, b"3456");
        let mut buf = [0u8; 2];
        assert!(w.read_at(3, RSliceMut::from_mut_slice(&mut buf)).is_err());
        assert_eq!(w.file_len(), 4);
    }
}
