//! The stable contract between the `socair` host and its format plugins.
//!
//! A plugin is a `cdylib` that exports one [`PluginRoot`] (a prefix-type root module, so fields
//! can be appended in later minor versions). Through it the host obtains:
//!
//! * [`FormatReader`]s: detect a format, open a file and describe **where each tensor's bytes
//!   lie** ([`TensorDescriptor`]) and what the plugin's checks found ([`ReportRow`]);
//! * [`FormatWriter`]s: plan an output layout (header bytes and where each tensor goes);
//! * [`FingerprintEncoder`]s: value encodings such as `float32-le-bits/v1`.
//!
//! Tensor bytes never have to cross the boundary: the plugin reads what it needs (headers,
//! indexes) through the host's [`ByteSource`], and returns byte ranges; the host maps the file
//! and hashes or copies those ranges itself, once, for every format.
//!
//! Only `R*` types from `abi_stable` cross the boundary. Every entry point a plugin exports must
//! catch panics: wrap bodies in [`guard`].
//!
//! This crate is versioned apart from the host ([`PLUGIN_API_VERSION`]); abi_stable refuses a
//! plugin built against an incompatible version (0.y: another `y`) or a different layout.

// abi_stable's macros name generated types `Foo_Ref`/`Foo_TO` and place impls inside consts.
#![allow(non_camel_case_types, non_local_definitions)]

pub use abi_stable;

pub mod facts;

use abi_stable::{
    declare_root_module_statics,
    library::RootModule,
    package_version_strings, sabi_trait,
    sabi_types::VersionStrings,
    std_types::{RBox, ROption, RResult, RSlice, RSliceMut, RString, RVec, Tuple2},
    StableAbi,
};
use std::fmt;

/// The version of this interface crate, as plugins and the host were built against it.
pub const PLUGIN_API_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The root module every plugin exports with `#[export_root_module]`.
///
/// New fields may only be appended after the one marked `last_prefix_field`; a host reading an
/// older plugin then sees `None` for the missing ones.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginRoot_Ref)))]
#[sabi(missing_field(option))]
pub struct PluginRoot {
    /// Who the plugin is and what it provides.
    pub manifest: extern "C" fn() -> RResult<PluginManifest, PluginError>,
    /// The format readers the plugin provides (may be empty).
    pub readers: extern "C" fn() -> RResult<RVec<FormatReaderBox>, PluginError>,
    /// The format writers the plugin provides (may be empty).
    pub writers: extern "C" fn() -> RResult<RVec<FormatWriterBox>, PluginError>,
    /// The fingerprint encoders the plugin provides (may be empty).
    ///
    /// The first version of the root module ends here.
    #[sabi(last_prefix_field)]
    pub encoders: extern "C" fn() -> RResult<RVec<FingerprintEncoderBox>, PluginError>,
}

impl RootModule for PluginRoot_Ref {
    declare_root_module_statics! {PluginRoot_Ref}
    const BASE_NAME: &'static str = "socair_plugin";
    const NAME: &'static str = "socair_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// A reader as a boxed, FFI-safe trait object.
pub type FormatReaderBox = FormatReader_TO<'static, RBox<()>>;
/// A writer as a boxed, FFI-safe trait object.
pub type FormatWriterBox = FormatWriter_TO<'static, RBox<()>>;
/// An encoder as a boxed, FFI-safe trait object.
pub type FingerprintEncoderBox = FingerprintEncoder_TO<'static, RBox<()>>;
/// A borrowed byte source handed to a reader for the duration of one call.
pub type ByteSourceRef<'a> = ByteSource_TO<'a, abi_stable::sabi_types::RRef<'a, ()>>;

/// A versioned rule set a plugin implements, such as `socair-convert` version `1`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct RuleSetId {
    /// The rule set's name, such as `socair-convert`.
    pub name: RString,
    /// Its version, such as `1` (a semver-compatible string; `1` reads as `1.0.0`).
    pub version: RString,
}

