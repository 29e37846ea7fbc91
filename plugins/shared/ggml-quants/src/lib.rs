//! Dequantization of every GGUF tensor type llama.cpp writes, to `f32`, bit for bit as ggml
//! computes it: the `dequantize_row_*` functions of `ggml/src/ggml-quants.c` (and the half,
//! bfloat16, E8M0 and UE4M3 conversions of `ggml/src/ggml-impl.h`) at llama.cpp commit
//! d3cf1f14a2e16fbd7ebad34b12cb71b8af345c43 (the copy ggml vendors at its commit 8599e0ea).
//! It exists so a quantized tensor can be compared with its float original: `dequantize` gives
//! the values llama.cpp computes with, `block_bound` what error each block's format implies.
//!
//! Pure functions over byte slices: no I/O, no unsafe, no panics on any input. Types are named
//! by their GGUF type id (`socair_gguf::types::TYPES`, which the tests hold this table to).
//!
//! - `dequantize(type_id, bytes, n_elements)`: the whole tensor as a `Vec<f32>`;
//! - `dequantize_into(type_id, bytes, out)`: whole blocks into the caller's buffer, the piece
//!   to run on chunks (`bytes.par_chunks(k * type_size)` with rayon: the functions are pure);
//! - `dequantize_chunked(...)`: the whole tensor through one bounded buffer, chunk by chunk;
//! - `block_bound` / `block_bounds`: per block, the largest error the format implies (the
//!   derivation per type is in `bound.rs`).
//!
//! Where ggml has no `to_float` (Q8_1, Q8_K, and the integer and F64 types) the decoding is
//! documented at its function. Products and sums are rounded one at a time as written in C
//! (x86-64 builds of ggml-base do not fuse them; a build that contracts `a*b + c` into a fused
//! multiply-add, as some ARM builds may, can differ in the last bit of Q4_1, Q5_1 and the
//! k-quants with minimums). NaN results that come from an operation on non-NaN operands
//! (infinity times zero, infinity minus infinity, possible only with an infinite half scale)
//! are the machine's default NaN, as in ggml.

mod bound;
pub mod fuzzing;
mod grid_iq1s;
mod grid_iq2s;
mod grid_small;
pub mod half;
mod iquants;
mod kquants;
mod legacy;

pub use bound::{BlockBound, BoundKind};
use std::ops::ControlFlow;

/// One tensor type: GGUF id, ggml's name, elements per block and bytes per block
/// (`type_traits` in `ggml/src/ggml.c`, `block_*` in `ggml/src/ggml-common.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// The type id stored in GGUF tensor infos.
    pub id: u32,
    /// ggml's name.
    pub name: &'static str,
    /// Elements per block.
    pub block_size: usize,
    /// Bytes per block.
    pub type_size: usize,
}

const fn f(id: u32, name: &'static str, block_size: usize, type_size: usize) -> Format {
    Format {
        id,
        name,
        block_size,
        type_size,
    }
}

/// Every type this crate decodes.
pub const FORMATS: &[Format] = &[
    f(0, "F32", 1, 4),
    f(1, "F16", 1, 2),
    f(2, "Q4_0", 32, 18),
    f(3, "Q4_1", 32, 20),
    f(6, "Q5_0", 32, 22),
    f(7, "Q5_1", 32, 24),
    f(8, "Q8_0", 32, 34),
    f(9, "Q8_1", 32, 36),
    f(10, "Q2_K", 256, 84),
    f(11, "Q3_K", 256, 110),
    f(12, "Q4_K", 256, 144),
    f(13, "Q5_K", 256, 176),
    f(14, "Q6_K", 256, 210),
    f(15, "Q8_K", 256, 292),
    f(16, "IQ2_XXS", 256, 66),
    f(17, "IQ2_XS", 256, 74),
    f(18, "IQ3_XXS", 256, 98),
    f(19, "IQ1_S", 256, 50),
    f(20, "IQ4_NL", 32, 18),
    f(21, "IQ3_S", 256, 110),
    f(22, "IQ2_S", 256, 82),
    f(23, "IQ4_XS", 256, 136),
    f(24, "I8", 1, 1),
    f(25, "I16", 1, 2),
    f(26, "I32", 1, 4),
    f(27, "I64", 1, 8),
    f(28, "F64", 1, 8),
    f(29, "IQ1_M", 256, 56),
    f(30, "BF16", 1, 2),
    f(34, "TQ1_0", 256, 54),
    f(35, "TQ2_0", 256, 66),
    f(39, "MXFP4", 32, 17),
    f(40, "NVFP4", 64, 36),
    f(41, "Q1_0", 128, 18),
    f(42, "Q2_0", 64, 18),
];

/// The format of GGUF type id `type_id`, if this crate decodes it.
pub fn format(type_id: u32) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.id == type_id)
}

