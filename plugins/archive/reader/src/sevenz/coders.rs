//! 7z folders of one Deflate or one Zstandard coder, decoded here rather than by
//! `sevenz-rust2`: its `deflate` feature would switch flate2, which zip members inflate
//! through, from its pure-Rust backend to zlib-rs for the whole workspace, and its `zstd`
//! feature builds the C zstd library. So the folder's one packed stream is read whole (it lies
//! in the file: at most the input's length) and decoded with flate2's `rust_backend` (raw
//! Deflate, 7-Zip's method 04 01 08, as 7-Zip's `DeflateDecoder` and py7zr's
//! `zlib.decompressobj(-15)` read it) or `ruzstd` (method 04 F7 11 01, the id of 7-Zip-zstd and
//! py7zr: Zstandard frames one after another, skippable frames skipped, as libzstd's
//! `ZSTD_decompressStream` reads them; a frame's content checksum checked when it has one).
//!
//! Within the same budget as every other folder: the members that fit are planned by the
//! caller, decoding stops one byte past the folder's unpack size (a bomb is named as one),
//! a Zstandard frame may not declare a window larger than what is left, and each member's
//! CRC-32 (and the folder's, when the whole folder is decoded) is checked as the crate checks
//! it. A chain of coders holding Deflate or Zstandard (a filter before them) is not decoded:
//! the caller says so.

use sevenz_rust2::{Archive, EncoderMethod};
use std::io::{Read, Seek, SeekFrom};

/// The 7z signature header's length: packed streams start after it.
const SIGNATURE_HEADER: u64 = 32;
/// Output pieces.
const PIECE: usize = 256 << 10;

/// Whether folder `b` is one coder this module decodes; its name.
pub(super) fn single_coder(archive: &Archive, b: usize) -> Option<&'static str> {
    let block = archive.blocks.get(b)?;
    let [coder] = block.coders.as_slice() else {
        return None;
    };
    match coder.encoder_method_id() {
        id if id == EncoderMethod::ID_DEFLATE => Some("Deflate"),
        id if id == EncoderMethod::ID_ZSTD => Some("Zstandard"),
        _ => None,
    }
}

/// Why a folder could not be decoded: a FAIL (the bytes are not what the folder says) or a
/// LEAD (a bound socair keeps).
#[derive(Debug)]
pub(super) enum CoderError {
    /// The packed bytes, the stream or its sizes are wrong.
    Corrupt(String),
    /// A Zstandard frame's window is past the budget left.
    Bound(String),
}

/// The folder's packed stream, read whole.
fn packed<R: Read + Seek>(
    archive: &Archive,
    b: usize,
    reader: &mut R,
) -> Result<Vec<u8>, CoderError> {
    let corrupt = |why: String| CoderError::Corrupt(why);
    let k = *archive
        .stream_map
        .block_first_pack_stream_index()
        .get(b)
        .ok_or_else(|| corrupt("the folder has no packed stream".into()))?;
    let at = archive
        .stream_map
        .pack_stream_offsets()
        .get(k)
        .copied()
        .and_then(|o| o.checked_add(archive.pack_pos()))
        .and_then(|o| o.checked_add(SIGNATURE_HEADER))
        .ok_or_else(|| corrupt("its packed stream's offset overflows".into()))?;
    let size = *archive
        .pack_sizes()
        .get(k)
        .ok_or_else(|| corrupt("its packed stream has no size".into()))?;
    let end = reader
        .seek(SeekFrom::End(0))
        .map_err(|e| corrupt(format!("cannot seek: {e}")))?;
    if at.checked_add(size).is_none_or(|e| e > end) {
        return Err(corrupt(format!(
            "its packed stream ({size} bytes at byte {at}) runs past the end of the {end}-byte archive"
        )));
    }
    let mut buf = vec![0u8; usize::try_from(size).map_err(|_| corrupt("too large".into()))?];
    reader
        .seek(SeekFrom::Start(at))
        .and_then(|_| reader.read_exact(&mut buf))
        .map_err(|e| corrupt(format!("reading its packed stream failed: {e}")))?;
    Ok(buf)
}

/// Where decoded bytes go: each member's own buffer in turn (never one buffer for the whole
/// folder, so the folder's bytes are held once), and the folder's CRC-32.
pub(super) struct Sink {
    sizes: Vec<u64>,
    /// The members' bytes, the last one being filled.
    pub(super) outs: Vec<Vec<u8>>,
    want: u64,
    total: u64,
    /// More than `want` bytes came out.
    over: bool,
    crc: socair_plugin_kit::zip::crc::Crc32,
}

impl Sink {
    fn new(sizes: Vec<u64>) -> Self {
        let want = sizes.iter().sum();
        Sink {
            sizes,
            outs: Vec::new(),
            want,
            total: 0,
            over: false,
            crc: socair_plugin_kit::zip::crc::Crc32::new(),
        }
    }

