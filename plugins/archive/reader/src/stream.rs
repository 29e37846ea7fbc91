//! Single compressed streams (`.gz`, `.bz2`, `.xz`, `.zst`, `.lz4`, `.zlib` around a model or
//! a tar: `model.safetensors.gz`, `weights.npz.xz`, `model.tar.gz`) decoded as Python's own
//! modules read them (`gzip.open`, `bz2.open`, `lzma.open`, `compression.zstd.open`,
//! `lz4.frame.open`, `zlib.decompress`; `tarfile.open(mode="r:*")` uses the first four), and
//! the decoded bytes handed back to the host, which reads them with whichever reader claims
//! them (`FormatReader::open_container`).
//!
//! Concatenated streams are one stream, as those modules read them (gzip members, bzip2 and
//! xz streams, zstd and LZ4 frames); a stream that is damaged, truncated or fails its checksum
//! makes the module raise, so nothing is handed back and the file is a LEAD naming the byte.
//! Bytes after the last stream: `gzip` skips zero padding and raises on anything else; `bz2`
//! and `lzma` ignore what does not start another stream (CPython `Lib/_compression.py`
//! `DecompressReader.read`, `_trailing_error`); such bytes are a LEAD here, a place a payload
//! hides that no loader reads. What decodes past the budget the host gives is not handed back
//! (a part of a model would be judged as a damaged one): a LEAD that says to decompress the
//! file and scan what comes out.
//!
//! The claim is the complement of the joblib reader's (`socair-joblib` `claim`, linked for
//! that rule): joblib.load reads a compressed pickle, so a stream whose first decoded bytes run
//! as a pickle, or whose first block the head does not reach (bzip2 and LZ4 decode whole
//! blocks), is joblib's.

use socair_plugin_api::{Member, MemberBytes, OpenedContainer, ReadAt, ReportRow, RowStatus};
use socair_plugin_kit::model::{status, Findings};
use socair_plugin_kit::source_reader::SourceReader;
use socair_plugin_kit::Severity;
use std::io::{self, Read};

/// The compressed-stream format this plugin reads.
pub const STREAM_FORMAT: &str = "compressed";
/// Decoded bytes looked at to decide a claim.
const CLAIM_OUT: usize = 512;
/// The most memory an xz block's decoder may set up (xz -9's dictionary is 64 MiB).
const XZ_MEM_LIMIT_KB: u32 = 256 << 10;
/// The largest zstd window accepted (zstd's own default limit for decoding, 2^27 bytes, and
/// what `zstd --long=31` would need refused: `ZSTD_WINDOWLOG_LIMIT_DEFAULT`).
const ZSTD_MAX_WINDOW: u64 = 1 << 27;

/// A compressor, by its stream's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// RFC 1952 (`1f 8b 08`).
    Gzip,
    /// bzip2 (`BZh1`..`BZh9`).
    Bzip2,
    /// xz (`fd 37 7a 58 5a 00`).
    Xz,
    /// Zstandard frames (`28 b5 2f fd`).
    Zstd,
    /// LZ4 frames (`04 22 4d 18`).
    Lz4,
    /// RFC 1950 (a compression method 8 header whose check bits hold).
    Zlib,
}

impl Codec {
    /// The codec whose magic `head` starts with.
    pub fn of(head: &[u8]) -> Option<Codec> {
        if head.starts_with(b"\x1f\x8b\x08") {
            Some(Codec::Gzip)
        } else if head.starts_with(b"BZh") && head.get(3).is_some_and(|b| (b'1'..=b'9').contains(b))
        {
            Some(Codec::Bzip2)
        } else if head.starts_with(b"\xfd7zXZ\x00") {
            Some(Codec::Xz)
        } else if head.starts_with(b"\x28\xb5\x2f\xfd") {
            Some(Codec::Zstd)
        } else if head.starts_with(b"\x04\x22\x4d\x18") {
            Some(Codec::Lz4)
        } else {
            match head {
                [cmf, flg, ..]
                    if cmf & 0x0f == 8
                        && cmf >> 4 <= 7
                        && flg & 0x20 == 0
                        && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0 =>
                {
                    Some(Codec::Zlib)
                }
                _ => None,
            }
        }
    }