/// Why a tensor could not be dequantized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DequantError {
    /// The id names no type this crate decodes (unknown, or removed from ggml).
    #[error("ggml type id {0} is not a type socair can dequantize (unknown or removed from ggml)")]
    UnknownType(u32),
    /// The element count is not a whole number of blocks.
    #[error("{n_elements} elements is not a whole number of {name} blocks of {block_size}")]
    PartialBlock {
        name: &'static str,
        n_elements: u64,
        block_size: usize,
    },
    /// The bytes are not exactly the blocks the element count needs.
    #[error("{name}: {n_elements} elements take {expected} bytes, the data has {actual}")]
    WrongLength {
        name: &'static str,
        n_elements: u64,
        expected: u64,
        actual: usize,
    },
    /// The output buffer does not hold exactly the elements of the blocks given.
    #[error("{name}: {blocks} blocks give {expected} elements, the output holds {actual}")]
    WrongOutputLength {
        name: &'static str,
        blocks: usize,
        expected: u64,
        actual: usize,
    },
    /// The element count does not fit in this machine's address space.
    #[error("{0} elements do not fit in memory on this machine")]
    TooLarge(u64),
}

/// Decodes whole blocks: `bytes.len() == blocks * type_size`, `out.len() == blocks * block_size`
/// (checked by the callers).
fn decode_blocks(id: u32, bytes: &[u8], out: &mut [f32]) {
    match id {
        0 => run::<4, 1>(bytes, out, |b, y| y[0] = f32::from_le_bytes(*b)),
        1 => run::<2, 1>(bytes, out, |b, y| {
            y[0] = half::f16_to_f32(u16::from_le_bytes(*b))
        }),
        30 => run::<2, 1>(bytes, out, |b, y| {
            y[0] = half::bf16_to_f32(u16::from_le_bytes(*b))
        }),
        // No ggml `to_float`: the value, rounded to nearest f32 (integers up to 2^24 exactly).
        28 => run::<8, 1>(bytes, out, |b, y| y[0] = f64::from_le_bytes(*b) as f32),
        24 => run::<1, 1>(bytes, out, |b, y| y[0] = f32::from(b[0] as i8)),
        25 => run::<2, 1>(bytes, out, |b, y| y[0] = f32::from(i16::from_le_bytes(*b))),
        26 => run::<4, 1>(bytes, out, |b, y| y[0] = i32::from_le_bytes(*b) as f32),
        27 => run::<8, 1>(bytes, out, |b, y| y[0] = i64::from_le_bytes(*b) as f32),
        2 => run(bytes, out, legacy::q4_0),
        3 => run(bytes, out, legacy::q4_1),
        6 => run(bytes, out, legacy::q5_0),
        7 => run(bytes, out, legacy::q5_1),
        8 => run(bytes, out, legacy::q8_0),
        9 => run(bytes, out, legacy::q8_1),
        20 => run(bytes, out, legacy::iq4_nl),
        39 => run(bytes, out, legacy::mxfp4),
        40 => run(bytes, out, legacy::nvfp4),
        41 => run(bytes, out, legacy::q1_0),
        42 => run(bytes, out, legacy::q2_0),
        10 => run(bytes, out, kquants::q2_k),
        11 => run(bytes, out, kquants::q3_k),
        12 => run(bytes, out, kquants::q4_k),
        13 => run(bytes, out, kquants::q5_k),
        14 => run(bytes, out, kquants::q6_k),
        15 => run(bytes, out, kquants::q8_k),
        34 => run(bytes, out, kquants::tq1_0),
        35 => run(bytes, out, kquants::tq2_0),
        16 => run(bytes, out, iquants::iq2_xxs),
        17 => run(bytes, out, iquants::iq2_xs),
        22 => run(bytes, out, iquants::iq2_s),
        18 => run(bytes, out, iquants::iq3_xxs),
        21 => run(bytes, out, iquants::iq3_s),
        19 => run(bytes, out, iquants::iq1_s),
        29 => run(bytes, out, iquants::iq1_m),
        23 => run(bytes, out, iquants::iq4_xs),
        _ => {}
    }
}

/// Runs a one-block decoder over every block: `N` bytes in, `M` values out.
#[inline]
fn run<const N: usize, const M: usize>(
    bytes: &[u8],
    out: &mut [f32],
    decode: fn(&[u8; N], &mut [f32; M]),
) {
    for (block, values) in bytes.chunks_exact(N).zip(out.chunks_exact_mut(M)) {
        if let (Ok(block), Ok(values)) = (
            <&[u8; N]>::try_from(block),
            <&mut [f32; M]>::try_from(values),
        ) {
            decode(block, values);
        }
    }
}

