//! The pre-GGUF llama.cpp model formats: unversioned GGML (magic `ggml`, 0x67676d6c), GGMF v1
//! (0x67676d66) and GGJT v1-v3 (0x67676a74), read as llama.cpp's last loader for them read
//! them: `llama_file_loader` (`read_magic`, `read_hparams`, `read_vocab`,
//! `read_tensor_metadata`) in `llama.cpp` at tag `master-cb1c072` (commit dadbed99e, the last
//! before GGUF replaced them). They hold hyperparameters, a vocabulary and raw tensors:
//! nothing in the format runs code, so a well-formed file is PASS and the rest is layout.
//!
//! Layout (all little-endian u32): magic, version (not in GGML), hparams `n_vocab n_embd
//! n_mult n_head n_layer n_rot ftype`, `n_vocab` tokens of `len, bytes` plus an f32 score
//! (not in GGML: `convert-pth-to-ggml.py` at commit 007a8f6f4 wrote none), then tensors to
//! the end of the file: `n_dims, name_len, type, ne[n_dims], name`, in GGJT zero to 31
//! bytes of padding to a multiple of 32 from the start of the file, and the data.
//!
//! Where the loader failed to load a file (`llama_file::read_raw` "unexpectedly reached end
//! of file", "unrecognized tensor type", "should not be N-dimensional", "file contained more
//! tensors than expected" for a repeated name), the verdict follows what the failure means:
//! a file cut short or whose tensor data runs past its end (the mmap path of
//! `load_data_for` reads past the mapping; the read path fails) is FAIL, as is a repeated
//! name; an unknown type or a layout the last loader no longer read is LEAD. Tensors follow
//! one another, so no two can overlap.

use crate::types::{self, GgmlType};
use abi_stable::std_types::{ROption, RVec};
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, Finding, OpenedFile, PluginError, ReadAt, ReadOptions,
    ReportRow, RowStatus, Severity, Unread,
};
use socair_plugin_kit::bounded;
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::report::{refused_as, tensor_in_file, STRUCTURE_CHECK};
use std::collections::HashSet;

/// The format name.
pub const FORMAT: &str = "ggml-legacy";
/// `LLAMA_FILE_MAGIC_GGML` (llama.h at master-cb1c072).
pub const MAGIC_GGML: u32 = 0x6767_6d6c;
/// `LLAMA_FILE_MAGIC_GGMF`.
pub const MAGIC_GGMF: u32 = 0x6767_6d66;
/// `LLAMA_FILE_MAGIC_GGJT`.
pub const MAGIC_GGJT: u32 = 0x6767_6a74;
/// Longest token or tensor name read (llama.cpp reads any u32 length; real names are short).
pub const MAX_NAME_LEN: u32 = 65_535;
/// Most dimensions ggml has (`GGML_MAX_DIMS`); llama.cpp itself takes only 1 or 2.
pub const MAX_DIMS: u32 = 4;
/// Findings kept per file.
pub const MAX_FINDINGS: usize = 64;

/// Which of the legacy layouts, as `read_magic` tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Unversioned `ggml`: no version field, no scores, no padding.
    Ggml,
    /// `ggmf` v1: a version and token scores.
    Ggmf,
    /// `ggjt` v1-v3: scores and tensor data aligned to 32 bytes.
    Ggjt(u32),
}

impl Flavor {
    fn label(self) -> String {
        match self {
            Flavor::Ggml => "GGML (unversioned)".into(),
            Flavor::Ggmf => "GGMF v1".into(),
            Flavor::Ggjt(v) => format!("GGJT v{v}"),
        }
    }
    fn header_len(self) -> u64 {
        if self == Flavor::Ggml {
            4
        } else {
            8
        }
    }
}

