//! The fixed parts of zip records, field by field as APPNOTE 4.3 lays them out. Each `parse`
//! takes the record's bytes (at least its fixed length, which the caller read) and returns
//! what they say, or `None` when the signature is not the record's: judging the values is
//! the reader's.

use super::{
    Fields, CENTRAL_LEN, CENTRAL_SIG, EOCD_LEN, EOCD_SIG, LOCAL_LEN, LOCAL_SIG, ZIP64_EOCD_LEN,
    ZIP64_EOCD_SIG, ZIP64_LOCATOR_LEN, ZIP64_LOCATOR_SIG,
};

fn fixed(bytes: &[u8], len: u64, sig: u32) -> Option<Fields<'_>> {
    let len = usize::try_from(len).ok()?;
    let mut f = Fields::new(bytes.get(..len)?);
    (f.u32() == sig).then_some(f)
}

/// The end of central directory record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndRecord {
    /// This disk's number.
    pub disk: u16,
    /// The disk the central directory starts on.
    pub directory_disk: u16,
    /// Entries on this disk.
    pub entries_here: u16,
    /// Entries in all.
    pub entries: u16,
    /// The central directory's size.
    pub directory_size: u32,
    /// Its offset.
    pub directory_offset: u32,
    /// The archive comment's length.
    pub comment_len: u16,
}

impl EndRecord {
    /// The record in `bytes` (22 or more).
    pub fn parse(bytes: &[u8]) -> Option<EndRecord> {
        let mut f = fixed(bytes, EOCD_LEN, EOCD_SIG)?;
        Some(EndRecord {
            disk: f.u16(),
            directory_disk: f.u16(),
            entries_here: f.u16(),
            entries: f.u16(),
            directory_size: f.u32(),
            directory_offset: f.u32(),
            comment_len: f.u16(),
        })
    }
}

/// The zip64 end of central directory locator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zip64Locator {
    /// The disk holding the zip64 end record.
    pub disk: u32,
    /// The zip64 end record's offset.
    pub end_offset: u64,
    /// The number of disks.
    pub disks: u32,
}

impl Zip64Locator {
    /// The locator in `bytes` (20 or more).
    pub fn parse(bytes: &[u8]) -> Option<Zip64Locator> {
        let mut f = fixed(bytes, ZIP64_LOCATOR_LEN, ZIP64_LOCATOR_SIG)?;
        Some(Zip64Locator {
            disk: f.u32(),
            end_offset: f.u64(),
            disks: f.u32(),
        })
    }
}

/// The zip64 end of central directory record (its fixed part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zip64End {
    /// The size of the rest of the record (44 without extensible data).
    pub record_size: u64,
    /// This disk's number.
    pub disk: u32,
    /// The disk the central directory starts on.
    pub directory_disk: u32,
    /// Entries on this disk.
    pub entries_here: u64,
    /// Entries in all.
    pub entries: u64,
    /// The central directory's size.
    pub directory_size: u64,
    /// Its offset.
    pub directory_offset: u64,
}

impl Zip64End {
    /// The record in `bytes` (56 or more).
    pub fn parse(bytes: &[u8]) -> Option<Zip64End> {
        let mut f = fixed(bytes, ZIP64_EOCD_LEN, ZIP64_EOCD_SIG)?;
        let record_size = f.u64();
        let (_made_by, _needed) = (f.u16(), f.u16());
        Some(Zip64End {
            record_size,
            disk: f.u32(),
            directory_disk: f.u32(),
            entries_here: f.u64(),
            entries: f.u64(),
            directory_size: f.u64(),
            directory_offset: f.u64(),
        })
    }
}

/// A central directory header's fixed part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CentralHeader {
    /// General-purpose flags.
    pub flags: u16,
    /// Compression method.
    pub method: u16,
    /// CRC-32 of the uncompressed data.
    pub crc32: u32,
    /// Compressed size (or [`super::SATURATED_32`]).
    pub compressed: u32,
    /// Uncompressed size (or saturated).
    pub uncompressed: u32,
    /// Name length.
    pub name_len: u16,
    /// Extra field length.
    pub extra_len: u16,
    /// Comment length.
    pub comment_len: u16,
    /// The disk the record starts on.
    pub disk: u16,
    /// The local header's offset (or saturated).
    pub header_offset: u32,
    /// "Version made by": its high byte is the host whose file attributes
    /// [`Self::external`] holds (3: Unix).
    pub made_by: u16,
    /// External file attributes: on a Unix host, the file's `st_mode` in the high 16 bits
    /// (what Info-ZIP's `zip` and Python's `zipfile` write), which [`super::links`] reads.
    pub external: u32,
}

impl CentralHeader {
    /// The header in `bytes` (46 or more).
    pub fn parse(bytes: &[u8]) -> Option<CentralHeader> {
        let mut f = fixed(bytes, CENTRAL_LEN, CENTRAL_SIG)?;
        let (made_by, _needed) = (f.u16(), f.u16());
        let (flags, method, _time, _date) = (f.u16(), f.u16(), f.u16(), f.u16());
        let (crc32, compressed, uncompressed) = (f.u32(), f.u32(), f.u32());
        let (name_len, extra_len, comment_len) = (f.u16(), f.u16(), f.u16());
        let (disk, _internal, external) = (f.u16(), f.u16(), f.u32());
        Some(CentralHeader {
            flags,
            method,
            crc32,
            compressed,
            uncompressed,
            name_len,
            extra_len,
            comment_len,
            disk,
            header_offset: f.u32(),
            made_by,
            external,
        })
    }

