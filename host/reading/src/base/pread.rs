//! Positioned reads of a file (`pread`): at an offset, without moving a shared cursor, so that
//! one open file can be read from several places, and threads, at once.
//!
//! The standard library has them only per platform (`std::os::unix::fs::FileExt::read_at`,
//! `std::os::windows::fs::FileExt::seek_read`) and `read_exact_at` only on unix: every caller
//! in the crate reads through here, so that the crate builds on both.
//!
//! On Windows `seek_read` also moves the file's cursor; nothing here relies on the cursor.

use std::fs::File;
use std::io;

/// Reads into `buf` from `offset`, once; how many bytes were read (0 at the end of the file).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
}

/// Fills `buf` from `offset`: an `UnexpectedEof` error when the file ends first (as
/// `std::os::unix::fs::FileExt::read_exact_at`, which is what unix uses).
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        fill_at(|b, at| read_at(file, b, at), buf, offset)
    }
}

/// `read_exact_at` over any positioned read: short reads continue where they stopped, an
/// interrupted read is retried, a read of 0 bytes before `buf` is full is the end of the file.
/// The loop of std's unix `read_exact_at`, for platforms that have only the single read.
#[cfg(any(windows, test))]
fn fill_at(
    mut read: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
    mut buf: &mut [u8],
    mut offset: u64,
) -> io::Result<()> {
    while !buf.is_empty() {
        match read(buf, offset) {
            Ok(0) => break,
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if buf.is_empty() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "failed to fill whole buffer",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exactly_at_an_offset_or_fails_at_the_end() {
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, b"0123456789").unwrap();
        let mut buf = [0u8; 4];
        read_exact_at(&f, &mut buf, 3).unwrap();
        assert_eq!(&buf, b"3456");
        assert_eq!(read_at(&f, &mut buf, 8).unwrap(), 2);
        assert_eq!(&buf[..2], b"89");
        let err = read_exact_at(&f, &mut buf, 7).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        read_exact_at(&f, &mut [], 100).unwrap();
    }

    /// The loop Windows uses, over a source that returns at most 3 bytes a read and is
    /// interrupted once.
    #[test]
    fn short_and_interrupted_reads_are_continued() {
        let data = b"0123456789";
        let mut interrupted = false;
        let mut read = |b: &mut [u8], at: u64| {
            if !interrupted {
                interrupted = true;
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            let rest = data.get(at as usize..).unwrap_or_default();
            let n = b.len().min(rest.len()).min(3);
            b[..n].copy_from_slice(&rest[..n]);
            Ok(n)
        };
        let mut buf = [0u8; 7];
        fill_at(&mut read, &mut buf, 2).unwrap();
        assert_eq!(&buf, b"2345678");
        let err = fill_at(&mut read, &mut buf, 4).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        let err = fill_at(|_, _| Err(io::Error::other("bad disk")), &mut buf, 0).unwrap_err();
        assert_eq!(err.to_string(), "bad disk");
    }
}
