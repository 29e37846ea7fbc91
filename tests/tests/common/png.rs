//! Just enough PNG to read back a Chromium screenshot: 8-bit RGB or RGBA, not interlaced (what
//! Chromium's `--screenshot` writes). Anything else panics with the reason: this reads a file a
//! test just had written, not hostile input. Written here rather than taken from the `png`
//! crate, whose dependencies ask for other features of crates socair itself uses, so `cargo
//! test` would build those (and everything above them) a second time.

/// The pixels as RGBA (opaque where the image has no alpha), with width and height.
pub fn read_rgba(bytes: &[u8]) -> (Vec<u8>, u32, u32) {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    assert!(bytes.starts_with(SIGNATURE), "not a PNG");
    let mut at = SIGNATURE.len();
    let (mut width, mut height, mut channels) = (0usize, 0usize, 0usize);
    let mut zlib = Vec::new();
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                height = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                let (depth, color, interlace) = (data[8], data[9], data[12]);
                assert_eq!(depth, 8, "bit depth");
                assert_eq!(interlace, 0, "interlaced");
                channels = match color {
                    2 => 3,
                    6 => 4,
                    other => panic!("colour type {other}"),
                };
            }
            b"IDAT" => zlib.extend_from_slice(data),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len; // length, type, data, CRC
    }
    let filtered = miniz_oxide::inflate::decompress_to_vec_zlib(&zlib).expect("image data");
    let stride = width * channels;
    assert_eq!(filtered.len(), height * (stride + 1), "image data length");
    let mut pixels = vec![0u8; height * stride];
    for y in 0..height {
        let line = &filtered[y * (stride + 1)..(y + 1) * (stride + 1)];
        let (filter, line) = (line[0], &line[1..]);
        for x in 0..stride {
            let a = if x >= channels {
                pixels[y * stride + x - channels]
            } else {
                0
            };
            let b = if y > 0 {
                pixels[(y - 1) * stride + x]
            } else {
                0
            };
            let c = if x >= channels && y > 0 {
                pixels[(y - 1) * stride + x - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((a as u16 + b as u16) / 2) as u8,
                4 => paeth(a, b, c),
                other => panic!("filter type {other}"),
            };
            pixels[y * stride + x] = line[x].wrapping_add(predicted);
        }
    }
    let rgba = pixels
        .chunks_exact(channels)
        .flat_map(|p| [p[0], p[1], p[2], if channels == 4 { p[3] } else { 255 }])
        .collect();
    (rgba, width as u32, height as u32)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = a as i16 + b as i16 - c as i16;
    let (pa, pb, pc) = (
        (p - a as i16).abs(),
        (p - b as i16).abs(),
        (p - c as i16).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}
