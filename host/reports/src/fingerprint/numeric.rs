//! Numbers for two tensors that hold comparable values: how many elements changed, the
//! largest absolute change, the relative L2 change and the cosine, and whether one side is
//! exactly the other rounded to its narrower dtype. Computed streaming, in one pass over both
//! tensors' bytes, in pieces of at most [`CHUNK`] bytes: a tensor is never held whole.
//!
//! The rules (`docs/diff.md` states them for users):
//!
//! * Values are compared as IEEE 754 binary32, each element widened exactly
//!   (`float32-le-bits/v1`). Two elements are *unchanged* when they are equal as numbers
//!   (`+0 == -0`), or both NaN (whatever their sign, payload or quiet bit: converters do not
//!   agree on NaN bits, see [`round_f32_to_f16`]), or the same infinity.
//! * `max_abs_delta`, `relative_l2` and `cosine` are accumulated in f64 over the elements that
//!   are finite on both sides; an element that is NaN or infinite on one side and not equal
//!   on the other is counted in `nonfinite_changed` and kept out of the sums.
//!   `relative_l2 = ‖a − r‖₂ / ‖r‖₂` (the reference's norm; `0` when both norms are zero,
//!   none when only the reference's is), `cosine = a·r / (‖a‖₂ ‖r‖₂)` (none when a norm is 0).
//! * *Lower precision*: one side is F32 and the other F16 or BF16, and every element of the
//!   narrower side is the wider element rounded to nearest, ties to even (IEEE 754's default,
//!   what numpy's `astype(float16)`, torch's `.to(float16/bfloat16)` and gguf-py's BF16 writer
//!   do), overflow to infinity, NaN to any NaN. F16 against BF16 is neither narrower.

use crate::read::source::{InputFile, CHUNK};
use socair_plugin_api::{ByteOrder, TensorDescriptor};
use std::io;

/// The float element types numbers are computed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Float {
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16, the upper half of a binary32.
    Bf16,
}

impl Float {
    /// The float type of an element type name, if it is one.
    pub fn of(element_type: &str) -> Option<Float> {
        match element_type {
            "F32" => Some(Float::F32),
            "F16" => Some(Float::F16),
            "BF16" => Some(Float::Bf16),
            _ => None,
        }
    }

    /// Bytes per element.
    pub fn width(self) -> usize {
        match self {
            Float::F32 => 4,
            Float::F16 | Float::Bf16 => 2,
        }
    }

    /// The binary32 bits of one element (exact).
    fn widen(self, bytes: &[u8], big: bool) -> u32 {
        match self {
            Float::F32 => {
                let b = [bytes[0], bytes[1], bytes[2], bytes[3]];
                if big {
                    u32::from_be_bytes(b)
                } else {
                    u32::from_le_bytes(b)
                }
            }
            Float::F16 | Float::Bf16 => {
                let b = [bytes[0], bytes[1]];
                let h = if big {
                    u16::from_be_bytes(b)
                } else {
                    u16::from_le_bytes(b)
                };
                if self == Float::F16 {
                    crate::fingerprint::hashing::f16_to_f32_bits(h)
                } else {
                    crate::fingerprint::hashing::bf16_to_f32_bits(h)
                }
            }
        }
    }

    /// Rounds binary32 bits to this type and widens them back: the value a converter writing
    /// this type keeps of `bits`.
    fn round_trip(self, bits: u32) -> u32 {
        match self {
            Float::F32 => bits,
            Float::F16 => crate::fingerprint::hashing::f16_to_f32_bits(round_f32_to_f16(bits)),
            Float::Bf16 => crate::fingerprint::hashing::bf16_to_f32_bits(round_f32_to_bf16(bits)),
        }
    }
}

