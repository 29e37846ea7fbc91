//! What CPython's `tarfile.open(fileobj=f, mode="r:", format=tarfile.PAX_FORMAT)` does with
//! the first bytes of a file, mirrored from `Lib/tarfile.py` without running Python.
//!
//! `torch.load` (torch/serialization.py `_legacy_load`) tries torch's oldest format first: when
//! the file is a real file at offset 0 it calls `legacy_load`, which opens the file with that
//! call, and it reads the file as pickles only when that raises a `tarfile.TarError`. So a legacy
//! pickle whose first bytes `tarfile` opens is never read as pickles by torch: it is read as a
//! tar (with `weights_only=False` torch unpickles the tar's `pickle` member, with
//! `weights_only=True` it refuses the file). And when `tarfile.open` raises anything else
//! (`ValueError`, `IndexError`, `OverflowError`, `MemoryError`, `RecursionError`), torch.load
//! fails before it reads any pickle.
//!
//! Only the first member matters: `TarFile.__init__` reads it with `TarFile.next`, and at offset
//! 0 `next` turns `InvalidHeaderError`, `EmptyHeaderError` and `TruncatedHeaderError` into
//! `ReadError` (a `TarError`) only while `TarFile.offset` is still 0, turns every
//! `SubsequentHeaderError` into `ReadError`, treats an all-NUL block (`EOFHeaderError`) as an
//! empty archive that opens, and lets every other exception through. The first member is read
//! by `TarInfo.fromtarfile` → `frombuf` (checksum, numeric fields through `nti`) →
//! `_proc_member`: GNU long names and links, GNU sparse headers, pax extended and global headers
//! (each reading the next header recursively), and `_proc_builtin`.
//!
//! CPython changed this code over the versions torch runs on; each [`Profile`] is one
//! behaviour, and [`cpython_tarfile_opens`] takes them all: if any supported Python opens the
//! bytes as a tar, they are a tar. Reads follow `io.BytesIO` (what the differential test feeds
//! CPython); where a real file object (what torch passes) would differ — a buffered read of far
//! more than the file holds allocates the request first and may raise `MemoryError` — the
//! verdict says so. Every read is bounded by the file, nesting by [`MAX_DEPTH`].

use crate::zip::ReadAt;

/// tar's block size.
const BLOCK: i128 = 512;

/// How deep extended headers may nest before this model stops: CPython recurses three frames
/// per nested header (`fromtarfile`, `_proc_member`, `_proc_pax`/`_proc_gnulong`) and raises
/// `RecursionError` at its recursion limit (1000 by default), at a depth that depends on the
/// caller's own stack. Below this depth no caller plausibly hits the limit; from it on the model
/// answers `RecursionError` (a deliberate, conservative bound: such chains are never written by
/// a tar writer, and every answer but `ReadError` refuses the file anyway).
pub const MAX_DEPTH: usize = 200;

/// A buffered read that asks for this many bytes more than the file holds may raise
/// `MemoryError` on a real file (`BufferedReader.read(n)` allocates `n` bytes first), while
/// `io.BytesIO` returns what there is.
pub const HUGE_READ: u64 = 1 << 30;

/// One behaviour of CPython's tarfile, as its code changed across the versions torch supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The CPython releases that behave this way.
    pub name: &'static str,
    /// `_proc_pax` parses records with the framing checks of gh-121285 (CVE-2024-6232) rather
    /// than with the old regular expression.
    pub framed_pax: bool,
    /// `TarInfo._block` raises `InvalidHeaderError("invalid offset")` for a negative count
    /// (gh-130577, CVE-2025-8194).
    pub negative_block_raises: bool,
    /// Follow-up headers of GNU long names and pax headers are read without the V7 directory
    /// rule, which is re-applied with the long name (gh-141707 / gh-143933).
    pub follow_up_dircheck_off: bool,
    /// `int()` of a decimal string refuses more digits than this (gh-95778, CVE-2020-10735).
    pub int_max_str_digits: Option<usize>,
}

/// Every behaviour of the CPython releases torch 2.x runs on (3.8 to 3.14), oldest first.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "3.8.0-3.8.13, 3.9.0-3.9.13, 3.10.0-3.10.6",
        framed_pax: false,
        negative_block_raises: false,
        follow_up_dircheck_off: false,
        int_max_str_digits: None,
    },
    Profile {
        name: "3.8.14-3.8.19, 3.9.14-3.9.19, 3.10.7-3.10.14, 3.11.0-3.11.9, 3.12.0-3.12.5",
        framed_pax: false,
        negative_block_raises: false,
        follow_up_dircheck_off: false,
        int_max_str_digits: Some(4300),
    },
    Profile {
        name:
            "3.8.20, 3.9.20-3.9.23, 3.10.15-3.10.18, 3.11.10-3.11.13, 3.12.6-3.12.11, 3.13.0-3.13.5",
        framed_pax: true,
        negative_block_raises: false,
        follow_up_dircheck_off: false,
        int_max_str_digits: Some(4300),
    },
    Profile {
        name: "3.9.24+, 3.10.19+, 3.11.14+, 3.12.12+, 3.13.6+, 3.14.0+",
        framed_pax: true,
        negative_block_raises: true,
        follow_up_dircheck_off: false,
        int_max_str_digits: Some(4300),
    },
    Profile {
        name: "CPython main after gh-143933",
        framed_pax: true,
        negative_block_raises: true,
        follow_up_dircheck_off: true,
        int_max_str_digits: Some(4300),
    },
];

