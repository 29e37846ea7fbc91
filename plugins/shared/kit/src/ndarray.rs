//! NumPy arrays that a pickle builds (plain `ndarray.__reduce__` pickles, joblib's array
//! wrappers), described as tensors: the element type of a `dtype.str`, the check that a shape
//! fills its bytes, and the column-major strides of a Fortran-ordered array. The pickle
//! machine (`socair-pickle`, `Unpickled::arrays`) says where each array's bytes lie; the
//! readers that meet such pickles (torch-zip's plain pickles, the joblib plugin) place them.

use crate::report::tensor_in_file;
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};

/// NumPy's `dtype.str` kinds and sizes socair has an element type for (the safetensors names,
/// as the numpy plugin's `npy::ELEMENTS`, with complex128).
const ELEMENTS: &[(&str, &str, u64)] = &[
    ("b1", "BOOL", 1),
    ("i1", "I8", 1),
    ("u1", "U8", 1),
    ("i2", "I16", 2),
    ("u2", "U16", 2),
    ("f2", "F16", 2),
    ("i4", "I32", 4),
    ("u4", "U32", 4),
    ("f4", "F32", 4),
    ("i8", "I64", 8),
    ("u8", "U64", 8),
    ("f8", "F64", 8),
    ("c8", "C64", 8),
    ("c16", "C128", 16),
];

/// Element type, byte order and size of a numeric `descr` (`<f8`, `|b1`, `>i4`).
pub fn element(descr: &str) -> Option<(&'static str, ByteOrder, u64)> {
    let (order, code) = descr.split_at_checked(1)?;
    let &(_, name, size) = ELEMENTS.iter().find(|(c, _, _)| *c == code)?;
    let order = match order {
        "<" => ByteOrder::Little,
        ">" => ByteOrder::Big,
        "|" if size == 1 => ByteOrder::Little,
        _ => return None,
    };
    Some((name, order, size))
}

/// An array of `descr` and `shape` whose bytes are `len` bytes long, as a descriptor with no
/// place yet, and its element size; or why not, when the shape does not fill the bytes
/// exactly. A dtype with no element type of socair's (records, strings, datetimes, as a
/// decision tree's `nodes`) is described by its bytes alone (sha256, no values hash), as the
/// numpy plugin does, with the element size its bytes give.
pub fn describe(
    name: &str,
    descr: &str,
    shape: &[u64],
    len: u64,
) -> Result<(TensorDescriptor, u64), String> {
    let numel = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
    let (element_type, byte_order, size) = match element(descr) {
        Some((e, o, s)) => (Some(e), o, s),
        None => {
            let order = if descr.starts_with('>') {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            };
            let size = numel.filter(|&n| n > 0).map_or(1, |n| len / n).max(1);
            (None, order, size)
        }
    };
    if numel.and_then(|n| n.checked_mul(size)) != Some(len) {
        return Err(format!(
            "shape {shape:?} of {descr} does not fill its {len} bytes; not fingerprinted"
        ));
    }
    let t = tensor_in_file(
        name,
        descr,
        element_type,
        shape.to_vec(),
        Vec::new(),
        byte_order,
    );
    Ok((t, size))
}

/// Places `t` (from [`describe`]) at `offset..offset + len` of the opened file, with the
/// column-major strides of its shape when the array is Fortran-ordered.
pub fn place_in_file(t: &mut TensorDescriptor, offset: u64, len: u64, fortran_order: bool) {
    t.ranges = vec![ByteRange { offset, len }].into();
    t.strides = if fortran_order {
        fortran_strides(&t.shape)
    } else {
        None
    }
    .map(Into::into)
    .into();
}

/// Column-major element strides of `shape`, or none when it reads the same in row-major order.
pub fn fortran_strides(shape: &[u64]) -> Option<Vec<u64>> {
    if shape.iter().filter(|&&d| d > 1).count() < 2 {
        return None;
    }
    let mut step = 1u64;
    Some(
        shape
            .iter()
            .map(|&d| {
                let s = step;
                step = step.saturating_mul(d);
                s
            })
            .collect(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numeric_descrs() {
        assert_eq!(element("<f8"), Some(("F64", ByteOrder::Little, 8)));
        assert_eq!(element(">i4"), Some(("I32", ByteOrder::Big, 4)));
        assert_eq!(element("|b1"), Some(("BOOL", ByteOrder::Little, 1)));
        assert_eq!(element("<c16"), Some(("C128", ByteOrder::Little, 16)));
        assert_eq!(element("|f8"), None);
        assert_eq!(element("<U5"), None);
        assert_eq!(element(""), None);
    }

    #[test]
    fn a_shape_must_fill_its_bytes() {
        let (t, size) = describe("w", "<f4", &[2, 3], 24).unwrap();
        assert_eq!(
            t.element_type.as_ref().map(|e| e.as_str()).into_option(),
            Some("F32")
        );
        assert_eq!(size, 4);
        assert!(describe("w", "<f4", &[2, 3], 23)
            .unwrap_err()
            .contains("does not fill"));
        assert!(describe("w", "<f4", &[u64::MAX, 2], 8).is_err());
        // A record dtype: described by its bytes, its element size from them.
        let (t, size) = describe("nodes", "|V64", &[3], 192).unwrap();
        assert_eq!((t.element_type.is_none(), size), (true, 64));
    }

    #[test]
    fn fortran_order_places_column_major_strides() {
        let (mut t, _) = describe("w", "<f8", &[2, 3], 48).unwrap();
        place_in_file(&mut t, 100, 48, true);
        assert_eq!(
            t.ranges.as_slice(),
            &[ByteRange {
                offset: 100,
                len: 48
            }]
        );
        assert_eq!(t.strides.clone().into_option().unwrap().as_slice(), &[1, 2]);
        place_in_file(&mut t, 100, 48, false);
        assert!(t.strides.is_none());
        assert_eq!(fortran_strides(&[1, 5]), None);
    }
}
