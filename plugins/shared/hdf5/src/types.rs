//! Datatype and dataspace messages (`H5Odtype.c`, `H5Osdspace.c`, HDF5 1.14), read into the
//! types Keras weights and attributes use: IEEE floats of 2, 4 and 8 bytes, integers of 1 to 8
//! bytes, either byte order, h5py's boolean (an enum of `int8` with `FALSE = 0, TRUE = 1`),
//! fixed-length and variable-length strings. Anything else is named, not read.

use crate::io::Cursor;
use crate::model::Hdf5Error;
pub use crate::model::{Order, Type};

/// Parses a datatype message; `Ok(Type::Other)` for classes outside the subset.
pub fn datatype(data: &[u8], offsets: u8, lengths: u8) -> Result<Type, Hdf5Error> {
    let mut c = Cursor::with(data, offsets, lengths, "datatype message");
    let head = c.u8()?;
    let class = head & 0x0f;
    let version = head >> 4;
    let bits = [c.u8()?, c.u8()?, c.u8()?];
    let size = c.u32()?;
    // Versions 4 (HDF5 1.12: revised references) and 5 (HDF5 2.0: complex numbers, and what
    // libver v200 writes) encode every class this reader models as version 3 does
    // (`H5O__dtype_decode_helper`, `H5Odtype.c`).
    if !(1..=5).contains(&version) {
        return Err(Hdf5Error::new(
            "datatype message",
            format!("version {version}: HDF5 writes 1 to 5"),
        ));
    }
    let order = if bits[0] & 1 == 0 {
        Order::Little
    } else {
        Order::Big
    };
    let other = |what: &str| Type::Other {
        what: what.to_owned(),
        size,
    };
    Ok(match class {
        0 => {
            let offset = c.u16()?;
            let precision = c.u16()?;
            let signed = bits[0] & 0b1000 != 0;
            let bits_of = u64::from(size) * 8;
            if !matches!(size, 1 | 2 | 4 | 8)
                || precision == 0
                || u64::from(offset) + u64::from(precision) > bits_of
            {
                other("an integer of a size or precision numpy has no type for")
            } else if u64::from(precision) == bits_of {
                Type::Int {
                    size,
                    signed,
                    order,
                }
            } else {
                // Fewer significant bits than bytes hold (what the n-bit filter packs): h5py
                // reads it as the integer of its size, which the library's conversion fills
                // from those bits (the padding bits never reach it).
                Type::PackedInt {
                    size,
                    signed,
                    order,
                    precision,
                    offset,
                }
            }
        }
        1 => {
            let offset = c.u16()?;
            let precision = c.u16()?;
            let exp_at = c.u8()?;
            let exp_size = c.u8()?;
            let mant_at = c.u8()?;
            let mant_size = c.u8()?;
            let bias = c.u32()?;
            // IEEE 754: the layout numpy's float16/32/64 have (H5T_IEEE_F*), sign in the top
            // bit, an implied leading mantissa bit (normalization 2), no padding, no VAX order.
            let ieee = match size {
                2 => (10, 5, 0, 10, 15),
                4 => (23, 8, 0, 23, 127),
                8 => (52, 11, 0, 52, 1023),
                _ => (0, 0, 0, 0, 0),
            };
            let sign = bits[1];
            let norm = (bits[0] >> 4) & 3;
            let fine = offset == 0
                && u64::from(precision) == u64::from(size) * 8
                && (exp_at, exp_size, mant_at, mant_size, bias) == ieee
                && u64::from(sign) + 1 == u64::from(size) * 8
                && norm == 2
                && bits[0] & 0b0100_1110 == 0;
            if fine {
                Type::Float { size, order }
            } else {
                other("a floating-point type that is not IEEE binary16, binary32 or binary64")
            }
        }
        3 => Type::FixedString {
            size,
            pad: bits[0] & 0x0f,
        },
        8 => {
            let base = datatype(c.rest(), offsets, lengths)?;
            let members = u16::from_le_bytes([bits[0], bits[1]]);
            if base
                == (Type::Int {
                    size: 1,
                    signed: true,
                    order: Order::Little,
                })
                && members == 2
                && bool_names(&mut c, version)?
            {
                Type::Bool
            } else if matches!(base, Type::Int { .. }) {
                // h5py reads any other enumeration of integers as its base integers.
                base
            } else {
                other("an enumeration")
            }
        }
        9 => {
            let is_string = bits[0] & 0x0f == 1;
            if is_string {
                Type::VarString
            } else {
                other("a variable-length sequence")
            }
        }
        2 => other("a time type"),
        4 => other("a bitfield"),
        5 => Type::Opaque { size },
        6 => complex(
            &mut c,
            version,
            size,
            u16::from_le_bytes([bits[0], bits[1]]),
            offsets,
            lengths,
        )?
        .unwrap_or_else(|| other("a compound type")),
        7 => other("a reference"),
        10 => array(&mut c, version, size, offsets, lengths)?,
        11 => other("a complex type"),
        k => {
            return Err(Hdf5Error::new(
                "datatype message",
                format!("class {k}, which HDF5 does not define"),
            ))
        }
    })
}

