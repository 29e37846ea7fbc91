//! What this plugin makes of a `.npy` file or an `.npz` archive, in plain Rust types: the
//! tensors (where their bytes lie), what it could not read and why, and the findings of the
//! `Format and structure` check. `lib.rs` turns an [`Outcome`] into the plugin API's types.
//!
//! Verdicts:
//!
//! * **FAIL**: the file is malformed (every refusal of [`crate::npy`] and [`crate::zip`], a data
//!   length that does not match the shape, a CRC-32 that does not hold, two member names that
//!   NumPy would resolve to one array), or an array has the object dtype, whose data is a
//!   pickle that `np.load(allow_pickle=True)` runs.
//! * **LEAD**: something this plugin did not check: a deflate-compressed member (its header,
//!   and so whether it holds a pickle, is not read), a member that is not an `.npy` file, a
//!   descr NumPy's writer does not produce.
//! * **PASS**: otherwise. Arrays of sound NumPy dtypes that socair has no element type for
//!   (strings, datetimes, complex128, structured records) are listed as unread, which is not a
//!   finding.

use crate::npy::{self, Descr, Header, Kind};
use crate::zip::{self, Member};
use socair_plugin_api::{ByteOrder, ReadAt};
use std::collections::BTreeSet;

/// The format names.
pub const NPY: &str = "npy";
/// The format names.
pub const NPZ: &str = "npz";

/// The name given to the one array of a `.npy` file (the format stores no name).
pub const NPY_TENSOR_NAME: &str = "array";

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

/// One tensor whose bytes were located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name: `array` for a `.npy` file, the member name without `.npy` in an archive.
    pub name: String,
    /// NumPy's descr, such as `<f4` (so the byte order of the hashed bytes is visible).
    pub dtype: String,
    /// socair's element type, such as `F32`.
    pub element_type: &'static str,
    /// The shape, outermost first.
    pub shape: Vec<u64>,
    /// Where the data starts in the file.
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// The byte order of each element.
    pub byte_order: ByteOrder,
    /// Column-major element strides, for `fortran_order: True` data (see
    /// [`npy::fortran_strides`]).
    pub strides: Option<Vec<u64>>,
    /// The zip member holding it and the data's offset in that member.
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
    /// The check's findings.
    pub findings: Vec<Finding>,
    /// One sentence for a PASS.
    pub pass_summary: String,
}

impl Outcome {
    fn new(format: &'static str) -> Self {
        Outcome {
            format,
            tensors: Vec::new(),
            unread: Vec::new(),
            findings: Vec::new(),
            pass_summary: String::new(),
        }
    }

    fn found(&mut self, severity: Severity, place: String, reason: String) {
        self.findings.push(Finding {
            severity,
            place,
            reason,
        });
    }

    /// The worst severity found, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The row's one sentence.
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
            Some(Severity::Fail) if self.findings.iter().any(|f| f.reason.contains(OBJECT)) => {
                format!("{what} holds an object-dtype array: a pickle that np.load(allow_pickle=True) would run")
            }
            Some(Severity::Fail) => format!(
                "not a sound {what}: {} finding(s); readers may disagree on its arrays",
                count(Severity::Fail)
            ),
        }
    }
}

const OBJECT: &str = "object dtype";

/// Places inside an archive member name it.
fn place_in(member: Option<&str>, offset: u64) -> String {
    match member {
        Some(m) => format!("member {m:?}, byte {offset}"),
        None => format!("byte {offset}"),
    }
}

