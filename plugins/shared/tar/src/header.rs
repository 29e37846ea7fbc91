//! One 512-byte header block as `TarInfo.frombuf` reads it: the member fields the outcome
//! depends on, the type flags, the checksum and the numeric fields (`nts`, `nti`). Apart from
//! the chain of headers that reads the blocks.

use super::py::{invalid, long_from_ascii, HeaderKind, PyErr, PyInt};

/// The member fields the outcome depends on, and its name (for the walk over every member).
#[derive(Debug, Clone)]
pub(super) struct Member {
    /// `TarInfo.name` as bytes: the name field, its ustar prefix joined, a directory's
    /// trailing slashes removed; a GNU long name or a pax `path` replaces it later.
    pub(super) name: Vec<u8>,
    pub(super) kind: u8,
    pub(super) size: PyInt,
    pub(super) offset_data: PyInt,
    pub(super) sparse: Option<(bool, PyInt)>,
}

pub(super) const AREGTYPE: u8 = 0;
const REGTYPE: u8 = b'0';
pub(super) const DIRTYPE: u8 = b'5';
const CONTTYPE: u8 = b'7';
pub(super) const GNUTYPE_SPARSE: u8 = b'S';

pub(super) fn is_reg(kind: u8) -> bool {
    matches!(kind, REGTYPE | AREGTYPE | CONTTYPE | GNUTYPE_SPARSE)
}

/// `SUPPORTED_TYPES`.
pub(super) fn is_supported(kind: u8) -> bool {
    matches!(
        kind,
        b'0' | 0 | b'1' | b'2' | b'5' | b'6' | b'7' | b'3' | b'4' | b'L' | b'K' | b'S'
    )
}

/// Python's `buf[start:end]` on bytes.
pub(super) fn slice(buf: &[u8], start: usize, end: usize) -> &[u8] {
    let end = end.min(buf.len());
    &buf[start.min(end)..end]
}

/// `nts`: up to the first NUL (the decode with `surrogateescape` never fails).
pub(super) fn nts(field: &[u8]) -> &[u8] {
    match field.iter().position(|&b| b == 0) {
        Some(p) => &field[..p],
        None => field,
    }
}

/// `TarInfo.frombuf`: the fields the outcome depends on.
pub(super) fn frombuf(buf: &[u8], dircheck: bool) -> Result<Member, PyErr> {
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
    // The name: `nts(buf[0:100])`, a directory's trailing slashes removed, then the ustar
    // prefix (`nts(buf[345:500])`) joined unless the type is a GNU one.
    let mut name = nts(&buf[0..100]).to_vec();
    if kind == DIRTYPE {
        while name.last() == Some(&b'/') {
            name.pop();
        }
    }
    let prefix = nts(&buf[345..500]);
    if !prefix.is_empty() && !matches!(kind, b'L' | b'K' | GNUTYPE_SPARSE) {
        let mut joined = prefix.to_vec();
        joined.push(b'/');
        joined.extend_from_slice(&name);
        name = joined;
    }
    Ok(Member {
        name,
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
pub(super) fn nti(field: &[u8]) -> Result<PyInt, PyErr> {
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
