//! The property the `ggml_dequant` fuzz target checks, shared with the regression test that
//! replays the saved inputs: for any type byte and any bytes, dequantizing never panics, gives
//! exactly one value per element, agrees with the chunked and block-wise forms bit for bit, and
//! gives one bound per block.

use crate::{block_bounds, dequantize, dequantize_chunked, dequantize_into, format, FORMATS};
use std::ops::ControlFlow;

/// Input layout: byte 0 picks a type (modulo 64, so unknown ids are tried too), the rest is
/// tensor data cut to whole blocks; a cut that is not whole must be refused.
pub fn check(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let type_id = u32::from(selector % 64);
    let Some(fmt) = format(type_id) else {
        assert!(dequantize(type_id, rest, 0).is_err());
        return;
    };
    let blocks = rest.len() / fmt.type_size;
    let n = (blocks * fmt.block_size) as u64;
    if rest.len() % fmt.type_size != 0 {
        assert!(
            dequantize(type_id, rest, n).is_err(),
            "{}: cut block accepted",
            fmt.name
        );
    }
    if fmt.block_size > 1 {
        assert!(
            dequantize(type_id, rest, n + 1).is_err(),
            "{}: partial block",
            fmt.name
        );
    }
    let whole = &rest[..blocks * fmt.type_size];
    let values = dequantize(type_id, whole, n).expect("whole blocks decode");
    assert_eq!(
        values.len() as u64,
        n,
        "{}: one value per element",
        fmt.name
    );
    let mut into = vec![0f32; values.len()];
    dequantize_into(type_id, whole, &mut into).expect("whole blocks decode into a buffer");
    let mut chunked = Vec::with_capacity(values.len());
    let flow = dequantize_chunked(type_id, whole, n, 3 * fmt.block_size, |first, chunk| {
        assert_eq!(first, chunked.len() as u64);
        chunked.extend_from_slice(chunk);
        ControlFlow::<()>::Continue(())
    });
    assert_eq!(flow, Ok(ControlFlow::Continue(())));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&values), bits(&into), "{}: into", fmt.name);
    assert_eq!(bits(&values), bits(&chunked), "{}: chunked", fmt.name);
    let bounds = block_bounds(type_id, whole).expect("bounds of whole blocks");
    assert_eq!(bounds.len(), blocks);
    assert!(bounds.iter().all(|b| b.max_abs_error >= 0.0));
    assert!(FORMATS.iter().any(|f| f.id == type_id));
}
