//! A block-quantized GGUF tensor against a float one: whether the quantized tensor holds the
//! float's weights, quantized and nothing else (`docs/diff.md`, "Across quantization").
//!
//! The quantized side is dequantized as ggml does (`socair-ggml-quants`, bit for bit) and each
//! element's error against the float is held to the bound its own block implies (each block's
//! scales and the type's rounding: `socair_ggml_quants::block_bound`, derived per type in that
//! crate's `bound.rs`), not to a global tolerance. The rules:
//!
//! * Every element within its block's bound (a NaN or infinity only against the same): **same
//!   weights, quantized**.
//! * Elements beyond the bound, concentrated in rows: **differs beyond quantization**. A row of
//!   the float (the original's orientation) is an outlier when the RMS of its elements'
//!   error-to-bound ratios is more than four times the median row's (at least 1): an edit of a
//!   few rows by a few quantization steps lifts those rows' ratio to several, while a
//!   quantizer's error is spread over every row alike.
//! * Elements beyond the bound, scattered over rows: **differs beyond quantization** for the
//!   types whose bound is proved for ggml's reference quantizer (`BoundKind::Reference`:
//!   Q4_0, Q5_0, Q4_1, Q5_1, Q8_0, MXFP4, TQ1_0, TQ2_0...), whose output never leaves it;
//!   for the others (`GridOnly`: the k-quants and i-quants, whose quantizers search scales and
//!   may clip a block's extremes past its grid's bound) **same weights, quantized** when at
//!   most 5% of the elements are past it, else differs beyond quantization (a tensor lined up
//!   wrongly, or other weights, leaves most elements past it).
//!
//! Streamed: a piece of rows at a time (at most [`PIECE`] elements of each side), one
//! accumulator per row and per column of the float (more than [`MAX_ROWS`] of either is
//! refused, not summed).

use crate::fingerprint::numeric::{
    logical_ranges, permuted_row, read_logical, Alignment, FlatTensor, Moments, PIECE,
};
use crate::read::source::InputFile;
use serde::Serialize;
use socair_ggml_quants::{self as ggml, BoundKind, Format};
use socair_plugin_api::TensorDescriptor;

/// Rows (and columns) of the float side tracked one by one at most (each a few words of
/// memory).
pub const MAX_ROWS: u64 = 1 << 22;
/// Rows named in a comparison's numbers at most, the worst first.
pub const ROWS_LISTED: usize = 16;
/// How many times the median row's error ratio makes a row an outlier.
const OUTLIER_FACTOR: f64 = 4.0;
/// The share of elements a grid-only type's quantizer may leave past the grid's bound,
/// scattered over rows: ggml's k-quant and IQ4 quantizers leave up to 0.13% without an
/// importance matrix and 0.85% with one (`docs/diff.md`, measured); a tensor lined up wrongly
/// or holding other weights leaves most of its elements past it.
const GRID_ONLY_SCATTER: f64 = 0.05;
/// A ratio standing for "beyond any bound" (an error against a zero bound), kept finite so
/// that the sums stay numbers.
const RATIO_CAP: f64 = 1e9;

/// A GGUF tensor of a block-quantized type, read as row-major blocks (ggml's order: the
/// innermost dimension in blocks).
#[derive(Debug)]
pub struct QuantizedTensor<'a> {
    file: &'a InputFile,
    ranges: Vec<(u64, u64, u64)>,
    format: &'static Format,
    shape: Vec<u64>,
    elements: u64,
    /// Elements per row: the innermost dimension, a whole number of blocks.
    row_len: u64,
}

/// The block-quantized format of an element type name (`Q4_0`, `Q4_K`, `MXFP4`...), if it is
/// one ggml dequantizes.
pub fn quantized_format(dtype: &str) -> Option<&'static Format> {
    ggml::FORMATS
        .iter()
        .find(|f| f.name == dtype && f.block_size > 1)
}

