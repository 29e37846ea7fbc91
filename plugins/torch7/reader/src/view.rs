//! A tensor's bytes for the host to fingerprint, as its view of a storage lays them out.
//!
//! A torch7 tensor is a view (generic/Tensor.c: sizes, strides in elements, an offset) of a
//! storage whose elements lie in the file as written. What the tensor holds, in C order, is:
//! * one range of the file, when the view is contiguous (strides those of its sizes, a
//!   dimension of size 1 whatever its stride);
//! * one range and the strides (the plugin API's `strides`), when the view touches each
//!   element at most once (no zero or overlapping stride): the host gathers it;
//! * otherwise (an expanded view repeating elements) its elements gathered here, inline,
//!   while the input's inline budget lasts; past it the tensor is listed as not described.

use crate::walk::TensorView;
use abi_stable::std_types::{ROption, RVec};
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};
use socair_plugin_kit::report::tensor_in_file;

/// How a view's bytes are described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// One range in C order.
    Contiguous(ByteRange),
    /// One range and element strides.
    Strided(ByteRange, Vec<u64>),
    /// Elements repeat: gathered bytes are needed (`len` of them).
    Repeating { len: u64 },
}

/// Elements of `sizes`.
fn numel(sizes: &[u64]) -> Option<u64> {
    sizes.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
}

/// The layout of `v` (its view checked inside its storage by the walk).
pub fn layout(v: &TensorView) -> Option<Layout> {
    let e = v.storage.elem.size;
    let n = numel(&v.sizes)?;
    let base = v.storage.data.checked_add(v.offset.checked_mul(e)?)?;
    let mut expected = 1u64;
    let mut contiguous = true;
    for (&d, &s) in v.sizes.iter().zip(&v.strides).rev() {
        if d != 1 {
            contiguous &= s == expected;
            expected = expected.checked_mul(d)?;
        }
    }
    if contiguous {
        return Some(Layout::Contiguous(ByteRange {
            offset: base,
            len: n.checked_mul(e)?,
        }));
    }
    // Each stride at least the span of the dimensions with smaller strides: no element twice.
    let mut dims: Vec<(u64, u64)> = v
        .sizes
        .iter()
        .zip(&v.strides)
        .filter(|(d, _)| **d > 1)
        .map(|(&d, &s)| (s, d))
        .collect();
    dims.sort_unstable();
    let mut span = 1u64;
    let mut once = true;
    for &(s, d) in &dims {
        once &= s >= span;
        span = span.checked_add((d - 1).checked_mul(s)?)?;
    }
    if once {
        // span - 1 is the furthest element from the first.
        return Some(Layout::Strided(
            ByteRange {
                offset: base,
                len: span.checked_mul(e)?,
            },
            v.strides.clone(),
        ));
    }
    Some(Layout::Repeating {
        len: n.checked_mul(e)?,
    })
}

/// The elements of `v` gathered from `bytes` in C order (its view checked inside its storage,
/// and its storage inside `bytes`, by the walk).
pub fn gather(bytes: &[u8], v: &TensorView) -> Option<Vec<u8>> {
    let e = usize::try_from(v.storage.elem.size).ok()?;
    let n = usize::try_from(numel(&v.sizes)?).ok()?;
    let mut out = Vec::with_capacity(n.checked_mul(e)?);
    let mut index = vec![0u64; v.sizes.len()];
    for _ in 0..n {
        let element = index
            .iter()
            .zip(&v.strides)
            .try_fold(v.offset, |a, (&i, &s)| a.checked_add(i.checked_mul(s)?))?;
        let at =
            usize::try_from(v.storage.data.checked_add(element.checked_mul(e as u64)?)?).ok()?;
        out.extend_from_slice(bytes.get(at..at.checked_add(e)?)?);
        for (i, &d) in index.iter_mut().zip(&v.sizes).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    Some(out)
}

/// A descriptor of `v` named `name`, with `ranges` or `inline` bytes and optional strides.
pub fn descriptor(
    name: &str,
    v: &TensorView,
    ranges: Vec<ByteRange>,
    strides: Option<Vec<u64>>,
    inline: Option<Vec<u8>>,
) -> TensorDescriptor {
    let dtype = v.storage.elem.dtype;
    let mut t = tensor_in_file(
        name,
        dtype,
        Some(dtype),
        v.sizes.clone(),
        ranges,
        ByteOrder::Little,
    );
    t.strides = strides.map(RVec::from).into();
    t.inline = match inline {
        Some(b) => ROption::RSome(b.into()),
        None => ROption::RNone,
    };
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classes::{classify, Class};
    use crate::walk::StorageData;

    fn view(sizes: &[u64], strides: &[u64], offset: u64) -> TensorView {
        let Class::Storage { elem, .. } = classify(b"torch.FloatStorage") else {
            unreachable!()
        };
        TensorView {
            name: "t".into(),
            at: 0,
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
            offset,
            storage: StorageData {
                elem,
                count: 20,
                data: 4,
            },
        }
    }

    #[test]
    fn views_are_ranges_strides_or_gathered() {
        assert_eq!(
            layout(&view(&[2, 3], &[3, 1], 2)),
            Some(Layout::Contiguous(ByteRange {
                offset: 12,
                len: 24
            }))
        );
        assert_eq!(
            layout(&view(&[1, 3], &[99, 1], 0)),
            Some(Layout::Contiguous(ByteRange { offset: 4, len: 12 }))
        );
        // A transpose of a 2x3: strides (1, 3), elements 0..=5.
        assert_eq!(
            layout(&view(&[3, 2], &[1, 3], 0)),
            Some(Layout::Strided(
                ByteRange { offset: 4, len: 24 },
                vec![1, 3]
            ))
        );
        // An expanded row: stride 0 repeats it.
        assert_eq!(
            layout(&view(&[4, 3], &[0, 1], 0)),
            Some(Layout::Repeating { len: 48 })
        );
        let bytes: Vec<u8> = (0..84u8).collect();
        let g = gather(&bytes, &view(&[2, 2], &[0, 1], 1)).unwrap();
        assert_eq!(
            g,
            [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]
        );
    }
}
