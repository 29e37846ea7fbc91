//! What this plugin makes of a `.npy` file or an `.npz` archive, in plain Rust types: the
//! tensors (where their bytes lie, or their decoded bytes), what it could not read and why,
//! the findings of the `Format and structure` check, and the pickle scan of object arrays.
//! `lib.rs` turns an [`NumpyRead`] into the plugin API's types.
//!
//! Verdicts of `Format and structure`:
//!
//! * **FAIL**: the file is malformed (every refusal of [`crate::npy`], [`crate::zip`] and
//!   [`crate::inflate`]: a data length that does not match the shape, a CRC-32 that does not
//!   hold, a deflate stream that inflates past or short of its declared size, two member names
//!   that NumPy would resolve to one array).
//! * **LEAD**: something this plugin did not check: a member that is not an `.npy` file, a
//!   compression method other than stored and deflate, an encrypted member, a descr NumPy's
//!   writer does not produce, deflated members past the decoding bound.
//! * **PASS**: otherwise. Arrays of sound NumPy dtypes whose values the host has no encoding
//!   for (complex128, extended-precision floats and complex numbers, strings, datetimes, raw
//!   void and structured records) are fingerprinted by their bytes: the tensor-fingerprint
//!   spec's `sha256` of the row-major bytes in their stored byte order, and no `values` hash
//!   (defined for F32, F16 and BF16 only). complex128 has socair's element type `C128` (the
//!   torch readers' name); the others have none, their `dtype` is NumPy's descr as the header
//!   gives it (a structured one as `repr` of its field list). A column-major one is put in
//!   row-major order by this plugin (the host gathers strided layouts only of the element
//!   types it knows the size of).
//!
//! An object array (`descr` `'|O'`, or a structured dtype with an object field) holds a pickle
//! that `np.load(allow_pickle=True)` runs (`read_array`: `pickle.load(fp, encoding='ASCII',
//! fix_imports=True)` on what follows the header, whatever the shape says). It is scanned by
//! socair's pickle machine in the `Pickle opcode scan` row: FAIL for code-running globals,
//! LEAD otherwise — never PASS, since its objects are Python values NumPy rebuilds by calling
//! `numpy._core.multiarray._reconstruct` and friends, not data socair can check.

use crate::inflate;
use crate::npy::{self, Header, Kind};
use crate::span::Span;
use crate::zip::{self, Member, MemberError};
use socair_pickle::pickle;
use socair_plugin_api::ByteOrder;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The format names.
pub const NPY: &str = "npy";
/// The format names.
pub const NPZ: &str = "npz";

/// The name given to the one array of a `.npy` file (the format stores no name).
pub const NPY_TENSOR_NAME: &str = "array";

/// The bound on bytes inflated from an archive's deflated members, all together (decoded to
/// check their CRC-32 and kept as inline tensor bytes): 16 MiB plus 2x the archive, a quarter
/// of the 64 MiB + 8x the input socair allows a read (the host holds the decoded bytes while it
/// fingerprints them), whatever the compression ratio. A member whose
/// declared size does not fit in what is left is not inflated (listed unread, a LEAD).
pub fn inflate_budget(file_len: u64) -> u64 {
    socair_plugin_kit::model::memory_share(file_len, 4)
}

/// How bad a finding is: the scale every first-party reader shares.
pub use socair_plugin_kit::Severity;

/// One finding: the reading model every first-party reader shares.
pub use socair_plugin_kit::model::Finding;

/// Where a tensor's bytes are (decoded ones in the tensor's own byte order): the reading
/// model's.
pub use socair_plugin_kit::model::Bytes;

/// One tensor whose bytes were located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name: `array` for a `.npy` file, the member name without `.npy` in an archive.
    pub name: String,
    /// NumPy's descr, such as `<f4` (so the byte order of the stored bytes is visible).
    pub dtype: String,
    /// socair's element type, such as `F32`; none for a dtype only NumPy names (extended
    /// precision, strings, datetimes, records), which is fingerprinted by its bytes alone.
    pub element_type: Option<&'static str>,
    /// Bytes per element.
    pub itemsize: u64,
    /// The shape, outermost first.
    pub shape: Vec<u64>,
    /// Its bytes.
    pub bytes: Bytes,
    /// The byte order of each element.
    pub byte_order: ByteOrder,
    /// Column-major element strides, for `fortran_order: True` data in the file (see
    /// [`npy::fortran_strides`]); none for inline bytes, which are put in row-major order.
    pub strides: Option<Vec<u64>>,
    /// The zip member holding it and the data's offset in that member's (uncompressed) bytes.
    pub origin: Option<(String, u64)>,
}