impl<'a> QuantizedTensor<'a> {
    /// Reads `t` from `file`, or says why its values cannot be read this way.
    pub fn new(file: &'a InputFile, t: &TensorDescriptor) -> Result<QuantizedTensor<'a>, String> {
        let format = quantized_format(t.dtype.as_str())
            .ok_or_else(|| format!("{} is not a block-quantized type", t.dtype))?;
        if t.strides.is_some() || t.inline.is_some() {
            return Err("not a contiguous tensor of file bytes".into());
        }
        let (ranges, total) = logical_ranges(file, t)?;
        let elements = t
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or("its shape overflows")?;
        let row_len = t.shape.last().copied().unwrap_or(1);
        let (bs, ts) = (format.block_size as u64, format.type_size as u64);
        if row_len == 0 || !row_len.is_multiple_of(bs) {
            return Err(format!(
                "rows of {row_len} elements are not whole {} blocks of {bs}",
                format.name
            ));
        }
        if (elements / bs).checked_mul(ts) != Some(total) {
            return Err(format!(
                "its bytes do not hold whole {} blocks for its shape",
                format.name
            ));
        }
        if row_len > PIECE as u64 * 64 {
            return Err(format!(
                "rows of {row_len} elements are too long to compare"
            ));
        }
        Ok(QuantizedTensor {
            file,
            ranges,
            format,
            shape: t.shape.to_vec(),
            elements,
            row_len,
        })
    }

    /// Rows of `row_len` elements.
    fn rows(&self) -> u64 {
        self.elements / self.row_len
    }

    /// Rows per piece: as many whole rows as fit in [`PIECE`] elements, at least one.
    fn rows_per_piece(&self) -> u64 {
        (PIECE as u64 / self.row_len).max(1)
    }

    /// Dequantizes `k` rows from row `first` into `values`, with each block's bound in
    /// `bounds`.
    fn read_rows(
        &self,
        first: u64,
        k: u64,
        raw: &mut Vec<u8>,
        values: &mut Vec<f32>,
        bounds: &mut Vec<(f32, BoundKind)>,
    ) -> Result<(), String> {
        let (bs, ts) = (self.format.block_size, self.format.type_size);
        let blocks_per_row = self.row_len as usize / bs;
        let blocks = k as usize * blocks_per_row;
        raw.resize(blocks * ts, 0);
        let at = first * blocks_per_row as u64 * ts as u64;
        read_logical(self.file, &self.ranges, at, raw)
            .map_err(|e| format!("reading tensor bytes failed: {e}"))?;
        values.resize(blocks * bs, 0.0);
        ggml::dequantize_into(self.format.id, raw, values).map_err(|e| e.to_string())?;
        bounds.clear();
        for block in raw.chunks_exact(ts) {
            let b = ggml::block_bound(self.format.id, block).map_err(|e| e.to_string())?;
            bounds.push((b.max_abs_error, b.kind));
        }
        Ok(())
    }

    /// Order-free statistics of its dequantized values.
    pub fn moments(&self) -> Result<Moments, String> {
        let mut m = Moments::new();
        let (mut raw, mut values, mut bounds) = (Vec::new(), Vec::new(), Vec::new());
        let step = self.rows_per_piece();
        let mut row = 0u64;
        while row < self.rows() {
            let k = step.min(self.rows() - row);
            self.read_rows(row, k, &mut raw, &mut values, &mut bounds)?;
            for &v in &values {
                m.push(v);
            }
            row += k;
        }
        Ok(m.finish())
    }
}

/// One row of the float whose elements lie beyond their blocks' bounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowBeyond {
    /// The row's index in the float tensor (its outermost dimensions flattened).
    pub row: u64,
    /// Its elements beyond their block's bound.
    pub elements_beyond_bound: u64,
    /// Its largest |dequantized − float|.
    pub max_abs_error: f64,
    /// The bound of the block holding that element.
    pub bound_at_max: f64,
    /// RMS of its elements' error-to-bound ratios (honest quantization: about 0.6 or less).
    pub rms_error_over_bound: f64,
}

