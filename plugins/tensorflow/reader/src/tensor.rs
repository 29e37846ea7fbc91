//! One `TensorProto` (a Const node's `value`) as socair describes it, mirroring how
//! TensorFlow's runtime builds the tensor (`Tensor::FromProto`,
//! `tensorflow/core/framework/tensor.cc` at v2.21.0):
//!
//! * `tensor_content` non-empty: the raw bytes of every element, row-major, in the writer's
//!   byte order (little-endian on every machine TensorFlow runs on), and it must hold exactly
//!   the shape's bytes (`FromProto` refuses any other size): a byte range of the file;
//! * otherwise the typed values (`float_val`, `int_val`, `half_val`, …, by the type's own
//!   field): fewer values than elements are filled with the **last** value (none at all is all
//!   zeros), more are cut to the shape, as `FromProto` does: decoded to the tensor's bytes and
//!   passed inline, bounded by the caller's budget;
//! * strings, resources and variants are not numeric tensors: not described.

use crate::decode::offset_in;
use crate::dtype::{dtype, DType};
use crate::proto::tensorflow::{TensorProto, TensorShapeProto};
use bytes::Bytes;

/// Most dimensions accepted (TensorFlow's own limit, `TensorShape::MaxDimensions`).
pub const MAX_RANK: usize = 254;

/// Where a tensor's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// `(offset, len)` in the file.
    Range(u64, u64),
    /// Decoded from the typed values.
    Inline(Vec<u8>),
}

/// A numeric tensor, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Its type.
    pub dtype: DType,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its bytes.
    pub bytes: Data,
    /// Its typed values were more than its shape holds (the runtime keeps the first).
    pub extra_values: bool,
}

/// Why a tensor is not described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotLocated {
    /// Not a numeric type (a string, a resource, a variant): not a weight.
    NotNumeric(String),
    /// Numeric, but unsound or too costly to decode: the reason.
    Refused(String),
}

/// A shape's dimensions, checked: known rank, every dimension known and non-negative, at
/// most [`MAX_RANK`] of them, and an element count that fits in 64 bits.
pub fn shape_of(shape: Option<&TensorShapeProto>) -> Result<(Vec<u64>, u64), String> {
    let Some(s) = shape else {
        return Ok((Vec::new(), 1));
    };
    if s.unknown_rank {
        return Err("its shape has an unknown rank".into());
    }
    if s.dim.len() > MAX_RANK {
        return Err(format!(
            "its shape has {} dimensions; TensorFlow allows {MAX_RANK}",
            s.dim.len()
        ));
    }
    let mut dims = Vec::with_capacity(s.dim.len());
    let mut n = 1u64;
    for d in &s.dim {
        let size = u64::try_from(d.size)
            .map_err(|_| format!("its shape has dimension {} (unknown or negative)", d.size))?;
        n = n
            .checked_mul(size)
            .ok_or("its shape's element count overflows 64 bits")?;
        dims.push(size);
    }
    Ok((dims, n))
}

/// Describes `t`, whose bytes lie in `file`; `budget` is how many decoded bytes may still be
/// passed inline (it is reduced by what this tensor takes).
pub fn locate(t: &TensorProto, file: &Bytes, budget: &mut u64) -> Result<Located, NotLocated> {
    let Some(dt) = dtype(t.dtype) else {
        return Err(NotLocated::NotNumeric(crate::dtype::name(t.dtype)));
    };
    let (shape, n) = shape_of(t.tensor_shape.as_ref()).map_err(NotLocated::Refused)?;
    let size = n
        .checked_mul(dt.width)
        .ok_or_else(|| NotLocated::Refused("its size overflows 64 bits".into()))?;
    if !t.tensor_content.is_empty() {
        let len = t.tensor_content.len() as u64;
        if len != size {
            return Err(NotLocated::Refused(format!(
                "its tensor_content holds {len} bytes but {shape:?} elements of {} take {size} (TensorFlow refuses it)",
                dt.name
            )));
        }
        let offset = offset_in(file, &t.tensor_content).ok_or_else(|| {
            NotLocated::Refused("its tensor_content is not a slice of the file".into())
        })?;
        return Ok(Located {
            dtype: dt,
            shape,
            bytes: Data::Range(offset, len),
            extra_values: false,
        });
    }
    if size > *budget {
        return Err(NotLocated::Refused(format!(
            "{n} elements of {} decoded from its typed values would take {size} bytes, past what this reader decodes for a file of this size",
            dt.name
        )));
    }
    let values = typed_values(t, dt).map_err(NotLocated::Refused)?;
    let width = dt.width as usize;
    let have = values.len() / width.max(1);
    let n = n as usize;
    let mut out = Vec::with_capacity(size as usize);
    if have == 0 {
        out.resize(size as usize, 0);
    } else {
        let take = have.min(n);
        out.extend_from_slice(&values[..take * width]);
        let last = &values[(take - 1) * width..take * width];
        while out.len() < size as usize {
            out.extend_from_slice(last);
        }
    }
    *budget -= size;
    Ok(Located {
        dtype: dt,
        shape,
        bytes: Data::Inline(out),
        extra_values: have > n,
    })
}