/// The profile of CPython `3.minor.micro` (for the differential test; the last profile is not
/// in a release this code knows the number of).
pub fn profile_for(minor: u32, micro: u32) -> Profile {
    let int_limit = match minor {
        0..=7 => false,
        8 | 9 => micro >= 14,
        10 => micro >= 7,
        _ => true,
    };
    let framed = match minor {
        0..=7 => false,
        8 | 9 => micro >= 20,
        10 => micro >= 15,
        11 => micro >= 10,
        12 => micro >= 6,
        _ => true,
    };
    let negative = match minor {
        0..=8 => false,
        9 => micro >= 24,
        10 => micro >= 19,
        11 => micro >= 14,
        12 => micro >= 12,
        13 => micro >= 6,
        _ => true,
    };
    match (int_limit, framed, negative) {
        (false, ..) => PROFILES[0],
        (true, false, _) => PROFILES[1],
        (true, true, false) => PROFILES[2],
        (true, true, true) => PROFILES[3],
    }
}

/// What `tarfile.open` does with the bytes under one profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It returns a `TarFile` (`members` is false for an archive that starts with an end
    /// block, or whose first member's processing raised an `InvalidHeaderError` after
    /// `TarFile.offset` moved: `next` then ends the archive quietly).
    Opened {
        /// Whether `TarFile.next` returned a member.
        members: bool,
    },
    /// It raises `ReadError`, a `tarfile.TarError`.
    ReadError(String),
    /// It raises an exception that is not a `TarError`.
    Raises {
        /// The exception's class, as Python names it.
        exception: &'static str,
        /// Where it comes from.
        why: String,
    },
}

impl Outcome {
    /// `opened`, `ReadError`, or the exception's class: what the differential test compares.
    pub fn kind(&self) -> &str {
        match self {
            Outcome::Opened { .. } => "opened",
            Outcome::ReadError(_) => "ReadError",
            Outcome::Raises { exception, .. } => exception,
        }
    }
}

/// What torch does with the bytes, over every supported CPython.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TarVerdict {
    /// Every supported CPython raises a `TarError`: torch.load goes on to read the pickles.
    NotTar,
    /// Some supported CPython opens the bytes as a tar archive.
    Tar {
        /// Which releases do.
        profiles: Vec<&'static str>,
    },
    /// None opens it, but some raises an exception that is not a `TarError`: torch.load
    /// fails before reading any pickle.
    Raises {
        /// The exception and where it comes from.
        exception: String,
        /// Which releases raise it.
        profiles: Vec<&'static str>,
    },
}

/// The verdict over every supported CPython for a file's bytes (or the file's first bytes: the
/// model reads only what `tarfile` would).
pub fn cpython_tarfile_opens(head: &[u8]) -> TarVerdict {
    tarfile_verdict(head)
}