/// What was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumpyRead {
    /// [`NPY`] or [`NPZ`].
    pub format: &'static str,
    /// The tensors located, in the order the file lists them.
    pub tensors: Vec<Tensor>,
    /// What was not: the tensor (none for the whole file) and why.
    pub unread: Vec<(Option<String>, String)>,
    /// The structure check's findings.
    pub findings: Vec<Finding>,
    /// One sentence for a PASS.
    pub pass_summary: String,
    /// The object arrays whose pickles were scanned, by place.
    pub pickles: Vec<String>,
    /// The members that are not arrays but pickles (`np.load` returns their raw bytes, which
    /// a caller may unpickle), scanned too, by place.
    pub raw_pickles: Vec<String>,
    /// The pickle scan's findings.
    pub pickle_findings: Vec<Finding>,
    /// A member is a skops file's schema (`schema.json`): the archive is a skops file with
    /// arrays.
    pub skops: bool,
    /// The skops schema's sentence when skops 0.16 loads it by default and nothing in it runs
    /// code (socair_skops): added to the PASS summary.
    pub skops_summary: Option<String>,
}

impl NumpyRead {
    fn new(format: &'static str) -> Self {
        NumpyRead {
            format,
            tensors: Vec::new(),
            unread: Vec::new(),
            findings: Vec::new(),
            pass_summary: String::new(),
            pickles: Vec::new(),
            raw_pickles: Vec::new(),
            pickle_findings: Vec::new(),
            skops: false,
            skops_summary: None,
        }
    }

    fn found(&mut self, severity: Severity, place: String, reason: String) {
        self.findings.push(Finding::new(severity, place, reason));
    }

    /// Lists `tensor` as unread at `place` for `reason`, and makes that a finding.
    pub(crate) fn refuse(
        &mut self,
        tensor: Option<&str>,
        severity: Severity,
        place: String,
        reason: String,
    ) {
        self.unread
            .push((tensor.map(str::to_owned), format!("{place}: {reason}")));
        self.found(severity, place, reason);
    }

    /// The worst severity found by the structure check, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The structure row's one sentence.
    pub fn summary(&self) -> String {
        let what = if self.format == NPY {
            ".npy file"
        } else {
            ".npz archive"
        };
        let count = |s: Severity| self.findings.iter().filter(|f| f.severity == s).count();
        match self.worst() {
            None => match &self.skops_summary {
                Some(skops) => format!("{}; {skops}", self.pass_summary),
                None => self.pass_summary.clone(),
            },
            Some(Severity::Lead) => format!(
                "{}; {} finding(s) outside what this reader checks",
                self.pass_summary,
                count(Severity::Lead)
            ),
            Some(Severity::Fail) if self.skops => format!(
                "a skops file (skops.io.dump) whose schema names code that runs: {} finding(s)",
                count(Severity::Fail)
            ),
            Some(Severity::Fail) => format!(
                "not a sound {what}: {} finding(s); readers may disagree on its arrays",
                count(Severity::Fail)
            ),
        }
    }

    /// The pickle row's verdict: none when the file holds no object array (no row); FAIL for
    /// a code-running global; LEAD otherwise, never PASS: an object array's objects are
    /// rebuilt by NumPy's own globals, never provably data.
    pub fn pickle_status(&self) -> Option<Option<Severity>> {
        if self.pickles.is_empty() && self.raw_pickles.is_empty() {
            return None;
        }
        let worst = self.pickle_findings.iter().map(|f| f.severity).max();
        Some(worst.max(Some(Severity::Lead)))
    }

    /// The pickle row's one sentence.
    pub fn pickle_summary(&self) -> String {
        let mut what = Vec::new();
        if !self.pickles.is_empty() {
            what.push(format!(
                "{} object array(s) whose pickle np.load(allow_pickle=True) runs",
                self.pickles.len()
            ));
        }
        if !self.raw_pickles.is_empty() {
            what.push(format!(
                "{} member(s) holding a pickle that np.load returns as raw bytes (its caller may unpickle them)",
                self.raw_pickles.len()
            ));
        }
        let what = what.join(" and ");
        // Never a PASS (see pickle_status): FAIL, or else LEAD.
        if self.pickle_status() == Some(Some(Severity::Fail)) {
            format!("{what}; the scan found globals that run code or touch the system")
        } else {
            format!(
                "{what}; nothing found runs code, but what they build is outside what socair proves to be data"
            )
        }
    }
}

