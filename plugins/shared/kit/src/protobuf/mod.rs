//! Protobuf at wire level, shared by the readers of protobuf formats (ONNX, TensorFlow): the
//! field tables each plugin's codegen writes ([`schema`]), varints ([`read_varint`]), the
//! pre-pass that walks a whole message by its table before prost decodes anything
//! ([`walk`]), and the bounded look at a file's first bytes that a format's claim rests on
//! ([`head`]).
//!
//! protobuf has no magic number: a reader claims a file only when its first bytes parse as
//! the format's root message, field by field, with the wire types the schema gives them.

pub mod error;
pub mod head;
pub mod schema;
pub mod text;
pub mod walk;

/// Reads a varint at `*at` (before `end`), as protobuf does: at most 10 bytes, the tenth
/// holding only the top bit.
pub fn read_varint(buf: &[u8], at: &mut usize, end: usize) -> Option<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        if *at >= end {
            return None;
        }
        let b = *buf.get(*at)?;
        *at += 1;
        if i == 9 && b > 1 {
            return None;
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some(value);
        }
    }
    None
}

/// Appends `v` as a varint, as protobuf (and LevelDB's table format) writes one: what readers'
/// tests and hostile-shape builders write files with.
pub fn write_varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn varints_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            super::write_varint(v, &mut b);
            let mut at = 0;
            assert_eq!(super::read_varint(&b, &mut at, b.len()), Some(v));
            assert_eq!(at, b.len());
        }
    }
}