/// Rounds binary32 bits to binary16 bits: to nearest, ties to even, overflow to infinity,
/// subnormals rounded the same way (as numpy's `npy_floatbits_to_halfbits` and the F16C
/// instruction `vcvtps2ph` with rounding mode 0 do). A NaN stays a NaN with the top of its
/// payload and the quiet bit set (numpy keeps a signalling NaN signalling, F16C quiets it:
/// NaNs compare equal whatever their bits, so either is accepted).
pub const fn round_f32_to_f16(x: u32) -> u16 {
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32;
    let man = x & 0x007f_ffff;
    if exp == 0xff {
        if man == 0 {
            return sign | 0x7c00;
        }
        return sign | 0x7e00 | (man >> 13) as u16;
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // A binary16 subnormal (or zero): the value in units of 2^-24 is m · 2^(exp − 126).
        if e < -10 {
            // Below 2^-25: rounds to zero (2^-25 itself is a tie with zero, the even one).
            return sign;
        }
        let m = man | 0x0080_0000;
        let shift = (126 - exp) as u32; // 14..=24
        let q = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        let q = if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        };
        // q may reach 0x400, the smallest normal: its bits are already right.
        return sign | q as u16;
    }
    let q = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    // A carry out of the mantissa moves into the exponent, up to infinity (0x7c00).
    let q = if rem > 0x1000 || (rem == 0x1000 && q & 1 == 1) {
        q + 1
    } else {
        q
    };
    sign | q as u16
}

/// Rounds binary32 bits to bfloat16 bits exactly as gguf-py's `BF16.quantize_blocks` (and
/// ggml's `ggml_compute_fp32_to_bf16`, torch's `round_to_nearest_even`) do: a NaN keeps its
/// top bits with the quiet bit set; anything else is rounded to nearest, ties to even, by
/// adding `0x7fff` plus the lowest kept bit, which overflows to infinity as IEEE rounding
/// does.
pub const fn round_f32_to_bf16(x: u32) -> u16 {
    if x & 0x7fff_ffff > 0x7f80_0000 {
        return ((x >> 16) | 0x0040) as u16;
    }
    ((x as u64 + 0x7fff + ((x as u64 >> 16) & 1)) >> 16) as u16
}

/// The numbers of one comparison.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Numbers {
    /// Elements compared.
    pub elements: u64,
    /// Elements whose values differ.
    pub elements_changed: u64,
    /// The largest |artifact − reference| over elements finite on both sides.
    pub max_abs_delta: f64,
    /// ‖artifact − reference‖₂ / ‖reference‖₂ over elements finite on both sides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_l2: Option<f64>,
    /// Cosine of the two tensors as vectors, over elements finite on both sides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
    /// Elements NaN or infinite on one side and not equal on the other.
    pub nonfinite_changed: u64,
    /// When one side is F32 and the other F16 or BF16: whether every element of the narrower
    /// side is the wider one rounded to nearest, ties to even.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub narrower_is_rounded_wider: Option<bool>,
}

/// One pass's sums.
#[derive(Debug, Clone)]
struct Accumulator {
    elements: u64,
    changed: u64,
    nonfinite_changed: u64,
    max_abs: f64,
    d2: f64,
    a2: f64,
    r2: f64,
    ar: f64,
    /// The narrower side (true: the artifact) and its type, when one is narrower.
    narrower: Option<(bool, Float)>,
    rounded: bool,
}

fn is_nan(bits: u32) -> bool {
    bits & 0x7fff_ffff > 0x7f80_0000
}

impl Accumulator {
    fn new(artifact: Float, reference: Float) -> Accumulator {
        let narrower = match (artifact, reference) {
            (Float::F16 | Float::Bf16, Float::F32) => Some((true, artifact)),
            (Float::F32, Float::F16 | Float::Bf16) => Some((false, reference)),
            _ => None,
        };
        Accumulator {
            elements: 0,
            changed: 0,
            nonfinite_changed: 0,
            max_abs: 0.0,
            d2: 0.0,
            a2: 0.0,
            r2: 0.0,
            ar: 0.0,
            narrower,
            rounded: true,
        }
    }