    /// The length of the name, extra field and comment after the fixed part.
    pub fn variable_len(&self) -> usize {
        usize::from(self.name_len) + usize::from(self.extra_len) + usize::from(self.comment_len)
    }
}

/// A local file header's fixed part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalHeader {
    /// General-purpose flags.
    pub flags: u16,
    /// Compression method.
    pub method: u16,
    /// CRC-32 (zero when a data descriptor holds it).
    pub crc32: u32,
    /// Compressed size (zero or saturated when deferred).
    pub compressed: u32,
    /// Uncompressed size.
    pub uncompressed: u32,
    /// Name length.
    pub name_len: u16,
    /// Extra field length.
    pub extra_len: u16,
}

impl LocalHeader {
    /// The header in `bytes` (30 or more).
    pub fn parse(bytes: &[u8]) -> Option<LocalHeader> {
        let mut f = fixed(bytes, LOCAL_LEN, LOCAL_SIG)?;
        let (_needed, flags, method, _time, _date) = (f.u16(), f.u16(), f.u16(), f.u16(), f.u16());
        Some(LocalHeader {
            flags,
            method,
            crc32: f.u32(),
            compressed: f.u32(),
            uncompressed: f.u32(),
            name_len: f.u16(),
            extra_len: f.u16(),
        })
    }

    /// The length of the name and extra field after the fixed part.
    pub fn variable_len(&self) -> u64 {
        u64::from(self.name_len) + u64::from(self.extra_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn each_record_reads_its_fields_in_order() {
        let eocd = le(&[
            b"PK\x05\x06",
            &0u16.to_le_bytes(),
            &0u16.to_le_bytes(),
            &3u16.to_le_bytes(),
            &3u16.to_le_bytes(),
            &100u32.to_le_bytes(),
            &200u32.to_le_bytes(),
            &7u16.to_le_bytes(),
        ]);
        let e = EndRecord::parse(&eocd).unwrap();
        assert_eq!(
            (e.entries, e.directory_size, e.directory_offset),
            (3, 100, 200)
        );
        assert_eq!(e.comment_len, 7);
        assert_eq!(EndRecord::parse(&eocd[..21]), None, "too short");
        assert_eq!(EndRecord::parse(&eocd[1..]), None, "no signature");

        let mut local = le(&[
            b"PK\x03\x04",
            &20u16.to_le_bytes(),
            &0x0808u16.to_le_bytes(),
            &8u16.to_le_bytes(),
            &[0; 4],
            &0xdead_beefu32.to_le_bytes(),
            &5u32.to_le_bytes(),
            &9u32.to_le_bytes(),
            &4u16.to_le_bytes(),
            &2u16.to_le_bytes(),
        ]);
        let l = LocalHeader::parse(&local).unwrap();
        assert_eq!((l.flags, l.method, l.crc32), (0x0808, 8, 0xdead_beef));
        assert_eq!((l.compressed, l.uncompressed, l.variable_len()), (5, 9, 6));
        local[0] = b'X';
        assert_eq!(LocalHeader::parse(&local), None);

        let central = le(&[
            b"PK\x01\x02",
            &[0; 4],
            &0x0800u16.to_le_bytes(),
            &0u16.to_le_bytes(),
            &[0; 4],
            &1u32.to_le_bytes(),
            &2u32.to_le_bytes(),
            &3u32.to_le_bytes(),
            &4u16.to_le_bytes(),
            &5u16.to_le_bytes(),
            &6u16.to_le_bytes(),
            &0u16.to_le_bytes(),
            &[0; 6],
            &77u32.to_le_bytes(),
        ]);
        let c = CentralHeader::parse(&central).unwrap();
        assert_eq!((c.crc32, c.compressed, c.uncompressed), (1, 2, 3));
        assert_eq!((c.variable_len(), c.header_offset), (15, 77));

        let locator = le(&[
            b"PK\x06\x07",
            &0u32.to_le_bytes(),
            &1234u64.to_le_bytes(),
            &1u32.to_le_bytes(),
        ]);
        assert_eq!(Zip64Locator::parse(&locator).unwrap().end_offset, 1234);
        let z = le(&[
            b"PK\x06\x06",
            &44u64.to_le_bytes(),
            &[0; 4],
            &0u32.to_le_bytes(),
            &0u32.to_le_bytes(),
            &2u64.to_le_bytes(),
            &2u64.to_le_bytes(),
            &92u64.to_le_bytes(),
            &10u64.to_le_bytes(),
        ]);
        let z = Zip64End::parse(&z).unwrap();
        assert_eq!((z.record_size, z.entries, z.directory_size), (44, 2, 92));
        assert_eq!(z.directory_offset, 10);
    }
}