/// Adds what the header `h` describes, named `name`, to `out`; `member` is the zip member
/// holding it and the offset of the member's data, if any.
fn describe(h: &Header, name: &str, member: Option<(&str, u64)>, out: &mut Outcome) {
    let in_member = member.map(|(m, _)| m);
    let refuse = |out: &mut Outcome, severity, offset: u64, reason: String| {
        let place = place_in(in_member, offset);
        out.unread
            .push((Some(name.to_owned()), format!("{place}: {reason}")));
        out.found(severity, place, reason);
    };
    let descr_text = match &h.descr {
        Descr::Str(s) => s.clone(),
        Descr::Structured(_) => "a list of fields".to_owned(),
    };
    match npy::classify(&h.descr) {
        Kind::Element {
            element_type,
            byte_order,
            itemsize,
        } => match npy::check_data_len(h, itemsize) {
            Ok(len) => {
                let strides = if h.fortran_order {
                    npy::fortran_strides(&h.shape)
                } else {
                    None
                };
                out.tensors.push(Tensor {
                    name: name.to_owned(),
                    dtype: descr_text,
                    element_type,
                    shape: h.shape.clone(),
                    offset: h.data_offset,
                    len,
                    byte_order,
                    strides,
                    origin: member
                        .map(|(m, base)| (m.to_owned(), h.data_offset.saturating_sub(base))),
                });
            }
            Err(e) => refuse(out, Severity::Fail, e.offset, e.reason),
        },
        Kind::Object => refuse(
            out,
            Severity::Fail,
            h.descr_offset,
            format!(
                "{OBJECT} {descr_text:?}: the data is a pickle, which np.load(allow_pickle=True) runs; not read"
            ),
        ),
        Kind::Other { itemsize, what } => {
            if let Some(size) = itemsize {
                if let Err(e) = npy::check_data_len(h, size) {
                    return refuse(out, Severity::Fail, e.offset, e.reason);
                }
            }
            let place = place_in(in_member, h.descr_offset);
            out.unread.push((
                Some(name.to_owned()),
                format!("{place}: {what} has no socair element type; not fingerprinted"),
            ));
        }
        Kind::Unknown { what } => refuse(
            out,
            Severity::Lead,
            h.descr_offset,
            format!("{what}; not read"),
        ),
    }
}

/// Reads a `.npy` file.
pub fn read_npy(src: &(impl ReadAt + ?Sized)) -> Outcome {
    let mut out = Outcome::new(NPY);
    match npy::read_header(src, 0, src.size()) {
        Ok(h) => {
            describe(&h, NPY_TENSOR_NAME, None, &mut out);
            out.pass_summary = format!(
                ".npy {}.{} header ({} bytes, strict literal) describes shape {:?} whose data fills the rest of the file exactly{}",
                h.version.0,
                h.version.1,
                h.data_offset,
                h.shape,
                if out.tensors.iter().any(|t| t.strides.is_some()) {
                    " (column-major: fortran_order is True)"
                } else {
                    ""
                }
            );
        }
        Err(e) => {
            out.unread.push((None, e.to_string()));
            out.found(Severity::Fail, format!("byte {}", e.offset), e.reason);
        }
    }
    out
}