/// What a plugin says about itself.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct PluginManifest {
    /// Short unique name, such as `safetensors`.
    pub name: RString,
    /// The plugin's own version (semver).
    pub version: RString,
    /// The plugin-api version it was built against ([`PLUGIN_API_VERSION`]).
    pub plugin_api: RString,
    /// Formats it reads, such as `safetensors`.
    pub formats_read: RVec<RString>,
    /// Formats it writes.
    pub formats_written: RVec<RString>,
    /// Rule sets it implements.
    pub rule_sets: RVec<RuleSetId>,
    /// Names of the fingerprint encodings it provides.
    pub encoders: RVec<RString>,
}

/// The order of the bytes within each element of a tensor as stored.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

/// A span of bytes in the file being read.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteRange {
    /// Offset from the start of the file.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// One tensor as a reader found it: what it is and where its bytes lie.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct TensorDescriptor {
    /// Its name as the format stores it.
    pub name: RString,
    /// Its dtype as the format names it (`F32`, `BF16`, `Q4_K`, …).
    pub dtype: RString,
    /// The element type in socair's vocabulary (the safetensors dtype names: `F32`, `F16`,
    /// `BF16`, `I64`, …), or none when elements have no fixed width (block-quantized types).
    /// Encoders and converters decide what they can do from this, not from `dtype`.
    pub element_type: ROption<RString>,
    /// The logical shape, outermost dimension first.
    pub shape: RVec<u64>,
    /// The tensor's bytes in the file, in element (row-major) order; their lengths add up to
    /// the tensor's size.
    pub ranges: RVec<ByteRange>,
    /// The byte order of each element.
    pub byte_order: ByteOrder,
    /// Where the bytes come from in the format's own terms (a zip record and an offset in
    /// it), for derivation records; none when the file offset says it all.
    pub origin: ROption<TensorOrigin>,
    /// Element strides, outermost first, when the bytes are **not** in row-major order (a
    /// permuted or transposed view into a pickle checkpoint's storage). `ranges` then holds one
    /// range, from the view's first element to the last byte of the furthest element it
    /// touches, and the element at index `(i0, i1, …)` starts `element size × Σ iₖ·strides[k]`
    /// bytes into it. None (the usual case) when `ranges` already lists the bytes in order.
    pub strides: ROption<RVec<u64>>,
    /// The file holding the bytes, when it is not the file that was opened (an ONNX model's
    /// external data): a relative path, `/`-separated, resolved against the opened file's
    /// directory, which it must not leave. `ranges` are offsets in that file. None (the usual
    /// case) for the opened file itself. A leading `{stem}` stands for the opened file's own
    /// name without its last extension (a reader is not told the name of the file it reads: a
    /// TensorFlow checkpoint `ckpt.index` names its data `{stem}.data-00000-of-00001`); the
    /// host replaces it before anything else reads the descriptor.
    pub file: ROption<RString>,
    /// The tensor's bytes decoded by the reader, when they do not lie in any file as they are
    /// (an ONNX tensor whose values are varint-coded in `int32_data`, an `.npz` member that
    /// was deflated): its elements' bytes in row-major order, in `byte_order` like any other
    /// tensor's (ONNX's decoded values are little-endian; a big-endian NumPy array's inflated
    /// bytes stay big-endian, so it fingerprints as its stored twin). `ranges` is then empty
    /// and `file` none. The host
    /// fingerprints these bytes but converts only bytes it can read from the file itself. A
    /// reader keeps their total bounded by the input's size (at most 8x, as a one-byte varint
    /// decodes to eight bytes).
    pub inline: ROption<RVec<u8>>,
    /// The tensor is sound but lies outside the format's model of the file (an optimizer's
    /// state beside a training checkpoint's state dict): it is fingerprinted like any other,
    /// and a converter names it as not carried instead of writing it. False for every tensor
    /// of a format whose file is all model (safetensors, GGUF, ONNX, NumPy).
    pub outside_model: bool,
}

/// A tensor's place in the format's own terms.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct TensorOrigin {
    /// The container holding the bytes, such as the zip record `archive/data/0`.
    pub container: RString,
    /// The tensor's first byte, counted from the container's first byte.
    pub offset: u64,
}