    /// Its name in findings.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
            Codec::Zstd => "Zstandard",
            Codec::Lz4 => "LZ4 frame",
            Codec::Zlib => "zlib",
        }
    }
}

/// Counts the bytes read through it.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// How decoding went.
enum Decoded {
    /// All of it, and how many input bytes the streams took.
    Whole(Vec<u8>, u64),
    /// More than the budget.
    Over(u64),
    /// The module would raise: after how many decoded bytes, and why.
    Broken(u64, String),
}

/// Reads up to `limit + 1` bytes from `r` into `out`.
fn fill(r: &mut impl Read, out: &mut Vec<u8>, limit: u64) -> io::Result<()> {
    let mut piece = vec![0u8; 64 << 10];
    loop {
        if out.len() as u64 > limit {
            return Ok(());
        }
        let n = r.read(&mut piece)?;
        if n == 0 {
            return Ok(());
        }
        out.extend_from_slice(piece.get(..n).unwrap_or_default());
    }
}

/// Decodes every stream of `codec` from `input` into at most `limit` bytes. The input bytes
/// the streams took are counted exactly for gzip, zlib and Zstandard (their decoders read no
/// further than their streams); bzip2, xz and LZ4 decoders read ahead, so for them the whole
/// input counts as taken (what follows their last stream makes their decoder fail instead).
fn decode<R: Read>(codec: Codec, input: R, limit: u64) -> Decoded {
    let mut src = io::BufReader::new(Counted {
        inner: input,
        read: 0,
    });
    let mut out = Vec::new();
    let result = match codec {
        Codec::Gzip => gzip_members(&mut src, &mut out, limit),
        Codec::Zlib => fill(
            &mut flate2::bufread::ZlibDecoder::new(&mut src),
            &mut out,
            limit,
        ),
        Codec::Bzip2 => fill(
            &mut bzip2::read::MultiBzDecoder::new(&mut src),
            &mut out,
            limit,
        ),
        Codec::Xz => fill(
            &mut lzma_rust2::XzReader::new_mem_limit(&mut src, true, XZ_MEM_LIMIT_KB),
            &mut out,
            limit,
        ),
        Codec::Lz4 => fill(
            &mut lz4_flex::frame::FrameDecoder::new(&mut src),
            &mut out,
            limit,
        ),
        Codec::Zstd => zstd_frames(&mut src, &mut out, limit),
    };
    if out.len() as u64 > limit {
        return Decoded::Over(limit);
    }
    let used = match codec {
        Codec::Gzip | Codec::Zlib | Codec::Zstd => src.get_ref().read - src.buffer().len() as u64,
        Codec::Bzip2 | Codec::Xz | Codec::Lz4 => u64::MAX,
    };
    match result {
        Ok(()) => Decoded::Whole(out, used),
        Err(e) => Decoded::Broken(out.len() as u64, e.to_string()),
    }
}

/// gzip members one after another, as `gzip._GzipReader` reads them: after each member's
/// trailer, another member if the next bytes are a gzip header, else the end (zero padding or
/// other bytes: [`trailing_finding`] tells them apart).
fn gzip_members(src: &mut impl io::BufRead, out: &mut Vec<u8>, limit: u64) -> io::Result<()> {
    loop {
        fill(&mut flate2::bufread::GzDecoder::new(&mut *src), out, limit)?;
        if out.len() as u64 > limit || !src.fill_buf()?.starts_with(b"\x1f\x8b") {
            return Ok(());
        }
    }
}

