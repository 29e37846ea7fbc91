//! The members a container hands back (`FormatReader::open_container`: a tar archive's files,
//! a compressed stream's contents), each read by whichever reader claims it, as a directory's
//! files are ([`super::choose`]), and folded into the container's own reading: their rows
//! under the container's, each finding placed by the member's name; their tensors as spans of
//! the container (a member that is a span of it) or as bytes held inline (a decoded member),
//! so that a tar's or a gzip's model is fingerprinted like the model itself.
//!
//! Bounded: containers nest at most [`MAX_DEPTH`] deep (the file itself is depth 1), the
//! bytes decoded over the whole file are held to the budget the host gives its readers, and
//! each row keeps at most [`MAX_FINDINGS`] findings.

use super::choose::{pick_reader, Pick, Purpose, ReaderChoice};
use crate::read::plugins::PluginSet;
use crate::read::source::InputFile;
use socair_plugin_api::{
    abi_stable::{
        sabi_trait::TD_Opaque,
        sabi_types::RRef,
        std_types::{ROption, RResult, RSlice, RSliceMut, RVec, Tuple2},
    },
    ByteRange, ByteSource, ByteSource_TO, Finding, FormatReaderBox, Member, MemberBytes,
    OpenedContainer, OpenedFile, PluginError, PluginErrorKind, ReadOptions, ReportRow, RowStatus,
    Severity, Unread,
};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

/// Containers nested deeper than this (the file itself is depth 1) are not opened: the zip
/// walk's depth ([`socair_plugin_kit`]'s archive readers stop at the same).
pub const MAX_DEPTH: usize = 4;
/// The most findings one row keeps once members' findings are folded into it (the scale
/// every first-party reader's rows keep to); a note counts the rest.
pub const MAX_FINDINGS: usize = socair_plugin_kit::bounded::FINDINGS_PER_ROW;
/// The longest a row's summary grows to as members' summaries are folded into it.
const MAX_SUMMARY: usize = 4096;
/// What ends a summary past [`MAX_SUMMARY`].
const SUMMARIES_LEFT_OUT: &str =
    "the other members' summaries are left out (their findings are listed)";
/// The check a container's structure and its members' claims are reported under.
const STRUCTURE_CHECK: &str = "Format and structure";
/// How far into a member readers look to detect its format (the host's head for files).
const HEAD: u64 = super::choose::DETECT_HEAD as u64;

/// Where a member's bytes come from: a span of the file being read, or of bytes a container
/// reader decoded.
#[derive(Clone, Copy)]
pub(super) enum Base<'a> {
    /// The file itself.
    File(&'a InputFile),
    /// Bytes in memory.
    Memory(&'a [u8]),
}

/// A span of a [`Base`], served to readers as a file of its own.
#[derive(Clone, Copy)]
pub(super) struct Span<'a> {
    base: Base<'a>,
    offset: u64,
    len: u64,
}

impl<'a> Span<'a> {
    /// The whole file.
    pub(super) fn file(input: &'a InputFile) -> Self {
        Span {
            base: Base::File(input),
            offset: 0,
            len: input.len(),
        }
    }

    fn memory(bytes: &'a [u8]) -> Self {
        Span {
            base: Base::Memory(bytes),
            offset: 0,
            len: bytes.len() as u64,
        }
    }

    /// The span `range` of this one, if it lies inside it.
    fn sub(&self, range: ByteRange) -> Option<Span<'a>> {
        let end = range.offset.checked_add(range.len)?;
        (end <= self.len).then_some(Span {
            base: self.base,
            offset: self.offset + range.offset,
            len: range.len,
        })
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), String> {
        offset
            .checked_add(out.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| format!("{} bytes at {offset} lie past the end", out.len()))?;
        let at = self.offset + offset;
        match self.base {
            // Through the file's own source, so that the bytes read count towards its digest
            // as every reader's reads do (each byte read once).
            Base::File(input) => ByteSource::read_at(input, at, RSliceMut::from_mut_slice(out))
                .into_result()
                .map_err(|e| e.message.to_string()),
            Base::Memory(bytes) => {
                let slice = usize::try_from(at)
                    .ok()
                    .and_then(|s| bytes.get(s..s.checked_add(out.len())?))
                    .ok_or_else(|| "a span past its bytes".to_owned())?;
                out.copy_from_slice(slice);
                Ok(())
            }
        }
    }

    fn head(&self) -> Vec<u8> {
        let mut head = vec![0u8; self.len.min(HEAD) as usize];
        match self.read(0, &mut head) {
            Ok(()) => head,
            Err(_) => Vec::new(),
        }
    }
}

