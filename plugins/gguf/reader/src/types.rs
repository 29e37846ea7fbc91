//! The ggml tensor type table: ids, names, block sizes and bytes per block, as ggml defines
//! them (`include/ggml.h`, `type_traits` in `src/ggml.c`, the `static_assert`s of
//! `src/ggml-common.h`; QK_K = 256).
//!
//! Where gguf-py's `GGML_QUANT_SIZES` disagrees with ggml (Q8_1: gguf-py 0.19 says 40 bytes a
//! block, ggml's `block_q8_1` is 36), ggml wins: it is what reads the file.

/// A ggml tensor type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgmlType {
    /// The type id stored in tensor infos.
    pub id: u32,
    /// ggml's name.
    pub name: &'static str,
    /// Elements per block.
    pub block_size: u64,
    /// Bytes per block.
    pub type_size: u64,
    /// The element type in socair's vocabulary (safetensors names) for unquantized types.
    pub element: Option<&'static str>,
    /// Why the size is disputed between writers and ggml, if it is.
    pub disputed: Option<&'static str>,
}

const fn t(
    id: u32,
    name: &'static str,
    block_size: u64,
    type_size: u64,
    element: Option<&'static str>,
) -> GgmlType {
    GgmlType {
        id,
        name,
        block_size,
        type_size,
        element,
        disputed: None,
    }
}

/// Every type ggml can size.
pub const TYPES: &[GgmlType] = &[
    t(0, "F32", 1, 4, Some("F32")),
    t(1, "F16", 1, 2, Some("F16")),
    t(2, "Q4_0", 32, 18, None),
    t(3, "Q4_1", 32, 20, None),
    t(6, "Q5_0", 32, 22, None),
    t(7, "Q5_1", 32, 24, None),
    t(8, "Q8_0", 32, 34, None),
    GgmlType {
        disputed: Some(
            "ggml's Q8_1 block is 36 bytes but gguf-py 0.19 writes 40: readers disagree on this tensor's bytes",
        ),
        ..t(9, "Q8_1", 32, 36, None)
    },
    t(10, "Q2_K", 256, 84, None),
    t(11, "Q3_K", 256, 110, None),
    t(12, "Q4_K", 256, 144, None),
    t(13, "Q5_K", 256, 176, None),
    t(14, "Q6_K", 256, 210, None),
    t(15, "Q8_K", 256, 292, None),
    t(16, "IQ2_XXS", 256, 66, None),
    t(17, "IQ2_XS", 256, 74, None),
    t(18, "IQ3_XXS", 256, 98, None),
    t(19, "IQ1_S", 256, 50, None),
    t(20, "IQ4_NL", 32, 18, None),
    t(21, "IQ3_S", 256, 110, None),
    t(22, "IQ2_S", 256, 82, None),
    t(23, "IQ4_XS", 256, 136, None),
    t(24, "I8", 1, 1, Some("I8")),
    t(25, "I16", 1, 2, Some("I16")),
    t(26, "I32", 1, 4, Some("I32")),
    t(27, "I64", 1, 8, Some("I64")),
    t(28, "F64", 1, 8, Some("F64")),
    t(29, "IQ1_M", 256, 56, None),
    t(30, "BF16", 1, 2, Some("BF16")),
    t(34, "TQ1_0", 256, 54, None),
    t(35, "TQ2_0", 256, 66, None),
    t(39, "MXFP4", 32, 17, None),
    t(40, "NVFP4", 64, 36, None),
    t(41, "Q1_0", 128, 18, None),
    t(42, "Q2_0", 64, 18, None),
];

/// Ids ggml has removed ("support has been removed"; repacked layouts no longer in files).
pub const REMOVED: &[(u32, &str)] = &[
    (4, "Q4_2"),
    (5, "Q4_3"),
    (31, "Q4_0_4_4"),
    (32, "Q4_0_4_8"),
    (33, "Q4_0_8_8"),
    (36, "IQ4_NL_4_4"),
    (37, "IQ4_NL_4_8"),
    (38, "IQ4_NL_8_8"),
];

/// The type with `id`.
pub fn by_id(id: u32) -> Option<&'static GgmlType> {
    TYPES.iter().find(|t| t.id == id)
}

/// The type named `name`.
pub fn by_name(name: &str) -> Option<&'static GgmlType> {
    TYPES.iter().find(|t| t.name == name)
}

/// Why an id cannot be sized.
pub fn unknown_reason(id: u32) -> String {
    match REMOVED.iter().find(|(r, _)| *r == id) {
        Some((_, name)) => {
            format!("type {id} ({name}) was removed from ggml: its size is not known")
        }
        None => format!("type id {id} is unknown to socair: its size is not known"),
    }
}

impl GgmlType {
    /// Bytes of a tensor with `shape` stored innermost first (`ne`), or why not: the row
    /// length must be a whole number of blocks, and every product must fit in 64 bits (and
    /// the element count in an int64, as ggml requires).
    pub fn byte_len(&self, ne: &[u64]) -> Result<u64, String> {
        let elements = ne
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .filter(|&n| n <= i64::MAX as u64)
            .ok_or_else(|| format!("dimensions {ne:?} overflow: more than 2^63 elements"))?;
        let row = ne.first().copied().unwrap_or(1);
        if row % self.block_size != 0 {
            return Err(format!(
                "row length {row} is not a multiple of {}'s block size {}",
                self.name, self.block_size
            ));
        }
        (elements / self.block_size)
            .checked_mul(self.type_size)
            .ok_or_else(|| format!("dimensions {ne:?} overflow: the size needs more than 64 bits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sizes_match_ggml() {
        let mut ids: Vec<u32> = TYPES
            .iter()
            .map(|t| t.id)
            .chain(REMOVED.iter().map(|r| r.0))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), TYPES.len() + REMOVED.len());
        assert_eq!(by_name("Q4_K").unwrap().byte_len(&[256, 2]), Ok(288));
        assert_eq!(by_name("F16").unwrap().byte_len(&[3, 5]), Ok(30));
        assert!(by_name("Q4_0").unwrap().byte_len(&[33]).is_err());
        assert!(by_name("F32")
            .unwrap()
            .byte_len(&[1 << 40, 1 << 40])
            .is_err());
        // llama.cpp PR #27200's Q4_0 row, whose `ne0 * type_size` wrapped to 2 bytes there:
        // dividing by the block size first gives the true (huge) size, which then cannot fit
        // in any file.
        assert_eq!(
            by_name("Q4_0")
                .unwrap()
                .byte_len(&[5_124_095_576_030_431_008]),
            Ok(160_127_986_750_950_969 * 18)
        );
        assert!(unknown_reason(4).contains("Q4_2"));
    }
}
