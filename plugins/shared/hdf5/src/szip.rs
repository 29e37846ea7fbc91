//! The szip filter undone, as HDF5 2.0 reads it through libaec (the library h5py's wheels
//! link for szip): `H5Z__filter_szip` (`H5Zszip.c`) takes the decoded size from the chunk's
//! first four bytes (little-endian) and hands the rest to libaec's szip interface,
//! `SZ_BufftoBuffDecompress` (`sz_compat.c`, libaec 1.1), which decodes a CCSDS 121.0 stream
//! (adaptive Rice coding, with the unit-delay predictor when the `NN` option is set). 32- and
//! 64-bit pixels are coded as byte planes (8-bit samples, deinterleaved after), and a scanline
//! whose pixels are not a whole number of blocks is coded padded to whole blocks (the padding
//! dropped after).
//!
//! The CCSDS decoder itself is `tensogram-szip` (ECMWF's pure-Rust libaec, crosschecked against
//! it by its authors); what HDF5 and `sz_compat.c` add around it is mirrored here. Where that
//! crate widens samples differently from libaec (17 to 24 bits: three bytes where libaec keeps
//! four without `AEC_DATA_3BYTE`, which the szip interface never sets) the chunk is not decoded.

use crate::model::Refusal;

/// `SZ_MSB_OPTION_MASK` and `SZ_NN_OPTION_MASK` (`szlib.h`): the only options the szip
/// interface turns into libaec flags (`convert_options`).
const SZ_MSB: u32 = 16;
const SZ_NN: u32 = 32;

