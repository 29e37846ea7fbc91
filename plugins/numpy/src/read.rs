//! What this plugin makes of a `.npy` file or an `.npz` archive, in plain Rust types: the
//! tensors (where their bytes lie, or their decoded bytes), what it could not read and why,
//! the findings of the `Format and structure` check, and the pickle scan of object arrays.
//! `lib.rs` turns an [`Outcome`] into the plugin API's types.
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
//! * **PASS**: otherwise. Arrays of sound NumPy dtypes that socair has no element type for
//!   (strings, datetimes, complex128, structured records) are listed as unread, which is not a
//!   finding.
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
    (16u64 << 20).saturating_add(file_len.saturating_mul(2))
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth a human look.
    Lead,
    /// Malformed, or dangerous.
    Fail,
}

/// One finding: how bad, where, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// Where (a byte offset, a zip member).
    pub place: String,
    /// What.
    pub reason: String,
}

/// Where a tensor's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bytes {
    /// In the file, as they are: `len` bytes at `offset`.
    Range {
        /// First byte.
        offset: u64,
        /// Length.
        len: u64,
    },
    /// Decoded from a deflated member: its elements in row-major order, in their stored byte
    /// order.
    Inline(Vec<u8>),
}

/// One tensor whose bytes were located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name: `array` for a `.npy` file, the member name without `.npy` in an archive.
    pub name: String,
    /// NumPy's descr, such as `<f4` (so the byte order of the stored bytes is visible).
    pub dtype: String,
    /// socair's element type, such as `F32`.
    pub element_type: &'static str,
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
pub struct Outcome {
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
    /// The pickle scan's findings.
    pub pickle_findings: Vec<Finding>,
}

impl Outcome {
    fn new(format: &'static str) -> Self {
        Outcome {
            format,
            tensors: Vec::new(),
            unread: Vec::new(),
            findings: Vec::new(),
            pass_summary: String::new(),
            pickles: Vec::new(),
            pickle_findings: Vec::new(),
        }
    }