/// Reads an `.npz` archive; CRC-32s are checked unless `header_only`.
pub fn read_npz(src: &(impl ReadAt + ?Sized), header_only: bool) -> Outcome {
    let mut out = Outcome::new(NPZ);
    let members = match zip::read_archive(src) {
        Ok(m) => m,
        Err(e) => {
            out.unread.push((None, e.to_string()));
            out.found(Severity::Fail, e.place, e.reason);
            return out;
        }
    };
    // np.load(f)[key] looks `key` up as a member name first, then as `key + ".npy"`: a member
    // named `x` and another named `x.npy` make `x` mean two different arrays.
    let names: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let ambiguous: BTreeSet<&str> = members
        .iter()
        .filter_map(|m| m.name.strip_suffix(".npy"))
        .filter(|stem| names.contains(stem))
        .collect();
    let mut stored = 0usize;
    let mut compressed = 0usize;
    for m in &members {
        let Some(name) = m.name.strip_suffix(".npy") else {
            let reason =
                "not an .npy member (np.load returns its raw bytes, not an array); not read"
                    .to_owned();
            out.unread
                .push((Some(m.name.clone()), format!("{}: {reason}", m.place())));
            out.found(Severity::Lead, m.place(), reason);
            continue;
        };
        if ambiguous.contains(name) {
            let reason = format!(
                "np.load()[{name:?}] returns the member named {name:?}, not this one; the name means two arrays"
            );
            out.unread
                .push((Some(name.to_owned()), format!("{}: {reason}", m.place())));
            out.found(Severity::Fail, m.place(), reason);
            continue;
        }
        if m.method == zip::DEFLATE {
            compressed = compressed.saturating_add(1);
            let reason = "deflate-compressed member; this plugin reads stored members only (its .npy header, and whether it holds a pickle, was not checked)".to_owned();
            out.unread
                .push((Some(name.to_owned()), format!("{}: {reason}", m.place())));
            out.found(Severity::Lead, m.place(), reason);
            continue;
        }
        stored = stored.saturating_add(1);
        if !header_only {
            if let Err(e) = zip::check_crc(src, m) {
                out.unread.push((Some(name.to_owned()), e.to_string()));
                out.found(Severity::Fail, e.place, e.reason);
                continue;
            }
        }
        read_member(src, m, name, &mut out);
    }
    out.pass_summary = format!(
        ".npz zip of {} member(s), {stored} stored: local headers agree with the central directory, members tile the file with no gap, overlap or duplicate name, {}{}",
        members.len(),
        if header_only {
            "CRC-32 not checked (header only)"
        } else {
            "CRC-32 of every stored member verified"
        },
        if compressed > 0 {
            format!(", {compressed} deflate-compressed member(s) not read")
        } else {
            String::new()
        }
    );
    out
}