/// [`cpython_tarfile_opens`] over any byte source.
pub fn tarfile_verdict(src: &(impl ReadAt + ?Sized)) -> TarVerdict {
    let mut opened = Vec::new();
    let mut raised: Vec<(&'static str, String)> = Vec::new();
    for profile in PROFILES {
        let (outcome, huge_read) = run(src, *profile);
        match outcome {
            Outcome::Opened { .. } => opened.push(profile.name),
            Outcome::Raises { exception, why } => {
                raised.push((profile.name, format!("{exception} ({why})")))
            }
            Outcome::ReadError(_) if huge_read => raised.push((
                profile.name,
                format!("MemoryError (a read of {HUGE_READ} bytes or more past the end of the file, which CPython's buffered file read allocates before reading)"),
            )),
            Outcome::ReadError(_) => {}
        }
    }
    if !opened.is_empty() {
        TarVerdict::Tar { profiles: opened }
    } else if let Some((_, first)) = raised.first() {
        TarVerdict::Raises {
            exception: first.clone(),
            profiles: raised.iter().map(|(p, _)| *p).collect(),
        }
    } else {
        TarVerdict::NotTar
    }
}

/// What `tarfile.open(fileobj=io.BytesIO(bytes), mode="r:", format=tarfile.PAX_FORMAT)` does
/// under `profile`.
pub fn open_outcome(src: &(impl ReadAt + ?Sized), profile: Profile) -> Outcome {
    run(src, profile).0
}

/// The outcome, and whether a read asked for [`HUGE_READ`] bytes or more past the end.
fn run(src: &(impl ReadAt + ?Sized), profile: Profile) -> (Outcome, bool) {
    let mut tar = Tar {
        src,
        profile,
        pos: 0,
        offset: 0,
        global: PaxDict::default(),
        huge_read: false,
    };
    let outcome = match tar.fromtarfile(0, true) {
        Ok(_) => Outcome::Opened { members: true },
        // TarFile.next at offset 0: an end block ends an empty archive.
        Err(PyErr::Header(HeaderKind::Eof, _)) => Outcome::Opened { members: false },
        Err(PyErr::Header(HeaderKind::Subsequent, why)) => Outcome::ReadError(why),
        Err(PyErr::Header(_, why)) if tar.offset == 0 => Outcome::ReadError(why),
        // Only `if self.offset == 0` raises; otherwise `next` breaks out and returns None.
        Err(PyErr::Header(..)) => Outcome::Opened { members: false },
        Err(PyErr::Other(exception, why)) => Outcome::Raises { exception, why },
    };
    (outcome, tar.huge_read)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeaderKind {
    Empty,
    Truncated,
    Eof,
    Invalid,
    Subsequent,
}

/// A Python exception: a `tarfile.HeaderError` subclass, or anything else by class name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PyErr {
    Header(HeaderKind, String),
    Other(&'static str, String),
}

fn invalid(why: impl Into<String>) -> PyErr {
    PyErr::Header(HeaderKind::Invalid, why.into())
}

fn value_error(why: impl Into<String>) -> PyErr {
    PyErr::Other("ValueError", why.into())
}

/// A Python int as far as the model needs it: exact within ±2^120, saturated beyond (such
/// values only ever overflow a read's size or move an offset away from 0).
type PyInt = i128;
const SATURATE: i128 = 1 << 120;

fn saturate(v: i128) -> i128 {
    v.clamp(-SATURATE, SATURATE)
}

/// The member fields the outcome depends on.
#[derive(Debug, Clone)]
struct Member {
    kind: u8,
    size: PyInt,
    offset_data: PyInt,
    sparse: Option<(bool, PyInt)>,
}

const AREGTYPE: u8 = 0;
const REGTYPE: u8 = b'0';
const DIRTYPE: u8 = b'5';
const CONTTYPE: u8 = b'7';
const GNUTYPE_SPARSE: u8 = b'S';

fn is_reg(kind: u8) -> bool {
    matches!(kind, REGTYPE | AREGTYPE | CONTTYPE | GNUTYPE_SPARSE)
}

/// `SUPPORTED_TYPES`.
fn is_supported(kind: u8) -> bool {
    matches!(
        kind,
        b'0' | 0 | b'1' | b'2' | b'5' | b'6' | b'7' | b'3' | b'4' | b'L' | b'K' | b'S'
    )
}

/// The pax keywords whose values change the outcome, in the order CPython's dict first saw
/// them (a later record for the same keyword keeps that position, as a dict does).
#[derive(Debug, Clone, Default)]
struct PaxDict {
    entries: Vec<(&'static [u8], Vec<u8>)>,
}

const KEYWORDS: &[&[u8]] = &[
    b"GNU.sparse.map",
    b"GNU.sparse.size",
    b"GNU.sparse.realsize",
    b"GNU.sparse.major",
    b"GNU.sparse.minor",
    b"size",
];

impl PaxDict {
    fn set(&mut self, keyword: &[u8], value: &[u8]) {
        let Some(&known) = KEYWORDS.iter().find(|k| **k == keyword) else {
            return;
        };
        match self.entries.iter_mut().find(|(k, _)| *k == known) {
            Some(entry) => entry.1 = value.to_vec(),
            None => self.entries.push((known, value.to_vec())),
        }
    }
    fn get(&self, keyword: &[u8]) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|(k, _)| *k == keyword)
            .map(|(_, v)| v.as_slice())
    }
}

struct Tar<'a, R: ReadAt + ?Sized> {
    src: &'a R,
    profile: Profile,
    /// The file object's position.
    pos: u64,
    /// `TarFile.offset`.
    offset: PyInt,
    /// `TarFile.pax_headers`, which global headers update.
    global: PaxDict,
    huge_read: bool,
}