    fn push(&mut self, a: u32, r: u32) {
        self.elements += 1;
        if let Some((artifact_is_narrow, ty)) = self.narrower {
            let (narrow, wide) = if artifact_is_narrow { (a, r) } else { (r, a) };
            let kept = ty.round_trip(wide);
            if !(kept == narrow || (is_nan(kept) && is_nan(narrow))) {
                self.rounded = false;
            }
        }
        let (x, y) = (f32::from_bits(a), f32::from_bits(r));
        let equal = x == y || (x.is_nan() && y.is_nan());
        if !equal {
            self.changed += 1;
        }
        if x.is_finite() && y.is_finite() {
            let (x, y) = (f64::from(x), f64::from(y));
            let d = (x - y).abs();
            if d > self.max_abs {
                self.max_abs = d;
            }
            self.d2 += d * d;
            self.a2 += x * x;
            self.r2 += y * y;
            self.ar += x * y;
        } else if !equal {
            self.nonfinite_changed += 1;
        }
    }

    fn finish(self) -> Numbers {
        let relative_l2 = if self.r2 > 0.0 {
            Some(self.d2.sqrt() / self.r2.sqrt())
        } else if self.d2 == 0.0 {
            Some(0.0)
        } else {
            None
        };
        let cosine = (self.a2 > 0.0 && self.r2 > 0.0)
            .then(|| (self.ar / (self.a2.sqrt() * self.r2.sqrt())).clamp(-1.0, 1.0));
        Numbers {
            elements: self.elements,
            elements_changed: self.changed,
            max_abs_delta: self.max_abs,
            relative_l2,
            cosine,
            nonfinite_changed: self.nonfinite_changed,
            narrower_is_rounded_wider: self.narrower.map(|_| self.rounded),
        }
    }
}

/// A tensor's bytes read as a flat row-major sequence of float elements, piece by piece.
/// Only descriptors without strides: their ranges, in order, are the row-major bytes.
#[derive(Debug)]
pub struct FlatTensor<'a> {
    file: &'a InputFile,
    /// `(logical byte start, file offset, length)` of each range.
    ranges: Vec<(u64, u64, u64)>,
    float: Float,
    big: bool,
    shape: Vec<u64>,
    elements: u64,
}