/// The layout named by the first 8 bytes, when `read_magic` accepts it.
pub fn flavor(head: &[u8]) -> Option<Flavor> {
    let word = |i: usize| -> Option<u32> {
        Some(u32::from_le_bytes(head.get(i..i + 4)?.try_into().ok()?))
    };
    match (word(0)?, word(4)) {
        (MAGIC_GGML, _) => Some(Flavor::Ggml),
        (MAGIC_GGMF, Some(1)) => Some(Flavor::Ggmf),
        (MAGIC_GGJT, Some(v @ 1..=3)) => Some(Flavor::Ggjt(v)),
        _ => None,
    }
}

/// The hyperparameters `read_hparams` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hparams {
    pub n_vocab: u32,
    pub n_embd: u32,
    pub n_mult: u32,
    pub n_head: u32,
    pub n_layer: u32,
    pub n_rot: u32,
    pub ftype: u32,
}

/// One tensor record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyTensor {
    pub name: String,
    /// Dimensions as stored: innermost first (`ne`).
    pub ne: Vec<u64>,
    pub type_id: u32,
    /// Absolute offset of its data.
    pub offset: u64,
    pub byte_len: u64,
    /// Why its bytes are not described (a block layout ggml no longer has), if so.
    pub unread: Option<String>,
}

impl LegacyTensor {
    /// The logical shape, outermost first (as the GGUF reader gives it).
    pub fn shape(&self) -> Vec<u64> {
        self.ne.iter().rev().copied().collect()
    }
}

/// A file the reader walked: what it read and what a person should look at.
#[derive(Debug, Clone, PartialEq)]
pub struct Legacy {
    pub flavor: Flavor,
    pub hparams: Hparams,
    pub tensors: Vec<LegacyTensor>,
    /// LEAD findings: (place, reason).
    pub leads: Vec<(String, String)>,
    /// Leads past [`MAX_FINDINGS`].
    pub more_leads: u64,
    pub file_len: u64,
}

/// Why a file is refused, and how badly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyError {
    pub place: String,
    pub reason: String,
    /// FAIL (unsound layout) or LEAD (outside what is proven).
    pub severity: Severity,
}

fn fail<T>(place: impl Into<String>, reason: impl Into<String>) -> Result<T, LegacyError> {
    Err(LegacyError {
        place: place.into(),
        reason: reason.into(),
        severity: Severity::Fail,
    })
}

/// Sequential reads through [`ReadAt`], each checked against the file's length.
struct Cursor<'a, R: ReadAt + ?Sized> {
    src: &'a R,
    pos: u64,
}

impl<R: ReadAt + ?Sized> Cursor<'_, R> {
    fn remaining(&self) -> u64 {
        self.src.size().saturating_sub(self.pos)
    }
    fn need(&self, n: u64, what: &str) -> Result<(), LegacyError> {
        if n > self.remaining() {
            return fail(
                format!("byte {}", self.pos),
                format!(
                    "{what} needs {n} bytes but only {} remain: the file is cut short (llama.cpp's loader fails: \"unexpectedly reached end of file\")",
                    self.remaining()
                ),
            );
        }
        Ok(())
    }
    fn bytes(&mut self, n: u32, what: &str) -> Result<Vec<u8>, LegacyError> {
        self.need(u64::from(n), what)?;
        let mut b = vec![0u8; n as usize];
        self.src
            .read_exact_at(self.pos, &mut b)
            .or_else(|e| fail(format!("byte {}", self.pos), e))?;
        self.pos += u64::from(n);
        Ok(b)
    }
    fn u32(&mut self, what: &str) -> Result<u32, LegacyError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn skip(&mut self, n: u64, what: &str) -> Result<(), LegacyError> {
        self.need(n, what)?;
        self.pos += n;
        Ok(())
    }
}

