//! A stored chunk's filters undone, last first, as the HDF5 library's pipeline undoes them on
//! read (`H5Z_pipeline`, `H5Z.c`): deflate (`H5Zdeflate.c`, a zlib stream), shuffle
//! (`H5Zshuffle.c`), Fletcher-32 (`H5Zfletcher32.c`, `H5_checksum_fletcher32` in
//! `H5checksum.c`), scale-offset (`H5Zscaleoffset.c`), szip ([`crate::szip`]), n-bit
//! ([`crate::nbit`]), and h5py's LZF (`lzf/lzf_filter.c`, liblzf's `lzf_d.c`), which h5py
//! compiles in and registers on import. HDF5 1.14 and 2.0, h5py 3.16.
//!
//! Every output is bounded before it is written: a stream that would decode to more than the
//! caller's limit is refused, never decoded to its end.

use crate::messages::Filter;

/// h5py's LZF filter id (`H5PY_FILTER_LZF`, `lzf_filter.h`).
pub const H5PY_LZF: u16 = 32000;

pub use crate::model::Refusal;

/// Whether the HDF5 library (as h5py's wheels build it) or h5py itself registers filter `id`
/// (deflate, shuffle, Fletcher-32, szip, n-bit, scale-offset; LZF): any other id the library
/// looks for among plugin libraries when a chunk is read (`H5Z_pipeline` → `H5PL_load`), loading
/// and running the first that claims it, whatever the id.
pub fn registered(id: u16) -> bool {
    matches!(id, 1..=6 | H5PY_LZF)
}

/// Whether socair undoes filter `id`: every one the HDF5 library ships, and LZF.
pub fn decodes(id: u16) -> bool {
    registered(id)
}

/// `data` (a chunk as stored) with every filter of `pipeline` that `mask` does not skip undone,
/// last first; no step's output may pass `limit` bytes.
pub fn undo(
    pipeline: &[Filter],
    mask: u32,
    mut data: Vec<u8>,
    limit: u64,
) -> Result<Vec<u8>, Refusal> {
    for (i, f) in pipeline.iter().enumerate().rev() {
        if i < 32 && mask & (1 << i) != 0 {
            continue;
        }
        data = match f.id {
            1 => inflate(&data, limit)?,
            2 => unshuffle(&data, f.values.first().copied())?,
            3 => fletcher32_check(data)?,
            4 => crate::szip::undo(&data, &f.values, limit)?,
            5 => crate::nbit::undo(data, &f.values, limit)?,
            6 => scale_offset(&data, &f.values, limit)?,
            H5PY_LZF => lzf(&data, limit)?,
            _ => return Err(Refusal::Unsupported(f.describe())),
        };
    }
    Ok(data)
}

/// A zlib stream inflated (`H5Z__filter_deflate`: `inflateInit`, to `Z_STREAM_END`; bytes
/// after the stream's end are ignored).
fn inflate(data: &[u8], limit: u64) -> Result<Vec<u8>, Refusal> {
    use flate2::{Decompress, FlushDecompress, Status};
    let mut z = Decompress::new(true);
    let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(cap.min(data.len().saturating_mul(4)).min(1 << 20));
    loop {
        if out.len() == out.capacity() {
            if out.len() >= cap {
                return Err(Refusal::TooLarge(format!(
                    "its deflate stream decodes to more than {limit} bytes"
                )));
            }
            out.reserve((out.len().max(4096)).min(cap - out.len()));
        }
        let consumed = z.total_in() as usize;
        let before = out.len();
        let status = z
            .decompress_vec(
                data.get(consumed..).unwrap_or_default(),
                &mut out,
                FlushDecompress::None,
            )
            .map_err(|e| {
                Refusal::Corrupt(format!(
                    "its deflate stream is broken ({e}): the HDF5 library refuses to read it"
                ))
            })?;
        match status {
            Status::StreamEnd => break,
            _ if out.len() == before
                && z.total_in() as usize == consumed
                && out.len() < out.capacity() =>
            {
                return Err(Refusal::Corrupt(
                    "its deflate stream ends before its end: the HDF5 library refuses to read it"
                        .into(),
                ));
            }
            _ => {}
        }
    }
    if out.len() as u64 > limit {
        return Err(Refusal::TooLarge(format!(
            "its deflate stream decodes to more than {limit} bytes"
        )));
    }
    Ok(out)
}