/// A place inside an archive member, or in the file.
fn place_in(member: Option<&Where>, offset: u64) -> String {
    match member {
        Some(w) if w.inflated => format!("member {:?} byte {offset} (inflated)", w.name),
        Some(w) => format!("member {:?} byte {offset}", w.name),
        None => format!("byte {offset}"),
    }
}

/// The member holding an array, and how its offsets count.
pub(crate) struct Where {
    /// The member's name.
    name: String,
    /// Where the member's uncompressed bytes start in the offsets of the header (the file
    /// offset of a stored member's data; 0 for inflated bytes).
    base: u64,
    /// Offsets are in the inflated bytes, not in the file.
    inflated: bool,
}

/// Context for one array.
pub(crate) struct Array<'a> {
    /// The bytes its header was read from (the file, or an inflated member).
    pub(crate) src: Span<'a>,
    /// Its name in the manifest.
    pub(crate) name: &'a str,
    /// Its member, for an archive.
    pub(crate) member: Option<&'a Where>,
    /// The opened file's length (the pickle machine's memory grows with it).
    pub(crate) file_len: u64,
    /// Globals the operator reviewed.
    pub(crate) reviewed: &'a [String],
}

/// Adds what the header `h` describes to `out`.
pub(crate) fn describe(a: &Array<'_>, h: &Header, out: &mut NumpyRead) {
    let place = |offset: u64| place_in(a.member, offset);
    let name = Some(a.name);
    let descr_text = h.descr.text();
    let (element_type, byte_order, itemsize, host_gathers) = match npy::classify(&h.descr) {
        Kind::Element {
            element_type,
            byte_order,
            itemsize,
        } => (Some(element_type), byte_order, itemsize, true),
        // A dtype the host has no element size for: fingerprinted by its bytes, which the
        // host hashes in order; a column-major one is put in row-major order here.
        Kind::Other {
            itemsize: Some(itemsize),
            element_type,
            byte_order,
            ..
        } => (element_type, byte_order, itemsize, false),
        Kind::Object => return object_array(a, h, out),
        Kind::Other {
            itemsize: None,
            what,
            ..
        } => {
            return out.unread.push((
                Some(a.name.to_owned()),
                format!(
                    "{}: {what} whose element size is not known; not fingerprinted",
                    place(h.descr_offset)
                ),
            ))
        }
        Kind::Unknown { what } => {
            return out.refuse(
                name,
                Severity::Lead,
                place(h.descr_offset),
                format!("{what}; not read"),
            )
        }
    };
    let len = match npy::check_data_len(h, itemsize) {
        Ok(len) => len,
        Err(e) => return out.refuse(name, Severity::Fail, place(e.offset), e.reason),
    };
    let origin = a
        .member
        .map(|w| (w.name.clone(), h.data_offset.saturating_sub(w.base)));
    let tensor = |bytes, strides| Tensor {
        name: a.name.to_owned(),
        dtype: descr_text.clone(),
        element_type,
        itemsize,
        shape: h.shape.clone(),
        bytes,
        byte_order,
        strides,
        origin: origin.clone(),
    };
    let strides = match a.src.file_offset {
        Some(_) if h.fortran_order => npy::fortran_strides(&h.shape),
        _ => None,
    };
    match a.src.file_offset {
        Some(file_base) if strides.is_none() || host_gathers => {
            let offset = file_base.saturating_add(h.data_offset);
            out.tensors
                .push(tensor(Bytes::Range { offset, len }, strides));
        }
        _ => match inline_bytes(a.src, h, itemsize, len) {
            Ok(bytes) => out.tensors.push(tensor(Bytes::Inline(bytes), None)),
            Err(reason) => out.refuse(name, Severity::Fail, place(h.data_offset), reason),
        },
    }
}

/// An object array: listed unread, its pickle scanned.
fn object_array(a: &Array<'_>, h: &Header, out: &mut NumpyRead) {
    let place = |offset: u64| place_in(a.member, offset);
    let at = place(h.data_offset);
    out.unread.push((
        Some(a.name.to_owned()),
        format!(
            "{}: object dtype {:?}: its data is a pickle of Python objects (scanned in the Pickle opcode scan row), not numbers; not fingerprinted",
            place(h.descr_offset),
            h.descr.text()
        ),
    ));
    scan_pickle(a, h, at, out);
}