/// The format and block count of `n_elements` elements of `type_id` held in `bytes`.
fn checked(type_id: u32, bytes: &[u8], n_elements: u64) -> Result<&'static Format, DequantError> {
    let format = format(type_id).ok_or(DequantError::UnknownType(type_id))?;
    let block_size = format.block_size as u64;
    if !n_elements.is_multiple_of(block_size) {
        return Err(DequantError::PartialBlock {
            name: format.name,
            n_elements,
            block_size: format.block_size,
        });
    }
    let expected = (n_elements / block_size).checked_mul(format.type_size as u64);
    if expected != Some(bytes.len() as u64) {
        return Err(DequantError::WrongLength {
            name: format.name,
            n_elements,
            expected: expected.unwrap_or(u64::MAX),
            actual: bytes.len(),
        });
    }
    Ok(format)
}

/// Dequantizes `n_elements` elements of GGUF type `type_id` from exactly the bytes they take.
/// The result holds `n_elements` values: up to 20.5 times the input's size in bytes (IQ1_S, the
/// densest type); `dequantize_chunked` bounds the memory instead.
pub fn dequantize(type_id: u32, bytes: &[u8], n_elements: u64) -> Result<Vec<f32>, DequantError> {
    checked(type_id, bytes, n_elements)?;
    let n = usize::try_from(n_elements).map_err(|_| DequantError::TooLarge(n_elements))?;
    let mut out = vec![0f32; n];
    decode_blocks(type_id, bytes, &mut out);
    Ok(out)
}

/// Dequantizes whole blocks of `type_id` into `out`, which must hold exactly their elements.
/// Chunks of a tensor cut at block boundaries (`k * type_size` bytes) can be decoded apart, in
/// any order or in parallel, into the matching `k * block_size` slice of the output.
pub fn dequantize_into(type_id: u32, bytes: &[u8], out: &mut [f32]) -> Result<(), DequantError> {
    let format = format(type_id).ok_or(DequantError::UnknownType(type_id))?;
    let blocks = bytes.len() / format.type_size;
    if !bytes.len().is_multiple_of(format.type_size) {
        return Err(DequantError::WrongLength {
            name: format.name,
            n_elements: (blocks * format.block_size) as u64,
            expected: (blocks * format.type_size) as u64,
            actual: bytes.len(),
        });
    }
    let expected = blocks as u64 * format.block_size as u64;
    if out.len() as u64 != expected {
        return Err(DequantError::WrongOutputLength {
            name: format.name,
            blocks,
            expected,
            actual: out.len(),
        });
    }
    decode_blocks(type_id, bytes, out);
    Ok(())
}

/// Dequantizes `n_elements` elements of `type_id` chunk by chunk through one buffer of at most
/// `max_chunk_elements` values (rounded down to whole blocks, at least one block), calling
/// `each(first_element_index, values)` in order until it breaks. Memory: the one buffer.
pub fn dequantize_chunked<B>(
    type_id: u32,
    bytes: &[u8],
    n_elements: u64,
    max_chunk_elements: usize,
    mut each: impl FnMut(u64, &[f32]) -> ControlFlow<B>,
) -> Result<ControlFlow<B>, DequantError> {
    let format = checked(type_id, bytes, n_elements)?;
    let blocks_per_chunk = (max_chunk_elements / format.block_size).max(1);
    let mut buffer = vec![0f32; blocks_per_chunk * format.block_size];
    let mut first = 0u64;
    for chunk in bytes.chunks(blocks_per_chunk * format.type_size) {
        let values = chunk.len() / format.type_size * format.block_size;
        let out = buffer.get_mut(..values).unwrap_or_default();
        decode_blocks(type_id, chunk, out);
        if let ControlFlow::Break(b) = each(first, out) {
            return Ok(ControlFlow::Break(b));
        }
        first += values as u64;
    }
    Ok(ControlFlow::Continue(()))
}

/// The error bound of one block of `type_id` (`block` exactly `type_size` bytes).
pub fn block_bound(type_id: u32, block: &[u8]) -> Result<BlockBound, DequantError> {
    let format = format(type_id).ok_or(DequantError::UnknownType(type_id))?;
    if block.len() != format.type_size {
        return Err(DequantError::WrongLength {
            name: format.name,
            n_elements: format.block_size as u64,
            expected: format.type_size as u64,
            actual: block.len(),
        });
    }
    bound::of_block(type_id, block).ok_or(DequantError::UnknownType(type_id))
}

/// The error bound of every block of `bytes` (whole blocks of `type_id`), in order.
pub fn block_bounds(type_id: u32, bytes: &[u8]) -> Result<Vec<BlockBound>, DequantError> {
    let format = format(type_id).ok_or(DequantError::UnknownType(type_id))?;
    if !bytes.len().is_multiple_of(format.type_size) {
        let blocks = bytes.len() / format.type_size;
        return Err(DequantError::WrongLength {
            name: format.name,
            n_elements: (blocks * format.block_size) as u64,
            expected: (blocks * format.type_size) as u64,
            actual: bytes.len(),
        });
    }
    bytes
        .chunks_exact(format.type_size)
        .map(|block| block_bound(type_id, block))
        .collect()
}