/// A compound that is h5py's complex number (`h5py/_conv` `H5PY_COMPLEX`: members `r` and `i`,
/// IEEE floats of half the size, at offsets 0 and half), read as `H5O__dtype_decode_helper`
/// reads a compound's members; `None` for any other compound.
fn complex(
    c: &mut Cursor<'_>,
    version: u8,
    size: u32,
    members: u16,
    offsets: u8,
    lengths: u8,
) -> Result<Option<Type>, Hdf5Error> {
    if members != 2 || !matches!(size, 8 | 16) {
        return Ok(None);
    }
    let mut parts = Vec::new();
    for _ in 0..2 {
        let rest = c.rest();
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| c.short())?;
        let name = rest.get(..end).unwrap_or_default().to_vec();
        // Versions 1 and 2 pad a name with NULs to a multiple of eight; 3 does not.
        c.skip(if version < 3 { (end + 8) & !7 } else { end + 1 })?;
        let offset = if version < 3 {
            u64::from(c.u32()?)
        } else {
            // As many bytes as the compound's size needs (`H5VM_limit_enc_size`).
            c.uint(usize::try_from(size.ilog2() / 8 + 1).unwrap_or(4))?
        };
        if version == 1 {
            c.skip(1 + 3 + 4 + 4 + 16)?; // an array member's rank, permutation and sizes
        }
        // The member's own datatype message: 8 bytes and a float's 12 of properties. A member
        // of another class (a nested compound, an array, a string) has a message of another
        // length: then this is no complex number, and the compound is data.
        if c.rest().first().map(|head| head & 0x0f) != Some(1) {
            return Ok(None);
        }
        let member = c.take(20)?;
        parts.push((name, offset, datatype(member, offsets, lengths)?));
    }
    let half = size / 2;
    let float = |t: &Type| match t {
        Type::Float { size, order } if *size == half => Some(*order),
        _ => None,
    };
    Ok(match (&parts[0], &parts[1]) {
        ((r, 0, a), (i, o, b)) if r == b"r" && i == b"i" && *o == u64::from(half) => {
            match (float(a), float(b)) {
                (Some(x), Some(y)) if x == y => Some(Type::Complex { size, order: x }),
                _ => None,
            }
        }
        _ => None,
    })
}