/// Zstandard frames one after another (skippable frames skipped), as `compression.zstd`
/// reads a file of several.
fn zstd_frames(src: &mut impl Read, out: &mut Vec<u8>, limit: u64) -> io::Result<()> {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    let mut first = true;
    loop {
        let mut frame = ruzstd::decoding::FrameDecoder::new();
        frame.set_max_window_size(ZSTD_MAX_WINDOW);
        let mut stream =
            match ruzstd::decoding::StreamingDecoder::new_with_decoder(&mut *src, &mut frame) {
                Ok(s) => s,
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    io::copy(&mut (&mut *src).take(u64::from(length)), &mut io::sink())?;
                    continue;
                }
                // The input ends where a frame would start: the last frame was the end.
                Err(FrameDecoderError::ReadFrameHeaderError(
                    ReadFrameHeaderError::MagicNumberReadError(e),
                )) if !first && e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(io::Error::other(e.to_string())),
            };
        first = false;
        fill(&mut stream, out, limit)?;
        if out.len() as u64 > limit {
            return Ok(());
        }
        if !frame.is_finished() {
            return Err(io::Error::other("the input ends inside a frame"));
        }
        if let (Some(stored), Some(computed)) = (
            frame.get_checksum_from_data(),
            frame.get_calculated_checksum(),
        ) {
            if stored != computed {
                return Err(io::Error::other(format!(
                    "a frame's content checksum is {stored:08x}, its decoded bytes give {computed:08x}"
                )));
            }
        }
    }
}

/// Whether this plugin claims the file whose first bytes are `head`, of `file_len`: a
/// compressed stream the joblib reader does not claim (`socair_joblib::claim::claims`: one
/// whose decoded head runs as a pickle, or whose first block the head does not reach). A zlib
/// header is two bytes that plain data may start with, so a zlib stream is claimed only when
/// its head decodes.
pub fn claims(head: &[u8], file_len: u64) -> bool {
    let Some(codec) = Codec::of(head) else {
        return false;
    };
    if socair_joblib::claim::claims(head, file_len) {
        return false;
    }
    if codec != Codec::Zlib {
        return true;
    }
    let mut out = Vec::new();
    let mut src = head;
    // The head is cut anywhere: what came out before the cut decides.
    let _ = fill(
        &mut flate2::read::ZlibDecoder::new(&mut src),
        &mut out,
        CLAIM_OUT as u64,
    );
    !out.is_empty()
}

/// Reads the compressed stream in `src`, decoding at most `budget` bytes: its row, and the
/// decoded bytes handed back (named by the host after the file).
pub fn open(src: &(impl ReadAt + ?Sized), budget: u64) -> OpenedContainer {
    let mut head = vec![0u8; src.size().min(16) as usize];
    let codec = src
        .read_exact_at(0, &mut head)
        .ok()
        .and_then(|()| Codec::of(&head));
    let mut findings = Findings::default();
    let mut members = Vec::new();
    let summary = match codec {
        None => {
            findings.add(
                Severity::Lead,
                "byte 0",
                "not a compressed stream socair decodes",
            );
            "not a compressed stream socair decodes".to_owned()
        }
        Some(codec) => match decode(codec, SourceReader::new(src), budget) {
            Decoded::Whole(bytes, used) => {
                let used = used.min(src.size());
                let trailing = src.size() - used;
                if trailing > 0 {
                    trailing_finding(src, codec, used, trailing, &mut findings);
                }
                let summary = format!(
                    "a {} stream of {} bytes, decoded to {} bytes and handed to the reader that claims them",
                    codec.name(),
                    used,
                    bytes.len()
                );
                members.push(Member {
                    name: "".into(),
                    bytes: MemberBytes::Decoded(bytes.into()),
                    unclaimed: "".into(),
                });
                summary
            }
            Decoded::Over(limit) => {
                findings.add(
                    Severity::Lead,
                    "stream",
                    format!("it decodes to more than the {limit} bytes socair holds for this file (32 MiB + 4x its size, less what its container decoded): decompress it and scan what comes out"),
                );
                format!(
                    "a {} stream larger decoded than socair reads in memory",
                    codec.name()
                )
            }
            Decoded::Broken(at, why) => {
                findings.add(
                    Severity::Lead,
                    format!("decoded byte {at}"),
                    format!("the {} stream cannot be decoded ({why}): Python's {} module raises, so no loader reads what it holds", codec.name(), codec.name()),
                );
                format!("a {} stream that does not decode", codec.name())
            }
        },
    };
    let st = status(findings.worst);
    let opened = socair_plugin_kit::report::one_row(
        STREAM_FORMAT,
        ReportRow {
            check: socair_plugin_kit::report::STRUCTURE_CHECK.into(),
            status: if members.is_empty() && st == RowStatus::Pass {
                RowStatus::Lead
            } else {
                st
            },
            summary: summary.into(),
            findings: findings.to_api("structure findings"),
            names_severities: true,
        },
    );
    OpenedContainer {
        opened,
        members: members.into(),
    }
}

