//! Where a `.pte` file's parts lie: the FlatBuffers identifier at bytes 4..8, the optional
//! extended header `eh00` at byte 8, the program's size and the segment base.
//!
//! Mirrors `Program::load` (runtime/executor/program.cpp, ExecuTorch v1.4.1): it loads the
//! first `kNumHeadBytes` (64) bytes, parses them with `ExtendedHeader::Parse`
//! (schema/extended_header.cpp) and, when the header is present, checks the file is as long as
//! the header says; without a header the program is the whole file and there are no segments.
//! The writer is `serialize_pte_binary` and `_ExtendedHeader.to_bytes` (exir/_serialize/_program.py).

use crate::refusal::Refusal;

/// The program schema's `file_identifier`.
pub const IDENTIFIER: &[u8; 4] = b"ET12";
/// `ExtendedHeader::kNumHeadBytes`: `Program::load` loads this many bytes first, so a shorter
/// file fails to load.
pub const NUM_HEAD_BYTES: u64 = 64;
/// `ExtendedHeader::kHeaderOffset`.
pub const HEADER_OFFSET: usize = 8;
/// `ExtendedHeader::kMagic`.
pub const MAGIC: &[u8; 4] = b"eh00";
/// `kMinimumHeaderLength`: magic, length, program size, segment base offset.
pub const MINIMUM_HEADER_LENGTH: u32 = 24;
/// `kHeaderLengthWithSegmentDataSize`.
pub const HEADER_LENGTH_WITH_SEGMENT_DATA_SIZE: u32 = 32;

/// The extended header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtendedHeader {
    /// Its declared length.
    pub length: u32,
    /// The flatbuffer's size, from offset 0, the header included.
    pub program_size: u64,
    /// The offset of the first segment; zero when there are none.
    pub segment_base_offset: u64,
    /// The segments' total size (zero in files older than ExecuTorch 1.0).
    pub segment_data_size: u64,
}

/// Where the program and the segments are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The extended header, when the file has one.
    pub header: Option<ExtendedHeader>,
    /// The flatbuffer's size: the header's `program_size`, or the whole file.
    pub program_size: u64,
    /// Segment offsets are relative to this (zero without a header).
    pub segment_base_offset: u64,
    /// The file's length.
    pub file_len: u64,
}

fn u32_at(head: &[u8], at: usize) -> u32 {
    crate::flatbuffer::read_u32(head, at).unwrap_or(0)
}

fn u64_at(head: &[u8], at: usize) -> u64 {
    crate::flatbuffer::read_u64(head, at).unwrap_or(0)
}

/// The layout from the file's first bytes (`head`, at least 64 when the file has them), as
/// `Program::load` finds it, or why the runtime refuses the file.
pub fn layout(head: &[u8], file_len: u64) -> Result<Layout, Refusal> {
    if file_len < NUM_HEAD_BYTES || (head.len() as u64) < NUM_HEAD_BYTES {
        return Err(Refusal::new(
            "byte 0",
            format!("the file is {file_len} bytes; ExecuTorch's Program::load reads the first {NUM_HEAD_BYTES} to find the extended header and refuses a shorter file"),
        ));
    }
    if head.get(4..8) != Some(&IDENTIFIER[..]) {
        let id = head.get(4..8).unwrap_or_default();
        return Err(Refusal::new(
            "byte 4",
            format!(
                "the FlatBuffers file identifier is {:?}, not {:?}: the runtime refuses it (Program::load, ProgramBufferHasIdentifier)",
                String::from_utf8_lossy(id),
                "ET12"
            ),
        ));
    }
    if head.get(HEADER_OFFSET..HEADER_OFFSET + 4) != Some(&MAGIC[..]) {
        return Ok(Layout {
            header: None,
            program_size: file_len,
            segment_base_offset: 0,
            file_len,
        });
    }
    let h = HEADER_OFFSET;
    let length = u32_at(head, h + 4);
    if length < MINIMUM_HEADER_LENGTH {
        return Err(Refusal::new(
            "byte 12",
            format!("the extended header's length is {length}, under the minimum {MINIMUM_HEADER_LENGTH}: the runtime refuses it (ExtendedHeader::Parse)"),
        ));
    }
    let header = ExtendedHeader {
        length,
        program_size: u64_at(head, h + 8),
        segment_base_offset: u64_at(head, h + 16),
        segment_data_size: if length >= HEADER_LENGTH_WITH_SEGMENT_DATA_SIZE {
            u64_at(head, h + 24)
        } else {
            0
        },
    };
    let (base, data) = (header.segment_base_offset, header.segment_data_size);
    // `Program::load`: the file-size check runs when there are no segments or when
    // segment_data_size is set (files before ExecuTorch 1.0 have it zero).
    if (data == 0 && base == 0) || data > 0 {
        let Some(end) = base.checked_add(data) else {
            return Err(Refusal::new(
                "byte 24",
                format!("segment_base_offset {base} + segment_data_size {data} overflows: the runtime refuses it"),
            ));
        };
        let expected = if base == 0 { header.program_size } else { end };
        if expected > file_len {
            return Err(Refusal::new(
                "byte 8",
                format!("the extended header says the file is at least {expected} bytes, but it is {file_len}: the runtime refuses it (Program::load: \"File size is too small\")"),
            ));
        }
    }
    if header.program_size > file_len {
        return Err(Refusal::new(
            "byte 16",
            format!("the extended header's program_size {} is past the end of the {file_len}-byte file: the runtime cannot load the program", header.program_size),
        ));
    }
    if header.program_size < 8 {
        return Err(Refusal::new(
            "byte 16",
            format!("the extended header's program_size {} is under the 8 bytes of the FlatBuffers header: the runtime refuses it", header.program_size),
        ));
    }
    Ok(Layout {
        header: Some(header),
        program_size: header.program_size,
        segment_base_offset: base,
        file_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(eh: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[4..8].copy_from_slice(b"ET12");
        h[8..8 + eh.len()].copy_from_slice(eh);
        h
    }

    fn eh(length: u32, program: u64, base: u64, data: u64) -> Vec<u8> {
        let mut v = b"eh00".to_vec();
        v.extend(length.to_le_bytes());
        v.extend(program.to_le_bytes());
        v.extend(base.to_le_bytes());
        v.extend(data.to_le_bytes());
        v
    }

    #[test]
    fn a_file_without_the_header_is_all_program() {
        let l = layout(&head(&[]), 100).unwrap();
        assert_eq!(
            (l.header, l.program_size, l.segment_base_offset),
            (None, 100, 0)
        );
    }

    #[test]
    fn the_header_is_read_and_checked_against_the_file() {
        let l = layout(&head(&eh(32, 80, 128, 60)), 188).unwrap();
        assert_eq!((l.program_size, l.segment_base_offset), (80, 128));
        let e = layout(&head(&eh(32, 80, 128, 60)), 187).unwrap_err();
        assert!(e.reason.contains("File size is too small"), "{e:?}");
        // Before ExecuTorch 1.0 the data size was zero and nothing was checked.
        assert!(layout(&head(&eh(24, 80, 128, 0)), 100).is_ok());
        assert!(layout(&head(&eh(20, 80, 128, 0)), 300).is_err());
        assert!(layout(&head(&eh(32, 80, u64::MAX, 60)), 300).is_err());
    }

    #[test]
    fn short_files_and_other_identifiers_are_refused() {
        assert!(layout(&head(&[]), 63).is_err());
        let mut h = head(&[]);
        h[4..8].copy_from_slice(b"ET11");
        assert!(layout(&h, 64).unwrap_err().reason.contains("ET11"));
    }
}