/// Something a reader could not describe, with the reason.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    /// The tensor's name, or none when the whole file could not be read.
    pub tensor: ROption<RString>,
    /// Why, naming the place in the file.
    pub reason: RString,
    /// The tensor is sound but lies outside the format's model of the file (a tensor in a
    /// list of a training checkpoint): a converter names it as not carried instead of refusing.
    pub outside_model: bool,
}

/// The verdict of one check.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowStatus {
    /// The check ran and found nothing wrong.
    Pass,
    /// Evidence of danger, or of a file built to be read differently by different readers.
    Fail,
    /// Outside what the check proves safe: worth a human look.
    Lead,
    /// The check does not apply or was not run; the summary says why.
    NotTested,
}

impl RowStatus {
    /// How bad the status is, for the worst of several rows: PASS 0, NOT_TESTED 1, LEAD 2,
    /// FAIL 3.
    pub fn badness(self) -> u8 {
        match self {
            RowStatus::Pass => 0,
            RowStatus::NotTested => 1,
            RowStatus::Lead => 2,
            RowStatus::Fail => 3,
        }
    }

    /// The worse of two statuses (the first when they are as bad).
    pub fn worse(self, other: RowStatus) -> RowStatus {
        if other.badness() > self.badness() {
            other
        } else {
            self
        }
    }

    /// The severity of a finding of a row with this status when the row's status says it all
    /// (a row whose findings are all of one kind): FAIL and LEAD for theirs, a note for the
    /// findings of a PASS or NOT_TESTED row (facts, not problems).
    pub fn finding_severity(self) -> Severity {
        match self {
            RowStatus::Fail => Severity::Fail,
            RowStatus::Lead => Severity::Lead,
            RowStatus::Pass | RowStatus::NotTested => Severity::Note,
        }
    }
}

/// How bad one finding is, ordered so that the worst of several is their `max`. Appended in
/// plugin-api 0.4.0: before it, a reader wrote `FAIL: ` or `LEAD: ` into a reason, and the
/// host read it back.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A fact, not a problem: a count of what was not listed, what a file holds.
    Note,
    /// Outside what the check proves safe: a person looks before the file is loaded.
    Lead,
    /// Evidence of code execution, of I/O a loader would do, or of a file built so that
    /// readers disagree.
    Fail,
}

impl Severity {
    /// The status of a row whose worst finding has this severity (PASS for a note).
    pub fn row_status(self) -> RowStatus {
        match self {
            Severity::Fail => RowStatus::Fail,
            Severity::Lead => RowStatus::Lead,
            Severity::Note => RowStatus::Pass,
        }
    }
}

/// One thing a check found, with its place.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where: a byte offset, a zip record, a header key, a tensor name.
    pub place: RString,
    /// What is wrong there, or the fact, in words; never led by its severity (the host writes
    /// that where a document shows it: [`ReportRow::names_severities`]).
    pub reason: RString,
    /// How bad it is.
    pub severity: Severity,
    /// The other file the finding is about, when the format's loader opens one (an HDF5
    /// external link's target), as a relative `/`-separated path from the opened file's
    /// directory (resolved as [`TensorDescriptor::file`] is). None for most findings. The host
    /// judges it where a reader cannot: when the scanned artifact is a directory and that file
    /// is one of its own that socair reads, what the loader opens there is data socair read,
    /// and the finding becomes a note naming it; otherwise it stands as the reader wrote it.
    pub file: ROption<RString>,
}

impl Finding {
    /// A finding of `severity` at `place`.
    pub fn new(severity: Severity, place: impl Into<String>, reason: impl Into<String>) -> Self {
        Finding {
            place: RString::from(place.into()),
            reason: RString::from(reason.into()),
            severity,
            file: ROption::RNone,
        }
    }

    /// The same finding, about `file` (see [`Finding::file`]).
    pub fn about_file(mut self, file: Option<&str>) -> Self {
        self.file = file.map(RString::from).into();
        self
    }
}

