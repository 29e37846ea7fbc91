//! One `tarfile.open` under one profile: the file object's reads as `io.BytesIO` does them,
//! and the chain of headers `TarFile.next` follows to the first member (`fromtarfile`,
//! `_proc_member` and the handler of each extended header), down to the outcome. Apart from the
//! verdict over every profile, which only runs this once per profile.

use super::header::{frombuf, is_reg, is_supported, nti, nts, slice, Member, AREGTYPE, DIRTYPE};
use super::pax::{
    apply_pax_info, old_hdrcharset, old_sparse_00, parse_pax_framed, parse_pax_regex, PaxDict,
    PaxRecord,
};
use super::profile::Profile;
use super::py::{
    invalid, py_int_bytes, py_int_str, saturate, value_error, HeaderKind, PyErr, PyInt,
};
use socair_plugin_api::ReadAt;

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

/// What `tarfile.open` does with the bytes under one profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
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

impl Opening {
    /// `opened`, `ReadError`, or the exception's class: what the differential test compares.
    pub fn kind(&self) -> &str {
        match self {
            Opening::Opened { .. } => "opened",
            Opening::ReadError(_) => "ReadError",
            Opening::Raises { exception, .. } => exception,
        }
    }
}

/// What `tarfile.open(fileobj=io.BytesIO(bytes), mode="r:", format=tarfile.PAX_FORMAT)` does
/// under `profile`.
pub fn open_outcome(src: &(impl ReadAt + ?Sized), profile: Profile) -> Opening {
    run(src, profile).0
}

/// The outcome, and whether a read asked for [`HUGE_READ`] bytes or more past the end.
pub(super) fn run(src: &(impl ReadAt + ?Sized), profile: Profile) -> (Opening, bool) {
    let mut tar = Tar::new(src, profile);
    let outcome = match tar.fromtarfile(0, true) {
        Ok(_) => Opening::Opened { members: true },
        // TarFile.next at offset 0: an end block ends an empty archive.
        Err(PyErr::Header(HeaderKind::Eof, _)) => Opening::Opened { members: false },
        Err(PyErr::Header(HeaderKind::Subsequent, why)) => Opening::ReadError(why),
        Err(PyErr::Header(_, why)) if tar.offset == 0 => Opening::ReadError(why),
        // Only `if self.offset == 0` raises; otherwise `next` breaks out and returns None.
        Err(PyErr::Header(..)) => Opening::Opened { members: false },
        Err(PyErr::Other(exception, why)) => Opening::Raises { exception, why },
    };
    (outcome, tar.huge_read)
}

/// One member as `TarFile.getmembers()` lists it: what `getmember`, `extract` and
/// `extractfile` go by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TarMember {
    /// `TarInfo.name`, as bytes.
    pub name: Vec<u8>,
    /// Its type flag.
    pub kind: u8,
    /// Where its data starts in the file.
    pub offset_data: i128,
    /// Its size (after a pax `size`).
    pub size: i128,
}

impl TarMember {
    /// A regular file (`REGTYPE`, `AREGTYPE`, `CONTTYPE`): `extract` writes its data, and
    /// `extractfile` returns it. Not a GNU sparse file, whose data has holes.
    pub fn is_regular(&self) -> bool {
        matches!(self.kind, b'0' | 0 | b'7')
    }
}

/// How the walk over the members ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkEnd {
    /// `TarFile.next` returned `None`: an end block, or a header it quietly stops at.
    End,
    /// It raised `ReadError` (a `tarfile.TarError`).
    ReadError(String),
    /// It raised another exception (or the walk passed its bound): the class and why.
    Raises(&'static str, String),
}

/// Every member `TarFile._load` lists (`TarFile.next` until it returns `None`), under
/// `profile`, at most `max` of them.
pub fn walk(
    src: &(impl ReadAt + ?Sized),
    profile: Profile,
    max: usize,
) -> (Vec<TarMember>, WalkEnd) {
    let mut tar = Tar::new(src, profile);
    let mut members = Vec::new();
    let member = |m: Member| TarMember {
        name: m.name,
        kind: m.kind,
        offset_data: m.offset_data,
        size: m.size,
    };
    let end = loop {
        if members.len() >= max {
            break WalkEnd::Raises(
                "bound",
                format!("more than {max} members: not walked further"),
            );
        }
        let first = members.is_empty();
        if !first {
            // TarFile.next: move to `self.offset`, checking the byte before it exists.
            if tar.offset != i128::from(tar.pos) {
                if tar.offset == 0 {
                    break WalkEnd::End;
                }
                if tar.offset < 1 {
                    break WalkEnd::Raises("ValueError", "negative seek value".into());
                }
                // The byte before `offset` must exist (`seek(offset - 1); read(1)`).
                if tar.offset > i128::from(src.size()) {
                    break WalkEnd::ReadError("unexpected end of data".into());
                }
                tar.pos = u64::try_from(tar.offset).unwrap_or(u64::MAX);
            }
        }
        match tar.fromtarfile(0, true) {
            Ok(m) => members.push(member(m)),
            Err(PyErr::Header(HeaderKind::Eof, _)) => break WalkEnd::End,
            Err(PyErr::Header(HeaderKind::Subsequent, why)) => break WalkEnd::ReadError(why),
            Err(PyErr::Header(_, why)) if tar.offset == 0 => break WalkEnd::ReadError(why),
            Err(PyErr::Header(..)) => break WalkEnd::End,
            Err(PyErr::Other(exception, why)) => break WalkEnd::Raises(exception, why),
        }
    };
    (members, end)
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

impl<'a, R: ReadAt + ?Sized> Tar<'a, R> {
    /// A `TarFile` just opened over `src`, its file object at the start.
    fn new(src: &'a R, profile: Profile) -> Self {
        Tar {
            src,
            profile,
            pos: 0,
            offset: 0,
            global: PaxDict::default(),
            huge_read: false,
        }
    }

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
        if member.kind == b'L' {
            next.name = nts(&buf).to_vec();
        }
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
