//! Hostile shapes of Keras and HDF5 files at the size the bounds tests aim for, generated
//! here: an HDF5 file of hundreds of thousands of tiny datasets (every one a tensor), a
//! `.keras` archive whose config is millions of unknown objects, and one whose config nests
//! as deep as JSON lets it.

/// A little-endian field.
fn le(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

/// A version 1 object header message, padded to eight bytes.
fn message(out: &mut Vec<u8>, kind: u16, data: &[u8]) {
    let padded = data.len().div_ceil(8) * 8;
    le(out, u64::from(kind), 2);
    le(out, padded as u64, 2);
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(data);
    out.resize(out.len() + padded - data.len(), 0);
}

/// A version 1 object header holding `messages` (already encoded).
fn header(messages: &[u8]) -> Vec<u8> {
    let mut h = vec![1, 0];
    le(&mut h, 1, 2);
    le(&mut h, 1, 4);
    le(&mut h, messages.len() as u64, 4);
    h.extend_from_slice(&[0; 4]);
    h.extend_from_slice(messages);
    h
}

/// An HDF5 file (superblock 0) whose root group holds `n` link messages, each to a dataset of
/// one float32 stored contiguously after its header.
pub fn hdf5_many_datasets(n: usize) -> Vec<u8> {
    const SUPER: usize = 96;
    // Each dataset: its header (16 + 24 + 32 + 32 bytes) then 8 bytes of data.
    let dataset_len = 16 + 24 + 32 + 32 + 8;
    let link_len = |i: usize| 8 + (3 + format!("d{i}").len() + 8).div_ceil(8) * 8;
    let links: usize = (0..n).map(link_len).sum();
    let root = SUPER;
    let first = root + 16 + links;
    let mut msgs = Vec::with_capacity(links);
    for i in 0..n {
        let name = format!("d{i}");
        let mut d = vec![1, 0, name.len() as u8];
        d.extend_from_slice(name.as_bytes());
        le(&mut d, (first + i * dataset_len) as u64, 8);
        message(&mut msgs, 0x06, &d);
    }
    let mut out = Vec::with_capacity(first + n * dataset_len);
    out.extend_from_slice(b"\x89HDF\r\n\x1a\n");
    out.extend_from_slice(&[0, 0, 0, 0, 0, 8, 8, 0]);
    le(&mut out, 4, 2);
    le(&mut out, 16, 2);
    le(&mut out, 0, 4);
    le(&mut out, 0, 8);
    le(&mut out, u64::MAX, 8);
    let eof_at = out.len();
    le(&mut out, 0, 8);
    le(&mut out, u64::MAX, 8);
    le(&mut out, 0, 8);
    le(&mut out, root as u64, 8);
    out.extend_from_slice(&[0; 24]);
    assert_eq!(out.len(), SUPER);
    out.extend(header(&msgs));
    for i in 0..n {
        let at = out.len();
        let mut m = Vec::new();
        let mut space = vec![1, 1, 0, 0, 0, 0, 0, 0];
        le(&mut space, 1, 8);
        message(&mut m, 0x01, &space);
        let mut ty = vec![0x11, 0x20, 0x1f, 0x00];
        le(&mut ty, 4, 4);
        ty.extend_from_slice(&[0, 0, 32, 0, 23, 8, 0, 23]);
        le(&mut ty, 127, 4);
        message(&mut m, 0x03, &ty);
        let mut layout = vec![3, 1];
        le(&mut layout, (at + 16 + m.len() + 32) as u64, 8);
        le(&mut layout, 4, 8);
        message(&mut m, 0x08, &layout);
        out.extend(header(&m));
        out.extend_from_slice(&(i as f32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
    }
    let len = out.len() as u64;
    out[eof_at..eof_at + 8].copy_from_slice(&len.to_le_bytes());
    out
}

/// A stored zip of `members`, as Python's zipfile writes one.
pub fn zip(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let at = out.len() as u64;
        let crc = crc32fast::hash(data);
        let buf = &mut out;
        le(buf, 0x0403_4b50, 4);
        le(buf, 20, 2);
        le(buf, 0, 2);
        le(buf, 0, 2);
        le(buf, 0, 4);
        le(buf, u64::from(crc), 4);
        le(buf, data.len() as u64, 4);
        le(buf, data.len() as u64, 4);
        le(buf, name.len() as u64, 2);
        le(buf, 0, 2);
        buf.extend_from_slice(name.as_bytes());
        buf.extend_from_slice(data);
        le(&mut central, 0x0201_4b50, 4);
        le(&mut central, 20, 2);
        le(&mut central, 20, 2);
        le(&mut central, 0, 2);
        le(&mut central, 0, 2);
        le(&mut central, 0, 4);
        le(&mut central, u64::from(crc), 4);
        le(&mut central, data.len() as u64, 4);
        le(&mut central, data.len() as u64, 4);
        le(&mut central, name.len() as u64, 2);
        // Extra and comment lengths, disk, internal and external attributes.
        le(&mut central, 0, 6);
        le(&mut central, 0, 2);
        le(&mut central, 0, 4);
        le(&mut central, at, 4);
        central.extend_from_slice(name.as_bytes());
    }
    let start = out.len() as u64;
    out.extend_from_slice(&central);
    le(&mut out, 0x0605_4b50, 4);
    le(&mut out, 0, 4);
    le(&mut out, members.len() as u64, 2);
    le(&mut out, members.len() as u64, 2);
    le(&mut out, central.len() as u64, 4);
    le(&mut out, start, 4);
    le(&mut out, 0, 2);
    out
}

/// A `.keras` archive whose config's layer list holds `n` objects of classes Keras does not
/// know (each a LEAD), plus a small HDF5 weights member.
pub fn keras_unknown_objects(n: usize) -> Vec<u8> {
    let mut config =
        String::from(r#"{"module": "keras", "class_name": "Sequential", "config": {"layers": ["#);
    for i in 0..n {
        if i > 0 {
            config.push(',');
        }
        config.push_str(r#"{"module":"keras.layers","class_name":"Nope","config":{}}"#);
    }
    config.push_str("]}}");
    zip(&[
        ("metadata.json", br#"{"keras_version": "3.15.1"}"#.to_vec()),
        ("config.json", config.into_bytes()),
        ("model.weights.h5", hdf5_many_datasets(4)),
    ])
}

/// A `.keras` archive whose config nests arrays `n` deep.
pub fn keras_deep_config(n: usize) -> Vec<u8> {
    let mut config =
        String::from(r#"{"module": "keras", "class_name": "Sequential", "config": {"layers": "#);
    config.push_str(&"[".repeat(n));
    config.push_str(&"]".repeat(n));
    config.push_str("}}");
    zip(&[
        ("metadata.json", br#"{"keras_version": "3.15.1"}"#.to_vec()),
        ("config.json", config.into_bytes()),
    ])
}