/// One row of a scan report.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ReportRow {
    /// The check's name, such as `Format and structure`.
    pub check: RString,
    /// Its verdict.
    pub status: RowStatus,
    /// One sentence for a person.
    pub summary: RString,
    /// Each finding with its place.
    pub findings: RVec<Finding>,
    /// Whether a report shows each finding's severity before its reason (`socair.report/v1`
    /// writes `FAIL: …` and `LEAD: …`; a note stands alone). Presentation only, for rows whose
    /// findings differ in severity (a pickle scan's, an archive's members'), so that a person
    /// reading the document tells them apart; the severity itself is always
    /// [`Finding::severity`], and the host, not the reader, writes the words.
    pub names_severities: bool,
}

/// What a reader made of one file. A malformed file is not an error: it comes back with its
/// tensors in `unread` and a row that says why.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct OpenedFile {
    /// The format read, such as `safetensors`.
    pub format: RString,
    /// Every tensor whose bytes could be located, in the order the file lists them.
    pub tensors: RVec<TensorDescriptor>,
    /// What could not be located, with reasons.
    pub unread: RVec<Unread>,
    /// The rows of the reader's checks (at least `Format and structure`).
    pub rows: RVec<ReportRow>,
    /// File-level metadata as key/value strings: the file's own (safetensors' `__metadata__`,
    /// GGUF's keys), never read as facts for the host (those are [`OpenedFile::facts`]).
    pub metadata: RVec<Tuple2<RString, RString>>,
    /// What the file holds besides its tensors that a conversion does not carry (training
    /// state, Python values, a state dict's `_metadata`), each as `path (what)`.
    pub not_carried: RVec<RString>,
    /// Facts for the host's own steps ([`facts::Fact`]), typed.
    pub facts: RVec<facts::Fact>,
}

/// Options for one read.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, Default)]
pub struct ReadOptions {
    /// Read headers only; do not read tensor data (a reader that would verify checksums over
    /// the data skips that and says so).
    pub header_only: bool,
    /// Globals (`module.name`) an operator has reviewed and accepts in pickles
    /// (`--reviewed-classes`); a reader that finds one used says so in its rows.
    pub reviewed_globals: RVec<RString>,
    /// Rule-set versions the host asks for, `(name, version)`, among those the plugin's
    /// manifest lists (a deployment pinned `socair-wo` to `=1`, say). A rule set not listed here
    /// runs at the newest version the plugin implements.
    pub rules: RVec<Tuple2<RString, RString>>,
}

/// What went wrong inside a plugin call (not a finding about the file: those are rows).
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginErrorKind {
    /// Reading the source failed.
    Io,
    /// The request made no sense (unknown dtype for a writer, bad arguments).
    InvalidInput,
    /// The plugin panicked; the panic was caught at the boundary.
    Panicked,
    /// The plugin does not support what was asked.
    Unsupported,
}

/// An error returned across the boundary.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct PluginError {
    /// The kind of failure.
    pub kind: PluginErrorKind,
    /// A one-line message naming the place.
    pub message: RString,
}

impl PluginError {
    /// An error of `kind` with `message`.
    pub fn new(kind: PluginErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: RString::from(message.into()),
        }
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            PluginErrorKind::Io => "i/o error",
            PluginErrorKind::InvalidInput => "invalid input",
            PluginErrorKind::Panicked => "plugin panicked",
            PluginErrorKind::Unsupported => "unsupported",
        };
        write!(f, "{kind}: {}", self.message)
    }
}

impl std::error::Error for PluginError {}

/// Runs `body` and turns a panic into [`PluginErrorKind::Panicked`], so that no unwind crosses
/// an `extern "C"` boundary (which would abort the host). Plugins wrap every entry point and
/// every trait method body in it.
pub fn guard<T>(body: impl FnOnce() -> Result<T, PluginError>) -> RResult<T, PluginError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(result) => result.into(),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_owned());
            RResult::RErr(PluginError::new(PluginErrorKind::Panicked, what))
        }
    }
}

/// The file being read, served by the host. A reader reads only what it needs (headers,
/// indexes); it never needs the tensor data itself.
#[sabi_trait]
pub trait ByteSource {
    /// The file's length in bytes.
    fn file_len(&self) -> u64;