/// An inflated array's bytes, in row-major order and in the byte order they were stored in
/// (which the descriptor's `byte_order` states, and the host's hashing honours): a `>f4` array
/// fingerprints the same whether `np.savez` stored it or `np.savez_compressed` deflated it.
fn inline_bytes(src: Span<'_>, h: &Header, itemsize: u64, len: u64) -> Result<Vec<u8>, String> {
    let data = src
        .sub(h.data_offset, len)
        .ok_or("its data does not lie in the member")?
        .to_vec()?;
    if h.fortran_order && npy::fortran_strides(&h.shape).is_some() {
        let size = usize::try_from(itemsize).map_err(|_| "element too wide")?;
        return Ok(npy::fortran_to_row_major(&data, &h.shape, size));
    }
    Ok(data)
}

/// Runs the pickle after an object array's header through socair's pickle machine.
fn scan_pickle(a: &Array<'_>, h: &Header, at: String, out: &mut NumpyRead) {
    out.pickles.push(at.clone());
    match a.src.sub(h.data_offset, h.data_len()).map(|s| s.to_vec()) {
        Some(Ok(d)) => run_pickle(&d, a.member, h.data_offset, at, a.file_len, a.reviewed, out),
        _ => out.pickle_findings.push(Finding::new(
            Severity::Lead,
            at,
            "its pickle could not be read; not scanned",
        )),
    }
}

/// Runs `data` (at `offset` of `member`'s bytes, or of the file) through socair's pickle
/// machine, its findings in the pickle row.
fn run_pickle(
    data: &[u8],
    member: Option<&Where>,
    offset: u64,
    at: String,
    file_len: u64,
    reviewed: &[String],
    out: &mut NumpyRead,
) {
    let options = pickle::Options {
        reviewed: reviewed.to_vec(),
        legacy: false,
        input_len: file_len,
        // A pickle this plugin scans never PASSes (see the row's verdict), so the Python 2
        // opcodes socair-wo/2 adds would change no verdict here.
        grammar: pickle::Grammar::V1,
        ..Default::default()
    };
    let run = pickle::run(data, &options);
    for f in run.findings {
        let severity = match f.severity {
            pickle::Severity::Fail => Severity::Fail,
            pickle::Severity::Lead => Severity::Lead,
        };
        out.pickle_findings.push(Finding::new(
            severity,
            place_in(member, offset.saturating_add(f.offset)),
            format!("{} ({})", f.reason, f.opcode),
        ));
    }
    if !run.reviewed_used.is_empty() {
        out.pickle_findings.push(Finding::new(
            Severity::Lead,
            at,
            format!("uses reviewed globals {}", run.reviewed_used.join(", ")),
        ));
    }
}

/// Reads a `.npy` file: one array, or the consecutive records of an equinox file
/// ([`crate::records`]).
pub fn read_npy(file: Span<'_>, reviewed: &[String]) -> NumpyRead {
    let mut out = NumpyRead::new(NPY);
    let windows = crate::records::windows(&file);
    if windows.len() > 1 {
        read_records(file, &windows, reviewed, &mut out);
        return out;
    }
    match npy::read_header(&file, 0, file.len) {
        Ok(h) => {
            let a = Array {
                src: file,
                name: NPY_TENSOR_NAME,
                member: None,
                file_len: file.len,
                reviewed,
            };
            describe(&a, &h, &mut out);
            out.pass_summary = format!(
                ".npy {}.{} header ({} bytes, strict literal) describes shape {:?} of {}{}",
                h.version.0,
                h.version.1,
                h.data_offset,
                h.shape,
                h.descr.text(),
                if out.tensors.iter().any(|t| t.strides.is_some()) {
                    " (column-major: fortran_order is True)"
                } else {
                    ""
                }
            );
        }
        Err(e) => out.refuse(None, Severity::Fail, format!("byte {}", e.offset), e.reason),
    }
    out
}

/// Reads the records of an equinox file at `windows` (more than one: [`crate::records`]), each
/// as a `.npy` file of its own, named by its index.
fn read_records(file: Span<'_>, windows: &[(u64, u64)], reviewed: &[String], out: &mut NumpyRead) {
    let mut shapes = Vec::new();
    for (i, &(base, len)) in windows.iter().enumerate() {
        let name = i.to_string();
        match npy::read_header(&file, base, len) {
            Ok(h) => {
                let a = Array {
                    src: file,
                    name: &name,
                    member: None,
                    file_len: file.len,
                    reviewed,
                };
                describe(&a, &h, out);
                if shapes.len() < 8 {
                    shapes.push(format!("{:?} of {}", h.shape, h.descr.text()));
                }
            }
            Err(e) => out.refuse(
                Some(&name),
                Severity::Fail,
                format!("byte {}", e.offset),
                format!("record {i}: {}", e.reason),
            ),
        }
    }
    let more = windows.len().saturating_sub(shapes.len());
    out.pass_summary = format!(
        "{} consecutive .npy records, as equinox's tree_serialise_leaves writes them (one np.save a leaf) and tree_deserialise_leaves reads them (np.load of each in turn; np.load of the file alone reads the first), each header strict and each data length exact: {}{}",
        windows.len(),
        shapes.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    );
}