impl<'a> FlatTensor<'a> {
    /// Reads `t` from `file`, or says why its values cannot be read this way.
    pub fn new(file: &'a InputFile, t: &TensorDescriptor) -> Result<FlatTensor<'a>, String> {
        let element = t
            .element_type
            .as_ref()
            .into_option()
            .map(|e| e.as_str())
            .unwrap_or("");
        let float = Float::of(element).ok_or_else(|| format!("{} has no float values", t.dtype))?;
        if t.strides.is_some() {
            return Err("a strided view: numbers are computed for contiguous tensors".into());
        }
        if t.inline.is_some() {
            return Err(
                "its bytes were decoded by its reader: numbers are computed from file bytes".into(),
            );
        }
        let (ranges, total) = logical_ranges(file, t)?;
        let elements = t
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or("its shape overflows")?;
        if elements.checked_mul(float.width() as u64) != Some(total) {
            return Err("its bytes do not hold its shape".into());
        }
        Ok(FlatTensor {
            file,
            ranges,
            float,
            big: t.byte_order == ByteOrder::Big,
            shape: t.shape.to_vec(),
            elements,
        })
    }

    /// Its float type.
    pub fn float(&self) -> Float {
        self.float
    }

    /// Its shape, outermost first.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Its element count.
    pub fn elements(&self) -> u64 {
        self.elements
    }

    /// Reads `out.len()` elements from element `first` on, widened to binary32 bits.
    pub(crate) fn read(&self, first: u64, out: &mut [u32], raw: &mut Vec<u8>) -> io::Result<()> {
        let w = self.float.width();
        raw.resize(out.len() * w, 0);
        read_logical(self.file, &self.ranges, first * w as u64, raw)?;
        for (dst, src) in out.iter_mut().zip(raw.chunks_exact(w)) {
            *dst = self.float.widen(src, self.big);
        }
        Ok(())
    }
}

/// A tensor's byte ranges: `(logical start, file offset, length)` each, in order.
pub(crate) type LogicalRanges = Vec<(u64, u64, u64)>;

/// Fills `buf` from logical byte `at` of a tensor stored as `ranges` (`(logical start, file
/// offset, length)` each, in order) in `file`.
pub(crate) fn read_logical(
    file: &InputFile,
    ranges: &[(u64, u64, u64)],
    mut at: u64,
    buf: &mut [u8],
) -> io::Result<()> {
    let mut filled = 0usize;
    // Ranges are few (one for every format but sharded views); find the first by scan.
    let mut i = ranges
        .iter()
        .rposition(|&(start, _, _)| start <= at)
        .ok_or_else(|| io::Error::other("read before the tensor"))?;
    while filled < buf.len() {
        let (start, offset, len) = *ranges
            .get(i)
            .ok_or_else(|| io::Error::other("read past the tensor"))?;
        let within = at - start;
        let n = ((len - within) as usize).min(buf.len() - filled);
        file.read_exact_at(offset + within, &mut buf[filled..filled + n])?;
        filled += n;
        at += n as u64;
        i += 1;
    }
    Ok(())
}

/// The `(logical start, file offset, length)` of each of `t`'s ranges, checked to lie in
/// `file`, and their total length.
pub(crate) fn logical_ranges(
    file: &InputFile,
    t: &TensorDescriptor,
) -> Result<(LogicalRanges, u64), String> {
    let mut ranges = Vec::with_capacity(t.ranges.len());
    let mut total = 0u64;
    for r in t.ranges.iter() {
        let end = r.offset.checked_add(r.len).ok_or("a range overflows")?;
        if end > file.len() {
            return Err("a range lies past the end of its file".into());
        }
        ranges.push((total, r.offset, r.len));
        total = total.checked_add(r.len).ok_or("its size overflows")?;
    }
    Ok((ranges, total))
}

/// How the reference's elements line up with the artifact's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alignment {
    /// Element for element.
    Same,
    /// The reference is the artifact transposed (2-D).
    Transposed,
    /// Rows reordered by llama.cpp's Q/K permutation with `n_head` heads; `reference_permuted`
    /// says which side the GGUF (permuted) one is.
    Unpermute {
        /// Heads the rows split into.
        n_head: u64,
        /// Whether the reference holds the permuted rows (else the artifact does).
        reference_permuted: bool,
    },
}

/// Elements per piece.
pub(crate) const PIECE: usize = CHUNK / 4;

/// The reference row holding artifact row `row` under llama.cpp's permutation.
pub(crate) fn permuted_row(row: u64, rows: u64, n_head: u64, reference_permuted: bool) -> u64 {
    let d = rows / n_head / 2;
    let (h, within) = (row / (2 * d), row % (2 * d));
    if reference_permuted {
        // Artifact in the original order: within = j·d + i → GGUF row 2i + j.
        let (j, i) = (within / d, within % d);
        h * 2 * d + 2 * i + j
    } else {
        // Artifact is the GGUF: within = 2i + j → original row j·d + i.
        let (i, j) = (within / 2, within % 2);
        h * 2 * d + j * d + i
    }
}

/// Whether `alignment` applies to tensors of these shapes.
pub fn applies(alignment: Alignment, artifact: &[u64], reference: &[u64]) -> bool {
    match alignment {
        Alignment::Same => artifact == reference,
        Alignment::Transposed => {
            artifact.len() == 2
                && reference.len() == 2
                && artifact[0] == reference[1]
                && artifact[1] == reference[0]
        }
        Alignment::Unpermute { n_head, .. } => {
            artifact == reference
                && artifact.len() == 2
                && n_head
                    .checked_mul(2)
                    .is_some_and(|p| p > 0 && artifact[0].is_multiple_of(p))
        }
    }
}