/// The ggml types `read_tensor_metadata` accepts, sized as ggml sized them in files of this
/// layout: before GGJT v3, Q4_0, Q4_1 and Q8_0 blocks held f32 scales (`ggml.c` before
/// commit 2d5db4837, "use F16 instead of F32 in Q4_0, Q4_1, Q8_0": 20, 24 and 36 bytes).
fn accepted_type(id: u32, flavor: Flavor) -> Option<(&'static GgmlType, Option<u64>)> {
    if !matches!(id, 0..=3 | 6..=8 | 10..=14) {
        return None;
    }
    let ty = types::by_id(id)?;
    let old_block = match (flavor, id) {
        (Flavor::Ggjt(3), _) => None,
        (_, 2) => Some(20),
        (_, 3) => Some(24),
        (_, 8) => Some(36),
        _ => None,
    };
    Some((ty, old_block))
}

/// `LLAMA_FTYPE_*` values llama.h at master-cb1c072 names (5 and 6 were removed).
fn known_ftype(ftype: u32) -> bool {
    matches!(ftype, 0..=4 | 7..=18)
}

/// Reads the file's layout, or says why it is refused.
pub fn parse(src: &(impl ReadAt + ?Sized)) -> Result<Legacy, LegacyError> {
    let mut head = [0u8; 8];
    let n = src.size().min(8) as usize;
    src.read_exact_at(0, &mut head[..n])
        .or_else(|e| fail("byte 0", e))?;
    let Some(flavor) = flavor(&head[..n]) else {
        return fail(
            "byte 0",
            "not a GGML, GGMF v1 or GGJT v1-v3 magic and version",
        );
    };
    parse_as(src, flavor).map_err(|mut e| {
        if flavor == Flavor::Ggml && e.severity == Severity::Fail {
            // Not llama's layout: whisper.cpp and ggml's examples wrote their own headers
            // after the same unversioned magic.
            e.severity = Severity::Lead;
            e.reason = format!("{}; other ggml programs (whisper.cpp, ggml's examples) wrote their own headers after this unversioned magic, so this is not evidence against the file", e.reason);
        }
        e
    })
}

fn parse_as(src: &(impl ReadAt + ?Sized), flavor: Flavor) -> Result<Legacy, LegacyError> {
    let mut c = Cursor {
        src,
        pos: flavor.header_len(),
    };
    let mut leads = Vec::new();
    let mut more_leads = 0u64;
    let mut lead = |place: String, reason: String| {
        if leads.len() < MAX_FINDINGS {
            leads.push((place, reason));
        } else {
            more_leads += 1;
        }
    };
    let mut hp = [0u32; 7];
    for (i, v) in hp.iter_mut().enumerate() {
        *v = c.u32(&format!("hparam {i}"))?;
    }
    let hparams = Hparams {
        n_vocab: hp[0],
        n_embd: hp[1],
        n_mult: hp[2],
        n_head: hp[3],
        n_layer: hp[4],
        n_rot: hp[5],
        ftype: hp[6],
    };
    if !known_ftype(hparams.ftype) {
        lead(
            "hparams ftype".into(),
            format!(
                "file type {} is unknown to llama.cpp (it printed \"unknown, may not work\")",
                hparams.ftype
            ),
        );
    }
    // read_vocab: each token is at least a 4-byte length (and a 4-byte score).
    let scores = flavor != Flavor::Ggml;
    let per_token = if scores { 8 } else { 4 };
    c.need(
        u64::from(hparams.n_vocab) * per_token,
        &format!("a vocabulary of {} tokens", hparams.n_vocab),
    )?;
    for i in 0..hparams.n_vocab {
        let at = c.pos;
        let len = c.u32(&format!("token {i} length"))?;
        if len > MAX_NAME_LEN {
            return fail(
                format!("byte {at}"),
                format!("token {i} is {len} bytes long, over the limit of {MAX_NAME_LEN}"),
            );
        }
        c.skip(u64::from(len), &format!("token {i}"))?;
        if scores {
            c.skip(4, &format!("token {i} score"))?;
        }
    }
    let tensors = read_tensors(&mut c, flavor, &mut lead)?;
    if tensors.is_empty() && c.remaining() == 0 {
        lead(
            format!("byte {}", c.pos),
            "no tensors after the vocabulary: llama.cpp's loader fails (\"tensor 'tok_embeddings.weight' is missing from model\")".into(),
        );
    }
    Ok(Legacy {
        flavor,
        hparams,
        tensors,
        leads,
        more_leads,
        file_len: src.size(),
    })
}