impl ByteSource for Span<'_> {
    fn file_len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, mut buf: RSliceMut<'_, u8>) -> RResult<(), PluginError> {
        self.read(offset, buf.as_mut_slice())
            .map_err(|e| PluginError::new(PluginErrorKind::Io, e))
            .into()
    }

    fn prefetch(&self, ranges: RSlice<'_, Tuple2<u64, u64>>) -> bool {
        match self.base {
            // The hint moved to where the span lies in the file (an object in object storage
            // fetches them side by side); bytes in memory need none.
            Base::File(input) => {
                let moved: Vec<Tuple2<u64, u64>> = ranges
                    .iter()
                    .filter(|r| r.0 < self.len)
                    .map(|r| Tuple2(self.offset + r.0, r.1.min(self.len - r.0)))
                    .collect();
                ByteSource::prefetch(input, RSlice::from_slice(&moved))
            }
            Base::Memory(_) => false,
        }
    }
}

/// One reading of a file and the members it hands back, under one budget.
pub(super) struct Members<'r> {
    pub(super) plugins: &'r PluginSet,
    pub(super) choice: &'r ReaderChoice,
    pub(super) purpose: Purpose,
    pub(super) options: &'r ReadOptions,
    /// Bytes members may still decode into memory.
    pub(super) left: Cell<u64>,
}

impl Members<'_> {
    /// Opens `span` with `reader` at `depth`; when the reader is a container, its members are
    /// read and folded in.
    pub(super) fn open(
        &self,
        reader: &FormatReaderBox,
        span: Span<'_>,
        name: &str,
        depth: usize,
    ) -> Result<OpenedFile, PluginError> {
        let source = || ByteSource_TO::from_ptr(RRef::new(&span), TD_Opaque);
        let left = if depth >= MAX_DEPTH {
            0
        } else {
            self.left.get()
        };
        match reader
            .open_container(source(), self.options.clone(), left)
            .into_result()
        {
            Ok(container) => Ok(self.fold_members(container, span, name, depth)),
            Err(e) if e.kind == PluginErrorKind::Unsupported => {
                reader.open(source(), self.options.clone()).into_result()
            }
            Err(e) => Err(e),
        }
    }

    fn fold_members(
        &self,
        container: OpenedContainer,
        span: Span<'_>,
        container_name: &str,
        depth: usize,
    ) -> OpenedFile {
        let OpenedContainer {
            mut opened,
            members,
        } = container;
        let named: Vec<(String, &Member)> = members
            .iter()
            .map(|m| {
                let name = if m.name.is_empty() {
                    stream_name(container_name)
                } else {
                    m.name.to_string()
                };
                (name, m)
            })
            .collect();
        if depth >= MAX_DEPTH {
            for (name, _) in &named {
                lead(
                    &mut opened,
                    name,
                    format!("not read: containers nested deeper than {MAX_DEPTH} are not opened"),
                );
            }
            return opened;
        }
        // Every member's bytes, and by name (a repeated name's last copy, which extraction
        // keeps): a member's reader may place tensors in another member (a checkpoint
        // index's data shard), as a directory's files do.
        let mut spans = Vec::with_capacity(named.len());
        for (name, member) in &named {
            let sub = match &member.bytes {
                MemberBytes::Range(range) => {
                    let sub = span.sub(*range);
                    if sub.is_none() {
                        lead(
                            &mut opened,
                            name,
                            format!(
                                "not read: the container's reader placed it at {} bytes from byte {}, past the container's {} bytes",
                                range.len, range.offset, span.len
                            ),
                        );
                    }
                    sub
                }
                MemberBytes::Decoded(bytes) => {
                    let held = bytes.len() as u64;
                    self.left.set(self.left.get().saturating_sub(held));
                    Some(Span::memory(bytes.as_slice()))
                }
            };
            spans.push(sub);
        }
        let siblings = Siblings {
            spans: named
                .iter()
                .zip(&spans)
                .filter_map(|((name, _), sub)| Some((name.clone(), (*sub)?)))
                .collect(),
            used: RefCell::default(),
        };
        let mut unclaimed = Vec::new();
        for ((name, member), sub) in named.iter().zip(spans) {
            let Some(sub) = sub else {
                continue;
            };
            if !self.read_member(&mut opened, name, sub, depth, &siblings) {
                unclaimed.push((name, member.unclaimed.as_str()));
            }
        }
        // A member no reader claims is a LEAD, in the container's words when it gave some,
        // unless another member's reader read tensors out of it.
        let used = siblings.used.into_inner();
        for (name, why) in unclaimed {
            if used.contains(name.as_str()) {
                continue;
            }
            let why = if why.is_empty() {
                "no loaded plugin reads this member's format: nothing in it was checked"
            } else {
                why
            };
            lead(&mut opened, name, why.into());
        }
        opened
    }

    /// Reads one member with the readers that claim it and folds what they found in; false
    /// when no reader claims it.
    fn read_member(
        &self,
        opened: &mut OpenedFile,
        name: &str,
        span: Span<'_>,
        depth: usize,
        siblings: &Siblings<'_>,
    ) -> bool {
        let head = span.head();
        let readers = match pick_reader(&head, &span, name, self.plugins, self.choice, self.purpose)
        {
            Pick::Chosen(c) => std::iter::once(c.reader).chain(c.also).collect(),
            Pick::Several { readers, .. } => match self.purpose {
                Purpose::Judge => readers,
                Purpose::Read => readers.into_iter().take(1).collect(),
            },
            Pick::Unclaimed => return false,
            Pick::Unreadable(why) => {
                lead(opened, name, format!("not read: {why}"));
                return true;
            }
        };
        let formats: Vec<String> = readers
            .iter()
            .map(|(_, r)| r.format().to_string())
            .collect();
        for (plugin, reader) in &readers {
            match self.open(reader, span, name, depth + 1) {
                Ok(mut member) => {
                    super::stem::expand_stem(name, &mut member);
                    fold(opened, name, member, &span, siblings, &self.left)
                }
                Err(e) => lead(
                    opened,
                    name,
                    format!("plugin {} could not read it: {e}", plugin.manifest.name),
                ),
            }
        }
        let mut distinct = formats.clone();
        distinct.dedup();
        if distinct.len() > 1 {
            lead(
                opened,
                name,
                format!(
                    "read as {}: a member that readers of several formats claim is a polyglot, which each loader reads as its own format; every reading's verdict counts",
                    formats.join(" and as ")
                ),
            );
        }
        true
    }
}

