//! A tensor's bytes in row-major order, whatever their layout in the file.
//!
//! Most descriptors list the bytes in order already (`ranges`). A strided one (a permuted or
//! transposed view in a pickle checkpoint) gives one range and element strides; its elements
//! are gathered here. The host does not take the plugin's word for a strided layout: the
//! strides must match the shape and every element must lie inside the range.
//!
//! Two gathers live here on purpose. [`for_each_row_major_chunk`] walks rows with an odometer
//! and is what fingerprinting and conversion read through; [`gathered_sha256_by_index`]
//! computes every element's place by dividing its flat index, and is the second path that
//! conversion verifies the first against.

use crate::read::source::{InputFile, CHUNK};
use sha2::{Digest, Sha256};
use socair_plugin_api::TensorDescriptor;
use std::io;

/// Spans at most this long are read into memory once and gathered from there (a pread per
/// element would be slow when the file is not mapped); longer ones are gathered in place.
const SPAN_IN_MEMORY: u64 = 64 << 20;

/// Bytes per element of a safetensors dtype name, and the unit a byte swap works on (a
/// complex number swaps each of its two parts).
pub fn element_layout(dtype: &str) -> Option<(u64, usize)> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" | "F8_E4M3FNUZ"
        | "F8_E5M2FNUZ" => (1, 1),
        "I16" | "U16" | "F16" | "BF16" => (2, 2),
        "I32" | "U32" | "F32" => (4, 4),
        "I64" | "U64" | "F64" => (8, 8),
        "C64" => (8, 4),
        _ => return None,
    })
}

/// Bits per element of the sub-byte types (safetensors' `F4`, `F6_E2M3`, `F6_E3M2`), whose
/// elements are packed: such a tensor's bytes hold its shape's elements times these bits. They
/// have no byte size per element, so a strided view of one is never gathered.
pub fn packed_bits(dtype: &str) -> Option<u64> {
    match dtype {
        "F4" => Some(4),
        "F6_E2M3" | "F6_E3M2" => Some(6),
        _ => None,
    }
}

/// Bytes per element of a socair element type (the safetensors dtype names).
pub fn element_size(element_type: &str) -> Option<u64> {
    element_layout(element_type).map(|(size, _)| size)
}

/// A checked strided layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strided {
    /// Where element `(0, …, 0)` lies in the file.
    pub base: u64,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// Element strides, outermost first.
    pub strides: Vec<u64>,
    /// Bytes per element.
    pub elem: u64,
    /// Elements in all.
    pub numel: u64,
}

fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

/// The strided layout of `t`, checked against `file_len`; `None` when `t` is not strided.
pub fn strided(t: &TensorDescriptor, file_len: u64) -> Result<Option<Strided>, String> {
    let Some(strides) = t.strides.as_ref().into_option() else {
        return Ok(None);
    };
    if t.inline.is_some() {
        return Err(
            "it is both strided and decoded by its reader: no format describes that".into(),
        );
    }
    let element = t
        .element_type
        .as_ref()
        .into_option()
        .ok_or("a strided tensor without a fixed-width element type")?;
    let elem = element_size(element.as_str())
        .ok_or_else(|| format!("a strided tensor of {element}, whose element size is unknown"))?;
    if strides.len() != t.shape.len() {
        return Err(format!(
            "{} strides for a shape of {} dimensions",
            strides.len(),
            t.shape.len()
        ));
    }
    let [range] = t.ranges.as_slice() else {
        return Err(format!(
            "a strided tensor with {} byte ranges instead of one",
            t.ranges.len()
        ));
    };
    range
        .offset
        .checked_add(range.len)
        .filter(|&e| e <= file_len)
        .ok_or_else(|| format!("its range lies past the end of the {file_len}-byte file"))?;
    let numel = t
        .shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or("its shape overflows")?;
    if numel > 0 {
        // The furthest element: every index at its largest.
        let furthest = t
            .shape
            .iter()
            .zip(strides.iter())
            .try_fold(0u64, |a, (&d, &s)| a.checked_add((d - 1).checked_mul(s)?))
            .ok_or("its strides overflow")?;
        let needed = furthest
            .checked_add(1)
            .and_then(|n| n.checked_mul(elem))
            .ok_or("its strides overflow")?;
        if needed > range.len {
            return Err(format!(
                "shape {:?} with strides {:?} reaches {needed} bytes into a range of {}",
                t.shape.as_slice(),
                strides.as_slice(),
                range.len
            ));
        }
        // More elements than bytes to hold them: elements overlap (a zero or repeating
        // stride). Reading would cost the shape, not the file: a tiny file could describe
        // terabytes. Such a view is not read.
        let all = numel.checked_mul(elem).ok_or("its size overflows")?;
        if all > needed {
            return Err(format!(
                "shape {:?} with strides {:?} repeats elements ({all} bytes of values from {needed} bytes): it is not read",
                t.shape.as_slice(),
                strides.as_slice()
            ));
        }
    }
    Ok(Some(Strided {
        base: range.offset,
        shape: t.shape.to_vec(),
        strides: strides.to_vec(),
        elem,
        numel,
    }))
}