impl<R: ReadAt + ?Sized> Tar<'_, R> {
    /// `fileobj.read(n)` as `io.BytesIO` does it: a negative `n` reads to the end, an `n`
    /// outside a C `ssize_t` raises `OverflowError`.
    fn read_len(&mut self, n: PyInt) -> Result<u64, PyErr> {
        if n > i128::from(i64::MAX) || n < i128::from(i64::MIN) {
            return Err(PyErr::Other(
                "OverflowError",
                format!("fileobj.read({n}) does not fit a C ssize_t"),
            ));
        }
        let remaining = self.src.size().saturating_sub(self.pos);
        if n < 0 {
            return Ok(remaining);
        }
        let n = n as u64;
        if n > remaining && n - remaining >= HUGE_READ {
            self.huge_read = true;
        }
        Ok(n.min(remaining))
    }

    fn read(&mut self, n: PyInt) -> Result<Vec<u8>, PyErr> {
        let len = self.read_len(n)?;
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| value_error("too large"))?];
        self.src
            .read_exact_at(self.pos, &mut buf)
            .map_err(|e| PyErr::Other("OSError", e))?;
        self.pos += len;
        Ok(buf)
    }

    /// `TarInfo._block`.
    fn block(&self, count: PyInt) -> Result<PyInt, PyErr> {
        if count < 0 && self.profile.negative_block_raises {
            return Err(invalid("invalid offset"));
        }
        let blocks = count.div_euclid(BLOCK) + i128::from(count.rem_euclid(BLOCK) != 0);
        Ok(saturate(blocks * BLOCK))
    }

    /// `TarInfo.fromtarfile`, `depth` extended headers deep.
    fn fromtarfile(&mut self, depth: usize, dircheck: bool) -> Result<Member, PyErr> {
        if depth >= MAX_DEPTH {
            return Err(PyErr::Other(
                "RecursionError",
                format!("{MAX_DEPTH} nested extended headers"),
            ));
        }
        let buf = self.read(BLOCK)?;
        let member = frombuf(&buf, dircheck)?;
        self.proc_member(member, depth)
    }

    /// `TarInfo._proc_member`.
    fn proc_member(&mut self, member: Member, depth: usize) -> Result<Member, PyErr> {
        match member.kind {
            b'L' | b'K' => self.proc_gnulong(member, depth),
            b'S' => self.proc_sparse(member),
            b'x' | b'g' | b'X' => self.proc_pax(member, depth),
            _ => self.proc_builtin(member),
        }
    }

    /// A follow-up header: any `HeaderError` it raises becomes `SubsequentHeaderError`.
    fn follow_up(&mut self, depth: usize) -> Result<Member, PyErr> {
        let dircheck = !self.profile.follow_up_dircheck_off;
        match self.fromtarfile(depth + 1, dircheck) {
            Err(PyErr::Header(_, why)) => Err(PyErr::Header(HeaderKind::Subsequent, why)),
            other => other,
        }
    }

    fn proc_builtin(&mut self, mut member: Member) -> Result<Member, PyErr> {
        member.offset_data = i128::from(self.pos);
        let mut offset = member.offset_data;
        if is_reg(member.kind) || !is_supported(member.kind) {
            offset = saturate(offset + self.block(member.size)?);
        }
        self.offset = offset;
        let global = self.global.clone();
        apply_pax_info(&mut member, &global, self.profile)?;
        Ok(member)
    }

    fn proc_gnulong(&mut self, member: Member, depth: usize) -> Result<Member, PyErr> {
        let len = self.block(member.size)?;
        let buf = self.read(len)?;
        let mut next = self.follow_up(depth)?;
        if member.kind == b'L' && self.profile.follow_up_dircheck_off {
            // The V7 rule with the real (long) name.
            let long_slash = nts(&buf).last() == Some(&b'/');
            if next.kind == DIRTYPE && !long_slash {
                next.kind = AREGTYPE;
            } else if next.kind == AREGTYPE && long_slash {
                next.kind = DIRTYPE;
            }
        }
        Ok(next)
    }

    fn proc_sparse(&mut self, mut member: Member) -> Result<Member, PyErr> {
        let (mut extended, origsize) = member.sparse.expect("set by frombuf for 'S'");
        while extended {
            let buf = self.read(BLOCK)?;
            let mut pos = 0usize;
            for _ in 0..21 {
                // `except ValueError: break` does not catch InvalidHeaderError.
                nti(slice(&buf, pos, pos + 12))?;
                nti(slice(&buf, pos + 12, pos + 24))?;
                pos += 24;
            }
            extended = *buf.get(504).ok_or_else(|| {
                PyErr::Other(
                    "IndexError",
                    "an extended sparse block ends before byte 504".into(),
                )
            })? != 0;
        }
        member.offset_data = i128::from(self.pos);
        self.offset = saturate(member.offset_data + self.block(member.size)?);
        member.size = origsize;
        Ok(member)
    }

    fn proc_pax(&mut self, member: Member, depth: usize) -> Result<Member, PyErr> {
        let len = self.block(member.size)?;
        let buf = self.read(len)?;
        let global = member.kind == b'g';
        let mut local = if global {
            None
        } else {
            Some(self.global.clone())
        };
        let mut raw_headers: Vec<PaxRecord<'_>> = Vec::new();
        {
            let dict = match local.as_mut() {
                Some(d) => d,
                None => &mut self.global,
            };
            if self.profile.framed_pax {
                raw_headers = parse_pax_framed(&buf)?;
                for (k, v) in &raw_headers {
                    dict.set(k, v);
                }
            } else {
                old_hdrcharset(&buf)?;
                parse_pax_regex(&buf, self.profile, dict)?;
            }
        }
        let mut next = self.follow_up(depth)?;
        let dict = local.unwrap_or_else(|| self.global.clone());
        if let Some(map) = dict.get(b"GNU.sparse.map") {
            for piece in map.split(|&b| b == b',') {
                py_int_str(piece, self.profile).ok_or_else(|| {
                    value_error(format!(
                        "int({:?}) in GNU.sparse.map",
                        String::from_utf8_lossy(piece)
                    ))
                })?;
            }
        } else if dict.get(b"GNU.sparse.size").is_some() {
            if self.profile.framed_pax {
                for (k, v) in &raw_headers {
                    if *k == b"GNU.sparse.offset" || *k == b"GNU.sparse.numbytes" {
                        py_int_str(v, self.profile).ok_or_else(|| invalid("invalid header"))?;
                    }
                }
            } else {
                old_sparse_00(&buf, self.profile)?;
            }
        } else if dict.get(b"GNU.sparse.major") == Some(b"1")
            && dict.get(b"GNU.sparse.minor") == Some(b"0")
        {
            self.gnusparse_10(&mut next)?;
        }
        if member.kind == b'x' || member.kind == b'X' {
            apply_pax_info(&mut next, &dict, self.profile)?;
            if dict.get(b"size").is_some() {
                let mut offset = next.offset_data;
                if is_reg(next.kind) || !is_supported(next.kind) {
                    offset = saturate(offset + self.block(next.size)?);
                }
                self.offset = offset;
            }
        }
        Ok(next)
    }

    /// `_proc_gnusparse_10`: a count, then that many pairs of numbers, one per line, read a
    /// block at a time.
    fn gnusparse_10(&mut self, next: &mut Member) -> Result<(), PyErr> {
        let mut buf = self.read(BLOCK)?;
        let mut at = 0usize;
        let line = |buf: &[u8], at: &mut usize| -> Result<(usize, usize), PyErr> {
            let nl = buf[*at..].iter().position(|&b| b == b'\n').ok_or_else(|| {
                value_error("not enough values to unpack (a GNU sparse 1.0 map line without '\\n')")
            })?;
            let span = (*at, *at + nl);
            *at += nl + 1;
            Ok(span)
        };
        let (s, e) = line(&buf, &mut at)?;
        let fields = py_int_bytes(&buf[s..e], self.profile)
            .ok_or_else(|| value_error("int() of the GNU sparse 1.0 field count"))?;
        let wanted = saturate(fields.saturating_mul(2));
        let mut have: i128 = 0;
        while have < wanted {
            if !buf[at..].contains(&b'\n') {
                buf.drain(..at);
                at = 0;
                let more = self.read(BLOCK)?;
                buf.extend_from_slice(&more);
            }
            let (s, e) = line(&buf, &mut at)?;
            py_int_bytes(&buf[s..e], self.profile)
                .ok_or_else(|| value_error("int() of a GNU sparse 1.0 map number"))?;
            have += 1;
        }
        next.offset_data = i128::from(self.pos);
        Ok(())
    }
}