/// Compares the two tensors element by element under `alignment`, in one streaming pass.
pub fn compare(
    artifact: &FlatTensor<'_>,
    reference: &FlatTensor<'_>,
    alignment: Alignment,
) -> Result<Numbers, String> {
    if !applies(alignment, &artifact.shape, &reference.shape) {
        return Err(format!(
            "shapes {:?} and {:?} do not line up as {alignment:?}",
            artifact.shape, reference.shape
        ));
    }
    let mut acc = Accumulator::new(artifact.float, reference.float);
    let mut raw = Vec::new();
    let io = |e: io::Error| format!("reading tensor bytes failed: {e}");
    match alignment {
        Alignment::Same => {
            let (mut a, mut r) = (vec![0u32; PIECE], vec![0u32; PIECE]);
            let mut at = 0u64;
            while at < artifact.elements {
                let n = ((artifact.elements - at) as usize).min(PIECE);
                artifact.read(at, &mut a[..n], &mut raw).map_err(io)?;
                reference.read(at, &mut r[..n], &mut raw).map_err(io)?;
                for (&x, &y) in a[..n].iter().zip(&r[..n]) {
                    acc.push(x, y);
                }
                at += n as u64;
            }
        }
        Alignment::Unpermute {
            n_head,
            reference_permuted,
        } => {
            let rows = artifact.shape[0];
            let cols = artifact.shape[1];
            let (mut a, mut r) = (vec![0u32; PIECE], vec![0u32; PIECE]);
            for row in 0..rows {
                let other = permuted_row(row, rows, n_head, reference_permuted);
                let mut col = 0u64;
                while col < cols {
                    let n = ((cols - col) as usize).min(PIECE);
                    artifact
                        .read(row * cols + col, &mut a[..n], &mut raw)
                        .map_err(io)?;
                    reference
                        .read(other * cols + col, &mut r[..n], &mut raw)
                        .map_err(io)?;
                    for (&x, &y) in a[..n].iter().zip(&r[..n]) {
                        acc.push(x, y);
                    }
                    col += n as u64;
                }
            }
        }
        Alignment::Transposed => {
            // Artifact [rows, cols], reference [cols, rows]: a block of artifact rows against
            // the same columns of every reference row.
            let (rows, cols) = (artifact.shape[0], artifact.shape[1]);
            let block = (PIECE as u64 / cols.max(1)).clamp(1, rows.max(1));
            let mut a = Vec::new();
            let mut column = Vec::new();
            let mut r = Vec::new();
            let mut row = 0u64;
            while row < rows {
                let k = block.min(rows - row);
                // k artifact rows, cols elements each; when one row exceeds a piece, cols is
                // read piecewise below through single-element columns.
                if k * cols <= PIECE as u64 {
                    a.resize((k * cols) as usize, 0);
                    artifact.read(row * cols, &mut a, &mut raw).map_err(io)?;
                    r.resize((k * cols) as usize, 0);
                    column.resize(k as usize, 0);
                    for j in 0..cols {
                        reference
                            .read(j * rows + row, &mut column, &mut raw)
                            .map_err(io)?;
                        for (ii, &v) in column.iter().enumerate() {
                            r[ii * cols as usize + j as usize] = v;
                        }
                    }
                    for (&x, &y) in a.iter().zip(&r) {
                        acc.push(x, y);
                    }
                } else {
                    // One artifact row longer than a piece: walk it in pieces.
                    let mut col = 0u64;
                    let mut one = [0u32; 1];
                    while col < cols {
                        let n = ((cols - col) as usize).min(PIECE);
                        a.resize(n, 0);
                        artifact
                            .read(row * cols + col, &mut a, &mut raw)
                            .map_err(io)?;
                        for (jj, &x) in a.iter().enumerate() {
                            let j = col + jj as u64;
                            reference
                                .read(j * rows + row, &mut one, &mut raw)
                                .map_err(io)?;
                            acc.push(x, one[0]);
                        }
                        col += n as u64;
                    }
                }
                row += k;
            }
        }
    }
    Ok(acc.finish())
}

/// Order-free statistics of a tensor's values: they survive a transposition, a row
/// permutation and (within the narrower type's precision) a rounding, so they pick the
/// candidates a full [`compare`] then confirms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    /// Elements.
    pub elements: u64,
    /// Elements NaN or infinite.
    pub nonfinite: u64,
    /// Σx over finite elements.
    pub sum: f64,
    /// Σ|x|.
    pub sum_abs: f64,
    /// Σx².
    pub sum_sq: f64,
    /// Smallest finite value (0 when none).
    pub min: f64,
    /// Largest finite value (0 when none).
    pub max: f64,
}