/// The tensor's size in row-major order: the ranges' total, or elements × size when strided.
pub fn row_major_len(t: &TensorDescriptor, file_len: u64) -> Result<u64, String> {
    if let Some(bytes) = t.inline.as_ref().into_option() {
        return Ok(bytes.len() as u64);
    }
    match strided(t, file_len)? {
        Some(s) => s
            .numel
            .checked_mul(s.elem)
            .ok_or_else(|| "its size overflows".into()),
        None => t
            .ranges
            .iter()
            .try_fold(0u64, |a, r| a.checked_add(r.len))
            .ok_or_else(|| "its size overflows".into()),
    }
}

/// Calls `each` with the tensor's bytes in row-major order, in chunks of at most [`CHUNK`]
/// bytes holding whole elements.
pub fn for_each_row_major_chunk(
    file: &InputFile,
    t: &TensorDescriptor,
    mut each: impl FnMut(&[u8]),
) -> io::Result<()> {
    // Bytes the reader decoded (varints): already in row-major order, and in chunks of whole
    // elements (CHUNK is a multiple of every element size).
    if let Some(bytes) = t.inline.as_ref().into_option() {
        for chunk in bytes.chunks(CHUNK) {
            each(chunk);
        }
        return Ok(());
    }
    match strided(t, file.len()).map_err(invalid)? {
        None => {
            for r in t.ranges.iter() {
                file.for_each_chunk(r.offset, r.len, &mut each)?;
            }
            Ok(())
        }
        Some(s) => gather(file, &s, each),
    }
}

/// Reads `len` bytes at `offset` of the span, from memory or from the file.
enum Span<'a> {
    Memory { start: u64, bytes: Vec<u8> },
    File(&'a InputFile),
}

impl Span<'_> {
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        match self {
            Span::Memory { start, bytes } => {
                let from = usize::try_from(offset - start).map_err(|e| invalid(e.to_string()))?;
                let src = bytes
                    .get(from..from + out.len())
                    .ok_or_else(|| invalid("gather read outside its span".into()))?;
                out.copy_from_slice(src);
                Ok(())
            }
            Span::File(f) => f.read_exact_at(offset, out),
        }
    }
}