// ---------------------------------------------------------------------------------------------
// An `.npz` archive member by member, as `np.load` reads it (numpy 2.4
// `numpy/lib/_npyio_impl.py`, `NpzFile`):
//
// * every member is a key: `NpzFile.files` is each name with one `.npy` suffix removed
//   (`removesuffix`), and `_files` maps both the key and the full name to the member;
// * `npz[key]` opens the member with `zipfile` (stored, deflate, bzip2 and LZMA: see
//   [`crate::decompress`]) and reads its first six bytes: the `.npy` magic makes it an array
//   (`format.read_array`, with its pickle for an object array), anything else is returned as
//   raw bytes, whatever the name.
//
// So a member without the `.npy` name that starts with the magic is an array like any other,
// fingerprinted and its pickle scanned; a member that does not start with it (named `.npy` or
// not) is raw bytes, a LEAD, and when those bytes are a pickle it goes through the machine
// too (`np.load` never unpickles it, its caller may).

/// What the members were compressed with, counted for the PASS sentence.
#[derive(Default)]
struct Counts {
    stored: usize,
    deflated: usize,
    bzip2: usize,
    lzma: usize,
}

/// Reads an `.npz` archive; CRC-32s are checked unless `header_only`.
pub fn read_npz(file: Span<'_>, header_only: bool, reviewed: &[String]) -> NumpyRead {
    let mut out = NumpyRead::new(NPZ);
    let archive = match zip::read_archive(&file) {
        Ok(a) => a,
        Err(e) => {
            out.refuse(None, Severity::Fail, e.place, e.reason);
            return out;
        }
    };
    let members = archive.members;
    // np.load(f)[key] looks `key` up as a member name first, then as `key + ".npy"`: a member
    // named `x` and another named `x.npy` make `x` mean two different arrays.
    let names: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let ambiguous: BTreeSet<&str> = members
        .iter()
        .filter_map(|m| m.name.strip_suffix(".npy"))
        .filter(|stem| names.contains(stem))
        .collect();
    let mut budget = inflate_budget(file.len);
    let mut counts = Counts::default();
    for m in &members {
        // NpzFile.files: the name with one `.npy` removed.
        let key = m.name.strip_suffix(".npy").unwrap_or(&m.name);
        if m.name.ends_with(".npy") && ambiguous.contains(key) {
            out.refuse(
                Some(key),
                Severity::Fail,
                m.place(),
                format!("np.load()[{key:?}] returns the member named {key:?}, not this one; the name means two arrays"),
            );
            continue;
        }
        if m.encrypted {
            out.refuse(
                Some(key),
                Severity::Lead,
                m.place(),
                "encrypted; not read".into(),
            );
            continue;
        }
        match m.method {
            zip::STORED => {
                counts.stored += 1;
                read_stored(&file, m, key, header_only, reviewed, &mut out);
            }
            zip::DEFLATE | zip::BZIP2 | zip::LZMA => {
                match m.method {
                    zip::DEFLATE => counts.deflated += 1,
                    zip::BZIP2 => counts.bzip2 += 1,
                    _ => counts.lzma += 1,
                }
                if m.len > budget {
                    out.refuse(
                        Some(key),
                        Severity::Lead,
                        m.place(),
                        format!(
                            "compressed ({}) to {} bytes, which declare {} bytes decompressed: past the {} bytes socair decompresses from this archive; not read, CRC-32 not checked",
                            zip::method_name(m.method),
                            m.compressed_len,
                            m.len,
                            inflate_budget(file.len)
                        ),
                    );
                    continue;
                }
                budget = budget.saturating_sub(m.len);
                read_decoded(&file, m, key, reviewed, &mut out);
            }
            other => out.refuse(
                Some(key),
                Severity::Lead,
                m.place(),
                format!(
                    "compressed with method {other} ({}); np.savez writes stored and deflate, Python's zipfile reads bzip2 and LZMA too, and this reader those four; not read",
                    zip::method_name(other)
                ),
            ),
        }
    }
    let mut methods = vec![
        format!("{} stored", counts.stored),
        format!("{} deflated", counts.deflated),
    ];
    if counts.bzip2 > 0 {
        methods.push(format!("{} bzip2", counts.bzip2));
    }
    if counts.lzma > 0 {
        methods.push(format!("{} LZMA", counts.lzma));
    }
    out.pass_summary = format!(
        ".npz zip of {} member(s) ({}): local headers agree with the central directory, members tile the file with no gap, overlap or duplicate name, {}",
        members.len(),
        methods.join(", "),
        if header_only {
            "CRC-32 of stored members not checked (header only); compressed members decompressed within bounds and checked"
        } else {
            "CRC-32 and size of every member verified"
        },
    );
    out
}

