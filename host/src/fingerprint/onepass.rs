//! A file's digest and its tensors' hashes from one read of each byte.
//!
//! `socair tensors` hashes a file twice over: the whole file (its sha256) and every tensor's
//! bytes (their sha256, and for F16 and BF16 their widened values too). Hashed apart, each
//! pass reads the bytes again. Here the file is read once, in windows of [`WINDOW`] bytes in
//! order, and each window is handed to every hash that needs some of it, the hashes spread over
//! the cores: the file's digest, each tensor's raw hash, each tensor's values hash (each an
//! independent SHA-256 stream, fed in order window after window). The next window is read
//! beside them. Memory: two windows, and each values stream's widening buffer.
//!
//! Only tensors whose bytes are plain ranges of this file, in increasing order, are hashed
//! here ([`in_one_pass`]); the others (strided views, bytes in another file or decoded by the
//! reader, ranges out of order or not of whole elements) are hashed as before, one by one
//! ([`crate::fingerprint::hashing::hash_tensor`]), which also words their errors.

use crate::base::digest::hex;
use crate::base::progress::Progress;
use crate::fingerprint::hashing::{encode_values, value_width, TensorHashes};
use crate::read::source::InputFile;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};
use std::io;

/// Bytes read at once and handed to the hashes.
pub const WINDOW: usize = 512 << 10;

/// The most bytes widened at once by one values stream.
const WIDEN_PIECE: usize = 1 << 20;

/// Whether a tensor's hashes can be computed in the one pass over `file_len` bytes: its bytes
/// are ranges of the opened file itself, in increasing order without overlap, each of whole
/// elements when it has a values hash.
pub fn in_one_pass(t: &TensorDescriptor, file_len: u64) -> bool {
    if t.strides.is_some() || t.inline.is_some() || t.file.is_some() {
        return false;
    }
    let width = t
        .element_type
        .as_ref()
        .into_option()
        .and_then(|e| value_width(e.as_str()))
        .map_or(1, |w| w as u64);
    let mut at = 0u64;
    for r in t.ranges.iter() {
        let Some(end) = r.offset.checked_add(r.len) else {
            return false;
        };
        if r.offset < at || end > file_len || r.len % width != 0 {
            return false;
        }
        at = end;
    }
    true
}

/// The SHA-256 of a file's bytes from `from` to the end, continuing `state` (the hash of the
/// bytes before `from`, which its reader's reads computed: [`crate::read::tap`]).
pub struct DigestFrom {
    /// The first byte not hashed yet.
    pub from: u64,
    /// The hash so far.
    pub state: Sha256,
}

/// What one pass computed: the file's hex SHA-256 (when asked for) and each tensor's hashes,
/// in the order the tensors were given.
pub struct OnePass {
    /// The file's digest.
    pub digest: Option<String>,
    /// Each tensor's hashes.
    pub tensors: Vec<TensorHashes>,
}

/// One SHA-256 stream fed with the bytes of some ranges of the file, window after window.
struct Stream<'t> {
    /// The tensor it belongs to (none for the file's digest).
    tensor: Option<usize>,
    ranges: Vec<ByteRange>,
    /// The range being fed, and how far into the file it has been fed.
    next: usize,
    sha: Sha256,
    /// For a values hash: the element type, its byte order, width, and the bytes of an element
    /// split between two windows.
    values: Option<Values<'t>>,
}

struct Values<'t> {
    element: &'t str,
    order: ByteOrder,
    width: usize,
    carry: Vec<u8>,
    widened: Vec<u8>,
}

impl Stream<'_> {
    /// The first byte it needs, and the end of the last.
    fn span(&self) -> (u64, u64) {
        let first = self.ranges.first().map_or(0, |r| r.offset);
        let last = self.ranges.last().map_or(0, |r| r.offset + r.len);
        (first, last)
    }

    /// Feeds it what it needs of `window`, which holds the file's bytes from `start`.
    fn feed(&mut self, start: u64, window: &[u8]) -> Result<(), String> {
        let end = start + window.len() as u64;
        while let Some(&r) = self.ranges.get(self.next) {
            let (from, to) = (r.offset.max(start), (r.offset + r.len).min(end));
            if from < to {
                let slice = &window[(from - start) as usize..(to - start) as usize];
                self.update(slice)?;
            }
            if r.offset + r.len <= end {
                self.next += 1;
            } else {
                break;
            }
        }
        Ok(())
    }

    fn update(&mut self, bytes: &[u8]) -> Result<(), String> {
        let Some(v) = &mut self.values else {
            self.sha.update(bytes);
            return Ok(());
        };
        let mut rest = bytes;
        // An element split between two windows is completed first.
        if !v.carry.is_empty() {
            let need = (v.width - v.carry.len()).min(rest.len());
            v.carry.extend_from_slice(&rest[..need]);
            rest = &rest[need..];
            if v.carry.len() < v.width {
                return Ok(());
            }
            let mut out = [0u8; 4];
            encode_values(v.element, v.order, &v.carry, &mut out)?;
            self.sha.update(out);
            v.carry.clear();
        }
        let whole = rest.len() - rest.len() % v.width;
        for piece in rest[..whole].chunks(WIDEN_PIECE) {
            v.widened.resize(piece.len() / v.width * 4, 0);
            encode_values(v.element, v.order, piece, &mut v.widened)?;
            self.sha.update(&v.widened);
        }
        v.carry.extend_from_slice(&rest[whole..]);
        Ok(())
    }
}

