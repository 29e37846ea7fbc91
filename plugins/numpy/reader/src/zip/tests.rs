//! The zip reader's tests, and the archives they are built from: `zip` writes members as
//! Python's `zipfile` does for `np.savez` (the plugin's other tests build their `.npz` files
//! with it too).

use super::*;
use socair_plugin_kit::zip::crc::crc32;
use socair_plugin_kit::zip::{CENTRAL_SIG, EOCD_SIG, LOCAL_SIG};

/// A member for [`zip`]: name, data, method, and whether its local header carries the
/// zip64 block NumPy forces.
pub struct Part<'a> {
    pub name: &'a str,
    pub data: &'a [u8],
    pub method: u16,
    pub zip64: bool,
}

pub fn stored<'a>(name: &'a str, data: &'a [u8]) -> Part<'a> {
    Part {
        name,
        data,
        method: STORED,
        zip64: true,
    }
}

pub fn deflated<'a>(name: &'a str, data: &'a [u8]) -> Part<'a> {
    Part {
        name,
        data,
        method: DEFLATE,
        zip64: true,
    }
}

/// Writes an archive the way Python's zipfile does for np.savez (deflating where asked).
pub fn zip(parts: &[Part<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for p in parts {
        let offset = out.len() as u32;
        let crc = crc32(p.data);
        let body = if p.method == DEFLATE {
            miniz_oxide::deflate::compress_to_vec(p.data, 6)
        } else {
            p.data.to_vec()
        };
        let (len, clen) = (p.data.len() as u32, body.len() as u32);
        out.extend(LOCAL_SIG.to_le_bytes());
        out.extend([45, 0, 0, 0]);
        out.extend(p.method.to_le_bytes());
        out.extend([0, 0, 0x21, 0]);
        out.extend(crc.to_le_bytes());
        if p.zip64 {
            out.extend([0xff; 8]);
        } else {
            out.extend(clen.to_le_bytes());
            out.extend(len.to_le_bytes());
        }
        out.extend((p.name.len() as u16).to_le_bytes());
        out.extend((if p.zip64 { 20u16 } else { 0 }).to_le_bytes());
        out.extend(p.name.as_bytes());
        if p.zip64 {
            out.extend([1, 0, 16, 0]);
            out.extend(u64::from(len).to_le_bytes());
            out.extend(u64::from(clen).to_le_bytes());
        }
        out.extend(&body);
        central.extend(CENTRAL_SIG.to_le_bytes());
        central.extend([45, 3, 45, 0, 0, 0]);
        central.extend(p.method.to_le_bytes());
        central.extend([0, 0, 0x21, 0]);
        central.extend(crc.to_le_bytes());
        central.extend(clen.to_le_bytes());
        central.extend(len.to_le_bytes());
        central.extend((p.name.len() as u16).to_le_bytes());
        central.extend([0; 8]);
        central.extend(0x0180_0000u32.to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(p.name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(EOCD_SIG.to_le_bytes());
    out.extend([0; 4]);
    out.extend((parts.len() as u16).to_le_bytes());
    out.extend((parts.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend([0; 2]);
    out
}

fn refused(bytes: &[u8]) -> ZipError {
    read_archive(bytes).unwrap_err()
}

fn contents(z: &[u8], m: &Member) -> Result<Vec<u8>, MemberError> {
    let mut out = Vec::new();
    read_each(z, m, |p| {
        out.extend_from_slice(p);
        true
    })
    .map(|()| out)
}

#[test]
fn what_np_savez_writes() {
    let z = zip(&[stored("a.npy", b"first"), stored("b.npy", b"second!")]);
    let a = read_archive(z.as_slice()).unwrap();
    assert!(!a.zip64);
    let members = a.members;
    assert_eq!(members.len(), 2);
    assert_eq!(members[0].name, "a.npy");
    assert_eq!(
        (
            members[0].header_offset,
            members[0].data_offset,
            members[0].len
        ),
        (0, 55, 5)
    );
    assert_eq!(
        (
            members[1].header_offset,
            members[1].data_offset,
            members[1].len
        ),
        (60, 115, 7)
    );
    assert_eq!(contents(&z, &members[1]).unwrap(), b"second!");
    let plain = zip(&[Part {
        zip64: false,
        ..stored("a.npy", b"x")
    }]);
    assert_eq!(
        read_archive(plain.as_slice()).unwrap().members[0].data_offset,
        35
    );
}

#[test]
fn deflated_members_inflate_with_their_crc() {
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
    let z = zip(&[deflated("w.npy", &data), stored("s.npy", b"xyz")]);
    let a = read_archive(z.as_slice()).unwrap();
    assert_eq!(a.members[0].method, DEFLATE);
    assert!(a.members[0].compressed_len < 1000);
    assert_eq!(contents(&z, &a.members[0]).unwrap(), data);
    let mut bad = a.members[0].clone();
    bad.crc32 ^= 1;
    assert!(matches!(
        contents(&z, &bad).unwrap_err(),
        MemberError::Crc { .. }
    ));
    let mut small = a.members[0].clone();
    small.len = 1000;
    assert_eq!(
        contents(&z, &small).unwrap_err(),
        MemberError::Inflate(InflateError::TooLong(1000))
    );
}

#[test]
fn duplicate_names() {
    let e = refused(&zip(&[stored("a.npy", b"1"), stored("a.npy", b"2")]));
    assert!(e.place.starts_with("central directory entry 1"), "{e}");
    assert!(
        e.reason.contains("already given to the member at byte 0"),
        "{e}"
    );
}

#[test]
fn overlaps_and_gaps() {
    let mut z = zip(&[stored("a.npy", b"12345"), stored("b.npy", b"12345")]);
    let cd = 120usize;
    assert_eq!(&z[cd..cd + 4], &CENTRAL_SIG.to_le_bytes());
    let second = cd + 46 + 5;
    z[second + 42..second + 46].copy_from_slice(&0u32.to_le_bytes());
    let e = refused(&z);
    assert!(e.reason.starts_with("overlaps member \"a.npy\""), "{e}");

    let mut z = vec![0u8];
    z.extend(zip(&[stored("a.npy", b"x")]));
    // The end record's offsets no longer point at the directory (Python's zipfile would
    // shift them by the prefix; socair refuses a prefix).
    let e = refused(&z);
    assert!(e.reason.contains("not a central directory entry"), "{e}");
}

#[test]
fn local_and_central_must_agree() {
    let good = zip(&[stored("a.npy", b"hello")]);
    let mut z = good.clone();
    z[14] ^= 0xff;
    assert!(refused(&z).reason.contains("CRC-32"));
    let mut z = good.clone();
    z[30] = b'b';
    assert!(refused(&z).reason.contains("name \"b.npy\""));
    let mut z = good.clone();
    z[39] = 6;
    assert!(
        refused(&z)
            .reason
            .contains("sizes 5 stored / 6 uncompressed"),
        "{:?}",
        refused(&z)
    );
    let mut z = good.clone();
    z[0] = b'X';
    assert!(refused(&z).reason.contains("no local header signature"));
}

#[test]
fn end_records() {
    let good = zip(&[stored("a.npy", b"hello")]);
    let mut z = good.clone();
    z.push(0);
    assert!(refused(&z)
        .reason
        .contains("does not reach exactly the end"));
    // A comment is read when it reaches the end.
    let mut c = good.clone();
    let n = c.len();
    c[n - 2..].copy_from_slice(&3u16.to_le_bytes());
    c.extend(b"abc");
    assert_eq!(read_archive(c.as_slice()).unwrap().comment_len, 3);
    let mut z = good.clone();
    let n = z.len();
    z[n - 6..n - 2].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(refused(&z).reason.contains("zip64"));
    assert_eq!(refused(b"PK\x05\x06").place, "end of archive");
    let empty = [EOCD_SIG.to_le_bytes().to_vec(), vec![0; 18]].concat();
    assert!(read_archive(empty.as_slice()).unwrap().members.is_empty());
}

#[test]
fn flags_and_names() {
    let good = zip(&[stored("a.npy", b"hello")]);
    let cd = 60usize;
    let mut z = good.clone();
    z[cd + 8] = 0x10;
    z[6] = 0x10;
    assert!(refused(&z).reason.starts_with("flag bits 0x0010"));
    let mut z = good.clone();
    z[cd + 8] = 1;
    z[6] = 1;
    assert!(read_archive(z.as_slice()).unwrap().members[0].encrypted);
    let mut z = good.clone();
    z[cd + 10] = 12;
    z[8] = 12;
    assert_eq!(read_archive(z.as_slice()).unwrap().members[0].method, 12);
    let mut z = good.clone();
    z[cd + 46] = 0xC3;
    assert!(refused(&z).reason.contains("without the UTF-8 flag"));
    let names = central_names(&good).unwrap();
    assert_eq!(names, ["a.npy"]);
}

/// `decompress` on the members of archives Python's `zipfile` wrote with ZIP_LZMA (version
/// 9.4, 5 property bytes, raw LZMA1 with an end marker, flag bit 1): read with this module's
/// reader, decoded, and held to the declared size and the stream's end.
mod lzma_members {
    use crate::decompress::{decode_all, LZMA};
    use crate::inflate::InflateError;

    fn marked(end_marker: bool, data: &[u8], declared: u64) -> Result<Vec<u8>, InflateError> {
        decode_all(LZMA, end_marker, data, declared)
    }

    fn all(data: &[u8], declared: u64) -> Result<Vec<u8>, InflateError> {
        marked(true, data, declared)
    }

    /// The first member of an archive Python's `zipfile` wrote with ZIP_LZMA (version 9.4,
    /// 5 property bytes, raw LZMA1 with an end marker, flag bit 1), and its plain bytes as
    /// the stored twin holds them.
    fn lzma_member() -> (Vec<u8>, Vec<u8>) {
        let z = include_bytes!("../../../../../fixtures/npy/plugin/valid/lzma.npz");
        let s = include_bytes!("../../../../../fixtures/npy/plugin/valid/stored-numeric.npz");
        let m = &super::super::read_archive(&z[..]).unwrap().members[0];
        assert_eq!(m.method, LZMA);
        let packed = z[m.data_offset as usize..][..m.compressed_len as usize].to_vec();
        let twin = super::super::read_archive(&s[..])
            .unwrap()
            .members
            .into_iter()
            .find(|t| t.name == m.name)
            .unwrap();
        let plain = s[twin.data_offset as usize..][..twin.len as usize].to_vec();
        (packed, plain)
    }

    #[test]
    fn lzma_round_trip_and_strictness() {
        let (member, plain) = lzma_member();
        assert_eq!(all(&member, plain.len() as u64).unwrap(), plain);
        assert_eq!(all(&member, 100).unwrap_err(), InflateError::TooLong(100));
        let mut trailing = member.clone();
        trailing.extend_from_slice(b"junk");
        assert!(matches!(
            all(&trailing, plain.len() as u64).unwrap_err(),
            InflateError::Trailing(_)
        ));
        let mut six = member.clone();
        six[2] = 6;
        assert!(matches!(
            all(&six, plain.len() as u64).unwrap_err(),
            InflateError::Options(_)
        ));
        assert_eq!(all(&member[..3], 1).unwrap_err(), InflateError::Truncated);
        // Told the size (no flag bit 1), the end marker that follows it is accepted; a size
        // short of the stream leaves the range coder mid-stream.
        assert_eq!(marked(false, &member, plain.len() as u64).unwrap(), plain);
        assert!(matches!(
            marked(false, &member, 100).unwrap_err(),
            InflateError::Corrupt(_)
        ));
        let cut = &member[..member.len() / 2];
        assert!(all(cut, plain.len() as u64).is_err());
    }
}