/// `data` (an szip-filtered chunk) decoded; `cd` are the filter's four stored values: options
/// mask, pixels per block, bits per pixel, pixels per scanline (`H5Z_SZIP_PARM_*`).
pub fn undo(data: &[u8], cd: &[u32], limit: u64) -> Result<Vec<u8>, Refusal> {
    let corrupt = |why: String| {
        Refusal::Corrupt(format!(
            "its szip data is unsound ({why}): the HDF5 library refuses to read it"
        ))
    };
    let &[mask, ppb, bpp, pps] = cd else {
        return Err(corrupt(format!(
            "{} filter parameters where szip takes 4",
            cd.len()
        )));
    };
    let (head, stream) = data
        .split_first_chunk::<4>()
        .ok_or_else(|| corrupt("shorter than its 4-byte size".into()))?;
    let size = u32::from_le_bytes(*head);
    if u64::from(size) > limit {
        return Err(Refusal::TooLarge(format!(
            "its szip data decodes to {size} bytes, more than {limit}"
        )));
    }
    let size = size as usize;
    let deinterleave = bpp == 32 || bpp == 64;
    let bits = if deinterleave { 8 } else { bpp };
    if (17..=24).contains(&bits) {
        return Err(Refusal::Unsupported(format!(
            "szip of {bits}-bit pixels (socair's szip decoder widens them differently from libaec)"
        )));
    }
    if bits == 0 || bits > 32 || ppb == 0 || pps == 0 {
        return Err(corrupt(format!(
            "{bpp} bits per pixel, {ppb} pixels per block, {pps} per scanline"
        )));
    }
    let pixel = match bits {
        17.. => 4usize,
        9.. => 2,
        _ => 1,
    };
    let rsi = pps.div_ceil(ppb);
    let mut flags = 0;
    if mask & SZ_MSB != 0 {
        flags |= tensogram_szip::AEC_DATA_MSB;
    }
    if mask & SZ_NN != 0 {
        flags |= tensogram_szip::AEC_DATA_PREPROCESS;
    }
    let params = tensogram_szip::AecParams {
        bits_per_sample: bits,
        block_size: ppb,
        rsi,
        flags,
    };
    let (pps, line_padded) = (pps as usize, (rsi as usize) * (ppb as usize) * pixel);
    let padded = !pps.is_multiple_of(ppb as usize);
    let scanlines = (size / pixel).div_ceil(pps);
    let coded = if padded {
        scanlines
            .checked_mul(line_padded)
            .filter(|&n| n as u64 <= limit.saturating_mul(2))
            .ok_or_else(|| {
                Refusal::TooLarge(format!("its padded szip scanlines pass {limit} bytes"))
            })?
    } else {
        size
    };
    let decoded = tensogram_szip::aec_decompress(stream, coded, &params)
        .map_err(|e| corrupt(format!("libaec: {e}")))?;
    let mut out = if padded {
        let line = pps * pixel;
        let mut out = Vec::with_capacity(size);
        for padded_line in decoded.chunks(line_padded) {
            out.extend_from_slice(&padded_line[..line.min(padded_line.len())]);
        }
        out.truncate(size);
        out
    } else {
        decoded
    };
    if out.len() != size {
        return Err(corrupt(format!(
            "it decodes to {} bytes, not the {size} its head says",
            out.len()
        )));
    }
    if deinterleave {
        let word = (bpp / 8) as usize;
        let n = size / word;
        let planes = out;
        out = vec![0u8; size];
        for i in 0..n {
            for j in 0..word {
                out[i * word + j] = planes[j * n + i];
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensogram_szip::{aec_compress_no_offsets, AecParams, AEC_DATA_PREPROCESS};

    /// A chunk as `H5Z__filter_szip` stores one: the size, then the stream.
    fn stored(decoded_len: usize, stream: &[u8]) -> Vec<u8> {
        let mut chunk = (decoded_len as u32).to_le_bytes().to_vec();
        chunk.extend_from_slice(stream);
        chunk
    }

    #[test]
    fn sixteen_bit_pixels_in_whole_blocks() {
        let values: Vec<u8> = (0..256u16).flat_map(|v| (v * 3).to_le_bytes()).collect();
        let params = AecParams {
            bits_per_sample: 16,
            block_size: 8,
            rsi: 4,
            flags: AEC_DATA_PREPROCESS,
        };
        let stream = aec_compress_no_offsets(&values, &params).unwrap();
        let chunk = stored(values.len(), &stream);
        let cd = [SZ_NN | 8 | 128, 8, 16, 32];
        assert_eq!(undo(&chunk, &cd, 1 << 20).unwrap(), values);
        assert!(matches!(undo(&chunk, &cd, 100), Err(Refusal::TooLarge(_))));
        assert!(matches!(
            undo(&chunk[..chunk.len() / 2], &cd, 1 << 20),
            Err(Refusal::Corrupt(_))
        ));
        assert!(matches!(
            undo(&chunk, &[SZ_NN, 8, 16], 1 << 20),
            Err(Refusal::Corrupt(_))
        ));
        // libaec refuses a block of 6 pixels without AEC_NOT_ENFORCE, which the szip
        // interface does not set when decoding.
        assert!(matches!(
            undo(&chunk, &[SZ_NN, 6, 16, 36], 1 << 20),
            Err(Refusal::Corrupt(_))
        ));
    }

    #[test]
    fn thirty_two_bit_pixels_are_byte_planes() {
        let values: Vec<u8> = (0..64u32)
            .flat_map(|v| (v as f32 * 0.5).to_le_bytes())
            .collect();
        let n = values.len() / 4;
        let mut planes = vec![0u8; values.len()];
        for i in 0..n {
            for j in 0..4 {
                planes[j * n + i] = values[i * 4 + j];
            }
        }
        let params = AecParams {
            bits_per_sample: 8,
            block_size: 8,
            rsi: 2,
            flags: AEC_DATA_PREPROCESS,
        };
        let stream = aec_compress_no_offsets(&planes, &params).unwrap();
        let cd = [SZ_NN | 8, 8, 32, 16];
        assert_eq!(
            undo(&stored(values.len(), &stream), &cd, 1 << 20).unwrap(),
            values
        );
    }
}
