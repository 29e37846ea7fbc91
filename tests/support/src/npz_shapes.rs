//! Hostile `.npz` shapes for the numpy plugin's bounds (64 MiB + 8x the input, 5 s per 30 MB),
//! generated at test time: zip bombs and floods of members. Shared by
//! `plugins/numpy/reader/tests/bounds.rs` (the plugin alone) and `tests/tests/numpy.rs` (end to end);
//! it needs only `miniz_oxide`.

/// CRC-32 (IEEE), bit by bit: the shapes are built once per test.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A `.npy` file of `n` little-endian float32 zeros, as NumPy writes it.
pub fn zeros_npy(n: u64) -> Vec<u8> {
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}");
    let mut h = dict.into_bytes();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(b' ');
    }
    h.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h);
    out.resize(out.len() + (n * 4) as usize, 0);
    out
}

/// One member: name, stored bytes, method, declared uncompressed size, CRC-32.
pub struct Entry {
    pub name: String,
    pub body: Vec<u8>,
    pub method: u16,
    pub size: u32,
    pub crc: u32,
}

impl Entry {
    /// A deflated member, declaring its true size and CRC.
    pub fn deflated(name: &str, data: &[u8]) -> Entry {
        Entry {
            name: name.into(),
            body: miniz_oxide::deflate::compress_to_vec(data, 9),
            method: 8,
            size: data.len() as u32,
            crc: crc32(data),
        }
    }
    /// A stored member.
    pub fn stored(name: &str, data: &[u8]) -> Entry {
        Entry {
            name: name.into(),
            body: data.to_vec(),
            method: 0,
            size: data.len() as u32,
            crc: crc32(data),
        }
    }
}

/// An archive laid out as Python's zipfile writes one (no zip64: the shapes stay small).
pub fn zip_of(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let name = e.name.as_bytes();
        out.extend(0x0403_4b50u32.to_le_bytes());
        out.extend([20, 0, 0, 0]);
        out.extend(e.method.to_le_bytes());
        out.extend([0, 0, 0x21, 0]);
        out.extend(e.crc.to_le_bytes());
        out.extend((e.body.len() as u32).to_le_bytes());
        out.extend(e.size.to_le_bytes());
        out.extend((name.len() as u16).to_le_bytes());
        out.extend([0, 0]);
        out.extend(name);
        out.extend(&e.body);
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend([20, 3, 20, 0, 0, 0]);
        central.extend(e.method.to_le_bytes());
        central.extend([0, 0, 0x21, 0]);
        central.extend(e.crc.to_le_bytes());
        central.extend((e.body.len() as u32).to_le_bytes());
        central.extend(e.size.to_le_bytes());
        central.extend((name.len() as u16).to_le_bytes());
        central.extend([0; 8]);
        central.extend(0x0180_0000u32.to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(name);
    }
    let cd = out.len() as u32;
    let n = entries.len().min(0xffff) as u16;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0; 4]);
    out.extend(n.to_le_bytes());
    out.extend(n.to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd.to_le_bytes());
    out.extend([0; 2]);
    out
}

/// About `target` bytes of deflated members, each an `.npy` of 4 MiB of zeros that deflates
/// to about 4 KB and declares its true size: inflated whole, a thousand times the archive.
pub fn npz_bomb(target: usize) -> Vec<u8> {
    let member = Entry::deflated("m.npy", &zeros_npy(1 << 20));
    let count = (target / (member.body.len() + 100)).clamp(1, 0xfffe);
    let entries: Vec<Entry> = (0..count)
        .map(|i| Entry {
            name: format!("m{i}.npy"),
            body: member.body.clone(),
            ..member
        })
        .collect();
    zip_of(&entries)
}

/// Like [`npz_bomb`], but every member declares 1,000 bytes (with their CRC-32): each
/// inflates past what it declares.
pub fn npz_lying_bomb(target: usize) -> Vec<u8> {
    let data = zeros_npy(1 << 20);
    let member = Entry::deflated("m.npy", &data);
    let count = (target / (member.body.len() + 100)).clamp(1, 0xfffe);
    let entries: Vec<Entry> = (0..count)
        .map(|i| Entry {
            name: format!("m{i}.npy"),
            body: member.body.clone(),
            method: 8,
            size: 1000,
            crc: crc32(&data[..1000]),
        })
        .collect();
    zip_of(&entries)
}

/// As many tiny stored `.npy` members as fit in `target` bytes (up to 65,534: 65,535 in the classic
/// end record's count announces zip64 records).
pub fn npz_flood(target: usize) -> Vec<u8> {
    let data = zeros_npy(1);
    let count = (target / (data.len() + 2 * 46 + 16)).clamp(1, 0xfffe);
    let entries: Vec<Entry> = (0..count)
        .map(|i| Entry::stored(&format!("a{i}.npy"), &data))
        .collect();
    zip_of(&entries)
}