/// `read_tensor_metadata`: tensor records until the end of the file.
fn read_tensors<R: ReadAt + ?Sized>(
    c: &mut Cursor<'_, R>,
    flavor: Flavor,
    lead: &mut impl FnMut(String, String),
) -> Result<Vec<LegacyTensor>, LegacyError> {
    let mut tensors = Vec::new();
    let mut names = HashSet::new();
    while c.remaining() > 0 {
        let at = c.pos;
        let place = format!("tensor record at byte {at}");
        let n_dims = c.u32("a tensor's n_dims")?;
        let name_len = c.u32("a tensor's name length")?;
        let type_id = c.u32("a tensor's type")?;
        if n_dims > MAX_DIMS {
            return fail(
                place,
                format!("{n_dims} dims; ggml has at most {MAX_DIMS} (llama.cpp takes 1 or 2)"),
            );
        }
        if name_len > MAX_NAME_LEN {
            return fail(
                place,
                format!("name length {name_len} is over the limit of {MAX_NAME_LEN}"),
            );
        }
        let mut ne = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            ne.push(u64::from(c.u32("a tensor's dims")?));
        }
        let name = String::from_utf8_lossy(&c.bytes(name_len, "a tensor's name")?).into_owned();
        let place = format!("tensor {:?} (record at byte {at})", bounded::short(&name));
        if !(1..=2).contains(&n_dims) {
            lead(
                place.clone(),
                format!("{n_dims}-dimensional: llama.cpp's loader refuses it (\"should not be {n_dims}-dimensional\")"),
            );
        }
        let Some((ty, old_block)) = accepted_type(type_id, flavor) else {
            lead(
                place,
                format!(
                    "{}; llama.cpp's loader refuses it (\"unrecognized tensor type\") and the rest of the file was not read",
                    types::unknown_reason(type_id)
                ),
            );
            return Ok(tensors);
        };
        if let Flavor::Ggjt(_) = flavor {
            let pad = c.pos.wrapping_neg() & 31;
            let pad_at = c.pos;
            let padding = c.bytes(pad as u32, "padding to 32 bytes")?;
            if padding.iter().any(|&b| b != 0) {
                lead(
                    format!("{place} padding at byte {pad_at}"),
                    "padding llama.cpp skips holds non-zero bytes".into(),
                );
            }
        }
        let sized = GgmlType {
            type_size: old_block.unwrap_or(ty.type_size),
            ..*ty
        };
        let byte_len = sized.byte_len(&ne).or_else(|e| fail(place.clone(), e))?;
        let offset = c.pos;
        if byte_len > c.remaining() {
            return fail(
                place,
                format!(
                    "its {byte_len} bytes of data at byte {offset} run past the end of the file ({} bytes remain): with mmap llama.cpp reads past the file, without it the load fails",
                    c.remaining()
                ),
            );
        }
        c.pos += byte_len;
        if !names.insert(name.clone()) {
            return fail(
                place,
                "a second tensor of this name: llama.cpp keeps only the later one and its loader then fails (\"file contained more tensors than expected\")",
            );
        }
        let unread = old_block.map(|_| {
            format!(
                "{} blocks with f32 scales, as {} files held them before ggml's commit 2d5db4837 made them f16: llama.cpp's last loader refuses the file (\"this format is no longer supported\"), so socair does not pass these bytes on as today's {}",
                ty.name,
                flavor.label(),
                ty.name
            )
        });
        if let Some(why) = &unread {
            lead(place, why.clone());
        }
        tensors.push(LegacyTensor {
            name,
            ne,
            type_id,
            offset,
            byte_len,
            unread,
        });
    }
    Ok(tensors)
}

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct GgmlLegacyReader;

