//! The safetensors dtype table, as the safetensors crate 0.8 defines it.

/// A safetensors dtype. Declared in the order of the safetensors crate's `Dtype` enum, whose
/// derived `Ord` the serializer sorts by (largest first); the order is part of the byte-stable
/// output, so it must not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dtype {
    /// Boolean, one byte.
    Bool,
    /// 4-bit float (e2m1), two per byte.
    F4,
    /// 6-bit float (e2m3).
    F6E2M3,
    /// 6-bit float (e3m2).
    F6E3M2,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// 8-bit float e5m2.
    F8E5M2,
    /// 8-bit float e4m3 (torch's float8_e4m3fn).
    F8E4M3,
    /// 8-bit exponent-only scale (e8m0).
    F8E8M0,
    /// 8-bit float e4m3, finite, unsigned zero.
    F8E4M3Fnuz,
    /// 8-bit float e5m2, finite, unsigned zero.
    F8E5M2Fnuz,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// IEEE binary32.
    F32,
    /// Complex of two binary32.
    C64,
    /// IEEE binary64.
    F64,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
}

impl Dtype {
    /// Every dtype, in declaration order.
    pub const ALL: [Dtype; 22] = [
        Dtype::Bool,
        Dtype::F4,
        Dtype::F6E2M3,
        Dtype::F6E3M2,
        Dtype::U8,
        Dtype::I8,
        Dtype::F8E5M2,
        Dtype::F8E4M3,
        Dtype::F8E8M0,
        Dtype::F8E4M3Fnuz,
        Dtype::F8E5M2Fnuz,
        Dtype::I16,
        Dtype::U16,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I32,
        Dtype::U32,
        Dtype::F32,
        Dtype::C64,
        Dtype::F64,
        Dtype::I64,
        Dtype::U64,
    ];

    /// The name the header uses.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "BOOL",
            Dtype::F4 => "F4",
            Dtype::F6E2M3 => "F6_E2M3",
            Dtype::F6E3M2 => "F6_E3M2",
            Dtype::U8 => "U8",
            Dtype::I8 => "I8",
            Dtype::F8E5M2 => "F8_E5M2",
            Dtype::F8E4M3 => "F8_E4M3",
            Dtype::F8E8M0 => "F8_E8M0",
            Dtype::F8E4M3Fnuz => "F8_E4M3FNUZ",
            Dtype::F8E5M2Fnuz => "F8_E5M2FNUZ",
            Dtype::I16 => "I16",
            Dtype::U16 => "U16",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
            Dtype::I32 => "I32",
            Dtype::U32 => "U32",
            Dtype::F32 => "F32",
            Dtype::C64 => "C64",
            Dtype::F64 => "F64",
            Dtype::I64 => "I64",
            Dtype::U64 => "U64",
        }
    }

    /// The dtype a header name denotes; names are case-sensitive, as in the reference reader.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bits per element.
    pub fn bits(self) -> u64 {
        match self {
            Dtype::F4 => 4,
            Dtype::F6E2M3 | Dtype::F6E3M2 => 6,
            Dtype::Bool
            | Dtype::U8
            | Dtype::I8
            | Dtype::F8E5M2
            | Dtype::F8E4M3
            | Dtype::F8E8M0
            | Dtype::F8E4M3Fnuz
            | Dtype::F8E5M2Fnuz => 8,
            Dtype::I16 | Dtype::U16 | Dtype::F16 | Dtype::BF16 => 16,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 32,
            Dtype::C64 | Dtype::F64 | Dtype::I64 | Dtype::U64 => 64,
        }
    }

    /// Bytes taken by `elements` elements, or `None` on overflow or when the bits do not fill
    /// whole bytes.
    pub fn byte_len(self, elements: u64) -> Option<u64> {
        let bits = elements.checked_mul(self.bits())?;
        (bits % 8 == 0).then_some(bits / 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_name(d.name()), Some(d));
        }
        assert_eq!(Dtype::from_name("f32"), None);
        assert_eq!(Dtype::from_name("F6_E2M3"), Some(Dtype::F6E2M3));
    }

    #[test]
    fn declaration_order_matches_all() {
        let mut sorted = Dtype::ALL;
        sorted.sort();
        assert_eq!(sorted, Dtype::ALL);
    }

    #[test]
    fn sub_byte_lengths() {
        assert_eq!(Dtype::F4.byte_len(4), Some(2));
        assert_eq!(Dtype::F4.byte_len(3), None);
        assert_eq!(Dtype::F6E3M2.byte_len(4), Some(3));
        assert_eq!(Dtype::U64.byte_len(u64::MAX), None);
    }
}
