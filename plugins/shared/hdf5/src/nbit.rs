//! The n-bit filter undone (`H5Z__filter_nbit` and `H5Z__nbit_decompress*`, `H5Znbit.c`,
//! HDF5 2.0): each element's significant bits (its type's precision, at its bit offset),
//! packed high bit first with no padding between elements; the other bits of the element come
//! back zero. The filter's stored values describe the type it packed: the count of values, a
//! flag saying nothing was packed (a type with no padding bits), the elements in the chunk,
//! then the type: an atomic number (size, byte order, precision, offset), an array or a
//! compound (recursively), or a type passed through whole ("no-op": strings, references…).
//!
//! The C code trusts those values; here every one is checked, every read of the packed bits
//! and every write of an element is bounded, and the work is counted.

use crate::model::Refusal;

/// `H5Z_NBIT_ATOMIC`, `_ARRAY`, `_COMPOUND`, `_NOOPTYPE` (`H5Zprivate.h`).
const ATOMIC: u32 = 1;
const ARRAY: u32 = 2;
const COMPOUND: u32 = 3;
const NOOPTYPE: u32 = 4;

/// `H5Z_NBIT_ORDER_LE` (`H5Zprivate.h`); the other order is big-endian.
const ORDER_LE: u32 = 0;

/// `data` unpacked by the filter values `cd`; the output (`cd[2]` elements of `cd[4]` bytes)
/// may not pass `limit` bytes.
pub fn undo(data: Vec<u8>, cd: &[u32], limit: u64) -> Result<Vec<u8>, Refusal> {
    let corrupt = |why: &str| {
        Refusal::Corrupt(format!(
            "its n-bit parameters or data are unsound ({why}): the HDF5 library refuses to read it"
        ))
    };
    if cd.first().map(|&n| n as usize) != Some(cd.len()) {
        return Err(corrupt("the count of parameters is not the first"));
    }
    // `need_not_compress`: the filter passed the chunk through.
    if cd.get(1).copied().unwrap_or(0) != 0 {
        return Ok(data);
    }
    let (Some(&elements), Some(&class), Some(&size)) = (cd.get(2), cd.get(3), cd.get(4)) else {
        return Err(corrupt("fewer than five parameters"));
    };
    let out_len = u64::from(elements) * u64::from(size);
    if out_len > limit {
        return Err(Refusal::TooLarge(format!(
            "its n-bit data unpacks to {out_len} bytes, more than {limit}"
        )));
    }
    let mut unpack = Unpack {
        packed: &data,
        byte: 0,
        bits_left: 8,
        out: vec![0u8; out_len as usize],
        cd,
        // Bounded work: a few steps per output byte, whatever the parameters nest.
        steps_left: out_len.saturating_mul(8).saturating_add(1 << 16),
    };
    let size = size as usize;
    for i in 0..elements as usize {
        let at = i * size;
        match class {
            ATOMIC => {
                let p = unpack.atomic_at(4)?;
                unpack.atomic(at, &p)?
            }
            ARRAY => unpack.array(at, &mut 4, 0)?,
            COMPOUND => unpack.compound(at, &mut 4, 0)?,
            _ => return Err(corrupt("a type class the filter does not pack")),
        }
    }
    Ok(unpack.out)
}

/// An atomic type's parameters (`parms_atomic`).
struct Atomic {
    size: usize,
    little: bool,
    precision: usize,
    offset: usize,
}

/// The state of one chunk's unpacking: where the next packed bit is, and the output.
struct Unpack<'a> {
    packed: &'a [u8],
    /// The packed byte being read (`j`).
    byte: usize,
    /// Its bits not yet read (`buf_len`), counted from its low end.
    bits_left: usize,
    out: Vec<u8>,
    cd: &'a [u32],
    steps_left: u64,
}

/// How deep arrays and compounds may nest (HDF5's own types nest far less).
const MAX_DEPTH: usize = 32;

