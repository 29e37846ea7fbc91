//! The payload configs of a PT2 archive (`data/weights/<model>_weights_config.json`,
//! `data/constants/<model>_constants_config.json`; torch 2.15 `_package.py`
//! `_package_payload_config`, read back by `_load_payload_config` into
//! `schema.PayloadConfig`), and the tensors whose bytes lie raw in a record: `_build_file_map`
//! views the record as a flat storage of `nbytes / element_size` elements of the entry's dtype
//! (`get_storage_from_record`), and `torch.as_strided(storage, sizes, strides,
//! storage_offset)` makes each tensor of it.

use crate::globals::{self, Dtype};
use serde::Deserialize;
use std::collections::BTreeMap;

/// `schema.PayloadConfig`.
#[derive(Debug, Deserialize)]
pub struct PayloadConfig {
    /// By fully qualified name.
    pub config: BTreeMap<String, PayloadMeta>,
}

/// `schema.PayloadMeta`.
#[derive(Debug, Deserialize)]
pub struct PayloadMeta {
    /// The record under the payload's directory.
    pub path_name: String,
    /// Saved with `torch.save` (a tensor subclass, or an object): torch.load(...,
    /// weights_only=False) reads it.
    pub use_pickle: bool,
    /// The tensor's metadata (absent for pickled objects).
    pub tensor_meta: Option<TensorMeta>,
}

/// `schema.TensorMeta`.
#[derive(Debug, Deserialize)]
pub struct TensorMeta {
    /// `schema.ScalarType`.
    pub dtype: i64,
    /// Sizes.
    pub sizes: Vec<SymInt>,
    /// Strides.
    pub strides: Vec<SymInt>,
    /// Storage offset.
    pub storage_offset: SymInt,
    /// `schema.Layout` (7: strided).
    #[serde(default = "strided")]
    pub layout: i64,
}

fn strided() -> i64 {
    STRIDED
}

/// `schema.Layout.Strided`.
pub const STRIDED: i64 = 7;

/// `schema.SymInt`: `{"as_int": n}` or `{"as_expr": …}`.
#[derive(Debug, Deserialize)]
pub struct SymInt {
    /// A concrete value.
    pub as_int: Option<i64>,
}

/// `schema.ScalarType` as `_SERIALIZE_TO_TORCH_DTYPE` maps it (torch 2.15
/// `_export/serde/serialize.py`), by torch's dtype name.
pub fn dtype_of(code: i64) -> Result<&'static Dtype, String> {
    let name = match code {
        1 => "uint8",
        2 => "int8",
        3 => "int16",
        4 => "int32",
        5 => "int64",
        6 => "float16",
        7 => "float32",
        8 => "float64",
        9 => return Err("complex32, which socair has no element type for".into()),
        10 => "complex64",
        11 => "complex128",
        12 => "bool",
        13 => "bfloat16",
        28 => "uint16",
        29 => "float8_e4m3fn",
        30 => "float8_e5m2",
        31 => "float8_e4m3fnuz",
        32 => "float8_e5m2fnuz",
        33 => "float8_e8m0fnu",
        34 => "uint32",
        35 => "uint64",
        other => {
            return Err(format!(
                "ScalarType {other}, which torch.export does not define"
            ))
        }
    };
    globals::dtype(name).ok_or_else(|| format!("{name}, which socair has no element type for"))
}

/// A raw tensor located in its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawTensor {
    /// Its dtype.
    pub dtype: &'static Dtype,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Element strides, none when contiguous.
    pub strides: Option<Vec<u64>>,
    /// Where its first element lies in the record.
    pub offset: u64,
    /// The bytes from its first element to the end of its furthest one.
    pub len: u64,
}

fn ints(v: &[SymInt], what: &str) -> Result<Vec<u64>, String> {
    v.iter()
        .map(|s| match s.as_int {
            Some(n) => u64::try_from(n).map_err(|_| format!("a negative {what} ({n})")),
            None => Err(format!("a symbolic {what}, which a saved weight never has")),
        })
        .collect()
}

/// Why a raw tensor is not located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// torch.export.load raises on it: the archive is malformed.
    Torch(String),
    /// A dtype, layout or size socair does not read.
    Unmodelled(String),
}