/// The numbers of a quantized tensor against a float one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuantizedNumbers {
    /// The quantized side's type (ggml's name).
    pub quantized_type: String,
    /// How far the type's bound is trusted: `reference` (proved for ggml's reference
    /// quantizer) or `grid_only` (the block's grid alone).
    pub bound: &'static str,
    /// Whether the file says an importance matrix steered its quantization (then no bound is
    /// proved: the quantizer searched).
    pub imatrix: bool,
    /// Elements compared.
    pub elements: u64,
    /// Elements whose error is beyond their block's bound (or NaN/infinite on one side only).
    pub elements_beyond_bound: u64,
    /// Elements NaN or infinite on one side and not the same on the other.
    pub nonfinite_changed: u64,
    /// Largest |dequantized − float| over elements finite on both sides.
    pub max_abs_error: f64,
    /// RMS of |dequantized − float|.
    pub rms_error: f64,
    /// RMS of the elements' bounds: the error an honest quantization stays under.
    pub rms_bound: f64,
    /// The largest error-to-bound ratio of any element (at most 1 within the bound).
    pub max_error_over_bound: f64,
    /// Rows of the float tensor.
    pub rows: u64,
    /// Rows holding an element beyond its bound.
    pub rows_beyond_bound: u64,
    /// Rows whose error stands out from the rest (see the module's rules).
    pub outlier_rows: u64,
    /// The rows beyond the bound, worst first, at most [`ROWS_LISTED`].
    pub rows_listed: Vec<RowBeyond>,
    /// Columns of the float tensor (its innermost dimension).
    pub columns: u64,
    /// Columns holding an element beyond its bound.
    pub columns_beyond_bound: u64,
    /// Columns whose error stands out from the rest (a rank-one edit of a few columns).
    pub outlier_columns: u64,
    /// The columns beyond the bound, worst first, at most [`ROWS_LISTED`] (`row` is the
    /// column's index).
    pub columns_listed: Vec<RowBeyond>,
    /// Whether the quantized tensor holds the float's weights by the rules above.
    pub same_weights: bool,
}

/// One row's (or column's) sums.
#[derive(Debug, Clone, Copy, Default)]
struct RowSums {
    beyond: u64,
    ratio_sq: f64,
    count: u64,
    max_err: f64,
    bound_at_max: f64,
}

impl RowSums {
    fn add(&mut self, beyond: bool, ratio: f64, err: f64, bound: f64) {
        self.count += 1;
        self.beyond += u64::from(beyond);
        self.ratio_sq += ratio * ratio;
        if err >= self.max_err {
            self.max_err = err;
            self.bound_at_max = bound;
        }
    }
}