/// A container's members by name, and the names of those whose bytes another member's
/// tensors were read from.
struct Siblings<'a> {
    spans: HashMap<String, Span<'a>>,
    used: RefCell<HashSet<String>>,
}

impl<'a> Siblings<'a> {
    /// The member that `file`, named by member `of` relative to its own directory, is: the
    /// name joined to `of`'s directory, with no `.`/`..` component, no absolute path.
    fn get(&self, of: &str, file: &str) -> Option<(String, Span<'a>)> {
        if file.starts_with('/')
            || file
                .split('/')
                .any(|c| c == ".." || c == "." || c.is_empty())
        {
            return None;
        }
        let dir = of.rfind('/').map_or("", |i| &of[..=i]);
        let name = format!("{dir}{file}");
        let span = *self.spans.get(&name)?;
        Some((name, span))
    }
}

/// The name of the one stream a compressed file holds, after the file: its name without the
/// compressor's extension (`model.safetensors.gz` → `model.safetensors`), a `.tgz`-like name's
/// tar (`x.tgz` → `x.tar`), or the name itself marked when it has no extension.
fn stream_name(container: &str) -> String {
    let base_at = container.rfind('/').map_or(0, |i| i + 1);
    match container[base_at..].rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            let dir = &container[..base_at];
            match ext.to_ascii_lowercase().as_str() {
                "tgz" | "taz" | "tbz" | "tbz2" | "tb2" | "txz" | "tzst" | "tlz4" => {
                    format!("{dir}{stem}.tar")
                }
                _ => format!("{dir}{stem}"),
            }
        }
        _ => format!("{container} (decoded)"),
    }
}

/// Adds a LEAD about member `name` to the container's structure row.
fn lead(opened: &mut OpenedFile, name: &str, why: String) {
    let row = ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: RowStatus::Lead,
        summary: format!("{name}: {why}").into(),
        findings: vec![Finding::new(Severity::Lead, name, why)].into(),
        names_severities: false,
    };
    fold_row(opened, row);
}