/// The member a raw member's findings are placed in, and where its bytes start in those
/// places' offsets (the file's for a stored member, 0 for decompressed bytes).
struct RawAt<'w> {
    w: &'w Where,
    offset: u64,
}

/// A member that does not start with the `.npy` magic: `np.load` returns its raw bytes. A
/// LEAD (nothing models them), and their pickle scanned when they are one; a skops file's
/// `schema.json` is judged as skops 0.16 loads it instead (data when skops loads it by
/// default). `head` is the member's first bytes; `all` reads the whole member when it is a
/// pickle or a schema.
fn raw_member<'d>(
    m: &Member,
    key: &str,
    at: RawAt<'_>,
    head: &[u8],
    all: impl FnOnce() -> Option<Cow<'d, [u8]>>,
    file: (u64, &[String]),
    out: &mut NumpyRead,
) {
    let (file_len, reviewed) = file;
    let RawAt { w, offset } = at;
    let raw = format!("np.load()[{key:?}] returns its raw bytes, not an array: it does not start with the .npy magic (\\x93NUMPY); nothing socair models reads them");
    // `all` reads the whole member, once: the skops judgement and the pickle scan share it.
    let mut all = Some(all);
    let mut read: Option<Option<Cow<'d, [u8]>>> = None;
    let mut skops = false;
    if key == "schema.json" {
        // A skops file with arrays (skops.io.dump writes its schema last), judged as skops
        // 0.16 loads it (socair_skops): a FAIL for what runs code, a LEAD for what
        // skops refuses without trusted= (or socair did not read whole), data otherwise (what
        // np.load returns for it is the schema's bytes, and skops.io.load builds only types it
        // trusts by default). In any JSON encoding Python reads, so no first-byte test.
        let data = all.take().and_then(|f| f());
        let judged = data.as_deref().and_then(socair_skops::judge);
        if let Some(j) = judged.map(|j| j.trusting(reviewed)) {
            skops = true;
            out.skops = true;
            // The FAILs first: the one a person reads first says what runs.
            for (at, why) in &j.dangerous {
                let at = if at.is_empty() { "its root" } else { at };
                out.found(
                    Severity::Fail,
                    format!("{} at {at}", m.place()),
                    why.clone(),
                );
            }
            if let Some(lead) = j.lead() {
                out.refuse(
                    Some(key),
                    Severity::Lead,
                    m.place(),
                    format!("np.load()[{key:?}] returns its raw bytes: {lead}"),
                );
            } else if j.dangerous.is_empty() {
                out.skops_summary = Some(j.pass_summary());
            }
        }
        read = Some(data);
    }
    if !skops {
        out.refuse(Some(key), Severity::Lead, m.place(), raw);
    }
    // Still a pickle scan for a schema.json that is one: np.load returns its bytes, and its
    // caller may unpickle them.
    if !pickle::looks_like_pickle(head, m.len) {
        return;
    }
    let at = place_in(Some(w), offset);
    out.raw_pickles.push(at.clone());
    match read.unwrap_or_else(|| all.take().and_then(|f| f())) {
        Some(data) => run_pickle(&data, Some(w), offset, at, file_len, reviewed, out),
        None => out.pickle_findings.push(Finding::new(
            Severity::Lead,
            at,
            "its pickle could not be read; not scanned",
        )),
    }
}