impl Unpack<'_> {
    fn corrupt(why: &str) -> Refusal {
        Refusal::Corrupt(format!(
            "its n-bit parameters or data are unsound ({why}): the HDF5 library refuses to read it"
        ))
    }

    fn step(&mut self) -> Result<(), Refusal> {
        self.steps_left = self
            .steps_left
            .checked_sub(1)
            .ok_or_else(|| Self::corrupt("its parameters ask for more work than its output"))?;
        Ok(())
    }

    fn parm(&self, index: usize) -> Result<u32, Refusal> {
        self.cd
            .get(index)
            .copied()
            .ok_or_else(|| Self::corrupt("a type description past its parameters"))
    }

    fn packed_byte(&self) -> Result<u8, Refusal> {
        self.packed
            .get(self.byte)
            .copied()
            .ok_or_else(|| Self::corrupt("fewer packed bits than its elements hold"))
    }

    fn next_byte(&mut self) {
        self.byte += 1;
        self.bits_left = 8;
    }

    /// The atomic type described at `cd[at..at + 4]`, checked as the library checks it
    /// (precision and offset within the size).
    fn atomic_at(&self, at: usize) -> Result<Atomic, Refusal> {
        let p = Atomic {
            size: self.parm(at)? as usize,
            little: self.parm(at + 1)? == ORDER_LE,
            precision: self.parm(at + 2)? as usize,
            offset: self.parm(at + 3)? as usize,
        };
        if p.size == 0 || p.precision > p.size * 8 || p.precision + p.offset > p.size * 8 {
            return Err(Self::corrupt("invalid datatype precision/offset"));
        }
        Ok(p)
    }

    fn write(&mut self, at: usize, value: u8, or: bool) -> Result<(), Refusal> {
        let slot = self
            .out
            .get_mut(at)
            .ok_or_else(|| Self::corrupt("a member past its element"))?;
        *slot = if or { *slot | value } else { value };
        Ok(())
    }

    /// Byte `k` of the element at `at`: `H5Z__nbit_decompress_one_byte`.
    fn one_byte(
        &mut self,
        at: usize,
        k: usize,
        (begin, end): (usize, usize),
        p: &Atomic,
    ) -> Result<(), Refusal> {
        self.step()?;
        let mut val = self.packed_byte()?;
        let (mut len, shift) = if begin != end {
            if k == begin {
                (8 - (p.size * 8 - p.precision - p.offset) % 8, 0)
            } else if k == end {
                let len = 8 - p.offset % 8;
                (len, 8 - len)
            } else {
                (8, 0)
            }
        } else {
            (p.precision, p.offset % 8)
        };
        let low = |n: usize| -> u32 { !(u32::MAX.checked_shl(n as u32).unwrap_or(0)) };
        if self.bits_left > len {
            let v = ((u32::from(val) >> (self.bits_left - len)) & low(len)) << shift;
            self.write(at + k, v as u8, false)?;
            self.bits_left -= len;
        } else {
            let v = ((u32::from(val) & low(self.bits_left)) << (len - self.bits_left)) << shift;
            self.write(at + k, v as u8, false)?;
            len -= self.bits_left;
            self.next_byte();
            if len == 0 {
                return Ok(());
            }
            val = self.packed_byte()?;
            let v = ((u32::from(val) >> (self.bits_left - len)) & low(len)) << shift;
            self.write(at + k, v as u8, true)?;
            self.bits_left -= len;
        }
        Ok(())
    }

    /// One number: `H5Z__nbit_decompress_one_atomic`, its significant bytes from the most
    /// significant down.
    fn atomic(&mut self, at: usize, p: &Atomic) -> Result<(), Refusal> {
        if p.precision == 0 {
            return Ok(());
        }
        let bits = p.size * 8;
        if p.little {
            let top = p.precision + p.offset;
            let begin = if !top.is_multiple_of(8) {
                top / 8
            } else {
                top / 8 - 1
            };
            let end = p.offset / 8;
            for k in (end..=begin).rev() {
                self.one_byte(at, k, (begin, end), p)?;
            }
        } else {
            let begin = (bits - p.precision - p.offset) / 8;
            let end = if !p.offset.is_multiple_of(8) {
                (bits - p.offset) / 8
            } else {
                (bits - p.offset) / 8 - 1
            };
            for k in begin..=end {
                self.one_byte(at, k, (begin, end), p)?;
            }
        }
        Ok(())
    }

    /// `size` bytes passed through whole: `H5Z__nbit_decompress_one_nooptype`.
    fn nooptype(&mut self, at: usize, size: usize) -> Result<(), Refusal> {
        for i in 0..size {
            self.step()?;
            let val = self.packed_byte()?;
            let mut len = 8;
            let v = (u32::from(val) & !(u32::MAX << self.bits_left)) << (len - self.bits_left);
            self.write(at + i, v as u8, false)?;
            len -= self.bits_left;
            self.next_byte();
            if len == 0 {
                continue;
            }
            let val = self.packed_byte()?;
            let v = (u32::from(val) >> (self.bits_left - len)) & !(u32::MAX << len);
            self.write(at + i, v as u8, true)?;
            self.bits_left -= len;
        }
        Ok(())
    }

    /// An array element: `H5Z__nbit_decompress_one_array`; `index` moves past its description.
    fn array(&mut self, at: usize, index: &mut usize, depth: usize) -> Result<(), Refusal> {
        if depth > MAX_DEPTH {
            return Err(Self::corrupt("types nested too deep"));
        }
        let total = self.parm(*index)? as usize;
        let base_class = self.parm(*index + 1)?;
        *index += 2;
        match base_class {
            ATOMIC => {
                let p = self.atomic_at(*index)?;
                *index += 4;
                for i in 0..total / p.size {
                    self.atomic(at + i * p.size, &p)?;
                }
            }
            ARRAY | COMPOUND => {
                let base = self.parm(*index)? as usize;
                if base == 0 {
                    return Err(Self::corrupt("an array of elements of no size"));
                }
                let begin = *index;
                for i in 0..total / base {
                    self.step()?;
                    *index = begin;
                    if base_class == ARRAY {
                        self.array(at + i * base, index, depth + 1)?;
                    } else {
                        self.compound(at + i * base, index, depth + 1)?;
                    }
                }
                if total / base == 0 {
                    return Err(Self::corrupt("an array smaller than its element"));
                }
            }
            NOOPTYPE => {
                *index += 1;
                self.nooptype(at, total)?;
            }
            _ => return Err(Self::corrupt("a type class the filter does not pack")),
        }
        Ok(())
    }

    /// A compound element: `H5Z__nbit_decompress_one_compound`.
    fn compound(&mut self, at: usize, index: &mut usize, depth: usize) -> Result<(), Refusal> {
        if depth > MAX_DEPTH {
            return Err(Self::corrupt("types nested too deep"));
        }
        let size = self.parm(*index)? as usize;
        let members = self.parm(*index + 1)?;
        *index += 2;
        let mut used = 0usize;
        for _ in 0..members {
            self.step()?;
            let offset = self.parm(*index)? as usize;
            let class = self.parm(*index + 1)?;
            *index += 2;
            let member_size = self.parm(*index)? as usize;
            used += member_size;
            if used > size {
                return Err(Self::corrupt(
                    "compound member offset overflowed compound size",
                ));
            }
            match class {
                ATOMIC => {
                    let p = self.atomic_at(*index)?;
                    *index += 4;
                    self.atomic(at + offset, &p)?;
                }
                ARRAY => self.array(at + offset, index, depth + 1)?,
                COMPOUND => self.compound(at + offset, index, depth + 1)?,
                NOOPTYPE => {
                    *index += 1;
                    self.nooptype(at + offset, member_size)?;
                }
                _ => return Err(Self::corrupt("a type class the filter does not pack")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `H5Z__set_local_nbit` stores for `elements` of an atomic type.
    fn atomic(elements: u32, size: u32, little: bool, precision: u32, offset: u32) -> Vec<u32> {
        vec![
            8,
            0,
            elements,
            ATOMIC,
            size,
            u32::from(!little),
            precision,
            offset,
        ]
    }

    #[test]
    fn twelve_bits_at_offset_two_of_little_endian_int16() {
        // Two elements whose significant bits are 0xabc and 0x123 (bits 2..14): packed high
        // bit first, 24 bits: 0xabc123.
        let out = undo(vec![0xab, 0xc1, 0x23], &atomic(2, 2, true, 12, 2), 64).unwrap();
        let values: Vec<u16> = out
            .chunks(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(values, vec![0xabc << 2, 0x123 << 2]);
        // Big-endian: the same numbers, bytes the other way round.
        let out = undo(vec![0xab, 0xc1, 0x23], &atomic(2, 2, false, 12, 2), 64).unwrap();
        assert_eq!(
            out,
            [(0xabcu16 << 2).to_be_bytes(), (0x123u16 << 2).to_be_bytes()].concat()
        );
    }

    #[test]
    fn unsound_parameters_and_short_data_are_refused() {
        let ok = atomic(2, 2, true, 12, 2);
        assert!(matches!(
            undo(vec![0xab], &ok, 64),
            Err(Refusal::Corrupt(_))
        ));
        assert!(matches!(
            undo(vec![0; 3], &atomic(2, 2, true, 12, 6), 64),
            Err(Refusal::Corrupt(_))
        ));
        assert!(matches!(
            undo(vec![0; 3], &ok[..7], 64),
            Err(Refusal::Corrupt(_))
        ));
        assert!(matches!(
            undo(vec![0; 3], &ok, 3),
            Err(Refusal::TooLarge(_))
        ));
        // Nothing packed: the chunk as it is.
        let mut passed = ok.clone();
        passed[1] = 1;
        assert_eq!(undo(vec![1, 2, 3], &passed, 64).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn compound_members_and_nooptypes() {
        // One compound of 3 bytes: a 4-bit number at offset 0 of a 1-byte member, then two
        // bytes passed through.
        let cd = vec![
            13, 0, 1, COMPOUND, 3, 2, 0, ATOMIC, 1, 0, 4, 0, 1, NOOPTYPE, 2,
        ];
        let mut cd = cd;
        cd[0] = cd.len() as u32;
        // Packed: 0b1010 then 0xff, 0x00 → 1010_1111 1111_0000 0000_....
        let out = undo(vec![0b1010_1111, 0b1111_0000, 0], &cd, 64).unwrap();
        assert_eq!(out, vec![0b1010, 0xff, 0x00]);
    }
}