    /// Fills all of `buf` with the bytes at `offset`; an error if they do not all exist.
    #[sabi(last_prefix_field)]
    fn read_at(&self, offset: u64, buf: RSliceMut<'_, u8>) -> RResult<(), PluginError>;

    /// Says which ranges `(offset, len)` the reader is about to read: a host serving an object
    /// in object storage fetches them side by side, instead of one round trip per read when
    /// each read's place is known only from the one before (an HDF5 file's B-trees). Only a
    /// hint: reads go on as before, and the host bounds what it fetches. Returns whether the
    /// host uses hints, so that a reader can skip work it does only to give them: `false` for
    /// a local file (this default). Appended in plugin-api 0.3.1.
    fn prefetch(&self, ranges: RSlice<'_, Tuple2<u64, u64>>) -> bool {
        let _ = ranges;
        false
    }
}

/// Random access to the bytes of the file being read, for format parsers written as pure
/// functions over it: implemented for `[u8]` (unit tests, fuzzing) and for the host's
/// [`ByteSourceRef`] (in the plugin).
pub trait ReadAt {
    /// The file's length.
    fn size(&self) -> u64;
    /// Fills `buf` from `offset`; an error if the bytes do not all exist.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String>;
    /// Hints the ranges `(offset, len)` about to be read ([`ByteSource::prefetch`]); whether
    /// hints are used. Bytes in memory need none.
    fn prefetch(&self, ranges: &[(u64, u64)]) -> bool {
        let _ = ranges;
        false
    }
}

impl ReadAt for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        let start = usize::try_from(offset).map_err(|_| "offset past the end".to_owned())?;
        let end = start
            .checked_add(buf.len())
            .filter(|&e| e <= self.len())
            .ok_or_else(|| "read past the end".to_owned())?;
        buf.copy_from_slice(&self[start..end]);
        Ok(())
    }
}

impl ReadAt for ByteSourceRef<'_> {
    fn size(&self) -> u64 {
        self.file_len()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        ByteSource::read_at(self, offset, RSliceMut::from_mut_slice(buf))
            .into_result()
            .map_err(|e| e.to_string())
    }
    fn prefetch(&self, ranges: &[(u64, u64)]) -> bool {
        let ranges: Vec<Tuple2<u64, u64>> = ranges.iter().map(|&(o, n)| Tuple2(o, n)).collect();
        ByteSource::prefetch(self, RSlice::from_slice(&ranges))
    }
}

/// Reads one file format.
#[sabi_trait]
pub trait FormatReader: Send + Sync {
    /// The format's name, as `--from` names it (`safetensors`, `gguf`, `torch-zip`).
    fn format(&self) -> RString;

    /// Whether the file looks like this format, judged from its first bytes (`head`, up to
    /// 4096) and its length. Cheap and never an error: a malformed file of this format should
    /// still be claimed, so that `open` can say what is wrong with it.
    fn detect(&self, head: RSlice<'_, u8>, file_len: u64) -> bool;

    /// Reads the file's structure: its tensors as descriptors, what could not be read, and the
    /// rows of this reader's checks.
    #[sabi(last_prefix_field)]
    fn open(
        &self,
        source: ByteSourceRef<'_>,
        options: ReadOptions,
    ) -> RResult<OpenedFile, PluginError>;

    /// Whether the file is of this format by a signature [`detect`](Self::detect) cannot see:
    /// past the head, where the format's own library looks for it (HDF5's superblock after a
    /// user block of 4096 bytes or more). Asked only of a file no reader claims by its head; it
    /// reads a few bytes, never the file. A plugin built before this method existed answers no.
    fn detect_past_head(&self, _source: ByteSourceRef<'_>) -> bool {
        false
    }

    /// Reads a container (a tar archive, a compressed stream): its own structure as
    /// [`open`](Self::open) would, and the members it holds handed back to the host, which
    /// reads each with whichever reader claims it, as it reads a directory's files, and folds
    /// what they found into this file's rows. `budget` bounds the bytes the reader may decode
    /// into [`MemberBytes::Decoded`] members in this call, over all of them (the host's share
    /// of its memory bound left for this file); a member past it is not decoded, and the
    /// reader's rows say so. A reader that is not a container, or a plugin built before this
    /// method existed (plugin-api 0.5.0), answers [`PluginErrorKind::Unsupported`], and the
    /// host calls `open`. Appended in plugin-api 0.5.1.
    fn open_container(
        &self,
        source: ByteSourceRef<'_>,
        options: ReadOptions,
        budget: u64,
    ) -> RResult<OpenedContainer, PluginError> {
        let _ = (source, options, budget);
        RResult::RErr(PluginError::new(
            PluginErrorKind::Unsupported,
            NOT_A_CONTAINER,
        ))
    }
}

/// The message of the [`PluginErrorKind::Unsupported`] error a reader that is not a container
/// answers [`FormatReader::open_container`] with.
pub const NOT_A_CONTAINER: &str = "not a container reader";

/// What a container reader made of a container: the file as [`FormatReader::open`] reads it,
/// and the members it hands back to the host to be read.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct OpenedContainer {
    /// The container itself: its format, its structure's rows. Its rows must not vouch for
    /// the members: the host reads those and folds their rows in.
    pub opened: OpenedFile,
    /// The members to read, in the container's order.
    pub members: RVec<Member>,
}

