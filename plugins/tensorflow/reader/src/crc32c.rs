//! CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TensorFlow's
//! `tensorflow/core/lib/hash/crc32c.h` computes it, and the masking its table format applies to
//! stored checksums (`crc32c::Mask`: rotate right by 15 bits, add 0xa282ead8).

const fn table() -> [[u32; 256]; 4] {
    let mut t = [[0u32; 256]; 4];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut s = 1;
        while s < 4 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            s += 1;
        }
        i += 1;
    }
    t
}

static TABLE: [[u32; 256]; 4] = table();

/// The CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    extend(0, data)
}

/// Continues the CRC-32C `crc` over `data`.
pub fn extend(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    let mut chunks = data.chunks_exact(4);
    for w in &mut chunks {
        c ^= u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        c = TABLE[3][(c & 0xff) as usize]
            ^ TABLE[2][((c >> 8) & 0xff) as usize]
            ^ TABLE[1][((c >> 16) & 0xff) as usize]
            ^ TABLE[0][(c >> 24) as usize];
    }
    for &b in chunks.remainder() {
        c = (c >> 8) ^ TABLE[0][((c ^ u32::from(b)) & 0xff) as usize];
    }
    !c
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