/// Folds what a reader found in member `name` (read from `span`) into the container's reading.
fn fold(
    opened: &mut OpenedFile,
    name: &str,
    member: OpenedFile,
    span: &Span<'_>,
    siblings: &Siblings<'_>,
    left: &Cell<u64>,
) {
    for row in member.rows {
        let mut row = row;
        row.summary = format!("{name}: {}", row.summary).into();
        for f in row.findings.iter_mut() {
            f.place = format!("{name}: {}", f.place).into();
        }
        fold_row(opened, row);
    }
    for t in member.tensors {
        match placed(t, name, span, siblings, left) {
            Ok(t) => opened.tensors.push(t),
            Err(u) => opened.unread.push(u),
        }
    }
    for u in member.unread {
        opened.unread.push(Unread {
            reason: format!("in {name}: {}", u.reason).into(),
            ..u
        });
    }
    for n in member.not_carried {
        opened.not_carried.push(format!("{name}: {n}").into());
    }
}

/// A member's tensor as the container's: its spans moved by the member's place in the file,
/// or (a decoded member) its bytes held inline, counted against the bytes members may still
/// hold (`left`: a reader listing one span for many tensors cannot make the host copy it
/// without bound). A tensor in another file beside member `name` is read from the member of
/// that name (noted as used); one in a file the container does not hold, or whose bytes
/// cannot be taken, is unread.
fn placed(
    mut t: socair_plugin_api::TensorDescriptor,
    name: &str,
    span: &Span<'_>,
    siblings: &Siblings<'_>,
    left: &Cell<u64>,
) -> Result<socair_plugin_api::TensorDescriptor, Unread> {
    let unread = |t: &socair_plugin_api::TensorDescriptor, why: String| Unread {
        tensor: ROption::RSome(t.name.clone()),
        reason: why.into(),
        outside_model: false,
    };
    let mut span = span;
    let beside;
    if let ROption::RSome(file) = &t.file {
        match siblings.get(name, file) {
            Some((sibling, sub)) => {
                siblings.used.borrow_mut().insert(sibling);
                beside = sub;
                span = &beside;
                t.file = ROption::RNone;
            }
            None => {
                return Err(unread(
                    &t,
                    format!(
                        "its bytes are in another file, {file}, which the container does not hold"
                    ),
                ))
            }
        }
    }
    if t.inline.is_some() {
        return Ok(t);
    }
    match span.base {
        Base::File(_) => {
            for r in t.ranges.iter_mut() {
                match r.offset.checked_add(r.len).filter(|&e| e <= span.len) {
                    Some(_) => r.offset += span.offset,
                    None => {
                        return Err(unread(&t, "its bytes lie past the member's end".into()));
                    }
                }
            }
            Ok(t)
        }
        Base::Memory(_) => {
            let total = t
                .ranges
                .iter()
                .try_fold(0u64, |sum, r| sum.checked_add(r.len))
                .filter(|&n| n <= left.get());
            let Some(total) = total else {
                return Err(unread(
                    &t,
                    "holding its decoded bytes would pass the memory socair reads this file in: decompress the file and read what comes out to fingerprint it".into(),
                ));
            };
            left.set(left.get() - total);
            let mut bytes = Vec::new();
            for r in t.ranges.iter() {
                let mut piece = vec![
                    0u8;
                    usize::try_from(r.len)
                        .unwrap_or(usize::MAX)
                        .min(span.len as usize)
                ];
                if piece.len() as u64 != r.len || span.read(r.offset, &mut piece).is_err() {
                    return Err(unread(&t, "its bytes lie past the member's end".into()));
                }
                bytes.extend_from_slice(&piece);
            }
            t.ranges = RVec::new();
            t.inline = ROption::RSome(bytes.into());
            Ok(t)
        }
    }
}

