//! ExecuTorch's scalar types (`ET_FORALL_SCALAR_TYPES`, runtime/core/portable_type/scalar_type.h
//! at v1.4.1): the name, the element size (`elementSize`) and socair's element type where one
//! fits. `isValid` (runtime/core/exec_aten/util/scalar_type_util.h) accepts 0..=29.

/// One scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarType {
    /// Its value in the schema.
    pub id: u8,
    /// ExecuTorch's name (`Float`, `Byte`, …).
    pub name: &'static str,
    /// Bytes per element.
    pub size: u64,
    /// socair's element type (the safetensors names), where the elements are plain numbers.
    pub element: Option<&'static str>,
}

const fn t(id: u8, name: &'static str, size: u64, element: Option<&'static str>) -> ScalarType {
    ScalarType {
        id,
        name,
        size,
        element,
    }
}

/// Every valid scalar type, by value.
pub static SCALAR_TYPES: [ScalarType; 30] = [
    t(0, "Byte", 1, Some("U8")),
    t(1, "Char", 1, Some("I8")),
    t(2, "Short", 2, Some("I16")),
    t(3, "Int", 4, Some("I32")),
    t(4, "Long", 8, Some("I64")),
    t(5, "Half", 2, Some("F16")),
    t(6, "Float", 4, Some("F32")),
    t(7, "Double", 8, Some("F64")),
    t(8, "ComplexHalf", 4, None),
    t(9, "ComplexFloat", 8, None),
    t(10, "ComplexDouble", 16, None),
    t(11, "Bool", 1, Some("BOOL")),
    t(12, "QInt8", 1, None),
    t(13, "QUInt8", 1, None),
    t(14, "QInt32", 4, None),
    t(15, "BFloat16", 2, Some("BF16")),
    t(16, "QUInt4x2", 1, None),
    t(17, "QUInt2x4", 1, None),
    t(18, "Bits1x8", 1, None),
    t(19, "Bits2x4", 1, None),
    t(20, "Bits4x2", 1, None),
    t(21, "Bits8", 1, None),
    t(22, "Bits16", 2, None),
    t(23, "Float8_e5m2", 1, Some("F8_E5M2")),
    t(24, "Float8_e4m3fn", 1, Some("F8_E4M3")),
    t(25, "Float8_e5m2fnuz", 1, None),
    t(26, "Float8_e4m3fnuz", 1, None),
    t(27, "UInt16", 2, Some("U16")),
    t(28, "UInt32", 4, Some("U32")),
    t(29, "UInt64", 8, Some("U64")),
];

/// The scalar type of schema value `id` (an `int8`), when `isValid` accepts it.
pub fn scalar_type(id: u8) -> Option<&'static ScalarType> {
    SCALAR_TYPES.get(usize::from(id))
}
