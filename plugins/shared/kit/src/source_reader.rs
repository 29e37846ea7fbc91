//! A byte source read as `Read + Seek` ([`SourceReader`]): what the `zip` crate and the
//! decompressors read through, over the plugin API's `ReadAt` (the host's file, or a slice).

use socair_plugin_api::ReadAt;
use std::io::{self, Read, Seek, SeekFrom};

/// Reads a [`ReadAt`] source from a position, as `Read + Seek`.
pub struct SourceReader<'a, S: ReadAt + ?Sized> {
    src: &'a S,
    pos: u64,
}

impl<'a, S: ReadAt + ?Sized> SourceReader<'a, S> {
    /// A reader at the start of `src`.
    pub fn new(src: &'a S) -> Self {
        Self { src, pos: 0 }
    }
}

impl<S: ReadAt + ?Sized> Clone for SourceReader<'_, S> {
    fn clone(&self) -> Self {
        Self {
            src: self.src,
            pos: self.pos,
        }
    }
}

impl<S: ReadAt + ?Sized> Read for SourceReader<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.src.size().saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let Some(out) = buf.get_mut(..n).filter(|o| !o.is_empty()) else {
            return Ok(0);
        };
        self.src
            .read_exact_at(self.pos, out)
            .map_err(io::Error::other)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<S: ReadAt + ?Sized> Seek for SourceReader<'_, S> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.src.size().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_seeks_within_the_source() {
        let bytes: Vec<u8> = (0..10).collect();
        let mut r = SourceReader::new(&bytes[..]);
        let mut out = [0u8; 4];
        assert_eq!(r.read(&mut out).unwrap(), 4);
        assert_eq!(out, [0, 1, 2, 3]);
        assert_eq!(r.seek(SeekFrom::End(-2)).unwrap(), 8);
        assert_eq!(r.read(&mut out).unwrap(), 2);
        assert_eq!(r.read(&mut out).unwrap(), 0);
        assert!(r.seek(SeekFrom::Current(-20)).is_err());
    }
}