fn read_stored(
    file: &Span<'_>,
    m: &Member,
    key: &str,
    header_only: bool,
    reviewed: &[String],
    out: &mut NumpyRead,
) {
    if !header_only {
        if let Err(e) = zip::read_each(file, m, |_| true) {
            return out.refuse(Some(key), Severity::Fail, m.place(), e.to_string());
        }
    }
    let w = Where {
        name: m.name.clone(),
        base: m.data_offset,
        inflated: false,
    };
    let member = file.sub(m.data_offset, m.len);
    let head = member.map(|s| s.head(4096)).unwrap_or_default();
    if !npy::has_magic(&head) {
        let all = || member.and_then(|s| s.to_vec().ok()).map(Cow::Owned);
        let at = RawAt {
            w: &w,
            offset: m.data_offset,
        };
        return raw_member(m, key, at, &head, all, (file.len, reviewed), out);
    }
    let a = Array {
        src: *file,
        name: key,
        member: Some(&w),
        file_len: file.len,
        reviewed,
    };
    array(&a, file, (m.data_offset, m.len), out);
}

/// The `.npy` bytes at `base..base + len` of `src`, the array `a`: its header read and what
/// it describes added, or the refusal with its place.
fn array(a: &Array<'_>, src: &Span<'_>, (base, len): (u64, u64), out: &mut NumpyRead) {
    match npy::read_header(src, base, len) {
        Ok(h) => describe(a, &h, out),
        Err(e) => out.refuse(
            Some(a.name),
            Severity::Fail,
            place_in(a.member, e.offset),
            e.reason,
        ),
    }
}