/// Reads `input` once, from the first byte any hash needs to the last, and returns the digest
/// continued from `digest` (when given) and the hashes of `tensors` (each [`in_one_pass`]),
/// counting the tensors' bytes into `progress`. `Err` when reading fails (the caller then
/// hashes the slow way, which words the error for each tensor).
pub fn hash_in_one_pass(
    input: &InputFile,
    digest: Option<DigestFrom>,
    tensors: &[&TensorDescriptor],
    progress: &Progress,
) -> io::Result<OnePass> {
    let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    let len = input.len();
    let mut streams: Vec<Stream<'_>> = Vec::new();
    let want_digest = digest.is_some();
    if let Some(d) = digest {
        streams.push(Stream {
            tensor: None,
            ranges: (d.from < len)
                .then_some(ByteRange {
                    offset: d.from,
                    len: len - d.from,
                })
                .into_iter()
                .collect(),
            next: 0,
            sha: d.state,
            values: None,
        });
    }
    for (i, t) in tensors.iter().enumerate() {
        let ranges: Vec<ByteRange> = t.ranges.iter().copied().filter(|r| r.len > 0).collect();
        let element = t.element_type.as_ref().map(|e| e.as_str()).into_option();
        let identity = element == Some("F32") && t.byte_order == ByteOrder::Little;
        streams.push(Stream {
            tensor: Some(i),
            ranges: ranges.clone(),
            next: 0,
            sha: Sha256::new(),
            values: None,
        });
        if let (Some(element), Some(width), false) =
            (element, element.and_then(value_width), identity)
        {
            streams.push(Stream {
                tensor: Some(i),
                ranges,
                next: 0,
                sha: Sha256::new(),
                values: Some(Values {
                    element,
                    order: t.byte_order,
                    width,
                    carry: Vec::new(),
                    widened: Vec::new(),
                }),
            });
        }
    }
    // Streams in the order of their first byte: those a window reaches join the active ones.
    streams.sort_by_key(|s| s.span().0);
    let start = streams
        .iter()
        .filter(|s| !s.ranges.is_empty())
        .map(|s| s.span().0)
        .min()
        .unwrap_or(len);
    let end = streams.iter().map(|s| s.span().1).max().unwrap_or(0);
    let read = |at: u64, buf: &mut Vec<u8>| -> io::Result<()> {
        let n = (end - at).min(WINDOW as u64) as usize;
        buf.resize(n, 0);
        input.read_exact_at(at, buf)
    };
    let mut done: Vec<Stream<'_>> = Vec::with_capacity(streams.len());
    let mut waiting = streams.into_iter().peekable();
    let mut active: Vec<Stream<'_>> = Vec::new();
    let (mut current, mut next) = (Vec::new(), Vec::new());
    let mut at = start;
    if at < end {
        read(at, &mut current)?;
    }
    while at < end {
        let window_end = at + current.len() as u64;
        while let Some(s) = waiting.next_if(|s| s.span().0 < window_end) {
            active.push(s);
        }
        let (got, fed) = rayon::join(
            || {
                if window_end < end {
                    read(window_end, &mut next)
                } else {
                    Ok(())
                }
            },
            || {
                active
                    .par_iter_mut()
                    .map(|s| s.feed(at, &current))
                    .collect::<Result<Vec<()>, String>>()
            },
        );
        got?;
        fed.map_err(invalid)?;
        progress.add(
            active
                .iter()
                .filter(|s| s.tensor.is_some() && s.values.is_none())
                .flat_map(|s| &s.ranges)
                .map(|r| {
                    let (from, to) = (r.offset.max(at), (r.offset + r.len).min(window_end));
                    to.saturating_sub(from)
                })
                .sum(),
        );
        let (finished, going): (Vec<_>, Vec<_>) =
            active.into_iter().partition(|s| s.span().1 <= window_end);
        done.extend(finished);
        active = going;
        std::mem::swap(&mut current, &mut next);
        at = window_end;
    }
    // Streams with nothing to read (empty tensors) are finished as they are.
    done.extend(active);
    done.extend(waiting);
    let mut digest = None;
    let mut raw: Vec<Option<String>> = vec![None; tensors.len()];
    let mut values: Vec<Option<String>> = vec![None; tensors.len()];
    for s in done {
        if let Some(v) = &s.values {
            if !v.carry.is_empty() {
                return Err(invalid("a range ends inside an element".into()));
            }
        }
        let hash = hex(&s.sha.finalize());
        match (s.tensor, s.values.is_some()) {
            (None, _) => digest = Some(hash),
            (Some(i), false) => raw[i] = Some(hash),
            (Some(i), true) => values[i] = Some(hash),
        }
    }
    let tensors = tensors
        .iter()
        .zip(raw.into_iter().zip(values))
        .map(|(t, (raw, values))| {
            let sha256 = raw.unwrap_or_default();
            let width = t
                .element_type
                .as_ref()
                .into_option()
                .and_then(|e| value_width(e.as_str()));
            // F32 stored little-endian: the values hash is the bytes hash.
            let values = values.or_else(|| width.map(|_| sha256.clone()));
            TensorHashes { sha256, values }
        })
        .collect();
    Ok(OnePass {
        digest: digest.filter(|_| want_digest),
        tensors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::hashing::hash_tensor;
    use socair_plugin_api::abi_stable::std_types::{ROption, RVec};

    fn tensor(dtype: &str, ranges: &[(u64, u64)], order: ByteOrder) -> TensorDescriptor {
        let width = value_width(dtype).unwrap_or(1) as u64;
        TensorDescriptor {
            name: "t".into(),
            dtype: dtype.into(),
            element_type: ROption::RSome(dtype.into()),
            shape: RVec::from(vec![ranges.iter().map(|r| r.1).sum::<u64>() / width]),
            ranges: ranges
                .iter()
                .map(|&(offset, len)| ByteRange { offset, len })
                .collect(),
            byte_order: order,
            origin: ROption::RNone,
            strides: ROption::RNone,
            file: ROption::RNone,
            inline: ROption::RNone,
            outside_model: false,
        }
    }

    #[test]
    fn one_pass_gives_the_hashes_each_tensor_hashed_alone_gives() {
        // Ranges across window boundaries at odd offsets (an F16 element split between two
        // windows), aliases (two tensors over the same bytes), a tensor in two ranges, an
        // empty one, big-endian values.
        let len = 3 * WINDOW + 12_345;
        let data: Vec<u8> = (0..len as u32).map(|i| (i * 7 + i / 4099) as u8).collect();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, &data).unwrap();
        let input = InputFile::open(f.path()).unwrap();
        let w = WINDOW as u64;
        let tensors = [
            tensor("F32", &[(8, w)], ByteOrder::Little),
            tensor("F32", &[(8, w)], ByteOrder::Little),
            tensor("F16", &[(w - 1, 2 * w)], ByteOrder::Little),
            tensor("BF16", &[(101, 1000), (w + 3, w)], ByteOrder::Big),
            tensor("F32", &[(2 * w + 4, 4000)], ByteOrder::Big),
            tensor("I8", &[(5, 3 * w)], ByteOrder::Little),
            tensor("F32", &[], ByteOrder::Little),
        ];
        let refs: Vec<&TensorDescriptor> = tensors.iter().collect();
        assert!(refs.iter().all(|t| in_one_pass(t, len as u64)));
        let progress = Progress::hidden();
        for (from, state) in [
            (0u64, Sha256::new()),
            (w + 7, Sha256::new().chain_update(&data[..(w + 7) as usize])),
        ] {
            let got = hash_in_one_pass(&input, Some(DigestFrom { from, state }), &refs, &progress)
                .unwrap();
            assert_eq!(got.digest, Some(hex(&Sha256::digest(&data))));
            for (t, h) in tensors.iter().zip(&got.tensors) {
                assert_eq!(
                    *h,
                    hash_tensor(&input, t, &progress).unwrap(),
                    "{:?}",
                    t.ranges
                );
            }
        }
        let got = hash_in_one_pass(&input, None, &refs[..1], &progress).unwrap();
        assert_eq!(got.digest, None);
        // Not in one pass: ranges out of order, past the end, or not of whole elements.
        assert!(!in_one_pass(
            &tensor("I8", &[(10, 5), (0, 5)], ByteOrder::Little),
            100
        ));
        assert!(!in_one_pass(
            &tensor("I8", &[(90, 20)], ByteOrder::Little),
            100
        ));
        assert!(!in_one_pass(
            &tensor("F32", &[(0, 6)], ByteOrder::Little),
            100
        ));
    }
}