/// One member a container hands back to the host.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct Member {
    /// Its name in the container (a tar member's path; a compressed stream's name without
    /// the compressor's extension), `/`-separated: the place the host names its findings by,
    /// and the name a reader that claims files by their extension reads.
    pub name: RString,
    /// Where its bytes are.
    pub bytes: MemberBytes,
    /// What the container's own rules say of it when no reader claims it (a `.py` file:
    /// Python code), in place of the host's words; empty for those.
    pub unclaimed: RString,
}

/// Where a member's bytes are.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug)]
pub enum MemberBytes {
    /// A span of the container's own bytes (a tar member): read in place, so its tensors are
    /// spans of the container too.
    Range(ByteRange),
    /// Bytes the reader decoded (a compressed stream), within the budget it was given.
    Decoded(RVec<u8>),
}

/// A tensor to be placed in an output file.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct PlanTensor {
    /// The name to write.
    pub name: RString,
    /// The dtype in the output format's own names.
    pub dtype: RString,
    /// The logical shape, outermost first.
    pub shape: RVec<u64>,
    /// Its size in bytes (checked by the writer against dtype and shape).
    pub byte_len: u64,
}

/// Where one input tensor's bytes go in the output.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Index into the tensors given to [`FormatWriter::plan`].
    pub tensor_index: u64,
    /// Absolute offset in the output file.
    pub offset: u64,
}

/// The layout of an output file: the header bytes at offset 0, each tensor's bytes at its
/// placement, and the total length. Anything not covered is filled with zeros by the host.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct OutputLayout {
    /// Bytes written at offset 0.
    pub header: RVec<u8>,
    /// One per input tensor, in the order the format stores them.
    pub placements: RVec<Placement>,
    /// The output file's total length.
    pub total_len: u64,
}

/// Writes one file format: plans the layout; the host copies the bytes.
#[sabi_trait]
pub trait FormatWriter: Send + Sync {
    /// The format's name.
    fn format(&self) -> RString;

    /// Plans the output for `tensors` with file-level `metadata` (kept in the given order).
    #[sabi(last_prefix_field)]
    fn plan(
        &self,
        tensors: RSlice<'_, PlanTensor>,
        metadata: RSlice<'_, Tuple2<RString, RString>>,
    ) -> RResult<OutputLayout, PluginError>;
}

/// Encodes tensor values into a canonical byte stream whose hash is the tensor's values hash.
#[sabi_trait]
pub trait FingerprintEncoder: Send + Sync {
    /// The encoding's versioned name, such as `float32-le-bits/v1`.
    fn name(&self) -> RString;

    /// How many output bytes one element of `element_type` becomes, or none when the encoding
    /// does not apply to that element type.
    fn output_width(&self, element_type: RString) -> ROption<u32>;

    /// Encodes whole elements from `input` into `output`, which is exactly
    /// `input.len() / input width * output width` long.
    #[sabi(last_prefix_field)]
    fn encode(
        &self,
        element_type: RString,
        byte_order: ByteOrder,
        input: RSlice<'_, u8>,
        output: RSliceMut<'_, u8>,
    ) -> RResult<(), PluginError>;
}
