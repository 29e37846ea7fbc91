//! Dequantization throughput in MB/s of quantized input, for Q4_K and Q8_0 on a 64 MiB buffer,
//! one thread and on rayon's pool (chunks of 4,096 blocks through `dequantize_into`).
//!
//! `cargo bench -p socair-ggml-quants --bench throughput` (a release build; no harness).

use rayon::prelude::*;
use std::time::Instant;

/// Pseudo-random bytes (xorshift), the blocks' half scales set to 0.01 so values stay finite.
fn blocks(type_size: usize, scale_at: &[usize], total: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut bytes: Vec<u8> = (0..total)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    for block in bytes.chunks_exact_mut(type_size) {
        for &at in scale_at {
            block[at..at + 2].copy_from_slice(&0x211eu16.to_le_bytes());
        }
    }
    bytes
}

fn measure(name: &str, type_id: u32, scale_at: &[usize]) {
    let format = socair_ggml_quants::format(type_id).expect("known type");
    let total = (64 << 20) / format.type_size * format.type_size;
    let bytes = blocks(format.type_size, scale_at, total);
    let n = total / format.type_size * format.block_size;
    let mut out = vec![0f32; n];
    let mb = total as f64 / 1e6;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        socair_ggml_quants::dequantize_into(type_id, &bytes, &mut out).expect("decodes");
        best = best.min(start.elapsed().as_secs_f64());
    }
    let chunk = 4096;
    let mut best_par = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        bytes
            .par_chunks(chunk * format.type_size)
            .zip(out.par_chunks_mut(chunk * format.block_size))
            .for_each(|(b, o)| {
                socair_ggml_quants::dequantize_into(type_id, b, o).expect("decodes");
            });
        best_par = best_par.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{name}: {mb:.1} MB in, 1 thread {:.0} MB/s, rayon ({} threads) {:.0} MB/s (checksum {})",
        mb / best,
        rayon::current_num_threads(),
        mb / best_par,
        out.iter().map(|v| f64::from(*v)).sum::<f64>()
    );
}

fn main() {
    measure("Q8_0", 8, &[0]);
    measure("Q4_K", 12, &[0, 2]);
}