/// Where `meta`'s tensor lies in a record of `nbytes` bytes, as `as_strided` over the
/// record's flat storage makes it.
pub fn locate(meta: &TensorMeta, nbytes: u64) -> Result<RawTensor, Refusal> {
    use Refusal::{Torch, Unmodelled};
    if meta.layout != STRIDED {
        return Err(Unmodelled(format!(
            "layout {} (not strided), which socair does not model",
            meta.layout
        )));
    }
    let dtype = dtype_of(meta.dtype).map_err(Unmodelled)?;
    let size = dtype.size;
    if !nbytes.is_multiple_of(size) {
        return Err(Torch(format!(
            "its record of {nbytes} bytes is not a multiple of {size}-byte {} elements (torch.export.load raises ValueError)",
            dtype.torch
        )));
    }
    let shape = ints(&meta.sizes, "size").map_err(Unmodelled)?;
    let strides = ints(&meta.strides, "stride").map_err(Unmodelled)?;
    if strides.len() != shape.len() {
        return Err(Torch(format!(
            "{} strides for {} sizes (as_strided raises)",
            strides.len(),
            shape.len()
        )));
    }
    let storage_offset =
        ints(std::slice::from_ref(&meta.storage_offset), "storage offset").map_err(Unmodelled)?[0];
    let overflow = || Unmodelled("its shape or strides overflow 64 bits".into());
    let numel = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(overflow)?;
    let storage = nbytes / size;
    // as_strided: every element inside the storage (torch: "setStorage: sizes …, strides …,
    // storage offset … requiring a storage size of … are out of bounds").
    let furthest = shape
        .iter()
        .zip(&strides)
        .try_fold(0u64, |a, (&d, &s)| {
            a.checked_add(d.saturating_sub(1).checked_mul(s)?)
        })
        .ok_or_else(overflow)?;
    let needed = if numel == 0 {
        storage_offset
    } else {
        storage_offset
            .checked_add(furthest)
            .and_then(|e| e.checked_add(1))
            .ok_or_else(overflow)?
    };
    if needed > storage {
        return Err(Torch(format!(
            "sizes {shape:?}, strides {strides:?} and storage offset {storage_offset} reach element {needed} of a record holding {storage} (torch's as_strided refuses it)"
        )));
    }
    // Contiguous: each stride the product of the sizes after it (dimensions of size 1
    // excepted).
    let mut step = 1u64;
    let mut contiguous = true;
    for (&d, &s) in shape.iter().zip(&strides).rev() {
        if d != 1 && s != step {
            contiguous = false;
        }
        step = step.saturating_mul(d);
    }
    let len = if numel == 0 {
        0
    } else if contiguous {
        numel * size
    } else {
        (furthest + 1) * size
    };
    Ok(RawTensor {
        dtype,
        shape,
        strides: (!contiguous && numel > 0).then_some(strides),
        offset: storage_offset * size,
        len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(dtype: i64, sizes: &[i64], strides: &[i64], offset: i64) -> TensorMeta {
        let s = |v: &[i64]| v.iter().map(|&n| SymInt { as_int: Some(n) }).collect();
        TensorMeta {
            dtype,
            sizes: s(sizes),
            strides: s(strides),
            storage_offset: SymInt {
                as_int: Some(offset),
            },
            layout: STRIDED,
        }
    }

    #[test]
    fn raw_tensors_as_as_strided_sees_them() {
        let t = locate(&meta(7, &[2, 3], &[3, 1], 0), 24).unwrap();
        assert_eq!((t.offset, t.len, t.strides.clone()), (0, 24, None));
        assert_eq!(t.dtype.safetensors, "F32");
        // A transposed view of the same record.
        let t = locate(&meta(7, &[3, 2], &[1, 3], 0), 24).unwrap();
        assert_eq!(t.strides, Some(vec![1, 3]));
        assert_eq!(t.len, 24);
        // A slice with a storage offset.
        let t = locate(&meta(7, &[2], &[1], 4), 24).unwrap();
        assert_eq!((t.offset, t.len), (16, 8));
        let torch = |r| match r {
            Err(Refusal::Torch(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(torch(locate(&meta(7, &[2, 3], &[3, 1], 1), 24)).contains("as_strided"));
        assert!(torch(locate(&meta(7, &[2], &[1], 0), 10)).contains("multiple"));
        assert!(matches!(
            locate(&meta(9, &[1], &[1], 0), 4),
            Err(Refusal::Unmodelled(_))
        ));
        let mut m = meta(7, &[2], &[1], 0);
        m.sizes[0].as_int = None;
        assert!(matches!(locate(&m, 8), Err(Refusal::Unmodelled(w)) if w.contains("symbolic")));
    }
}
