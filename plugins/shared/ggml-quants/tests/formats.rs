//! The type table against the GGUF reader's, the errors, the types gguf-py cannot dequantize
//! (hand-computed values), the bounds' grid constants and the chunked and block-wise forms.

use socair_ggml_quants::{
    block_bound, block_bounds, dequantize, dequantize_chunked, dequantize_into, format, BoundKind,
    DequantError, FORMATS,
};
use std::ops::ControlFlow;

#[test]
fn the_table_is_the_gguf_readers() {
    for f in FORMATS {
        let t = socair_gguf::types::by_id(f.id).unwrap_or_else(|| panic!("{}", f.name));
        assert_eq!(
            (t.name, t.block_size, t.type_size),
            (f.name, f.block_size as u64, f.type_size as u64)
        );
    }
    // Every type the reader sizes is decoded here.
    for t in socair_gguf::types::TYPES {
        assert!(format(t.id).is_some(), "{} is not decoded", t.name);
    }
    for (id, _) in socair_gguf::types::REMOVED {
        assert_eq!(dequantize(*id, &[], 0), Err(DequantError::UnknownType(*id)));
    }
}

#[test]
fn wrong_lengths_and_counts_are_refused_by_name() {
    let err = dequantize(8, &[0; 34], 31).unwrap_err();
    assert!(matches!(
        err,
        DequantError::PartialBlock { name: "Q8_0", .. }
    ));
    assert!(err
        .to_string()
        .contains("not a whole number of Q8_0 blocks of 32"));
    let err = dequantize(8, &[0; 35], 32).unwrap_err();
    assert!(
        err.to_string().contains("take 34 bytes, the data has 35"),
        "{err}"
    );
    assert!(dequantize(8, &[0; 34], u64::MAX / 32 * 32).is_err());
    assert!(dequantize_into(12, &[0; 144], &mut [0.0; 255]).is_err());
    assert!(dequantize_into(12, &[0; 143], &mut [0.0; 0]).is_err());
    assert!(block_bound(12, &[0; 143]).is_err());
    assert!(block_bounds(12, &[0; 145]).is_err());
    assert_eq!(dequantize(99, &[], 0), Err(DequantError::UnknownType(99)));
}

/// A half's bits.
fn h(v: f32) -> [u8; 2] {
    let bits = match v {
        0.5 => 0x3800u16,
        1.0 => 0x3c00,
        2.0 => 0x4000,
        -3.0 => 0xc200,
        _ => panic!("no half for {v}"),
    };
    bits.to_le_bytes()
}