/// Python's `buf[start:end]` on bytes.
fn slice(buf: &[u8], start: usize, end: usize) -> &[u8] {
    let end = end.min(buf.len());
    &buf[start.min(end)..end]
}

/// `nts`: up to the first NUL (the decode with `surrogateescape` never fails).
fn nts(field: &[u8]) -> &[u8] {
    match field.iter().position(|&b| b == 0) {
        Some(p) => &field[..p],
        None => field,
    }
}

/// `TarInfo.frombuf`: the fields the outcome depends on.
fn frombuf(buf: &[u8], dircheck: bool) -> Result<Member, PyErr> {
    if buf.is_empty() {
        return Err(PyErr::Header(HeaderKind::Empty, "empty header".into()));
    }
    if buf.len() != 512 {
        return Err(PyErr::Header(
            HeaderKind::Truncated,
            "truncated header".into(),
        ));
    }
    if buf.iter().all(|&b| b == 0) {
        return Err(PyErr::Header(HeaderKind::Eof, "end of file header".into()));
    }
    let chksum = nti(&buf[148..156])?;
    let (unsigned, signed) = calc_chksums(buf);
    if chksum != unsigned && chksum != signed {
        return Err(invalid("bad checksum"));
    }
    let name_ends_with_slash = nts(&buf[0..100]).last() == Some(&b'/');
    for range in [100..108, 108..116, 116..124] {
        nti(&buf[range])?;
    }
    let size = nti(&buf[124..136])?;
    nti(&buf[136..148])?;
    let mut kind = buf[156];
    nti(&buf[329..337])?;
    nti(&buf[337..345])?;
    if dircheck && kind == AREGTYPE && name_ends_with_slash {
        kind = DIRTYPE;
    }
    let mut sparse = None;
    if kind == GNUTYPE_SPARSE {
        let mut pos = 386;
        for _ in 0..4 {
            nti(&buf[pos..pos + 12])?;
            nti(&buf[pos + 12..pos + 24])?;
            pos += 24;
        }
        let extended = buf[482] != 0;
        let origsize = nti(&buf[483..495])?;
        sparse = Some((extended, origsize));
    }
    Ok(Member {
        kind,
        size,
        offset_data: 0,
        sparse,
    })
}

/// `calc_chksums`: the header's byte sum with the checksum field read as spaces, unsigned and
/// signed.
fn calc_chksums(buf: &[u8]) -> (i128, i128) {
    let outside = buf[..148].iter().chain(&buf[156..512]);
    let unsigned = 256 + outside.clone().map(|&b| i128::from(b)).sum::<i128>();
    let signed = 256 + outside.map(|&b| i128::from(b as i8)).sum::<i128>();
    (unsigned, signed)
}

/// `nti`: a numeric field, base-256 when its first byte is 0o200 or 0o377, else
/// `int(nts(s, "ascii", "strict").strip() or "0", 8)`.
fn nti(field: &[u8]) -> Result<PyInt, PyErr> {
    let Some(&first) = field.first() else {
        return Err(PyErr::Other("IndexError", "nti of an empty field".into()));
    };
    if first == 0o200 || first == 0o377 {
        let mut n: i128 = 0;
        for &b in &field[1..] {
            n = (n << 8) | i128::from(b);
        }
        if first == 0o377 {
            n -= 1i128 << (8 * (field.len() - 1));
        }
        return Ok(n);
    }
    let text = nts(field);
    if !text.is_ascii() {
        return Err(invalid("invalid header"));
    }
    let stripped = str_strip(text);
    let digits = if stripped.is_empty() { b"0" } else { stripped };
    long_from_ascii(digits, 8, None)
        .map(|(n, _)| n)
        .ok_or_else(|| invalid("invalid header"))
}

/// `str.strip()` on ASCII: Python's whitespace includes the separators 0x1c-0x1f.
fn str_strip(s: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, 0x09..=0x0d | 0x1c..=0x20);
    let start = s.iter().position(|b| !ws(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !ws(b)).map_or(start, |e| e + 1);
    &s[start..end]
}

/// `Py_ISSPACE`: the whitespace `PyLong_FromString` skips (not 0x1c-0x1f).
fn py_isspace(b: u8) -> bool {
    matches!(b, b' ' | 0x09..=0x0d)
}