/// Compares `q` with `f`, `alignment` read with `q` as the artifact (an `Unpermute` says
/// whether `f`, the reference, is the permuted side).
///
/// `imatrix`: the file says it was quantized with an importance matrix (`quantize.imatrix.*`
/// metadata, which llama-quantize writes), whose scale search may leave even a proved bound.
pub fn compare(
    q: &QuantizedTensor<'_>,
    f: &FlatTensor<'_>,
    alignment: Alignment,
    imatrix: bool,
) -> Result<QuantizedNumbers, String> {
    if !crate::fingerprint::numeric::applies(alignment, &q.shape, f.shape()) {
        return Err(format!(
            "shapes {:?} and {:?} do not line up as {alignment:?}",
            q.shape,
            f.shape()
        ));
    }
    let f_row_len = f.shape().last().copied().unwrap_or(1).max(1);
    let f_rows = f.elements() / f_row_len;
    // One accumulator per row and per column: both bounded, so a tensor of a hostile shape
    // costs no more than [`MAX_ROWS`] of each.
    if f_rows > MAX_ROWS || f_row_len > MAX_ROWS {
        return Err(format!(
            "{f_rows} rows of {f_row_len} are more than {MAX_ROWS} to compare line by line"
        ));
    }
    let mut rows = vec![RowSums::default(); f_rows as usize];
    let mut cols = vec![RowSums::default(); f_row_len as usize];
    let mut acc = Totals {
        imatrix,
        ..Totals::default()
    };
    let (mut raw, mut values, mut bounds) = (Vec::new(), Vec::new(), Vec::new());
    let (mut fbits, mut fraw, mut column) = (Vec::new(), Vec::new(), Vec::new());
    let io = |e: std::io::Error| format!("reading tensor bytes failed: {e}");
    let (q_rows, row_len) = (q.rows(), q.row_len);
    let bs = q.format.block_size;
    let step = q.rows_per_piece();
    let mut row = 0u64;
    while row < q_rows {
        let k = step.min(q_rows - row);
        q.read_rows(row, k, &mut raw, &mut values, &mut bounds)?;
        fbits.resize(values.len(), 0u32);
        // The float's values in the quantized side's order, and the float row of each
        // quantized row (the same row, the permuted one) or of each column (transposed).
        match alignment {
            Alignment::Same => f.read(row * row_len, &mut fbits, &mut fraw).map_err(io)?,
            Alignment::Unpermute {
                n_head,
                reference_permuted,
            } => {
                for ii in 0..k {
                    let other = permuted_row(row + ii, q_rows, n_head, reference_permuted);
                    let at = (ii * row_len) as usize;
                    f.read(
                        other * row_len,
                        &mut fbits[at..at + row_len as usize],
                        &mut fraw,
                    )
                    .map_err(io)?;
                }
            }
            Alignment::Transposed => {
                // q is [rows, cols], f is [cols, rows]: column j of these k rows is f's row j,
                // elements row..row+k.
                column.resize(k as usize, 0u32);
                for j in 0..row_len {
                    f.read(j * q_rows + row, &mut column, &mut fraw)
                        .map_err(io)?;
                    for (ii, &v) in column.iter().enumerate() {
                        fbits[ii * row_len as usize + j as usize] = v;
                    }
                }
            }
        }
        for (e, (&x, &y)) in values.iter().zip(&fbits).enumerate() {
            let (bound, kind) = bounds[e / bs];
            let (ii, j) = (e as u64 / row_len, e as u64 % row_len);
            // The element's row and column in the float tensor.
            let (f_row, f_col) = match alignment {
                Alignment::Same => {
                    let at = (row + ii) * row_len + j;
                    (at / f_row_len, at % f_row_len)
                }
                Alignment::Unpermute {
                    n_head,
                    reference_permuted,
                } => (
                    permuted_row(row + ii, q_rows, n_head, reference_permuted),
                    j,
                ),
                Alignment::Transposed => (j, row + ii),
            };
            let (Some(r), Some(c)) = (rows.get_mut(f_row as usize), cols.get_mut(f_col as usize))
            else {
                return Err("an element lies outside the float tensor".into());
            };
            acc.push(x, f32::from_bits(y), bound, kind, [r, c]);
        }
        row += k;
    }
    Ok(acc.finish(q.format.name, &rows, &cols))
}

/// The whole comparison's sums.
#[derive(Debug, Default)]
struct Totals {
    elements: u64,
    beyond: u64,
    nonfinite_changed: u64,
    max_err: f64,
    err_sq: f64,
    bound_sq: f64,
    max_ratio: f64,
    grid_only: bool,
    imatrix: bool,
}

/// The lines (rows or columns) of one kind that hold an element beyond its bound, worst
/// first, at most [`ROWS_LISTED`]; how many there are; and how many stand out.
fn lines_beyond(lines: &[RowSums]) -> (Vec<RowBeyond>, u64, u64) {
    let rms = |l: &RowSums| {
        if l.count == 0 {
            0.0
        } else {
            (l.ratio_sq / l.count as f64).sqrt()
        }
    };
    let mut sorted: Vec<f64> = lines.iter().map(rms).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let threshold = (OUTLIER_FACTOR * median).max(1.0);
    let mut beyond: Vec<RowBeyond> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.beyond > 0)
        .map(|(i, l)| RowBeyond {
            row: i as u64,
            elements_beyond_bound: l.beyond,
            max_abs_error: l.max_err,
            bound_at_max: l.bound_at_max,
            rms_error_over_bound: rms(l),
        })
        .collect();
    let outliers = beyond
        .iter()
        .filter(|r| r.rms_error_over_bound > threshold)
        .count() as u64;
    beyond.sort_by(|x, y| {
        y.rms_error_over_bound
            .total_cmp(&x.rms_error_over_bound)
            .then(x.row.cmp(&y.row))
    });
    let count = beyond.len() as u64;
    beyond.truncate(ROWS_LISTED);
    (beyond, count, outliers)
}