/// The typed values of `t` as little-endian element bytes, from the field TensorFlow reads
/// for its type (`ProtoHelper<T>` in tensor.cc).
fn typed_values(t: &TensorProto, dt: DType) -> Result<Vec<u8>, String> {
    // The types held in `int_val`: TensorFlow casts each int32 to the element type, which
    // keeps its low bytes.
    let narrow = |bits: u32| -> Result<Vec<u8>, String> {
        let width = (bits / 8) as usize;
        let mut out = Vec::with_capacity(t.int_val.len() * width);
        for &v in &t.int_val {
            out.extend_from_slice(&v.to_le_bytes()[..width]);
        }
        Ok(out)
    };
    Ok(match t.dtype {
        1 => t.float_val.iter().flat_map(|v| v.to_le_bytes()).collect(),
        2 => t.double_val.iter().flat_map(|v| v.to_le_bytes()).collect(),
        3 | 13 => narrow(32)?,
        4 | 12 => narrow(8)?,
        5 | 15 => narrow(16)?,
        6 | 11 => narrow(8)?,
        16 | 17 => narrow(16)?,
        9 => t.int64_val.iter().flat_map(|v| v.to_le_bytes()).collect(),
        10 => t.bool_val.iter().map(|&b| u8::from(b)).collect(),
        14 | 19 => t
            .half_val
            .iter()
            .flat_map(|v| (*v as u16).to_le_bytes())
            .collect(),
        // Complex values come in (real, imaginary) pairs; an odd count is refused.
        8 => {
            if !t.scomplex_val.len().is_multiple_of(2) {
                return Err("its scomplex_val holds an odd number of floats".into());
            }
            t.scomplex_val
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect()
        }
        18 => {
            if !t.dcomplex_val.len().is_multiple_of(2) {
                return Err("its dcomplex_val holds an odd number of doubles".into());
            }
            t.dcomplex_val
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect()
        }
        22 => t.uint32_val.iter().flat_map(|v| v.to_le_bytes()).collect(),
        23 => t.uint64_val.iter().flat_map(|v| v.to_le_bytes()).collect(),
        24..=28 | 33 => t.float8_val.to_vec(),
        29..=32 => narrow(8)?,
        _ => return Err(format!("no typed values are read for {}", dt.name)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::tensor_shape_proto::Dim;

    fn shape(dims: &[i64]) -> Option<TensorShapeProto> {
        Some(TensorShapeProto {
            dim: dims
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        })
    }

    #[test]
    fn fills_with_the_last_value_as_the_runtime_does() {
        let t = TensorProto {
            dtype: 1,
            tensor_shape: shape(&[3]),
            float_val: vec![1.0, 2.0],
            ..Default::default()
        };
        let mut budget = 100;
        let l = locate(&t, &Bytes::new(), &mut budget).unwrap();
        let mut want = Vec::new();
        for v in [1.0f32, 2.0, 2.0] {
            want.extend(v.to_le_bytes());
        }
        assert_eq!(l.bytes, Data::Inline(want));
        assert_eq!(budget, 88);
        // None at all: zeros.
        let t = TensorProto {
            dtype: 3,
            tensor_shape: shape(&[2]),
            ..Default::default()
        };
        assert_eq!(
            locate(&t, &Bytes::new(), &mut budget).unwrap().bytes,
            Data::Inline(vec![0; 8])
        );
        // A splat past the budget is refused, not expanded.
        let t = TensorProto {
            dtype: 1,
            tensor_shape: shape(&[1_000_000_000]),
            float_val: vec![0.0],
            ..Default::default()
        };
        assert!(matches!(
            locate(&t, &Bytes::new(), &mut budget),
            Err(NotLocated::Refused(_))
        ));
    }

    #[test]
    fn tensor_content_must_hold_the_shape_and_lie_in_the_file() {
        let file = Bytes::from_static(&[0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
        let t = TensorProto {
            dtype: 3,
            tensor_shape: shape(&[2]),
            tensor_content: file.slice(4..12),
            ..Default::default()
        };
        let mut budget = 0;
        assert_eq!(
            locate(&t, &file, &mut budget).unwrap().bytes,
            Data::Range(4, 8)
        );
        let t = TensorProto {
            dtype: 3,
            tensor_shape: shape(&[3]),
            tensor_content: file.slice(4..12),
            ..Default::default()
        };
        assert!(locate(&t, &file, &mut budget).is_err());
        let s = TensorProto {
            dtype: 7,
            ..Default::default()
        };
        assert!(matches!(
            locate(&s, &file, &mut budget),
            Err(NotLocated::NotNumeric(_))
        ));
        assert!(shape_of(shape(&[-1]).as_ref()).is_err());
    }
}