/// `PyLong_FromString(s, base)` on ASCII that must be consumed whole (what `int(str)` and
/// `int(bytes)` reach): whitespace, a sign, the base's prefix for base 8, digits with single
/// underscores between them, whitespace. Returns the value (saturated) and how many digits it
/// had, or `None` for `ValueError`; `limit` is `sys.get_int_max_str_digits()` for base 10.
fn long_from_ascii(s: &[u8], base: u32, limit: Option<usize>) -> Option<(PyInt, usize)> {
    let mut i = 0;
    while i < s.len() && py_isspace(s[i]) {
        i += 1;
    }
    let mut negative = false;
    match s.get(i) {
        Some(b'+') => i += 1,
        Some(b'-') => {
            negative = true;
            i += 1;
        }
        _ => {}
    }
    if base == 8 && s.get(i) == Some(&b'0') && matches!(s.get(i + 1), Some(b'o' | b'O')) {
        i += 2;
        if s.get(i) == Some(&b'_') {
            i += 1;
        }
    }
    if s.get(i) == Some(&b'_') {
        return None;
    }
    let mut value: i128 = 0;
    let mut digits = 0usize;
    let mut prev_underscore = false;
    while let Some(&c) = s.get(i) {
        let d = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'_' => {
                if prev_underscore {
                    return None;
                }
                prev_underscore = true;
                i += 1;
                continue;
            }
            _ => break,
        };
        if d >= base {
            break;
        }
        prev_underscore = false;
        digits += 1;
        value = saturate(value * i128::from(base) + i128::from(d));
        i += 1;
    }
    if prev_underscore || digits == 0 {
        return None;
    }
    while i < s.len() && py_isspace(s[i]) {
        i += 1;
    }
    if i != s.len() {
        return None;
    }
    // The digit limit applies to bases that are not powers of two.
    if let Some(limit) = limit {
        if base == 10 && digits > 640 && digits > limit {
            return None;
        }
    }
    Some((if negative { -value } else { value }, digits))
}

/// `int(bytes)` in base 10 under CPython's default digit limit (what torch's
/// `int(zip_file.get_record(".storage_alignment"))` does), saturated past ±2^120.
pub fn python_int_of_bytes(s: &[u8]) -> Option<i128> {
    long_from_ascii(s, 10, Some(4300)).map(|(n, _)| n)
}

/// `int(bytes)` in base 10.
fn py_int_bytes(s: &[u8], profile: Profile) -> Option<PyInt> {
    long_from_ascii(s, 10, profile.int_max_str_digits).map(|(n, _)| n)
}

/// `int(value)` where `value` is a pax field decoded from UTF-8 (undecodable bytes become lone
/// surrogates, which no int accepts). Non-ASCII characters count as Python counts them:
/// Unicode whitespace becomes a space and a Unicode decimal digit its ASCII digit
/// (`_PyUnicode_TransformDecimalAndSpaceToASCII`); ASCII is left as it is.
fn py_int_str(raw: &[u8], profile: Profile) -> Option<PyInt> {
    let text = std::str::from_utf8(raw).ok()?;
    if text.is_ascii() {
        return long_from_ascii(raw, 10, profile.int_max_str_digits).map(|(n, _)| n);
    }
    let mut ascii = Vec::with_capacity(text.len());
    for c in text.chars() {
        let c = c as u32;
        if c < 127 {
            ascii.push(c as u8);
        } else if UNICODE_SPACES.contains(&c) {
            ascii.push(b' ');
        } else {
            ascii.push(b'0' + unicode_decimal(c)?);
        }
    }
    long_from_ascii(&ascii, 10, profile.int_max_str_digits).map(|(n, _)| n)
}

/// Non-ASCII characters `str.isspace()` accepts (the same in Unicode 12.1 to 15.1).
const UNICODE_SPACES: &[u32] = &[
    0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
    0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
];

/// The zero of every run of ten Unicode decimal digits outside ASCII (general category Nd),
/// as Python 3.13's `unicodedata` (Unicode 15.1) lists them. Python 3.8 (Unicode 12.1) lacks
/// the runs added in Unicode 13 to 15 (0x11950, 0x11F50, 0x16AC0, 0x1E4F0, 0x1FBF0): for those
/// a newer Python accepts a number an older one refuses, which only moves an outcome between
/// `ValueError` and an opened archive (both refuse the file).
const DECIMAL_ZEROS: &[u32] = &[
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50,
    0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950,
    0x1FBF0,
];

fn unicode_decimal(c: u32) -> Option<u8> {
    DECIMAL_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&c))
        .map(|&zero| (c - zero) as u8)
}