/// Folds `row` into the container's row of the same check, or adds it: the worse status,
/// both summaries, the findings (at most [`MAX_FINDINGS`], a note counting the rest).
fn fold_row(opened: &mut OpenedFile, row: ReportRow) {
    let Some(into) = opened.rows.iter_mut().find(|r| r.check == row.check) else {
        let mut row = row;
        cap(&mut row.findings, 0);
        opened.rows.push(row);
        return;
    };
    if into.status != row.status || row.names_severities {
        into.names_severities = true;
    }
    into.status = into.status.worse(row.status);
    if into.summary.len() + row.summary.len() <= MAX_SUMMARY {
        into.summary = format!("{}; {}", into.summary, row.summary).into();
    } else if !into.summary.ends_with(SUMMARIES_LEFT_OUT) {
        into.summary = format!("{}; {SUMMARIES_LEFT_OUT}", into.summary).into();
    }
    let before = into.findings.len();
    into.findings.extend(row.findings);
    cap(&mut into.findings, before);
}

/// Keeps at most [`MAX_FINDINGS`] findings, the worst first among those past `kept` (the ones
/// already there stay), and a note of how many were left out.
fn cap(findings: &mut RVec<Finding>, kept: usize) {
    if findings.len() <= MAX_FINDINGS {
        return;
    }
    let mut all: Vec<Finding> = std::mem::take(findings).into_iter().collect();
    let mut rest = all.split_off(kept.min(MAX_FINDINGS));
    rest.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let room = MAX_FINDINGS.saturating_sub(all.len());
    let dropped = rest.len().saturating_sub(room);
    rest.truncate(room);
    all.extend(rest);
    all.push(Finding::new(
        Severity::Note,
        "members",
        format!("{dropped} more findings in the members are not listed"),
    ));
    *findings = all.into();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(check: &str, status: RowStatus, n: usize) -> ReportRow {
        ReportRow {
            check: check.into(),
            status,
            summary: "s".into(),
            findings: (0..n)
                .map(|i| Finding::new(Severity::Note, format!("p{i}"), "r"))
                .collect(),
            names_severities: false,
        }
    }

    fn opened(rows: Vec<ReportRow>) -> OpenedFile {
        OpenedFile {
            format: "c".into(),
            tensors: RVec::new(),
            unread: RVec::new(),
            rows: rows.into(),
            metadata: RVec::new(),
            not_carried: RVec::new(),
            facts: RVec::new(),
        }
    }

    #[test]
    fn a_member_row_makes_the_container_row_as_bad_as_it() {
        let mut o = opened(vec![row(STRUCTURE_CHECK, RowStatus::Pass, 1)]);
        fold_row(&mut o, row(STRUCTURE_CHECK, RowStatus::Fail, 2));
        assert_eq!(o.rows.len(), 1);
        assert_eq!(o.rows[0].status, RowStatus::Fail);
        assert!(o.rows[0].names_severities);
        assert_eq!(o.rows[0].findings.len(), 3);
        fold_row(&mut o, row(STRUCTURE_CHECK, RowStatus::Lead, 0));
        assert_eq!(
            o.rows[0].status,
            RowStatus::Fail,
            "a LEAD does not soften a FAIL"
        );
        fold_row(&mut o, row("Pickle opcode scan", RowStatus::Lead, 0));
        assert_eq!(o.rows.len(), 2);
    }

    #[test]
    fn summaries_stop_growing() {
        let mut o = opened(vec![row(STRUCTURE_CHECK, RowStatus::Pass, 0)]);
        for _ in 0..10_000 {
            fold_row(&mut o, row(STRUCTURE_CHECK, RowStatus::Pass, 0));
        }
        assert!(o.rows[0].summary.len() <= MAX_SUMMARY + SUMMARIES_LEFT_OUT.len() + 2);
        assert!(o.rows[0].summary.ends_with(SUMMARIES_LEFT_OUT));
    }

    #[test]
    fn findings_are_capped_worst_first() {
        let mut o = opened(vec![row(STRUCTURE_CHECK, RowStatus::Pass, 10)]);
        let mut many = row(STRUCTURE_CHECK, RowStatus::Fail, MAX_FINDINGS);
        many.findings.push(Finding::new(Severity::Fail, "bad", "r"));
        fold_row(&mut o, many);
        let f = &o.rows[0].findings;
        assert_eq!(f.len(), MAX_FINDINGS + 1);
        assert_eq!(f[10].place.as_str(), "bad", "the FAIL is kept first");
        assert!(f[MAX_FINDINGS].reason.contains("11 more findings"));
    }

    #[test]
    fn a_decoded_members_tensor_is_held_inline_and_a_spans_moved() {
        let bytes: Vec<u8> = (0..32).collect();
        let span = Span::memory(&bytes);
        let t = socair_plugin_api::TensorDescriptor {
            name: "w".into(),
            shape: vec![4].into(),
            ranges: vec![ByteRange { offset: 8, len: 4 }].into(),
            ..test_descriptor()
        };
        let left = Cell::new(4);
        let none = no_siblings();
        let t = placed(t, "m", &span, &none, &left).expect("placed");
        assert_eq!(
            t.inline.as_ref().map(|b| b.to_vec()),
            ROption::RSome(vec![8, 9, 10, 11])
        );
        assert!(t.ranges.is_empty());
        let past = socair_plugin_api::TensorDescriptor {
            ranges: vec![ByteRange { offset: 30, len: 4 }].into(),
            ..test_descriptor()
        };
        assert!(placed(past, "m", &span, &none, &Cell::new(100)).is_err());
        assert_eq!(left.get(), 0, "the copy is counted");
        let again = socair_plugin_api::TensorDescriptor {
            ranges: vec![ByteRange { offset: 0, len: 1 }].into(),
            ..test_descriptor()
        };
        assert!(
            placed(again, "m", &span, &none, &left).is_err(),
            "past what members may hold"
        );
    }

    fn no_siblings() -> Siblings<'static> {
        Siblings {
            spans: HashMap::new(),
            used: RefCell::default(),
        }
    }

    #[test]
    fn a_tensor_in_a_file_beside_its_member_is_read_from_that_member() {
        let index = [0u8; 4];
        let shard: Vec<u8> = (100..132).collect();
        let siblings = Siblings {
            spans: [
                ("m/variables/v.index".to_owned(), Span::memory(&index)),
                (
                    "m/variables/v.data-00000-of-00001".to_owned(),
                    Span::memory(&shard),
                ),
            ]
            .into_iter()
            .collect(),
            used: RefCell::default(),
        };
        let in_shard = |file: &str| socair_plugin_api::TensorDescriptor {
            ranges: vec![ByteRange { offset: 2, len: 3 }].into(),
            file: ROption::RSome(file.into()),
            ..test_descriptor()
        };
        let left = Cell::new(100);
        let t = placed(
            in_shard("v.data-00000-of-00001"),
            "m/variables/v.index",
            &Span::memory(&index),
            &siblings,
            &left,
        )
        .expect("read from the shard");
        assert_eq!(
            t.inline.as_ref().map(|b| b.to_vec()),
            ROption::RSome(vec![102, 103, 104])
        );
        assert!(t.file.is_none());
        assert!(siblings
            .used
            .borrow()
            .contains("m/variables/v.data-00000-of-00001"));
        // A file the container does not hold, or a name that climbs out, stays unread.
        for file in ["other.data", "../variables/v.data-00000-of-00001", "/abs"] {
            assert!(
                placed(
                    in_shard(file),
                    "m/variables/v.index",
                    &Span::memory(&index),
                    &siblings,
                    &left
                )
                .is_err(),
                "{file}"
            );
        }
    }

    fn test_descriptor() -> socair_plugin_api::TensorDescriptor {
        socair_plugin_api::TensorDescriptor {
            name: "t".into(),
            dtype: "U8".into(),
            element_type: ROption::RNone,
            shape: RVec::new(),
            ranges: RVec::new(),
            byte_order: socair_plugin_api::ByteOrder::Little,
            origin: ROption::RNone,
            strides: ROption::RNone,
            file: ROption::RNone,
            inline: ROption::RNone,
            outside_model: false,
        }
    }

    #[test]
    fn a_streams_name_is_its_files_less_the_compressor() {
        assert_eq!(stream_name("model.safetensors.gz"), "model.safetensors");
        assert_eq!(stream_name("dir/x.tgz"), "dir/x.tar");
        assert_eq!(stream_name("a.b/blob"), "a.b/blob (decoded)");
        assert_eq!(stream_name(".gz"), ".gz (decoded)");
    }

    #[test]
    fn a_span_outside_its_base_is_refused() {
        let bytes = [0u8; 16];
        let span = Span::memory(&bytes);
        assert!(span.sub(ByteRange { offset: 8, len: 8 }).is_some());
        assert!(span.sub(ByteRange { offset: 9, len: 8 }).is_none());
        assert!(span
            .sub(ByteRange {
                offset: u64::MAX,
                len: 2
            })
            .is_none());
        let mut out = [0u8; 4];
        assert!(span.read(14, &mut out).is_err());
    }
}