impl Reader for GgmlLegacyReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        // The magic and version `read_magic` accepts, and room for the hparams (28 bytes).
        flavor(head).is_some_and(|f| file_len >= f.header_len() + 28)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(opened_file(parse(source)))
    }
}

/// Turns the walk into what the plugin API reports.
pub fn opened_file(parsed: Result<Legacy, LegacyError>) -> OpenedFile {
    let g = match parsed {
        Ok(g) => g,
        Err(e) => return refused_file(e),
    };
    let limit = bounded::described_limit(g.file_len);
    let mut descriptors = Vec::new();
    let mut unread = Vec::new();
    let mut past_budget = 0u64;
    for t in &g.tensors {
        if let Some(why) = &t.unread {
            if unread.len() < bounded::UNREAD_PER_KIND {
                unread.push(Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: why.as_str().into(),
                    outside_model: false,
                });
            }
            continue;
        }
        if descriptors.len() as u64 >= limit {
            past_budget += 1;
            continue;
        }
        let Some(ty) = types::by_id(t.type_id) else {
            continue;
        };
        descriptors.push(tensor_in_file(
            &t.name,
            ty.name,
            ty.element,
            t.shape(),
            vec![ByteRange {
                offset: t.offset,
                len: t.byte_len,
            }],
            ByteOrder::Little,
        ));
    }
    let mut findings: Vec<Finding> = g
        .leads
        .iter()
        .map(|(p, r)| Finding::new(Severity::Lead, p.as_str(), r.as_str()))
        .collect();
    if g.more_leads > 0 {
        findings.push(Finding::new(
            Severity::Lead,
            "tensors",
            bounded::and_more(g.more_leads, "findings", MAX_FINDINGS),
        ));
    }
    if past_budget > 0 {
        findings.push(Finding::new(
            Severity::Lead,
            "tensors",
            format!(
                "{} tensor(s) past the {} socair describes for a file of this size are not fingerprinted",
                bounded::thousands(past_budget),
                bounded::thousands(limit)
            ),
        ));
    }
    let status = if findings.is_empty() {
        RowStatus::Pass
    } else {
        RowStatus::Lead
    };
    let h = g.hparams;
    let summary = format!(
        "llama.cpp legacy {} with {} tokens and {} tensors (n_embd {}, n_layer {}, ftype {}): weights only, nothing in the format runs code",
        g.flavor.label(),
        h.n_vocab,
        g.tensors.len(),
        h.n_embd,
        h.n_layer,
        h.ftype
    );
    OpenedFile {
        format: FORMAT.into(),
        tensors: descriptors.into(),
        unread: unread.into(),
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: findings.into(),
            names_severities: false,
        }]),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

/// A refused file: FAIL for an unsound layout, LEAD for one outside what is proven.
fn refused_file(e: LegacyError) -> OpenedFile {
    let (status, summary, reason) = match e.severity {
        Severity::Fail => (
            RowStatus::Fail,
            "not a sound llama.cpp legacy GGML/GGJT file: llama.cpp's loader fails on it or reads past it",
            e.reason.clone(),
        ),
        _ => (
            RowStatus::Lead,
            "a llama.cpp legacy GGML/GGJT file socair could not read in full",
            e.reason.clone(),
        ),
    };
    refused_as(
        status,
        FORMAT,
        summary,
        format!("{}: {}", e.place, e.reason),
        Finding::new(e.severity, e.place.as_str(), reason.as_str()),
    )
}