/// The length of the run of ASCII digits at `at`.
fn digit_run(buf: &[u8], at: usize) -> usize {
    buf[at.min(buf.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// A pax record's keyword and value, as bytes.
type PaxRecord<'a> = (&'a [u8], &'a [u8]);

/// `_proc_pax` after gh-121285: records `"%d %s=%s\n"` framed by their length, up to the end
/// or a NUL; anything else is `InvalidHeaderError`.
fn parse_pax_framed(buf: &[u8]) -> Result<Vec<PaxRecord<'_>>, PyErr> {
    let mut records = Vec::new();
    let mut pos = 0usize;
    while pos < buf.len() && buf[pos] != 0 {
        let digits = digit_run(buf, pos);
        if digits == 0 || digits > 20 || buf.get(pos + digits) != Some(&b' ') {
            return Err(invalid("invalid header"));
        }
        let length: u128 = std::str::from_utf8(&buf[pos..pos + digits])
            .expect("ASCII digits")
            .parse()
            .expect("at most 20 digits");
        if length < 5 || (pos as u128) + length > buf.len() as u128 {
            return Err(invalid("invalid header"));
        }
        let end = pos + length as usize - 1;
        let kv = slice(buf, pos + digits + 1, end);
        let (keyword, value, equals) = match kv.iter().position(|&b| b == b'=') {
            Some(e) => (&kv[..e], &kv[e + 1..], true),
            None => (kv, &kv[kv.len()..], false),
        };
        if keyword.is_empty() || !equals || buf[end] != b'\n' {
            return Err(invalid("invalid header"));
        }
        records.push((keyword, value));
        pos += length as usize;
    }
    Ok(records)
}

/// The old `_proc_pax`'s `re.search(br"\d+ hdrcharset=([^\n]+)\n", buf)` and its strict UTF-8
/// decode of the value, which raises `UnicodeDecodeError`.
fn old_hdrcharset(buf: &[u8]) -> Result<(), PyErr> {
    const KEY: &[u8] = b" hdrcharset=";
    let mut from = 0;
    while let Some(rel) = find(&buf[from..], KEY) {
        let j = from + rel;
        from = j + 1;
        if j == 0 || !buf[j - 1].is_ascii_digit() {
            continue;
        }
        let k = j + KEY.len();
        let Some(nl) = buf[k..].iter().position(|&b| b == b'\n') else {
            // No newline follows: no later match can end either.
            return Ok(());
        };
        if nl == 0 {
            continue;
        }
        return match std::str::from_utf8(&buf[k..k + nl]) {
            Ok(_) => Ok(()),
            Err(_) => Err(PyErr::Other(
                "UnicodeDecodeError",
                "the hdrcharset value is not UTF-8".into(),
            )),
        };
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The old `_proc_pax` loop: `re.compile(br"(\d+) ([^=]+)=").match(buf, pos)`, a record per
/// match, `pos += length` (no framing checks; a length of 0 is `InvalidHeaderError`). Every
/// scan moves forward only, so the loop is linear in the buffer whatever the records say.
fn parse_pax_regex(buf: &[u8], profile: Profile, dict: &mut PaxDict) -> Result<(), PyErr> {
    let mut pos = 0usize;
    // The digit run containing `pos`, the first nonzero digit at or after `pos` in it, and the
    // first '=' at or after an index: all move forward only, as `pos` does.
    let (mut run_start, mut run_end) = (0usize, 0usize);
    let mut nonzero = 0usize;
    let mut eq = 0usize;
    loop {
        if !(run_start..run_end).contains(&pos) {
            run_start = pos;
            run_end = pos + digit_run(buf, pos);
        }
        if run_end == pos {
            return Ok(());
        }
        let a = run_end;
        if buf.get(a) != Some(&b' ') || matches!(buf.get(a + 1), None | Some(b'=')) {
            return Ok(());
        }
        eq = eq.max(a + 2);
        while eq < buf.len() && buf[eq] != b'=' {
            eq += 1;
        }
        if eq >= buf.len() {
            return Ok(());
        }
        // int(length): past sys.get_int_max_str_digits() digits it raises ValueError.
        let digits = a - pos;
        if let Some(limit) = profile.int_max_str_digits {
            if digits > 640 && digits > limit {
                return Err(value_error(format!(
                    "int() of a {digits}-digit pax record length"
                )));
            }
        }
        nonzero = nonzero.max(pos);
        while nonzero < a && buf[nonzero] == b'0' {
            nonzero += 1;
        }
        let significant = &buf[nonzero..a];
        let length: i128 = if significant.len() > 36 {
            SATURATE
        } else {
            significant
                .iter()
                .fold(0i128, |n, &d| n * 10 + i128::from(d - b'0'))
        };
        if length == 0 {
            return Err(invalid("invalid header"));
        }
        let keyword = &buf[a + 1..eq];
        let end = (pos as i128 + length - 1).clamp(0, buf.len() as i128) as usize;
        dict.set(keyword, slice(buf, eq + 1, end));
        let next = pos as i128 + length;
        if next > buf.len() as i128 {
            return Ok(());
        }
        pos = next as usize;
    }
}

/// The old `_proc_gnusparse_00`: `re.finditer(br"\d+ GNU.sparse.offset=(\d+)\n", buf)` (and
/// `numbytes`), `int()` of each number; the unescaped dots match any byte but a newline.
fn old_sparse_00(buf: &[u8], profile: Profile) -> Result<(), PyErr> {
    for key in [&b"GNU.sparse.offset="[..], &b"GNU.sparse.numbytes="[..]] {
        let mut j = 1;
        while j + 1 + key.len() <= buf.len() {
            let matches_key = buf[j] == b' '
                && buf[j - 1].is_ascii_digit()
                && key
                    .iter()
                    .zip(&buf[j + 1..])
                    .all(|(&k, &b)| if k == b'.' { b != b'\n' } else { k == b });
            if matches_key {
                let k = j + 1 + key.len();
                let n = digit_run(buf, k);
                if n > 0 && buf.get(k + n) == Some(&b'\n') {
                    py_int_bytes(&buf[k..k + n], profile).ok_or_else(|| {
                        value_error("int() of a GNU sparse 0.0 number past the digit limit")
                    })?;
                }
            }
            j += 1;
        }
    }
    Ok(())
}

/// `TarInfo._apply_pax_info`: the sizes it converts; `GNU.sparse.size` and
/// `GNU.sparse.realsize` go through a bare `int()`, `size` falls back to 0.
fn apply_pax_info(member: &mut Member, dict: &PaxDict, profile: Profile) -> Result<(), PyErr> {
    for (keyword, value) in &dict.entries {
        match *keyword {
            b"GNU.sparse.size" | b"GNU.sparse.realsize" => {
                member.size = py_int_str(value, profile).ok_or_else(|| {
                    value_error(format!(
                        "int({:?}) of pax {}",
                        String::from_utf8_lossy(value),
                        String::from_utf8_lossy(keyword)
                    ))
                })?;
            }
            b"size" => member.size = py_int_str(value, profile).unwrap_or(0),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ustar header for `name` of `kind` and `size`, with its checksum.
    fn header(name: &[u8], kind: u8, size: u64) -> Vec<u8> {
        let mut h = vec![0u8; 512];
        h[..name.len()].copy_from_slice(name);
        h[100..108].copy_from_slice(b"0000644\0");
        h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
        h[156] = kind;
        h[257..265].copy_from_slice(b"ustar\x0000");
        seal(&mut h);
        h
    }

    fn seal(h: &mut [u8]) {
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h[..512].iter().map(|&b| u32::from(b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    }

    fn every(bytes: &[u8]) -> Vec<String> {
        PROFILES
            .iter()
            .map(|p| open_outcome(bytes, *p).kind().to_owned())
            .collect()
    }

    #[test]
    fn a_plain_header_opens_and_a_pickle_does_not() {
        let mut tar = header(b"storages", b'0', 3);
        tar.extend_from_slice(&[0u8; 1024]);
        assert_eq!(every(&tar), vec!["opened"; 5]);
        assert!(matches!(
            cpython_tarfile_opens(&tar),
            TarVerdict::Tar { .. }
        ));
        let pickle = include_bytes!("../../../fixtures/torch/legacy/state-dict.pt");
        assert_eq!(cpython_tarfile_opens(pickle), TarVerdict::NotTar);
        assert_eq!(cpython_tarfile_opens(b""), TarVerdict::NotTar);
        // An all-NUL first block is an empty archive, which opens.
        assert_eq!(every(&[0u8; 512]), vec!["opened"; 5]);
    }

    #[test]
    fn numeric_fields_are_read_as_python_reads_them() {
        assert_eq!(nti(b"0000644\0").unwrap(), 0o644);
        assert_eq!(nti(b"\x1c 0o_17 \x1f").unwrap(), 0o17);
        assert_eq!(nti(b"-7").unwrap(), -7);
        assert_eq!(nti(b"\0garbage").unwrap(), 0);
        assert!(nti(b"0o").is_err());
        assert!(nti(b"8").is_err());
        assert!(nti(b"1__2").is_err());
        assert!(nti(b"1_").is_err());
        assert_eq!(nti(b"\x80\0\0\0\0\0\x01\x00").unwrap(), 256);
        assert_eq!(nti(b"\xff\xff\xff\xff\xff\xff\xff\xff").unwrap(), -1);
        let p = PROFILES[1];
        assert_eq!(py_int_str("\u{0665}\u{00a0}".as_bytes(), p), Some(5));
        assert_eq!(py_int_str(b"\x1c5", p), None);
        assert_eq!(py_int_str(b" 1_0 ", p), Some(10));
        assert_eq!(py_int_str(&[b'1'; 4301], p), None);
        assert!(py_int_str(&[b'1'; 4301], PROFILES[0]).is_some());
    }

    #[test]
    fn a_negative_size_splits_the_versions() {
        // A GNU long name whose size is -1024 (base-256): old Pythons read to the end of the
        // file and then find no header (SubsequentHeaderError -> ReadError); newer ones refuse
        // the offset at once (ReadError at offset 0). A regular file with that size opens in
        // old Pythons only.
        let mut h = header(b"x", b'0', 0);
        h[124..136].copy_from_slice(&[
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc, 0x00,
        ]);
        seal(&mut h);
        assert_eq!(
            every(&h),
            vec!["opened", "opened", "opened", "ReadError", "ReadError"]
        );
        assert!(matches!(cpython_tarfile_opens(&h), TarVerdict::Tar { .. }));
    }

    #[test]
    fn pax_records_that_crash_python_are_raises() {
        let records = b"21 GNU.sparse.size=x\n";
        let mut pax = header(b"././@PaxHeader", b'x', records.len() as u64);
        let mut body = records.to_vec();
        body.resize(512, 0);
        pax.extend_from_slice(&body);
        pax.extend_from_slice(&header(b"file", b'0', 0));
        assert_eq!(every(&pax), vec!["ValueError"; 5]);
        assert!(matches!(
            cpython_tarfile_opens(&pax),
            TarVerdict::Raises { .. }
        ));
    }

    #[test]
    fn deep_chains_stop_at_the_bound() {
        let mut chain = Vec::new();
        for _ in 0..MAX_DEPTH + 5 {
            chain.extend_from_slice(&header(b"././@LongLink", b'L', 0));
        }
        assert_eq!(every(&chain), vec!["RecursionError"; 5]);
    }
}