    fn push(&mut self, mut piece: &[u8]) {
        if self.total.saturating_add(piece.len() as u64) > self.want {
            self.over = true;
            piece = &piece[..usize::try_from(self.want - self.total).unwrap_or(0)];
        }
        self.total += piece.len() as u64;
        self.crc.update(piece);
        while !piece.is_empty() {
            let i = self.outs.len().saturating_sub(1);
            let full = self
                .outs
                .last()
                .zip(self.sizes.get(i))
                .is_none_or(|(o, &s)| o.len() as u64 >= s);
            if full {
                let size = self.sizes.get(self.outs.len()).copied().unwrap_or(0);
                // Declared sizes were planned within the budget.
                self.outs
                    .push(Vec::with_capacity(usize::try_from(size).unwrap_or(0)));
                continue;
            }
            let (Some(out), Some(&size)) = (self.outs.last_mut(), self.sizes.get(i)) else {
                break;
            };
            let n = usize::try_from(size - out.len() as u64)
                .unwrap_or(usize::MAX)
                .min(piece.len());
            out.extend_from_slice(&piece[..n]);
            piece = &piece[n..];
        }
    }

    /// Reads `decoder` until it ends or more than `want` bytes came out.
    fn fill(&mut self, decoder: &mut impl Read) -> Result<(), String> {
        let mut piece = vec![0u8; PIECE];
        while !self.over {
            let room = usize::try_from((self.want - self.total).saturating_add(1))
                .unwrap_or(PIECE)
                .min(PIECE);
            match decoder.read(&mut piece[..room]) {
                Ok(0) => return Ok(()),
                Ok(n) => self.push(&piece[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    /// The CRC-32 of every byte kept.
    pub(super) fn crc(&self) -> u32 {
        self.crc.clone().finalize()
    }
}

/// Decodes the first members of folder `b` (their sizes `sizes`, in the folder's order; its
/// coder `name`, from [`single_coder`]), `window` being the most a Zstandard frame may keep
/// besides them.
pub(super) fn decode<R: Read + Seek>(
    archive: &Archive,
    b: usize,
    name: &str,
    reader: &mut R,
    sizes: Vec<u64>,
    window: u64,
) -> Result<Sink, CoderError> {
    let unpack = archive.blocks[b].get_unpack_size();
    let data = packed(archive, b, reader)?;
    let mut sink = Sink::new(sizes);
    let want = sink.want;
    let corrupt = |e: String, sink: &Sink| {
        CoderError::Corrupt(format!(
            "its {name} stream cannot be decoded after {} bytes ({e})",
            sink.total
        ))
    };
    if name == "Deflate" {
        let mut d = flate2::read::DeflateDecoder::new(data.as_slice());
        sink.fill(&mut d).map_err(|e| corrupt(e, &sink))?;
    } else {
        let mut input: &[u8] = &data;
        while !input.is_empty() && !sink.over {
            let mut frame = ruzstd::decoding::FrameDecoder::new();
            frame.set_max_window_size(window.max(1 << 10));
            // Reads the frame header (a skippable frame's 8 bytes, then it is skipped).
            let mut stream =
                match ruzstd::decoding::StreamingDecoder::new_with_decoder(&mut input, &mut frame)
                {
                    Ok(stream) => stream,
                    Err(ruzstd::decoding::errors::FrameDecoderError::ReadFrameHeaderError(
                        ruzstd::decoding::errors::ReadFrameHeaderError::SkipFrame {
                            length, ..
                        },
                    )) => {
                        let skip = usize::try_from(length).unwrap_or(usize::MAX);
                        input = input.get(skip..).ok_or_else(|| {
                            corrupt("a skippable frame runs past the packed stream".into(), &sink)
                        })?;
                        continue;
                    }
                    Err(ruzstd::decoding::errors::FrameDecoderError::WindowSizeTooBig {
                        requested,
                        ..
                    }) => {
                        return Err(CoderError::Bound(format!(
                            "a Zstandard frame of it declares a window of {requested} bytes, more than the {window} left of what socair decodes for this input (32 MiB + 4x its size)"
                        )))
                    }
                    Err(e) => return Err(corrupt(e.to_string(), &sink)),
                };
            sink.fill(&mut stream).map_err(|e| corrupt(e, &sink))?;
            if sink.over {
                break;
            }
            if !frame.is_finished() {
                return Err(corrupt(
                    "the packed stream ends inside a frame".into(),
                    &sink,
                ));
            }
            if let (Some(stored), Some(computed)) = (
                frame.get_checksum_from_data(),
                frame.get_calculated_checksum(),
            ) {
                if stored != computed {
                    return Err(CoderError::Corrupt(format!(
                        "a Zstandard frame's content checksum is {stored:08x}, its decoded bytes give {computed:08x}"
                    )));
                }
            }
        }
    }
    if want == unpack && sink.over {
        return Err(CoderError::Corrupt(format!(
            "its {name} stream decodes past the {unpack} bytes its folder declares (a bomb, or members readers cut at different places)"
        )));
    }
    if sink.total < want {
        return Err(CoderError::Corrupt(format!(
            "its {name} stream decodes to {} bytes, fewer than the {unpack} its folder declares",
            sink.total
        )));
    }
    Ok(sink)
}