impl Moments {
    pub(crate) fn new() -> Moments {
        Moments {
            elements: 0,
            nonfinite: 0,
            sum: 0.0,
            sum_abs: 0.0,
            sum_sq: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    pub(crate) fn push(&mut self, x: f32) {
        self.elements += 1;
        if !x.is_finite() {
            self.nonfinite += 1;
            return;
        }
        let x = f64::from(x);
        self.sum += x;
        self.sum_abs += x.abs();
        self.sum_sq += x * x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    pub(crate) fn finish(mut self) -> Moments {
        if self.elements == self.nonfinite {
            self.min = 0.0;
            self.max = 0.0;
        }
        self
    }

    /// How far apart two tensors' statistics are, in units of what rounding to a type with
    /// `precision` (relative, such as 2⁻⁸ for bfloat16) could explain; `None` when rounding
    /// cannot explain them at all.
    pub fn distance(&self, other: &Moments, precision: f64) -> Option<f64> {
        if self.elements != other.elements || self.nonfinite != other.nonfinite {
            return None;
        }
        // Absolute slack per element: f16 flushes values below 2^-25 to zero or subnormals.
        let tiny = 2f64.powi(-24);
        let n = self.elements as f64;
        let terms = [
            (
                (self.sum - other.sum).abs(),
                precision * self.sum_abs.max(other.sum_abs) + n * tiny,
            ),
            (
                (self.sum_abs - other.sum_abs).abs(),
                precision * self.sum_abs.max(other.sum_abs) + n * tiny,
            ),
            (
                (self.sum_sq - other.sum_sq).abs(),
                3.0 * precision * self.sum_sq.max(other.sum_sq) + n * tiny,
            ),
            (
                (self.max - other.max).abs(),
                precision * self.max.abs().max(other.max.abs()) + tiny,
            ),
            (
                (self.min - other.min).abs(),
                precision * self.min.abs().max(other.min.abs()) + tiny,
            ),
        ];
        let mut worst = 0f64;
        for (gap, slack) in terms {
            let d = gap / slack;
            if d > 1.0 {
                return None;
            }
            worst = worst.max(d);
        }
        Some(worst)
    }
}

/// The statistics of a float tensor.
pub fn float_moments(t: &FlatTensor<'_>) -> Result<Moments, String> {
    let mut m = Moments::new();
    let mut raw = Vec::new();
    let mut buf = vec![0u32; PIECE];
    let mut at = 0u64;
    while at < t.elements {
        let n = ((t.elements - at) as usize).min(PIECE);
        t.read(at, &mut buf[..n], &mut raw)
            .map_err(|e| format!("reading tensor bytes failed: {e}"))?;
        for &b in &buf[..n] {
            m.push(f32::from_bits(b));
        }
        at += n as u64;
    }
    Ok(m.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::hashing::{bf16_to_f32_bits, f16_to_f32_bits};

    /// The nearest binary16 by exhaustive search over the neighbours, ties to even, in f64:
    /// an independent statement of the rounding rule.
    fn nearest_f16(x: f32) -> u16 {
        let v = f64::from(x);
        if v.abs() >= 65520.0 {
            return if v > 0.0 { 0x7c00 } else { 0xfc00 };
        }
        let mut best = 0u16;
        let mut best_gap = f64::INFINITY;
        let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
        for h in 0..0x7c00u16 {
            let w = f64::from(f32::from_bits(f16_to_f32_bits(h)));
            let gap = (w - v.abs()).abs();
            if gap < best_gap || (gap == best_gap && h & 1 == 0) {
                best = h;
                best_gap = gap;
            }
        }
        sign | best
    }

    #[test]
    fn f16_rounding_matches_an_exhaustive_nearest_search() {
        let mut xs: Vec<f32> = vec![
            0.0,
            -0.0,
            1.0,
            65504.0,
            65519.99,
            65520.0,
            2f32.powi(-24),
            2f32.powi(-25),
            2f32.powi(-25) * 1.0000001,
            2f32.powi(-14),
            2f32.powi(-14) * 0.99999,
            1.0009766,
            1.0004883,
            1.0014648,
            -3.140625,
            6.1e-5,
            6.0e-8,
            3.0e-8,
        ];
        // A spread of bit patterns, deterministic.
        let mut s = 0x1234_5678u32;
        for _ in 0..300 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = f32::from_bits(s & 0xbfff_ffff);
            if x.is_finite() && x.abs() < 70000.0 {
                xs.push(x);
            }
        }
        for x in xs {
            assert_eq!(
                round_f32_to_f16(x.to_bits()),
                nearest_f16(x),
                "{x:e} ({:#010x})",
                x.to_bits()
            );
        }
        assert_eq!(round_f32_to_f16(f32::INFINITY.to_bits()), 0x7c00);
        assert!(is_nan(f16_to_f32_bits(round_f32_to_f16(0x7f80_0001))));
    }

    /// Differential: CPython's `struct.pack('<e', x)` (`PyFloat_Pack2`, round half to even)
    /// on 200,000 binary32 values spread over binary16's range, subnormals and ties included.
    /// Skips when python3 is absent.
    #[test]
    fn f16_rounding_matches_cpython_struct_e() {
        use std::io::Write as _;
        let mut xs: Vec<u32> = Vec::new();
        let mut s = 0x9e37_79b9u32;
        while xs.len() < 200_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            // Exponents 100..=143 cover f16's subnormals to past its largest value.
            let exp = 100 + (s >> 24) % 44;
            let man = if s & 0x100 == 0 {
                s & 0x007f_ffff
            } else {
                (s & 0x007f_e000) | 0x1000
            };
            let x = ((s & 1) << 31) | (exp << 23) | man;
            if f32::from_bits(x).abs() < 65520.0 {
                xs.push(x);
            }
        }
        let script = "import sys,struct\nout=[]\nfor line in sys.stdin:\n    x=struct.unpack('<f',bytes.fromhex(line.strip()))[0]\n    out.append(struct.pack('<e',x).hex())\nprint('\\n'.join(out))\n";
        let Ok(mut child) = std::process::Command::new("python3")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        else {
            // No python3: nothing to compare with (the host does not print, even in tests).
            return;
        };
        let mut input = String::new();
        for x in &xs {
            input.push_str(&hex_of(&x.to_le_bytes()));
            input.push('\n');
        }
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        assert_eq!(lines.len(), xs.len());
        for (x, line) in xs.iter().zip(lines) {
            let b = u16::from_str_radix(&line[2..4], 16).unwrap() << 8
                | u16::from_str_radix(&line[0..2], 16).unwrap();
            assert_eq!(
                round_f32_to_f16(*x),
                b,
                "{:e} ({x:#010x})",
                f32::from_bits(*x)
            );
        }
    }

    fn hex_of(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn bf16_rounding_is_nearest_even_and_overflows_to_infinity() {
        for bits in [
            0x3f80_8000u32,
            0x3f81_8000,
            0x3f80_8001,
            0x3f80_7fff,
            0x7f7f_ffff,
        ] {
            let got = f64::from(f32::from_bits(bf16_to_f32_bits(round_f32_to_bf16(bits))));
            let v = f64::from(f32::from_bits(bits));
            let lo = f64::from(f32::from_bits(bits & 0xffff_0000));
            // The next bfloat16 up; past the largest finite one IEEE rounding goes on as if
            // the exponent were unbounded (2^128), and that result overflows to infinity.
            let hi = match f64::from(f32::from_bits((bits & 0xffff_0000) + 0x1_0000)) {
                h if h.is_infinite() => 2f64.powi(128),
                h => h,
            };
            let want = if (v - lo) < (hi - v) || ((v - lo) == (hi - v) && (bits >> 16) & 1 == 0) {
                lo
            } else {
                hi
            };
            let want = if want == 2f64.powi(128) {
                f64::INFINITY
            } else {
                want
            };
            assert_eq!(got, want, "{bits:#010x}");
        }
        assert_eq!(round_f32_to_bf16(0x7f80_0001), 0x7fc0);
        assert_eq!(round_f32_to_bf16(0xff80_0000), 0xff80);
    }

    fn acc_of(pairs: &[(f32, f32)], a: Float, r: Float) -> Numbers {
        let mut acc = Accumulator::new(a, r);
        for &(x, y) in pairs {
            acc.push(x.to_bits(), y.to_bits());
        }
        acc.finish()
    }

    #[test]
    fn numbers_follow_the_rules() {
        let n = acc_of(
            &[
                (1.0, 1.0),
                (2.0, 1.0),
                (f32::NAN, -f32::NAN),
                (0.0, -0.0),
                (f32::INFINITY, 3.0),
            ],
            Float::F32,
            Float::F32,
        );
        assert_eq!(n.elements, 5);
        assert_eq!(n.elements_changed, 2);
        assert_eq!(n.nonfinite_changed, 1);
        assert_eq!(n.max_abs_delta, 1.0);
        // finite: a = (1, 2, 0), r = (1, 1, 0): ‖a−r‖ = 1, ‖r‖ = √2.
        assert!((n.relative_l2.unwrap() - 1.0 / 2f64.sqrt()).abs() < 1e-12);
        assert!((n.cosine.unwrap() - 3.0 / (5f64.sqrt() * 2f64.sqrt())).abs() < 1e-12);
        assert_eq!(n.narrower_is_rounded_wider, None);
    }

    #[test]
    fn a_rounded_copy_is_told_from_a_truncated_one() {
        let wide = [1.0 + 2f32.powi(-9) * 1.5, -0.3, 1e-3];
        let rounded: Vec<(f32, f32)> = wide
            .iter()
            .map(|&w| {
                (
                    f32::from_bits(bf16_to_f32_bits(round_f32_to_bf16(w.to_bits()))),
                    w,
                )
            })
            .collect();
        assert_eq!(
            acc_of(&rounded, Float::Bf16, Float::F32).narrower_is_rounded_wider,
            Some(true)
        );
        let truncated: Vec<(f32, f32)> = wide
            .iter()
            .map(|&w| (f32::from_bits(w.to_bits() & 0xffff_0000), w))
            .collect();
        assert_eq!(
            acc_of(&truncated, Float::Bf16, Float::F32).narrower_is_rounded_wider,
            Some(false)
        );
        // Reference side narrower works too.
        let flipped: Vec<(f32, f32)> = rounded.iter().map(|&(a, b)| (b, a)).collect();
        assert_eq!(
            acc_of(&flipped, Float::F32, Float::Bf16).narrower_is_rounded_wider,
            Some(true)
        );
    }

    #[test]
    fn permuted_rows_go_back_and_forth() {
        // 4 heads of 2·3 rows: the two directions are inverse permutations.
        let rows = 24;
        for row in 0..rows {
            let g = permuted_row(row, rows, 4, true);
            assert_eq!(permuted_row(g, rows, 4, false), row);
        }
        // llama.cpp's permute: GGUF row h·2d + 2i + j holds original row h·2d + j·d + i.
        assert_eq!(permuted_row(1, rows, 4, false), 3);
        assert_eq!(permuted_row(3, rows, 4, true), 1);
    }

    #[test]
    fn moments_accept_rounding_and_refuse_edits() {
        let xs: Vec<f32> = (0..1000)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
            .collect();
        let mut a = Moments::new();
        let mut b = Moments::new();
        let mut c = Moments::new();
        for (i, &x) in xs.iter().enumerate() {
            a.push(x);
            b.push(f32::from_bits(bf16_to_f32_bits(round_f32_to_bf16(
                x.to_bits(),
            ))));
            c.push(if i == 10 { x + 0.5 } else { x });
        }
        let (a, b, c) = (a.finish(), b.finish(), c.finish());
        assert!(a.distance(&b, 2f64.powi(-8)).is_some());
        assert!(a.distance(&c, 2f64.powi(-8)).is_none());
    }
}