/// The finding for `trailing` bytes after the streams end at byte `used`: none for gzip's zero
/// padding (`gzip._GzipReader._read_eof` skips it); a LEAD for anything else.
fn trailing_finding(
    src: &(impl ReadAt + ?Sized),
    codec: Codec,
    used: u64,
    trailing: u64,
    findings: &mut Findings,
) {
    let mut zeros = true;
    let mut at = used;
    let mut piece = vec![0u8; 64 << 10];
    while zeros && at < src.size() {
        let n = (src.size() - at).min(piece.len() as u64) as usize;
        let buf = piece.get_mut(..n).unwrap_or_default();
        if src.read_exact_at(at, buf).is_err() {
            break;
        }
        zeros = buf.iter().all(|&b| b == 0);
        at += n as u64;
    }
    if zeros && codec == Codec::Gzip {
        // Padding gzip skips: nothing to say.
    } else {
        findings.add(
            Severity::Lead,
            format!("byte {used}"),
            format!("{trailing} bytes after the last {} stream that no decoder reads: a place to hide what a person should look at", codec.name()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).expect("write");
        e.finish().expect("finish")
    }

    #[test]
    fn a_gzip_stream_is_handed_back_whole() {
        let data = b"{\"a\": 1}".repeat(100);
        let file = gz(&data);
        assert!(claims(&file, file.len() as u64));
        let c = open(&file[..], 1 << 20);
        assert_eq!(c.members.len(), 1);
        match &c.members[0].bytes {
            MemberBytes::Decoded(b) => assert_eq!(b.as_slice(), &data[..]),
            MemberBytes::Range(_) => panic!("decoded"),
        }
        assert_eq!(c.opened.rows[0].status, RowStatus::Pass);
    }

    #[test]
    fn a_gzipped_pickle_is_joblibs() {
        let pickle = gz(b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.");
        assert!(!claims(&pickle, pickle.len() as u64));
    }

    #[test]
    fn past_the_budget_nothing_is_handed_back() {
        let file = gz(&vec![7u8; 100_000]);
        let c = open(&file[..], 1000);
        assert!(c.members.is_empty());
        assert_eq!(c.opened.rows[0].status, RowStatus::Lead);
    }

    #[test]
    fn a_damaged_stream_and_trailing_bytes_are_leads() {
        let mut file = gz(b"hello world, hello world");
        let mut cut = file.clone();
        cut.truncate(file.len() - 6);
        let c = open(&cut[..], 1 << 20);
        assert!(c.members.is_empty());
        assert_eq!(c.opened.rows[0].status, RowStatus::Lead);
        file.extend_from_slice(b"PAYLOAD");
        let c = open(&file[..], 1 << 20);
        assert_eq!(c.opened.rows[0].status, RowStatus::Lead);
        let mut padded = gz(b"hello");
        padded.extend_from_slice(&[0; 10]);
        let c = open(&padded[..], 1 << 20);
        assert_eq!(c.opened.rows[0].status, RowStatus::Pass);
        assert_eq!(c.members.len(), 1);
    }
}