impl Totals {
    /// One element: `x` dequantized, `y` the float, `bound` its block's; `lines` its row's and
    /// its column's sums.
    fn push(&mut self, x: f32, y: f32, bound: f32, kind: BoundKind, lines: [&mut RowSums; 2]) {
        self.elements += 1;
        if kind == BoundKind::GridOnly {
            self.grid_only = true;
        }
        let bound = f64::from(bound);
        if !(x.is_finite() && y.is_finite()) {
            let changed = !(x == y || (x.is_nan() && y.is_nan()));
            if changed {
                self.nonfinite_changed += 1;
                self.beyond += 1;
                self.max_ratio = RATIO_CAP;
            }
            for l in lines {
                l.add(changed, if changed { RATIO_CAP } else { 0.0 }, 0.0, bound);
            }
            return;
        }
        let err = (f64::from(x) - f64::from(y)).abs();
        let ratio = if err == 0.0 {
            0.0
        } else if bound > 0.0 {
            (err / bound).min(RATIO_CAP)
        } else {
            RATIO_CAP
        };
        let beyond = err > bound;
        self.beyond += u64::from(beyond);
        self.max_err = self.max_err.max(err);
        self.max_ratio = self.max_ratio.max(ratio);
        self.err_sq += err * err;
        if bound.is_finite() {
            self.bound_sq += bound * bound;
        }
        for l in lines {
            l.add(beyond, ratio, err, bound);
        }
    }