/// The fuzz target's properties (fuzz/fuzz_targets/ggml_legacy.rs): the reader returns on
/// any bytes without panicking, and every tensor it accepts lies inside the file, after the
/// one before it, aligned to 32 bytes in GGJT, with the size its type and dims give.
#[doc(hidden)]
pub fn check_legacy(data: &[u8]) {
    let _ = opened_file(parse(data));
    let Ok(g) = parse(data) else {
        return;
    };
    let mut end = 0u64;
    for t in &g.tensors {
        assert!(t.offset >= end, "overlap");
        end = t.offset + t.byte_len;
        assert!(end <= data.len() as u64, "past the end");
        if let Flavor::Ggjt(_) = g.flavor {
            assert_eq!(t.offset % 32, 0);
        }
        assert!(t.ne.len() <= MAX_DIMS as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `flavor` with two tokens and `tensors` (name, type, ne innermost first).
    fn file(flavor: Flavor, tensors: &[(&str, u32, &[u32])]) -> Vec<u8> {
        let mut b = Vec::new();
        let put = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
        match flavor {
            Flavor::Ggml => put(&mut b, MAGIC_GGML),
            Flavor::Ggmf => {
                put(&mut b, MAGIC_GGMF);
                put(&mut b, 1)
            }
            Flavor::Ggjt(v) => {
                put(&mut b, MAGIC_GGJT);
                put(&mut b, v)
            }
        }
        for v in [2, 64, 256, 2, 1, 32, 1] {
            put(&mut b, v);
        }
        for tok in [&b"a"[..], b"bc"] {
            put(&mut b, tok.len() as u32);
            b.extend_from_slice(tok);
            if flavor != Flavor::Ggml {
                b.extend_from_slice(&0f32.to_le_bytes());
            }
        }
        for (name, ty, ne) in tensors {
            put(&mut b, ne.len() as u32);
            put(&mut b, name.len() as u32);
            put(&mut b, *ty);
            for d in *ne {
                put(&mut b, *d);
            }
            b.extend_from_slice(name.as_bytes());
            if let Flavor::Ggjt(_) = flavor {
                b.resize(b.len().next_multiple_of(32), 0);
            }
            let len = types::by_id(*ty)
                .unwrap()
                .byte_len(&ne.iter().map(|&d| u64::from(d)).collect::<Vec<_>>());
            b.resize(b.len() + len.unwrap() as usize, 0x5a);
        }
        b
    }

    #[test]
    fn the_magic_and_version_read_magic_accepts_are_claimed() {
        let r = GgmlLegacyReader;
        for f in [Flavor::Ggml, Flavor::Ggmf, Flavor::Ggjt(1), Flavor::Ggjt(3)] {
            let b = file(f, &[]);
            assert_eq!(flavor(&b), Some(f));
            assert!(r.detect(&b, b.len() as u64));
        }
        let mut b = file(Flavor::Ggjt(3), &[]);
        b[4] = 4;
        assert!(!r.detect(&b, b.len() as u64), "GGJT v4 never existed");
        b[..4].copy_from_slice(b"GGUF");
        assert!(!r.detect(&b, b.len() as u64));
        assert!(
            !r.detect(&MAGIC_GGML.to_le_bytes(), 4),
            "no room for hparams"
        );
    }

    #[test]
    fn ggjt_tensors_are_aligned_and_shaped_outermost_first() {
        let b = file(
            Flavor::Ggjt(3),
            &[("norm", 0, &[64]), ("w", 2, &[64, 3]), ("h", 1, &[5, 2])],
        );
        let g = parse(&b[..]).unwrap();
        assert!(g.leads.is_empty(), "{:?}", g.leads);
        assert_eq!(g.tensors.len(), 3);
        let w = &g.tensors[1];
        assert_eq!(w.offset % 32, 0);
        assert_eq!(w.byte_len, 3 * 2 * 18);
        assert_eq!(w.shape(), vec![3, 64]);
        assert_eq!(g.tensors[2].offset + 20, b.len() as u64);
        let o = opened_file(Ok(g));
        assert_eq!(o.rows[0].status, RowStatus::Pass);
        assert_eq!(o.tensors[1].dtype.as_str(), "Q4_0");
        assert_eq!(
            o.tensors[0].element_type.as_ref().map(|s| s.as_str()),
            ROption::RSome("F32")
        );
    }

    #[test]
    fn ggml_has_no_scores_and_no_padding() {
        let b = file(Flavor::Ggml, &[("w", 1, &[3])]);
        let g = parse(&b[..]).unwrap();
        assert_eq!(g.tensors[0].offset + 6, b.len() as u64);
        assert_eq!(g.tensors[0].offset, 4 + 28 + 5 + 6 + 12 + 4 + 1);
    }

    #[test]
    fn every_cut_is_refused_and_ggml_cuts_are_only_leads() {
        for f in [Flavor::Ggml, Flavor::Ggjt(3)] {
            let b = file(f, &[("norm", 0, &[64]), ("w", 1, &[32, 2])]);
            // A cut between records leaves a smaller, sound file (the vocabulary's end is
            // one: a file without tensors is a LEAD).
            let whole = parse(&b[..]).unwrap();
            let mut boundaries: Vec<u64> = whole
                .tensors
                .iter()
                .map(|t| t.offset + t.byte_len)
                .collect();
            boundaries.push(if f == Flavor::Ggml { 43 } else { 55 });
            for n in 0..b.len() {
                let cut = &b[..n];
                check_legacy(cut);
                match parse(cut) {
                    Ok(g) if boundaries.contains(&(n as u64)) => {
                        assert_eq!(g.tensors.is_empty(), !g.leads.is_empty(), "{n}")
                    }
                    Ok(g) => panic!("{f:?} cut at {n} read as {g:?}"),
                    Err(e) if f == Flavor::Ggml && n >= 4 => {
                        assert_eq!(e.severity, Severity::Lead, "{n}: {e:?}")
                    }
                    Err(e) => assert_eq!(e.severity, Severity::Fail, "{n}: {e:?}"),
                }
            }
        }
    }

    #[test]
    fn overflowing_dims_and_bad_counts_are_refused() {
        // n_dims 4 of u32::MAX each: the size overflows 64 bits.
        let head = file(Flavor::Ggjt(3), &[]);
        let mut t = head.clone();
        for v in [4u32, 1, 0, u32::MAX, u32::MAX, u32::MAX, u32::MAX] {
            t.extend_from_slice(&v.to_le_bytes());
        }
        t.push(b'x');
        t.resize(t.len().next_multiple_of(32), 0);
        let e = parse(&t[..]).unwrap_err();
        assert_eq!(e.severity, Severity::Fail);
        assert!(e.reason.contains("overflow"), "{e:?}");
        // A vocabulary larger than the file.
        let mut big = Vec::new();
        big.extend_from_slice(&head[..8]);
        big.extend_from_slice(&u32::MAX.to_le_bytes());
        big.extend_from_slice(&head[12..]);
        let e = parse(&big[..]).unwrap_err();
        assert!(e.reason.contains("vocabulary"), "{e:?}");
        // A name length past the limit.
        let mut t = head.clone();
        for v in [1u32, MAX_NAME_LEN + 1, 0, 1] {
            t.extend_from_slice(&v.to_le_bytes());
        }
        assert!(parse(&t[..]).unwrap_err().reason.contains("name length"));
    }

    #[test]
    fn old_quant_blocks_are_sized_as_written_and_not_passed_on() {
        // GGJT v2 Q8_0: 36-byte blocks with an f32 scale.
        let mut b = file(Flavor::Ggjt(2), &[]);
        for v in [1u32, 1, 8, 32] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.push(b'q');
        b.resize(b.len().next_multiple_of(32) + 36, 1);
        let g = parse(&b[..]).unwrap();
        assert_eq!(g.tensors[0].byte_len, 36);
        let o = opened_file(Ok(g));
        assert_eq!(o.rows[0].status, RowStatus::Lead);
        assert!(o.tensors.is_empty());
        assert_eq!(o.unread.len(), 1);
    }

    #[test]
    fn the_fuzz_corpus_replays() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../fuzz/corpus/ggml_legacy");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            check_legacy(&std::fs::read(entry.unwrap().path()).unwrap());
            n += 1;
        }
        assert!(n >= 10, "{n} inputs in {dir:?}");
    }
}