#[test]
fn q8_1_and_q8_k_are_scale_times_code() {
    let mut q8_1 = vec![];
    q8_1.extend_from_slice(&h(0.5));
    q8_1.extend_from_slice(&h(-3.0)); // s: not an element
    q8_1.extend((0..32).map(|i| (i as i8 - 16) as u8));
    let got = dequantize(9, &q8_1, 32).unwrap();
    assert_eq!(
        got,
        (0..32).map(|i| (i - 16) as f32 * 0.5).collect::<Vec<_>>()
    );

    let mut q8_k = 0.25f32.to_le_bytes().to_vec();
    q8_k.extend((0..256).map(|i| (i as u8).wrapping_sub(128)));
    q8_k.extend([0xff; 32]); // bsums: not elements
    let got = dequantize(15, &q8_k, 256).unwrap();
    let want: Vec<f32> = (0..256)
        .map(|i| ((i as u8).wrapping_sub(128) as i8) as f32 * 0.25)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn q1_0_and_q2_0_follow_ggml() {
    let mut q1 = h(2.0).to_vec();
    q1.extend([0b1010_0101; 16]);
    let got = dequantize(41, &q1, 128).unwrap();
    for (j, v) in got.iter().enumerate() {
        let bit = (0b1010_0101u8 >> (j % 8)) & 1;
        assert_eq!(*v, if bit == 1 { 2.0 } else { -2.0 }, "{j}");
    }
    let mut q2 = h(-3.0).to_vec();
    q2.extend([0b1110_0100; 16]); // codes 0, 1, 2, 3 in every byte
    let got = dequantize(42, &q2, 64).unwrap();
    for (j, v) in got.iter().enumerate() {
        assert_eq!(*v, ((j % 4) as f32 - 1.0) * -3.0, "{j}");
    }
    // Half a step, two half-roundings of the scale, the f32 slack of the largest level.
    let want = 1.5 + 2.0 * 3.0 * 2f32.powi(-11) + 6.0 * 2f32.powi(-22);
    assert!((block_bound(42, &q2).unwrap().max_abs_error - want).abs() < 1e-6);
}

#[test]
fn plain_types_pass_through() {
    let f32s = [1.5f32, -0.0, f32::from_bits(0x7f80_0001)];
    let bytes: Vec<u8> = f32s.iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = dequantize(0, &bytes, 3).unwrap();
    assert_eq!(
        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        [0x3fc0_0000, 0x8000_0000, 0x7f80_0001]
    );
    assert_eq!(dequantize(24, &[0xff, 0x7f], 2).unwrap(), [-1.0, 127.0]);
    assert_eq!(
        dequantize(25, &(-300i16).to_le_bytes(), 1).unwrap(),
        [-300.0]
    );
    assert_eq!(
        dequantize(26, &16_777_217i32.to_le_bytes(), 1).unwrap(),
        [16_777_216.0]
    );
    assert_eq!(dequantize(27, &(-5i64).to_le_bytes(), 1).unwrap(), [-5.0]);
    assert_eq!(dequantize(28, &0.1f64.to_le_bytes(), 1).unwrap(), [0.1f32]);
    assert_eq!(block_bound(0, &[0; 4]).unwrap().max_abs_error, 0.0);
    // F16 1.0: the spacing above is 2^-10, half of it 2^-11.
    assert_eq!(
        block_bound(1, &h(1.0)).unwrap().max_abs_error,
        2f32.powi(-11)
    );
    assert_eq!(
        block_bound(1, &0x7c00u16.to_le_bytes())
            .unwrap()
            .max_abs_error,
        f32::INFINITY
    );
}

#[test]
fn bounds_follow_the_module_table() {
    // Q8_0 with d = 1: half a step, 127 half-roundings of the scale, the f32 slack.
    let mut q8 = h(1.0).to_vec();
    q8.extend([0u8; 32]);
    let b = block_bound(8, &q8).unwrap();
    assert_eq!(b.kind, BoundKind::Reference);
    let want = 0.5 + 127.0 * 2f32.powi(-11) + 127.0 * 2f32.powi(-22);
    assert!((b.max_abs_error - want).abs() < 1e-6, "{}", b.max_abs_error);
    // Q4_0: one full step (the clamped side).
    let mut q4 = h(2.0).to_vec();
    q4.extend([0u8; 16]);
    assert!(block_bound(2, &q4).unwrap().max_abs_error >= 2.0);
    // Q4_K: half the largest sub-block step d * sc; a NaN scale makes it infinite.
    let mut q4k = vec![0u8; 144];
    q4k[..2].copy_from_slice(&h(0.5));
    q4k[4] = 40; // sub-block 0: scale 40
    let b = block_bound(12, &q4k).unwrap();
    assert_eq!(b.kind, BoundKind::GridOnly);
    assert!(
        b.max_abs_error >= 10.0 && b.max_abs_error < 10.01,
        "{}",
        b.max_abs_error
    );
    q4k[..2].copy_from_slice(&0x7e00u16.to_le_bytes());
    assert_eq!(block_bound(12, &q4k).unwrap().max_abs_error, f32::INFINITY);
}

#[test]
fn the_grid_constants_of_the_bounds_are_the_grids_own() {
    // Largest half gap of ±levels, from the decoded values of every code of one block with
    // unit scales: IQ4_NL with d = 1 gives kvalues_iq4nl itself.
    let mut iq4 = h(1.0).to_vec();
    iq4.extend((0..16).map(|i| i as u8 | ((15 - i as u8) << 4)));
    let mut levels = dequantize(20, &iq4, 32).unwrap();
    levels.sort_by(f32::total_cmp);
    let half_gap = levels
        .windows(2)
        .map(|w| (w[1] - w[0]) / 2.0)
        .fold(0.0, f32::max);
    assert_eq!(half_gap, 12.0);
    assert!(block_bound(20, &iq4).unwrap().max_abs_error >= 12.0);
}

#[test]
fn chunked_and_block_wise_forms_agree_and_stop_when_asked() {
    let bytes: Vec<u8> = (0..144 * 5).map(|i| (i * 7 + 3) as u8).collect();
    let whole = dequantize(12, &bytes, 1280).unwrap();
    let mut seen = Vec::new();
    let flow = dequantize_chunked(12, &bytes, 1280, 600, |first, chunk| {
        assert!(chunk.len() <= 512);
        seen.push((first, chunk.to_vec()));
        ControlFlow::<()>::Continue(())
    })
    .unwrap();
    assert_eq!(flow, ControlFlow::Continue(()));
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 512, 1024]);
    let joined: Vec<u32> = seen
        .iter()
        .flat_map(|s| s.1.iter().map(|v| v.to_bits()))
        .collect();
    assert_eq!(
        joined,
        whole.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let stopped = dequantize_chunked(12, &bytes, 1280, 256, |first, _| {
        if first == 256 {
            ControlFlow::Break(first)
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!(stopped, Ok(ControlFlow::Break(256)));
    let mut out = vec![0f32; 256];
    dequantize_into(12, &bytes[144..288], &mut out).unwrap();
    assert_eq!(out[..], whole[256..512]);
}