/// The shuffle filter undone: byte `j` of element `i` comes from plane `j` (`H5Z__filter_shuffle`;
/// bytes past the last whole element are copied as they are).
fn unshuffle(data: &[u8], element: Option<u32>) -> Result<Vec<u8>, Refusal> {
    let Some(size) = element else {
        return Err(Refusal::Corrupt(
            "its shuffle filter has no element size: the HDF5 library refuses to read it".into(),
        ));
    };
    let size = size as usize;
    let n = data.len() / size.max(1);
    // One element or none: nothing to undo (`H5Z__filter_shuffle` acts on more than one).
    if size <= 1 || n <= 1 {
        return Ok(data.to_vec());
    }
    let mut out = vec![0u8; data.len()];
    for j in 0..size {
        let plane = &data[j * n..(j + 1) * n];
        for (i, &b) in plane.iter().enumerate() {
            out[i * size + j] = b;
        }
    }
    out[n * size..].copy_from_slice(&data[n * size..]);
    Ok(out)
}

/// Fletcher's checksum over 16-bit words, high byte first, as HDF5 computes it
/// (`H5_checksum_fletcher32`).
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let words = data.chunks_exact(2);
    let tail = words.remainder();
    // At most 360 words between reductions, so the sums never overflow.
    for (k, w) in words.enumerate() {
        sum1 += (u32::from(w[0]) << 8) | u32::from(w[1]);
        sum2 += sum1;
        if k % 360 == 359 {
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
    }
    if !(data.len() / 2).is_multiple_of(360) {
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if let [last] = tail {
        sum1 += u32::from(*last) << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    (sum2 << 16) | sum1
}

/// The Fletcher-32 filter undone: the last four bytes (little-endian) must be the checksum of
/// the rest, or that checksum with the bytes of each half swapped (what HDF5 before 1.6.3
/// wrote on little-endian machines, which `H5Z__filter_fletcher32` still accepts).
fn fletcher32_check(mut data: Vec<u8>) -> Result<Vec<u8>, Refusal> {
    let Some(split) = data.len().checked_sub(4) else {
        return Err(Refusal::Corrupt("a chunk of fewer than 4 bytes cannot hold its Fletcher-32 checksum: the HDF5 library refuses to read it".into()));
    };
    let stored = u32::from_le_bytes([
        data[split],
        data[split + 1],
        data[split + 2],
        data[split + 3],
    ]);
    let sum = fletcher32(&data[..split]);
    let reversed = ((sum & 0x00ff_00ff) << 8) | ((sum >> 8) & 0x00ff_00ff);
    if stored != sum && stored != reversed {
        return Err(Refusal::Corrupt(format!("its Fletcher-32 checksum is {stored:08x}, its bytes sum to {sum:08x}: the HDF5 library refuses to read it (data error detected by fletcher32 checksum)")));
    }
    data.truncate(split);
    Ok(data)
}

/// The scale-offset filter undone (`H5Z__filter_scaleoffset`, `H5Zscaleoffset.c`): a 21-byte
/// head (the bits kept per value, a little-endian `u32`; the minimum's size and the minimum),
/// then each value's low bits packed high bit first. An integer is the minimum plus its bits;
/// a float (decimal scaling by `D`) is its bits as an integer, divided by 10^D, plus the
/// minimum, in the float's own precision (`H5Z_scaleoffset_postdecompress_3`); either is the
/// fill value where the bits are all ones and a fill value is defined. 10^D is exact where it
/// is computed here (D from 0 to 10 for `float`, to 22 for `double`); any other D is not
/// decoded, since the C library's `pow` would round it.
fn scale_offset(data: &[u8], cd: &[u32], limit: u64) -> Result<Vec<u8>, Refusal> {
    let corrupt = |why: &str| {
        Refusal::Corrupt(format!(
            "its scale-offset data is unsound ({why}): the HDF5 library refuses to read it"
        ))
    };
    // `H5Z_SCALEOFFSET_TOTAL_NPARMS`, and the parameters `H5Z__set_local_scaleoffset` stores.
    let [scale_type, scale_factor, nelmts, class, size, sign, order, filavail, fill @ ..] = cd
    else {
        return Err(corrupt("not the 20 parameters the filter stores"));
    };
    if cd.len() != 20 {
        return Err(corrupt("not the 20 parameters the filter stores"));
    }
    let size = *size as usize;
    let float = match (*class, *scale_type) {
        (0, 2) if matches!(size, 1 | 2 | 4 | 8) && *sign <= 1 => None,
        // Decimal scaling (`H5Z_SO_FLOAT_DSCALE`): `D` is the scale factor.
        (1, 0) if matches!(size, 4 | 8) => Some(*scale_factor as i32),
        (1, 1) => return Err(corrupt("E-scaling, which the library does not implement")),
        _ => return Err(corrupt("parameters of no type the filter reads")),
    };
    if *order > 1 {
        return Err(corrupt("a byte order of neither kind"));
    }
    let bits = size as u32 * 8;
    if float.is_none() {
        let factor = (*scale_factor as i32).max(0) as u32;
        if factor > bits {
            return Err(corrupt("more bits than the type holds"));
        }
        if factor == bits {
            return Ok(data.to_vec()); // stored as it is
        }
    }
    let exact = match float {
        Some(d) if (0..=10).contains(&d) && size == 4 => Some(10f64.powi(d)),
        Some(d) if (0..=22).contains(&d) && size == 8 => Some(10f64.powi(d)),
        Some(d) => {
            return Err(Refusal::Unsupported(format!(
                "scale-offset of floating-point values scaled by 10^{d}, which the C library's pow rounds"
            )))
        }
        None => None,
    };
    let out_len = (*nelmts as u64).saturating_mul(size as u64);
    if out_len > limit {
        return Err(Refusal::TooLarge(format!(
            "its scale-offset data decodes to more than {limit} bytes"
        )));
    }
    let head = data
        .get(..21)
        .ok_or_else(|| corrupt("shorter than its head"))?;
    let minbits = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let minval_len = usize::from(head[4]).min(8);
    let minval = head[5..5 + minval_len]
        .iter()
        .rev()
        .fold(0u64, |v, &b| (v << 8) | u64::from(b));
    if minbits > bits {
        return Err(corrupt("more bits per value than the type holds"));
    }
    let n = *nelmts as usize;
    let big = *order == 1;
    let packed = &data[21..];
    if minbits == bits {
        // Full precision: the values as stored, in the writer's memory order (little-endian),
        // turned to the dataset's.
        let mut out = packed
            .get(..n * size)
            .ok_or_else(|| corrupt("shorter than its values"))?
            .to_vec();
        if big {
            out.chunks_exact_mut(size).for_each(<[u8]>::reverse);
        }
        return Ok(out);
    }
    let needed = (n as u64 * u64::from(minbits)).div_ceil(8);
    if (packed.len() as u64) < needed {
        return Err(corrupt("shorter than its values"));
    }
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let all_ones = if minbits == 64 {
        u64::MAX
    } else {
        (1u64 << minbits) - 1
    };
    let fill_value = (*filavail == 1).then(|| {
        // The fill value in memory order, four bytes to a parameter (`H5Z_scaleoffset_get_filval_1`).
        let bytes: Vec<u8> = fill
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .take(size)
            .collect();
        bytes
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b))
    });
    let mut out = Vec::with_capacity(n * size);
    let mut bit = 0u64;
    for _ in 0..n {
        // `minbits` bits, high bit first, as `H5Z__scaleoffset_decompress_one_atomic` reads them.
        let mut v = 0u64;
        for _ in 0..minbits {
            let byte = packed[(bit / 8) as usize];
            v = (v << 1) | u64::from((byte >> (7 - bit % 8)) & 1);
            bit += 1;
        }
        let value = match (fill_value, exact) {
            (Some(f), _) if v == all_ones => f,
            (_, None) => v.wrapping_add(minval),
            // `(type)(int) / pow(10, D) + min` in the float's precision, the integer the bits
            // of an `int` or `long` of the float's size (fewer than its bits: positive).
            (_, Some(ten)) if size == 4 => {
                let min = f32::from_bits(minval as u32);
                u64::from(((v as i32 as f32) / (ten as f32) + min).to_bits())
            }
            (_, Some(ten)) => {
                let min = f64::from_bits(minval);
                ((v as i64 as f64) / ten + min).to_bits()
            }
        } & mask;
        let le = value.to_le_bytes();
        if big {
            out.extend(le[..size].iter().rev());
        } else {
            out.extend_from_slice(&le[..size]);
        }
    }
    Ok(out)
}