    fn finish(self, quantized_type: &str, rows: &[RowSums], cols: &[RowSums]) -> QuantizedNumbers {
        let rms = |sq: f64, n: u64| if n == 0 { 0.0 } else { (sq / n as f64).sqrt() };
        let (rows_listed, rows_beyond_bound, outlier_rows) = lines_beyond(rows);
        let (columns_listed, columns_beyond_bound, outlier_columns) = lines_beyond(cols);
        // A proved bound holds for the reference quantizer: any element past it is not its
        // output. A grid-only bound, or any bound under an importance matrix, is the floor of
        // a search: a little scattered excess (at most [`GRID_ONLY_SCATTER`] of the elements,
        // in no outlier row or column) is what the search leaves.
        let strict = !self.grid_only && !self.imatrix;
        let scattered = outlier_rows == 0
            && outlier_columns == 0
            && self.nonfinite_changed == 0
            && (self.beyond as f64) <= GRID_ONLY_SCATTER * self.elements as f64;
        let same_weights = self.beyond == 0 || (!strict && scattered);
        QuantizedNumbers {
            quantized_type: quantized_type.to_owned(),
            bound: if self.grid_only {
                "grid_only"
            } else {
                "reference"
            },
            imatrix: self.imatrix,
            elements: self.elements,
            elements_beyond_bound: self.beyond,
            nonfinite_changed: self.nonfinite_changed,
            max_abs_error: self.max_err,
            rms_error: rms(self.err_sq, self.elements),
            rms_bound: rms(self.bound_sq, self.elements),
            max_error_over_bound: self.max_ratio,
            rows: rows.len() as u64,
            rows_beyond_bound,
            outlier_rows,
            rows_listed,
            columns: cols.len() as u64,
            columns_beyond_bound,
            outlier_columns,
            columns_listed,
            same_weights,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes `rows` rows of `len` elements, element (r, j) off by `err(r, j)` against bound 1.
    fn totals(
        rows: usize,
        len: usize,
        kind: BoundKind,
        err: impl Fn(usize, usize) -> f32,
    ) -> QuantizedNumbers {
        let mut t = Totals::default();
        let mut sums = vec![RowSums::default(); rows];
        let mut cols = vec![RowSums::default(); len];
        for (r, row) in sums.iter_mut().enumerate() {
            for (j, col) in cols.iter_mut().enumerate() {
                t.push(1.0 + err(r, j), 1.0, 1.0, kind, [&mut *row, col]);
            }
        }
        t.finish("Q4_0", &sums, &cols)
    }

    /// An honest rounding error: spread over every row, never past the bound.
    fn honest(r: usize, j: usize) -> f32 {
        ((r * 31 + j * 17) % 97) as f32 / 97.0 - 0.5
    }

    #[test]
    fn error_within_the_bound_everywhere_is_the_same_weights() {
        let n = totals(40, 64, BoundKind::Reference, honest);
        assert!(n.same_weights);
        assert_eq!(n.elements_beyond_bound, 0);
        assert_eq!(n.rows_beyond_bound, 0);
        assert!(n.rows_listed.is_empty());
        assert!(n.max_error_over_bound <= 0.5);
    }

    #[test]
    fn a_few_rows_moved_by_several_steps_stand_out_and_are_named() {
        for kind in [BoundKind::Reference, BoundKind::GridOnly] {
            let n = totals(40, 64, kind, |r, j| {
                if r == 7 || r == 30 {
                    3.0 + honest(r, j)
                } else {
                    honest(r, j)
                }
            });
            assert!(!n.same_weights, "{kind:?}");
            assert_eq!(n.outlier_rows, 2);
            let mut named: Vec<u64> = n.rows_listed.iter().map(|r| r.row).collect();
            named.sort_unstable();
            assert_eq!(named, [7, 30]);
            assert!(n.rows_listed[0].max_abs_error > 3.0);
        }
    }

    #[test]
    fn scattered_excess_is_beyond_a_proved_bound_but_not_a_grid_only_one() {
        // One element in every row a little past the bound: a search quantizer's clipping.
        let err = |r: usize, j: usize| {
            if r.is_multiple_of(2) && j == r % 64 {
                1.3
            } else {
                honest(r, j)
            }
        };
        let proved = totals(40, 64, BoundKind::Reference, err);
        assert_eq!(proved.outlier_rows, 0);
        assert_eq!(proved.elements_beyond_bound, 20);
        assert!(!proved.same_weights);
        let grid = totals(40, 64, BoundKind::GridOnly, err);
        assert!(grid.same_weights);
        assert_eq!(grid.bound, "grid_only");
    }

    #[test]
    fn a_few_columns_moved_by_several_steps_stand_out_under_any_bound() {
        // A rank-one edit whose sparse side is the columns: every row moves a little.
        let n = totals(40, 64, BoundKind::GridOnly, |r, j| {
            if j == 5 || j == 40 {
                3.0 + honest(r, j)
            } else {
                honest(r, j)
            }
        });
        assert_eq!(n.outlier_rows, 0);
        assert_eq!(n.outlier_columns, 2);
        let mut named: Vec<u64> = n.columns_listed.iter().map(|c| c.row).collect();
        named.sort_unstable();
        assert_eq!(named, [5, 40]);
        assert!(!n.same_weights);
    }

    #[test]
    fn most_elements_past_a_grid_only_bound_are_not_the_same_weights() {
        // A tensor lined up wrongly (rows out of order): every row alike, so no outlier, but
        // nearly every element past the bound.
        let n = totals(40, 64, BoundKind::GridOnly, |r, j| 5.0 + honest(r, j));
        assert_eq!(n.outlier_rows, 0);
        assert!(!n.same_weights);
    }

    #[test]
    fn a_nan_against_a_number_is_beyond_any_bound() {
        let mut t = Totals::default();
        let (mut rows, mut cols) = (vec![RowSums::default(); 1], vec![RowSums::default(); 2]);
        let (row, col) = (&mut rows[0], &mut cols);
        t.push(
            f32::NAN,
            1.0,
            1.0,
            BoundKind::GridOnly,
            [&mut *row, &mut col[0]],
        );
        t.push(
            f32::NAN,
            f32::NAN,
            1.0,
            BoundKind::GridOnly,
            [row, &mut col[1]],
        );
        let n = t.finish("Q4_K", &rows, &cols);
        assert_eq!(n.nonfinite_changed, 1);
        assert!(!n.same_weights);
    }
}