fn read_member(src: &(impl ReadAt + ?Sized), m: &Member, name: &str, out: &mut Outcome) {
    match npy::read_header(src, m.data_offset, m.len) {
        Ok(h) => describe(&h, name, Some((&m.name, m.data_offset)), out),
        Err(e) => {
            let place = place_in(Some(&m.name), e.offset);
            out.unread
                .push((Some(name.to_owned()), format!("{place}: {}", e.reason)));
            out.found(Severity::Fail, place, e.reason);
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
    use crate::npy::tests::npy;
    use crate::zip::tests::{stored, zip, Part};

    fn f4(shape: &str, n: usize) -> Vec<u8> {
        npy(
            1,
            &format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"),
            &vec![7u8; n * 4],
        )
    }

    #[test]
    fn one_npy_file() {
        let f = f4("(2, 3)", 6);
        let o = read_npy(f.as_slice());
        assert_eq!(o.worst(), None, "{o:?}");
        assert_eq!(o.tensors.len(), 1);
        let t = &o.tensors[0];
        assert_eq!(
            (t.name.as_str(), t.dtype.as_str(), t.element_type),
            ("array", "<f4", "F32")
        );
        assert_eq!((t.offset, t.len, t.shape.clone()), (128, 24, vec![2, 3]));
        assert_eq!(t.origin, None);
        assert!(
            o.summary().starts_with(".npy 1.0 header (128 bytes"),
            "{}",
            o.summary()
        );
    }

    #[test]
    fn fortran_order_is_strided() {
        let f = npy(
            1,
            "{'descr': '>i2', 'fortran_order': True, 'shape': (3, 4), }",
            &[0; 24],
        );
        let t = &read_npy(f.as_slice()).tensors[0];
        assert_eq!(t.strides, Some(vec![1, 3]));
        assert_eq!(t.byte_order, ByteOrder::Big);
    }

    #[test]
    fn object_dtype_fails() {
        let f = npy(
            1,
            "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
            b"\x80\x04N.",
        );
        let o = read_npy(f.as_slice());
        assert_eq!(o.worst(), Some(Severity::Fail));
        assert!(o.tensors.is_empty());
        assert_eq!(o.findings[0].place, "byte 11");
        assert!(o.unread[0].1.contains("pickle"), "{:?}", o.unread);
        assert!(o.summary().contains("object-dtype"), "{}", o.summary());
    }

    #[test]
    fn unsupported_but_sound_dtype_is_unread_not_a_finding() {
        let f = npy(
            1,
            "{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }",
            &[0; 24],
        );
        let o = read_npy(f.as_slice());
        assert_eq!(o.worst(), None);
        assert_eq!(o.unread.len(), 1);
        assert!(o.unread[0].1.contains("unicode strings"), "{:?}", o.unread);
        let short = npy(
            1,
            "{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }",
            &[0; 23],
        );
        assert_eq!(read_npy(short.as_slice()).worst(), Some(Severity::Fail));
    }

    #[test]
    fn archive_of_stored_members() {
        let a = f4("(2, 3)", 6);
        let b = npy(
            1,
            "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
            &[1, 0, 1],
        );
        let z = zip(&[stored("w.npy", &a), stored("mask.npy", &b)]);
        let o = read_npz(z.as_slice(), false);
        assert_eq!(o.worst(), None, "{o:?}");
        let names: Vec<&str> = o.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["w", "mask"]);
        let w = &o.tensors[0];
        assert_eq!((w.offset, w.len), (55 + 128, 24));
        assert_eq!(w.origin, Some(("w.npy".to_owned(), 128)));
        assert_eq!(&z[w.offset as usize..][..24], &[7u8; 24]);
        let mask = &o.tensors[1];
        assert_eq!(&z[mask.offset as usize..][..3], &[1, 0, 1]);
        assert!(o
            .summary()
            .contains("CRC-32 of every stored member verified"));
    }

    #[test]
    fn compressed_and_foreign_members_are_leads() {
        let a = f4("(1,)", 1);
        let z = zip(&[
            stored("a.npy", &a),
            Part {
                method: zip::DEFLATE,
                ..stored("b.npy", b"whatever")
            },
            stored("notes.txt", b"hello"),
        ]);
        let o = read_npz(z.as_slice(), false);
        assert_eq!(o.worst(), Some(Severity::Lead));
        assert_eq!(o.tensors.len(), 1);
        assert_eq!(o.unread.len(), 2);
        assert_eq!(o.unread[0].0.as_deref(), Some("b"));
        assert!(o.unread[0]
            .1
            .contains("deflate-compressed member; this plugin reads stored members only"));
        assert_eq!(o.unread[1].0.as_deref(), Some("notes.txt"));
    }

    #[test]
    fn archive_failures() {
        let a = f4("(1,)", 1);
        let z = zip(&[stored("x.npy", &a), stored("x.npy.npy", &a)]);
        let o = read_npz(z.as_slice(), false);
        assert_eq!(o.worst(), Some(Severity::Fail));
        assert_eq!(o.tensors.len(), 1, "x is fine; x.npy means two arrays");
        assert!(o.findings[0].reason.contains("means two arrays"));

        let mut z = zip(&[stored("x.npy", &a)]);
        z[55 + 128] ^= 0xff;
        let o = read_npz(z.as_slice(), false);
        assert!(o.findings[0].reason.starts_with("CRC-32"), "{o:?}");
        assert_eq!(
            read_npz(z.as_slice(), true).worst(),
            None,
            "header only: CRC not checked"
        );

        let trailing = [f4("(1,)", 1), vec![0]].concat();
        let z = zip(&[stored("t.npy", &trailing)]);
        let o = read_npz(z.as_slice(), false);
        assert_eq!(o.findings[0].place, "member \"t.npy\", byte 187");
        assert!(o.findings[0].reason.starts_with("1 trailing bytes"));

        let o = read_npz(&b"PK\x03\x04 not really"[..], false);
        assert_eq!(o.unread[0].0, None);
        assert_eq!(o.worst(), Some(Severity::Fail));
    }
}