/// Calls `each` with the elements of `s` in row-major order, in chunks of at most [`CHUNK`]
/// bytes holding whole elements.
pub fn gather(file: &InputFile, s: &Strided, mut each: impl FnMut(&[u8])) -> io::Result<()> {
    if s.numel == 0 {
        return Ok(());
    }
    let elem = s.elem as usize;
    let span_len: u64 = s
        .shape
        .iter()
        .zip(&s.strides)
        .map(|(&d, &st)| (d - 1) * st)
        .sum::<u64>()
        .saturating_add(1)
        * s.elem;
    let span = if span_len <= SPAN_IN_MEMORY {
        let mut bytes = vec![0u8; span_len as usize];
        file.read_exact_at(s.base, &mut bytes)?;
        Span::Memory {
            start: s.base,
            bytes,
        }
    } else {
        Span::File(file)
    };
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
    let flush_if_full = |buf: &mut Vec<u8>, each: &mut dyn FnMut(&[u8]), need: usize| {
        if buf.len() + need > CHUNK {
            each(buf);
            buf.clear();
        }
    };
    let dims = s.shape.len();
    if dims == 0 {
        let mut one = vec![0u8; elem];
        span.read(s.base, &mut one)?;
        each(&one);
        return Ok(());
    }
    let inner = s.shape[dims - 1];
    let inner_stride = s.strides[dims - 1];
    let mut index = vec![0u64; dims - 1];
    let mut element = vec![0u8; elem];
    loop {
        let row: u64 = index.iter().zip(&s.strides).map(|(&i, &st)| i * st).sum();
        let row_at = s.base + row * s.elem;
        if inner_stride == 1 {
            // A contiguous row: copied in pieces that fit the chunk.
            let mut left = inner * s.elem;
            let mut at = row_at;
            while left > 0 {
                flush_if_full(&mut buf, &mut each, elem);
                let room = ((CHUNK - buf.len()) / elem * elem) as u64;
                let n = left.min(room) as usize;
                let start = buf.len();
                buf.resize(start + n, 0);
                span.read(at, &mut buf[start..])?;
                at += n as u64;
                left -= n as u64;
            }
        } else {
            for j in 0..inner {
                flush_if_full(&mut buf, &mut each, elem);
                span.read(row_at + j * inner_stride * s.elem, &mut element)?;
                buf.extend_from_slice(&element);
            }
        }
        // Next row: the odometer over the outer dimensions.
        let mut d = dims - 1;
        loop {
            if d == 0 {
                if !buf.is_empty() {
                    each(&buf);
                }
                return Ok(());
            }
            d -= 1;
            index[d] += 1;
            if index[d] < s.shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// The second path: the sha256 of the gathered bytes, each element's place computed from its
/// flat row-major index by division (not by the odometer above), read with `read_at`.
/// Each element's bytes are reversed in `swap`-byte units first when `swap > 1` (a big-endian
/// input, hashed as the little-endian output holds it).
pub fn gathered_sha256_by_index(
    s: &Strided,
    swap: usize,
    read_at: impl Fn(u64, &mut [u8]) -> io::Result<()>,
) -> io::Result<String> {
    let mut h = Sha256::new();
    let elem = usize::try_from(s.elem).map_err(|e| invalid(e.to_string()))?;
    let mut element = vec![0u8; elem];
    // The layout may come from a derivation record rather than from `strided`: every step is
    // checked, so a layout that overflows is an error, never a wrapped offset.
    let overflow = || invalid("the layout's offsets overflow".into());
    for flat in 0..s.numel {
        let mut rest = flat;
        let mut offset = 0u64;
        for (&d, &st) in s.shape.iter().zip(&s.strides).rev() {
            // numel > 0, so no dimension is 0.
            offset = (rest % d)
                .checked_mul(st)
                .and_then(|o| offset.checked_add(o))
                .ok_or_else(overflow)?;
            rest /= d;
        }
        let at = offset
            .checked_mul(s.elem)
            .and_then(|o| s.base.checked_add(o))
            .ok_or_else(overflow)?;
        read_at(at, &mut element)?;
        if swap > 1 {
            for unit in element.chunks_exact_mut(swap) {
                unit.reverse();
            }
        }
        h.update(&element);
    }
    Ok(crate::base::digest::hex(&h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use socair_plugin_api::abi_stable::std_types::{ROption, RVec};
    use socair_plugin_api::{ByteOrder, ByteRange};

    fn descriptor(shape: &[u64], strides: &[u64], offset: u64, len: u64) -> TensorDescriptor {
        TensorDescriptor {
            name: "t".into(),
            dtype: "I16".into(),
            element_type: ROption::RSome("I16".into()),
            shape: RVec::from(shape.to_vec()),
            ranges: RVec::from(vec![ByteRange { offset, len }]),
            byte_order: ByteOrder::Little,
            origin: ROption::RNone,
            strides: ROption::RSome(RVec::from(strides.to_vec())),
            file: ROption::RNone,
            inline: ROption::RNone,
            outside_model: false,
        }
    }

    /// A file of 2-byte elements numbered 0, 1, 2, … after a 6-byte prefix.
    fn numbered(count: u16) -> (tempfile::TempDir, InputFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut bytes = vec![0xEEu8; 6];
        for i in 0..count {
            bytes.extend_from_slice(&i.to_le_bytes());
        }
        std::fs::write(&path, bytes).unwrap();
        let f = InputFile::open(&path).unwrap();
        (dir, f)
    }

    fn gathered(f: &InputFile, t: &TensorDescriptor) -> Vec<u16> {
        let mut out = Vec::new();
        for_each_row_major_chunk(f, t, |c| out.extend_from_slice(c)).unwrap();
        out.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }

    #[test]
    fn a_transpose_is_gathered_in_row_major_order() {
        // Storage 0..6 as a 2x3 row-major matrix; its transpose is 3x2 with strides (1, 3).
        let (_d, f) = numbered(6);
        let t = descriptor(&[3, 2], &[1, 3], 6, 12);
        assert_eq!(gathered(&f, &t), vec![0, 3, 1, 4, 2, 5]);
        let s = strided(&t, f.len()).unwrap().unwrap();
        let mut expected = Sha256::new();
        for v in [0u16, 3, 1, 4, 2, 5] {
            expected.update(v.to_le_bytes());
        }
        let second = gathered_sha256_by_index(&s, 1, |o, b| f.read_exact_at(o, b)).unwrap();
        assert_eq!(second, crate::base::digest::hex(&expected.finalize()));
    }

    #[test]
    fn a_permuted_4d_weight_matches_the_index_formula() {
        // HWIO (3, 3, 2, 4) storage viewed as OIHW: shape (4, 2, 3, 3), strides (1, 4, 24, 8).
        let (_d, f) = numbered(72);
        let t = descriptor(&[4, 2, 3, 3], &[1, 4, 24, 8], 6, 144);
        let got = gathered(&f, &t);
        let mut want = Vec::new();
        for o in 0..4u16 {
            for i in 0..2 {
                for h in 0..3 {
                    for w in 0..3 {
                        want.push(h * 24 + w * 8 + i * 4 + o);
                    }
                }
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn layouts_that_leave_their_range_are_refused() {
        let (_d, f) = numbered(6);
        let too_far = descriptor(&[3, 2], &[1, 4], 6, 12);
        assert!(strided(&too_far, f.len()).unwrap_err().contains("reaches"));
        let wrong_rank = descriptor(&[3, 2], &[1], 6, 12);
        assert!(strided(&wrong_rank, f.len())
            .unwrap_err()
            .contains("strides"));
        let past_file = descriptor(&[3, 2], &[1, 3], 6, 100);
        assert!(strided(&past_file, f.len())
            .unwrap_err()
            .contains("past the end"));
        let huge = descriptor(&[u64::MAX, 2], &[u64::MAX, 1], 6, 12);
        assert!(strided(&huge, f.len()).is_err());
        // A zero stride: 2^40 elements from one, refused before anything is read.
        let broadcast = descriptor(&[1 << 40], &[0], 6, 2);
        assert!(strided(&broadcast, f.len())
            .unwrap_err()
            .contains("repeats elements"));
    }

    #[test]
    fn an_empty_strided_tensor_has_no_bytes() {
        let (_d, f) = numbered(6);
        let t = descriptor(&[0, 2], &[1, 3], 6, 0);
        assert!(gathered(&f, &t).is_empty());
        assert_eq!(row_major_len(&t, f.len()).unwrap(), 0);
    }
}
