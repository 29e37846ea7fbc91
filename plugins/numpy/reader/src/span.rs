//! Bytes a reader walks: the opened file, a window of it (a stored zip member), or bytes
//! decoded into memory (an inflated member). Every parser here reads through [`ReadAt`], so
//! one parser serves all three; a [`Span`] also knows where its bytes lie in the opened file,
//! when they lie there as they are, so that a tensor found in it is described by a byte range
//! (which the host hashes from the file) rather than by bytes carried across the boundary.

use socair_plugin_api::ReadAt;

/// Where a window's bytes come from: a source served through [`ReadAt`] (the host's file), or
/// bytes in memory (a slice is unsized, so it cannot be a `&dyn ReadAt` itself).
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// A byte source.
    Read(&'a dyn ReadAt),
    /// Bytes in memory.
    Bytes(&'a [u8]),
}

impl ReadAt for Source<'_> {
    fn size(&self) -> u64 {
        match self {
            Source::Read(r) => r.size(),
            Source::Bytes(b) => b.size(),
        }
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        match self {
            Source::Read(r) => r.read_exact_at(offset, buf),
            Source::Bytes(b) => b.read_exact_at(offset, buf),
        }
    }
}

/// A window of a byte source.
#[derive(Clone, Copy)]
pub struct Span<'a> {
    /// The source.
    pub src: Source<'a>,
    /// Where the window starts in `src`.
    pub base: u64,
    /// Its length.
    pub len: u64,
    /// Where `base` lies in the opened file, when `src` is the opened file (none for decoded
    /// bytes).
    pub file_offset: Option<u64>,
}

impl<'a> Span<'a> {
    /// The whole opened file.
    pub fn file(src: &'a dyn ReadAt) -> Span<'a> {
        Span {
            src: Source::Read(src),
            base: 0,
            len: src.size(),
            file_offset: Some(0),
        }
    }

    /// A whole opened file held in memory (tests, fuzzing).
    pub fn file_bytes(bytes: &'a [u8]) -> Span<'a> {
        Span {
            src: Source::Bytes(bytes),
            base: 0,
            len: bytes.len() as u64,
            file_offset: Some(0),
        }
    }

    /// Decoded bytes.
    pub fn memory(bytes: &'a [u8]) -> Span<'a> {
        Span {
            src: Source::Bytes(bytes),
            base: 0,
            len: bytes.len() as u64,
            file_offset: None,
        }
    }

    /// The part `offset..offset + len` of this window, if it lies inside it.
    pub fn sub(&self, offset: u64, len: u64) -> Option<Span<'a>> {
        let end = offset.checked_add(len)?;
        if end > self.len {
            return None;
        }
        Some(Span {
            src: self.src,
            base: self.base.checked_add(offset)?,
            len,
            file_offset: self.file_offset.and_then(|f| f.checked_add(offset)),
        })
    }

    /// The first `n` bytes (fewer when the window is shorter).
    pub fn head(&self, n: u64) -> Vec<u8> {
        let n = n.min(self.len);
        let mut buf = vec![0u8; usize::try_from(n).unwrap_or(0)];
        if self.read_exact_at(0, &mut buf).is_err() {
            buf.clear();
        }
        buf
    }

    /// The whole window in memory (callers bound `len` first).
    pub fn to_vec(&self) -> Result<Vec<u8>, String> {
        let n = usize::try_from(self.len).map_err(|_| "too long for memory".to_owned())?;
        let mut buf = vec![0u8; n];
        self.read_exact_at(0, &mut buf)?;
        Ok(buf)
    }
}

impl ReadAt for Span<'_> {
    fn size(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| format!("read past the end of a {}-byte window", self.len))?;
        let at = self
            .base
            .checked_add(offset)
            .ok_or_else(|| "offset overflows".to_owned())?;
        self.src.read_exact_at(at, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_translate_offsets_and_stay_inside() {
        let data: Vec<u8> = (0u8..100).collect();
        let file = Span::file_bytes(&data);
        let w = file.sub(10, 20).unwrap();
        assert_eq!(w.file_offset, Some(10));
        let inner = w.sub(5, 5).unwrap();
        assert_eq!((inner.base, inner.file_offset), (15, Some(15)));
        assert_eq!(inner.head(99), vec![15, 16, 17, 18, 19]);
        let mut b = [0u8; 2];
        assert!(inner.read_exact_at(4, &mut b).is_err());
        assert!(w.sub(15, 6).is_none());
        assert!(w.sub(u64::MAX, 2).is_none());
        let mem = Span::memory(&data[..3]);
        assert_eq!(mem.file_offset, None);
        assert_eq!(mem.to_vec().unwrap(), vec![0, 1, 2]);
    }
}
