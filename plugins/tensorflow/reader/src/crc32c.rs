//! CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TensorFlow's
//! `tensorflow/core/lib/hash/crc32c.h` computes it, and the masking its table format applies to
//! stored checksums (`crc32c::Mask`: rotate right by 15 bits, add 0xa282ead8). The CRC itself
//! is the `crc32c` crate's (hardware-accelerated where the CPU has it); the masking is
//! TensorFlow's own.

/// The CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    ::crc32c::crc32c(data)
}

/// Continues the CRC-32C `crc` over `data`.
pub fn extend(crc: u32, data: &[u8]) -> u32 {
    ::crc32c::crc32c_append(crc, data)
}

/// A checksum as the table format stores it.
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(extend(crc32c(b"1234"), b"56789"), 0xE306_9283);
        // leveldb's crc32c_test: Mask is not the identity, and Unmask(Mask(x)) == x.
        let c = crc32c(b"foo");
        assert_ne!(mask(c), c);
        assert_ne!(mask(mask(c)), c);
    }
}