    fn found(&mut self, severity: Severity, place: String, reason: String) {
        self.findings.push(Finding {
            severity,
            place,
            reason,
        });
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
            None => self.pass_summary.clone(),
            Some(Severity::Lead) => format!(
                "{}; {} finding(s) outside what this reader checks",
                self.pass_summary,
                count(Severity::Lead)
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
        if self.pickles.is_empty() {
            return None;
        }
        let worst = self.pickle_findings.iter().map(|f| f.severity).max();
        Some(worst.max(Some(Severity::Lead)))
    }

    /// The pickle row's one sentence.
    pub fn pickle_summary(&self) -> String {
        // Every pickle this plugin reads is an object array's.
        let what = format!(
            "{} object array(s) whose pickle np.load(allow_pickle=True) runs",
            self.pickles.len()
        );
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
struct Where {
    /// The member's name.
    name: String,
    /// Where the member's uncompressed bytes start in the offsets of the header (the file
    /// offset of a stored member's data; 0 for inflated bytes).
    base: u64,
    /// Offsets are in the inflated bytes, not in the file.
    inflated: bool,
}

/// Context for one array.
struct Array<'a> {
    /// The bytes its header was read from (the file, or an inflated member).
    src: Span<'a>,
    /// Its name in the manifest.
    name: &'a str,
    /// Its member, for an archive.
    member: Option<&'a Where>,
    /// The opened file's length (the pickle machine's memory grows with it).
    file_len: u64,
    /// Globals the operator reviewed.
    reviewed: &'a [String],
}

/// Adds what the header `h` describes to `out`.
fn describe(a: &Array<'_>, h: &Header, out: &mut Outcome) {
    let place = |offset: u64| place_in(a.member, offset);
    let name = Some(a.name);
    let descr_text = h.descr.text();
    match npy::classify(&h.descr) {
        Kind::Element {
            element_type,
            byte_order,
            itemsize,
        } => {
            let len = match npy::check_data_len(h, itemsize) {
                Ok(len) => len,
                Err(e) => return out.refuse(name, Severity::Fail, place(e.offset), e.reason),
            };
            let origin = a
                .member
                .map(|w| (w.name.clone(), h.data_offset.saturating_sub(w.base)));
            let tensor = |bytes, byte_order, strides| Tensor {
                name: a.name.to_owned(),
                dtype: descr_text.clone(),
                element_type,
                shape: h.shape.clone(),
                bytes,
                byte_order,
                strides,
                origin: origin.clone(),
            };
            match a.src.file_offset {
                Some(file_base) => {
                    let strides = if h.fortran_order {
                        npy::fortran_strides(&h.shape)
                    } else {
                        None
                    };
                    let offset = file_base.saturating_add(h.data_offset);
                    out.tensors
                        .push(tensor(Bytes::Range { offset, len }, byte_order, strides));
                }
                None => match inline_bytes(a.src, h, itemsize, len) {
                    Ok(bytes) => {
                        out.tensors
                            .push(tensor(Bytes::Inline(bytes), byte_order, None));
                    }
                    Err(reason) => {
                        out.refuse(name, Severity::Fail, place(h.data_offset), reason);
                    }
                },
            }
        }
        Kind::Object => {
            let at = place(h.data_offset);
            out.unread.push((
                Some(a.name.to_owned()),
                format!(
                    "{}: object dtype {descr_text:?}: its data is a pickle of Python objects (scanned in the Pickle opcode scan row), not numbers; not fingerprinted",
                    place(h.descr_offset)
                ),
            ));
            scan_pickle(a, h, at, out);
        }
        Kind::Other { itemsize, what } => {
            if let Some(size) = itemsize {
                if let Err(e) = npy::check_data_len(h, size) {
                    return out.refuse(name, Severity::Fail, place(e.offset), e.reason);
                }
            }
            out.unread.push((
                Some(a.name.to_owned()),
                format!(
                    "{}: {what} has no socair element type; not fingerprinted",
                    place(h.descr_offset)
                ),
            ));
        }
        Kind::Unknown { what } => out.refuse(
            name,
            Severity::Lead,
            place(h.descr_offset),
            format!("{what}; not read"),
        ),
    }
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
fn scan_pickle(a: &Array<'_>, h: &Header, at: String, out: &mut Outcome) {
    out.pickles.push(at.clone());
    let data = match a.src.sub(h.data_offset, h.data_len()).map(|s| s.to_vec()) {
        Some(Ok(d)) => d,
        _ => {
            out.pickle_findings.push(Finding {
                severity: Severity::Lead,
                place: at,
                reason: "its pickle could not be read; not scanned".into(),
            });
            return;
        }
    };
    let options = pickle::Options {
        reviewed: a.reviewed.to_vec(),
        legacy: false,
        input_len: a.file_len,
        // An object array's pickle never PASSes (see the row's verdict), so the Python 2
        // opcodes socair-wo/2 adds would change no verdict here.
        grammar: pickle::Grammar::V1,
        ..Default::default()
    };
    let run = pickle::run(&data, &options);
    for f in run.findings {
        out.pickle_findings.push(Finding {
            severity: match f.severity {
                pickle::Severity::Fail => Severity::Fail,
                pickle::Severity::Lead => Severity::Lead,
            },
            place: place_in(a.member, h.data_offset.saturating_add(f.offset)),
            reason: format!("{} ({})", f.reason, f.opcode),
        });
    }
    if !run.reviewed_used.is_empty() {
        out.pickle_findings.push(Finding {
            severity: Severity::Lead,
            place: at,
            reason: format!("uses reviewed globals {}", run.reviewed_used.join(", ")),
        });
    }
}

/// Reads a `.npy` file.
pub fn read_npy(file: Span<'_>, reviewed: &[String]) -> Outcome {
    let mut out = Outcome::new(NPY);
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

/// Reads an `.npz` archive; CRC-32s are checked unless `header_only`.
pub fn read_npz(file: Span<'_>, header_only: bool, reviewed: &[String]) -> Outcome {
    let mut out = Outcome::new(NPZ);
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
    let (mut stored, mut deflated) = (0usize, 0usize);
    for m in &members {
        let Some(name) = m.name.strip_suffix(".npy") else {
            out.refuse(
                Some(&m.name),
                Severity::Lead,
                m.place(),
                "not an .npy member (np.load returns its raw bytes, not an array); not read".into(),
            );
            continue;
        };
        if ambiguous.contains(name) {
            out.refuse(
                Some(name),
                Severity::Fail,
                m.place(),
                format!("np.load()[{name:?}] returns the member named {name:?}, not this one; the name means two arrays"),
            );
            continue;
        }
        if m.encrypted {
            out.refuse(
                Some(name),
                Severity::Lead,
                m.place(),
                "encrypted; not read".into(),
            );
            continue;
        }
        match m.method {
            zip::STORED => {
                stored = stored.saturating_add(1);
                read_stored(&file, m, name, header_only, reviewed, &mut out);
            }
            zip::DEFLATE => {
                deflated = deflated.saturating_add(1);
                if m.len > budget {
                    out.refuse(
                        Some(name),
                        Severity::Lead,
                        m.place(),
                        format!(
                            "deflated to {} bytes, which declare {} bytes inflated: past the {} bytes socair inflates from this archive; not read, CRC-32 not checked",
                            m.compressed_len,
                            m.len,
                            inflate_budget(file.len)
                        ),
                    );
                    continue;
                }
                budget = budget.saturating_sub(m.len);
                read_deflated(&file, m, name, reviewed, &mut out);
            }
            other => out.refuse(
                Some(name),
                Severity::Lead,
                m.place(),
                format!(
                    "compressed with method {other} ({}); np.savez writes stored and deflate only; not read",
                    zip::method_name(other)
                ),
            ),
        }
    }
    out.pass_summary = format!(
        ".npz zip of {} member(s) ({stored} stored, {deflated} deflated): local headers agree with the central directory, members tile the file with no gap, overlap or duplicate name, {}",
        members.len(),
        if header_only {
            "CRC-32 of stored members not checked (header only); deflated members inflated within bounds and checked"
        } else {
            "CRC-32 and size of every member verified"
        },
    );
    out
}

fn read_stored(
    file: &Span<'_>,
    m: &Member,
    name: &str,
    header_only: bool,
    reviewed: &[String],
    out: &mut Outcome,
) {
    if !header_only {
        if let Err(e) = zip::read_each(file, m, |_| true) {
            return out.refuse(Some(name), Severity::Fail, m.place(), e.to_string());
        }
    }
    let w = Where {
        name: m.name.clone(),
        base: m.data_offset,
        inflated: false,
    };
    let a = Array {
        src: *file,
        name,
        member: Some(&w),
        file_len: file.len,
        reviewed,
    };
    match npy::read_header(file, m.data_offset, m.len) {
        Ok(h) => describe(&a, &h, out),
        Err(e) => out.refuse(
            Some(name),
            Severity::Fail,
            place_in(Some(&w), e.offset),
            e.reason,
        ),
    }
}

fn read_deflated(file: &Span<'_>, m: &Member, name: &str, reviewed: &[String], out: &mut Outcome) {
    // m.len fits in the budget, so this allocation is bounded.
    let mut bytes = Vec::with_capacity(usize::try_from(m.len).unwrap_or(0));
    let result = zip::read_each(file, m, |piece| {
        bytes.extend_from_slice(piece);
        true
    });
    if let Err(e) = result {
        let reason = match e {
            MemberError::Inflate(inflate::InflateError::TooLong(n)) => format!(
                "its deflate stream inflates past the {n} bytes the archive declares (a zip bomb, or a member readers read differently); stopped there"
            ),
            e => e.to_string(),
        };
        return out.refuse(Some(name), Severity::Fail, m.place(), reason);
    }
    let w = Where {
        name: m.name.clone(),
        base: 0,
        inflated: true,
    };
    let member = Span::memory(&bytes);
    let a = Array {
        src: member,
        name,
        member: Some(&w),
        file_len: file.len,
        reviewed,
    };
    match npy::read_header(&member, 0, member.len) {
        Ok(h) => describe(&a, &h, out),
        Err(e) => out.refuse(
            Some(name),
            Severity::Fail,
            place_in(Some(&w), e.offset),
            e.reason,
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::npy::tests::npy;
    use crate::zip::tests::{deflated, stored, zip};

    fn npz(parts: &[zip::tests::Part<'_>]) -> Outcome {
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