/// An array type (`H5O__dtype_decode_helper`, `H5Odtype.c`, `H5T_ARRAY`): its rank, its
/// dimensions of 4 bytes (version 2 also a reserved 3 bytes and a permutation, never used),
/// its base type. One of a numeric base whose size is the array's is a [`Type::Array`];
/// any other is data.
fn array(
    c: &mut Cursor<'_>,
    version: u8,
    size: u32,
    offsets: u8,
    lengths: u8,
) -> Result<Type, Hdf5Error> {
    let other = |what: &str| Type::Other {
        what: what.to_owned(),
        size,
    };
    let rank = c.u8()?;
    // `H5S_MAX_RANK`.
    if rank == 0 || rank > 32 || version < 2 {
        return Ok(other("an array type"));
    }
    if version == 2 {
        c.skip(3)?;
    }
    let mut dims = Vec::with_capacity(usize::from(rank));
    for _ in 0..rank {
        dims.push(u64::from(c.u32()?));
    }
    if version == 2 {
        c.skip(4 * usize::from(rank))?;
    }
    let base = datatype(c.rest(), offsets, lengths)?;
    let count = elements(&dims);
    let fits = count
        .and_then(|n| n.checked_mul(base.size(offsets)))
        .is_some_and(|n| n == u64::from(size));
    let numeric = base.element().is_some() && !matches!(base, Type::PackedInt { .. });
    Ok(if numeric && fits {
        Type::Array {
            base: Box::new(base),
            dims,
            size,
        }
    } else {
        other("an array type")
    })
}

/// Whether an `int8` enum of two members names `FALSE = 0` and `TRUE = 1` (h5py's bool).
fn bool_names(c: &mut Cursor<'_>, version: u8) -> Result<bool, Hdf5Error> {
    // The base type's message (8 bytes + 4 for an integer's properties) comes first.
    c.skip(12)?;
    let mut names = Vec::new();
    for _ in 0..2 {
        let rest = c.rest();
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| c.short())?;
        names.push(rest.get(..end).unwrap_or_default().to_vec());
        // Versions 1 and 2 pad each name with NULs to a multiple of eight; 3 does not.
        let len = if version < 3 { (end + 8) & !7 } else { end + 1 };
        c.skip(len)?;
    }
    let values = c.take(2)?;
    Ok(names == [b"FALSE".to_vec(), b"TRUE".to_vec()] && values == [0, 1])
}

/// A dataspace: its dimensions, or none for a null dataspace.
pub fn dataspace(data: &[u8], offsets: u8, lengths: u8) -> Result<Option<Vec<u64>>, Hdf5Error> {
    Ok(extent(data, offsets, lengths)?.map(|(dims, _)| dims))
}

/// A dataspace's dimensions, and its maximum dimensions when it records them.
pub type Extent = (Vec<u64>, Option<Vec<u64>>);

/// A dataspace's dimensions and, when it records them, its maximum dimensions
/// ([`UNDEFINED`](crate::UNDEFINED) for an unlimited one); none for a null dataspace.
pub fn extent(data: &[u8], offsets: u8, lengths: u8) -> Result<Option<Extent>, Hdf5Error> {
    let mut c = Cursor::with(data, offsets, lengths, "dataspace message");
    let version = c.u8()?;
    let rank = c.u8()?;
    let flags = c.u8()?;
    let null = match version {
        1 => {
            c.skip(5)?;
            false
        }
        2 => c.u8()? == 2,
        v => {
            return Err(Hdf5Error::new(
                "dataspace message",
                format!("version {v}: HDF5 writes 1 and 2"),
            ))
        }
    };
    if rank > 32 {
        return Err(Hdf5Error::new(
            "dataspace message",
            format!("rank {rank}: the HDF5 library reads at most 32 dimensions"),
        ));
    }
    let mut dims = Vec::with_capacity(usize::from(rank));
    for _ in 0..rank {
        dims.push(c.length()?);
    }
    let max = if flags & 1 != 0 {
        let mut max = Vec::with_capacity(usize::from(rank));
        let n = u32::from(lengths.min(8)) * 8;
        for _ in 0..rank {
            let m = c.length()?;
            // All ones, whatever the size of a length, is `H5S_UNLIMITED`.
            max.push(if n < 64 && m == (1u64 << n) - 1 {
                crate::UNDEFINED
            } else {
                m
            });
        }
        Some(max)
    } else {
        None
    };
    Ok(if null { None } else { Some((dims, max)) })
}

/// The number of elements of `dims`, unless it overflows.
pub fn elements(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}