/// A deflated, bzip2 or LZMA member, decompressed within the budget (checked by the caller).
fn read_decoded(file: &Span<'_>, m: &Member, key: &str, reviewed: &[String], out: &mut NumpyRead) {
    // m.len fits in the budget, so this allocation is bounded.
    let mut bytes = Vec::with_capacity(usize::try_from(m.len).unwrap_or(0));
    let result = zip::read_each(file, m, |piece| {
        bytes.extend_from_slice(piece);
        true
    });
    if let Err(e) = result {
        let reason = match e {
            MemberError::Inflate(inflate::InflateError::TooLong(n)) => format!(
                "its {} stream {} past the {n} bytes the archive declares (a zip bomb, or a member readers read differently); stopped there",
                zip::method_name(m.method),
                if m.method == zip::DEFLATE {
                    "inflates"
                } else {
                    "decompresses"
                }
            ),
            e => e.to_string(),
        };
        return out.refuse(Some(key), Severity::Fail, m.place(), reason);
    }
    let w = Where {
        name: m.name.clone(),
        base: 0,
        inflated: true,
    };
    if !npy::has_magic(&bytes) {
        let head = bytes.get(..bytes.len().min(4096)).unwrap_or_default();
        let at = RawAt { w: &w, offset: 0 };
        let all = || Some(Cow::Borrowed(bytes.as_slice()));
        return raw_member(m, key, at, head, all, (file.len, reviewed), out);
    }
    let member = Span::memory(&bytes);
    let a = Array {
        src: member,
        name: key,
        member: Some(&w),
        file_len: file.len,
        reviewed,
    };
    array(&a, &member, (0, member.len), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f4(shape: &str, n: usize) -> Vec<u8> {
        crate::npy::tests::npy(
            1,
            &format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"),
            &vec![7u8; 4 * n],
        )
    }

    #[test]
    fn consecutive_records_are_each_read() {
        let (a, b, c) = (f4("(2, 3)", 6), f4("()", 1), f4("(0,)", 0));
        let file = [a.clone(), b.clone(), c.clone()].concat();
        let out = read_npy(Span::file_bytes(&file), &[]);
        assert_eq!(out.worst(), None, "{:?}", out.findings);
        let got: Vec<(&str, &Bytes)> = out
            .tensors
            .iter()
            .map(|t| (t.name.as_str(), &t.bytes))
            .collect();
        let (la, lb) = (a.len() as u64, b.len() as u64);
        assert_eq!(
            got,
            [
                (
                    "0",
                    &Bytes::Range {
                        offset: 128,
                        len: 24
                    }
                ),
                (
                    "1",
                    &Bytes::Range {
                        offset: la + 128,
                        len: 4
                    }
                ),
                (
                    "2",
                    &Bytes::Range {
                        offset: la + lb + 128,
                        len: 0
                    }
                ),
            ]
        );
        assert!(out.summary().starts_with("3 consecutive .npy records"));
    }

    #[test]
    fn what_follows_the_last_record_is_refused_and_one_record_stays_a_plain_file() {
        let a = f4("(2,)", 2);
        // Junk after two records: the last record's trailing bytes FAIL, as for a .npy file.
        let junk = [a.clone(), a.clone(), b"junk".to_vec()].concat();
        let out = read_npy(Span::file_bytes(&junk), &[]);
        assert_eq!(out.worst(), Some(Severity::Fail));
        assert!(
            out.findings[0].reason.contains("4 trailing bytes"),
            "{:?}",
            out.findings
        );
        assert_eq!(out.tensors.len(), 1, "the first record is read");
        // A record cut short: refused.
        let cut = [a.clone(), a[..a.len() - 1].to_vec()].concat();
        let out = read_npy(Span::file_bytes(&cut), &[]);
        assert_eq!(out.worst(), Some(Severity::Fail));
        // One record: the name a .npy file's array has.
        let out = read_npy(Span::file_bytes(&a), &[]);
        assert_eq!(out.tensors[0].name, NPY_TENSOR_NAME);
        // An object array ends the split: its pickle runs to the end and is scanned.
        let obj = crate::npy::tests::npy(
            1,
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            b"cos\nsystem\n(S'id'\ntR.",
        );
        let out = read_npy(Span::file_bytes(&[a.clone(), obj].concat()), &[]);
        assert!(out
            .pickle_findings
            .iter()
            .any(|f| f.severity == Severity::Fail && f.reason.contains("os.system")));
    }

    use crate::npy::tests::npy;
    use crate::zip::tests::{self as ztests, deflated, stored, zip};

    fn npz(parts: &[ztests::Part<'_>]) -> NumpyRead {
        let z = zip(parts);
        read_npz(Span::file_bytes(&z), false, &[])
    }

    #[test]
    fn stored_and_deflated_members_give_the_same_values() {
        let data: Vec<u8> = (0u8..24).collect();
        let member = npy(
            1,
            "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }",
            &data,
        );
        let s = npz(&[stored("a.npy", &member)]);
        let d = npz(&[deflated("a.npy", &member)]);
        assert_eq!(s.worst(), None, "{:?}", s.findings);
        assert_eq!(d.worst(), None, "{:?}", d.findings);
        let (ts, td) = (&s.tensors[0], &d.tensors[0]);
        assert_eq!(ts.strides, Some(vec![1, 2]));
        assert_eq!(ts.byte_order, ByteOrder::Big);
        let Bytes::Inline(inline) = &td.bytes else {
            panic!("{td:?}")
        };
        // Row-major, bytes as stored: element (i, j) is stored column-major at j*2+i.
        let mut want: Vec<u8> = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                let k = (j * 2 + i) * 4;
                want.extend(&data[k..k + 4]);
            }
        }
        assert_eq!(td.byte_order, ByteOrder::Big);
        assert_eq!(inline, &want);
        assert_eq!(td.origin, Some(("a.npy".into(), 128)));
        assert_eq!(ts.origin, Some(("a.npy".into(), 128)));
    }

    #[test]
    fn an_object_array_is_never_a_pass() {
        // protocol 2: a list holding an int, then STOP.
        let harmless = b"\x80\x02]q\x00K\x01a.";
        let member = npy(
            1,
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            harmless,
        );
        let o = read_npy(Span::file_bytes(&member), &[]);
        assert_eq!(o.worst(), None);
        assert_eq!(o.pickle_status(), Some(Some(Severity::Lead)));
        assert!(o.tensors.is_empty());
        // GLOBAL os system, then the call.
        let evil = b"cos\nsystem\n(S'id'\ntR.";
        let member = npy(
            1,
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            evil,
        );
        let o = npz(&[deflated("p.npy", &member)]);
        assert_eq!(o.pickle_status(), Some(Some(Severity::Fail)), "{:?}", o);
        let f = o
            .pickle_findings
            .iter()
            .find(|f| f.severity == Severity::Fail)
            .unwrap();
        assert_eq!(f.place, "member \"p.npy\" byte 128 (inflated)");
    }

    #[test]
    fn members_past_the_budget_are_not_inflated() {
        // 17 MiB of zeros deflate to about 17 KB: past the 16 MiB + 2x bound.
        let big = vec![0u8; 17 << 20];
        let z = zip(&[deflated("a.npy", &big)]);
        assert!(z.len() < 100_000);
        let o = read_npz(Span::file_bytes(&z), false, &[]);
        assert_eq!(o.worst(), Some(Severity::Lead), "{:?}", o.findings);
        assert!(
            o.findings[0].reason.contains("past the"),
            "{:?}",
            o.findings
        );
        assert!(o.tensors.is_empty());
        assert_eq!(o.unread.len(), 1);
    }
}