/// An LZF stream decoded (`lzf_decompress`): literal runs and back references, every one
/// checked to stay inside the input and the output.
fn lzf(data: &[u8], limit: u64) -> Result<Vec<u8>, Refusal> {
    let broken = || {
        Refusal::Corrupt("its LZF stream is broken: h5py's filter refuses to read it (Invalid data for LZF decompression)".into())
    };
    let cap = usize::try_from(limit).unwrap_or(usize::MAX);
    let too_large =
        || Refusal::TooLarge(format!("its LZF stream decodes to more than {limit} bytes"));
    let mut out: Vec<u8> = Vec::with_capacity(data.len().saturating_mul(2).min(cap));
    let mut i = 0;
    while i < data.len() {
        let ctrl = usize::from(data[i]);
        i += 1;
        if ctrl < 32 {
            let run = data.get(i..i + ctrl + 1).ok_or_else(broken)?;
            if out.len() + run.len() > cap {
                return Err(too_large());
            }
            out.extend_from_slice(run);
            i += ctrl + 1;
            continue;
        }
        let mut len = ctrl >> 5;
        if len == 7 {
            len += usize::from(*data.get(i).ok_or_else(broken)?);
            i += 1;
        }
        let low = usize::from(*data.get(i).ok_or_else(broken)?);
        i += 1;
        let back = ((ctrl & 0x1f) << 8) + low + 1;
        let from = out.len().checked_sub(back).ok_or_else(broken)?;
        len += 2;
        if out.len() + len > cap {
            return Err(too_large());
        }
        for k in 0..len {
            let b = out[from + k];
            out.push(b);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(id: u16, values: &[u32]) -> Filter {
        Filter {
            id,
            name: String::new(),
            optional: false,
            values: values.to_vec(),
        }
    }

    #[test]
    fn fletcher32_is_hdf5s() {
        // Words high byte first: one word 0x0102 makes both sums 0x0102. (The sums over
        // real chunks are checked against h5py's files in tests/hostile.rs.)
        assert_eq!(fletcher32(b""), 0);
        assert_eq!(fletcher32(&[0x01, 0x02]), (0x0102 << 16) | 0x0102);
        let mut chunk = b"weights".to_vec();
        chunk.extend_from_slice(&fletcher32(b"weights").to_le_bytes());
        assert_eq!(
            undo(&[filter(3, &[])], 0, chunk.clone(), 64).unwrap(),
            b"weights"
        );
        chunk[0] ^= 1;
        assert!(matches!(
            undo(&[filter(3, &[])], 0, chunk.clone(), 64),
            Err(Refusal::Corrupt(_))
        ));
        // Masked: the filter was skipped when the chunk was written.
        assert_eq!(
            undo(&[filter(3, &[])], 1, chunk.clone(), 64).unwrap(),
            chunk
        );
    }

    #[test]
    fn shuffle_is_undone_with_the_tail_kept() {
        // Three 2-byte elements and one byte more: planes [a0 b0 c0][a1 b1 c1] then the tail.
        let shuffled = [1, 3, 5, 2, 4, 6, 9];
        assert_eq!(
            unshuffle(&shuffled, Some(2)).unwrap(),
            vec![1, 2, 3, 4, 5, 6, 9]
        );
        assert_eq!(unshuffle(&shuffled, Some(1)).unwrap(), shuffled.to_vec());
    }

    #[test]
    fn lzf_runs_and_back_references_within_bounds() {
        // A literal run of 3 ("abc"), then a back reference of length 2 + 2 = 4, distance 3.
        let stream = [2, b'a', b'b', b'c', (2 << 5), 2];
        assert_eq!(lzf(&stream, 100).unwrap(), b"abcabca");
        assert!(matches!(lzf(&stream, 5), Err(Refusal::TooLarge(_))));
        assert!(matches!(lzf(&[0x20, 9], 100), Err(Refusal::Corrupt(_))));
        assert!(matches!(lzf(&[5, 1], 100), Err(Refusal::Corrupt(_))));
    }

    #[test]
    fn inflate_is_bounded() {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&[7u8; 10_000]).unwrap();
        let stream = z.finish().unwrap();
        assert_eq!(inflate(&stream, 10_000).unwrap(), vec![7u8; 10_000]);
        assert!(matches!(inflate(&stream, 9_999), Err(Refusal::TooLarge(_))));
        assert!(matches!(
            inflate(&stream[..stream.len() / 2], 10_000),
            Err(Refusal::Corrupt(_))
        ));
        assert!(matches!(
            inflate(b"not zlib", 100),
            Err(Refusal::Corrupt(_))
        ));
        assert!(
            matches!(undo(&[filter(32001, &[])], 0, stream, 10), Err(Refusal::Unsupported(n)) if n.contains("32001"))
        );
    }
}
