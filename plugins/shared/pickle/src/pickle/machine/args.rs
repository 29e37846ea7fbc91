//! The run's readers of opcode arguments, as the C unpickler reads them: sizes, 4-byte ints,
//! text lines, and the module and name lines of GLOBAL and INST. Apart from the opcodes that
//! use them (typed and abstract alike).

use super::Run;
use crate::pickle::reader::{Raise, Reader};

impl<'a> Run<'a, '_> {
    /// `calc_binsize` over `width` bytes: an unsigned size, at most `PY_SSIZE_T_MAX`.
    pub(crate) fn size_arg(&mut self, width: usize) -> Result<usize, Raise> {
        let b = self.reader.read(width)?;
        let mut v = 0u64;
        for (i, &byte) in b.iter().enumerate() {
            v |= u64::from(byte) << (8 * i);
        }
        usize::try_from(v)
            .ok()
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(|| {
                Raise::Invalid(format!("a length of {v} exceeds the system's maximum size"))
            })
    }

    /// `calc_binint` over 4 bytes: signed.
    pub(crate) fn i32_arg(&mut self) -> Result<i32, Raise> {
        let b = self.reader.read(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A text argument (`_Unpickler_Readline`), without its newline; CPython's callers refuse
    /// lines shorter than `min` bytes with their newline (`bad_readline`).
    pub(crate) fn line_arg(&mut self, min: usize) -> Result<&'a [u8], Raise> {
        let line = self.reader.readline()?;
        if line.len() < min {
            return Err(Raise::Truncated("an empty text argument".into()));
        }
        Ok(&line[..line.len() - 1])
    }

    /// The module and name of GLOBAL (UTF-8) or INST (ASCII), and whether the data ended
    /// inside them. Where the C unpickler raises (an empty line, no newline before the end)
    /// pure Python's `self.readline()[:-1]` still gives names and looks them up (an empty
    /// name; the rest of the data less its last byte), so those names are judged too, and
    /// the caller raises after judging them when the data ended.
    pub(crate) fn global_lines(&mut self, ascii: bool) -> Result<(&'a str, &'a str, bool), Raise> {
        let decode = |b: &'a [u8]| -> Result<&'a str, Raise> {
            if ascii && !b.is_ascii() {
                return Err(Raise::Invalid("a global's name is not ASCII".into()));
            }
            std::str::from_utf8(b)
                .map_err(|_| Raise::Invalid("a global's name is not UTF-8".into()))
        };
        let mut ended = false;
        let mut line = |r: &mut Reader<'a>| -> Result<&'a [u8], Raise> {
            if ended {
                return Ok(&[]);
            }
            match r.readline() {
                Ok(l) => Ok(&l[..l.len() - 1]),
                Err(Raise::Truncated(_)) => {
                    ended = true;
                    let rest = r.rest();
                    Ok(&rest[..rest.len().saturating_sub(1)])
                }
                Err(e) => Err(e),
            }
        };
        let module = decode(line(&mut self.reader)?)?;
        let name = decode(line(&mut self.reader)?)?;
        Ok((module, name, ended))
    }
}
