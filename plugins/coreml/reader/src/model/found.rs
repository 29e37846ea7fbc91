//! One tensor as the reader located it (its element type, shape and bytes, and the file that
//! holds them when it is not the model file), and the descriptor the host fingerprints it by.

use abi_stable::std_types::{ROption, RString, RVec};
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};

/// Where a tensor's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// Ranges `(offset, len)` of the file, in element order.
    Ranges(Vec<(u64, u64)>),
    /// Bytes the reader decoded (varint-coded integers, bools), little-endian.
    Inline(Vec<u8>),
}

/// A tensor located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Its dtype as Core ML names it (`F32`, `UINT4`...).
    pub dtype: &'static str,
    /// Its element type in socair's vocabulary, none for packed sub-byte integers.
    pub element_type: Option<&'static str>,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Its bytes.
    pub bytes: Placed,
    /// The file holding them, relative to the model file's directory (`weights/weight.bin`),
    /// none for the model file itself.
    pub file: Option<String>,
}

impl Located {
    /// The bytes it takes.
    pub fn len(&self) -> u64 {
        match &self.bytes {
            Placed::Ranges(r) => r.iter().map(|r| r.1).sum(),
            Placed::Inline(b) => b.len() as u64,
        }
    }

    /// Whether it takes no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The descriptor of it, named `name`.
    pub fn descriptor(self, name: &str) -> TensorDescriptor {
        let (ranges, inline) = match self.bytes {
            Placed::Ranges(r) => (
                r.into_iter()
                    .map(|(offset, len)| ByteRange { offset, len })
                    .collect(),
                ROption::RNone,
            ),
            Placed::Inline(b) => (RVec::new(), ROption::RSome(RVec::from(b))),
        };
        TensorDescriptor {
            name: name.into(),
            dtype: self.dtype.into(),
            element_type: self.element_type.map(RString::from).into(),
            shape: self.shape.into(),
            ranges,
            byte_order: ByteOrder::Little,
            origin: ROption::RNone,
            strides: ROption::RNone,
            file: self.file.map(RString::from).into(),
            inline,
            outside_model: false,
        }
    }
}

/// The ranges of `spans` (`(start, end)` of the file), adjacent ones merged.
pub fn ranges(spans: &[(usize, usize)]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(a, b) in spans {
        let (a, len) = (a as u64, b.saturating_sub(a) as u64);
        if len == 0 {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.0 + last.1 == a => last.1 += len,
            _ => out.push((a, len)),
        }
    }
    out
}

/// The number of elements of `shape`, none when it overflows.
pub fn elements(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_spans_merge_and_descriptors_carry_the_file() {
        assert_eq!(
            ranges(&[(4, 8), (8, 12), (20, 24), (30, 30)]),
            [(4, 8), (20, 4)]
        );
        let t = Located {
            dtype: "F16",
            element_type: Some("F16"),
            shape: vec![2, 3],
            bytes: Placed::Ranges(vec![(128, 12)]),
            file: Some("weights/weight.bin".into()),
        };
        assert_eq!(t.len(), 12);
        let d = t.descriptor("w");
        assert_eq!(d.file, ROption::RSome(RString::from("weights/weight.bin")));
        assert_eq!(
            d.ranges[0],
            ByteRange {
                offset: 128,
                len: 12
            }
        );
        assert_eq!(elements(&[2, 3, 4]), Some(24));
        assert_eq!(elements(&[u64::MAX, 2]), None);
    }
}
