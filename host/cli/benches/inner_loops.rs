//! The inner loops, each beside the limit it is measured against in the same run.
//!
//!   cargo bench -p socair --bench inner_loops
//!
//! `fingerprint` hashes one 64 MiB tensor through a mapped file; its limit is the same bytes
//! through the same SHA-256 implementation with nothing else done, so the ratio of the
//! throughputs is what fingerprinting costs over hashing. (Whole commands are measured against
//! `openssl dgst -sha256` by bench/fingerprint.sh.) `copy` copies a 64 MiB file: `std::fs::copy`
//! (the limit) against the store's hashing copy, which hashes on a second core.
//!
//! A plain timing loop (best of `RUNS`), not a statistics harness: the figure wanted is a ratio
//! against a limit measured seconds before, and a harness's dependencies would be compiled by
//! every `cargo test` of the workspace.
use socair::base::progress::Progress;
use socair::fingerprint::hashing::{encode_values, hash_tensor};
use socair::read::source::{hash_file, InputFile};
use socair_plugin_api::abi_stable::std_types::{ROption, RVec};
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};
use std::hint::black_box;
use std::time::{Duration, Instant};

const SIZE: usize = 64 << 20;
const RUNS: usize = 10;

fn data() -> Vec<u8> {
    // Not all zeros or one repeated pattern: a xorshift stream.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..SIZE)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn tensor(dtype: &str, len: u64) -> TensorDescriptor {
    TensorDescriptor {
        name: "t".into(),
        dtype: dtype.into(),
        element_type: ROption::RSome(dtype.into()),
        shape: RVec::from(vec![len / if dtype == "F32" { 4 } else { 2 }]),
        ranges: RVec::from(vec![ByteRange { offset: 0, len }]),
        byte_order: ByteOrder::Little,
        origin: ROption::RNone,
        strides: ROption::RNone,
        file: ROption::RNone,
        inline: ROption::RNone,
        outside_model: false,
    }
}

/// The best of `RUNS` timings of `f`, after one warm-up run.
fn best(mut f: impl FnMut()) -> Duration {
    f();
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .expect("RUNS > 0")
}

fn mib_per_s(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / (1 << 20) as f64 / t.as_secs_f64()
}

/// One line: the name, its best time, its throughput, and the limit's time over its time.
fn report(name: &str, bytes: usize, t: Duration, limit: Duration) {
    println!(
        "{name:<34} {:>8.1} ms {:>8.1} MiB/s   ratio to the limit {:.2}",
        t.as_secs_f64() * 1e3,
        mib_per_s(bytes, t),
        limit.as_secs_f64() / t.as_secs_f64()
    );
}

fn fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tensor.bin");
    std::fs::write(&path, data()).unwrap();
    let file = InputFile::open(&path).unwrap();
    let quiet = Progress::hidden();
    let limit = best(|| {
        black_box(hash_file(&file).unwrap());
    });
    report("fingerprint: sha256 (limit)", SIZE, limit, limit);
    for dtype in ["F32", "BF16", "F16"] {
        let t = tensor(dtype, SIZE as u64);
        let took = best(|| {
            black_box(hash_tensor(&file, &t, &quiet).unwrap());
        });
        report(&format!("fingerprint: tensor {dtype}"), SIZE, took, limit);
    }
    let input = data();
    let mut out = vec![0u8; SIZE * 2];
    for dtype in ["BF16", "F16"] {
        let took = best(|| {
            encode_values(dtype, ByteOrder::Little, &input, &mut out).unwrap();
            black_box(&out);
        });
        report(
            &format!("fingerprint: widen only {dtype}"),
            SIZE,
            took,
            limit,
        );
    }
}

fn copy() {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from.bin");
    std::fs::write(&from, data()).unwrap();
    let to = dir.path().join("to.bin");
    let limit = best(|| {
        let _ = std::fs::remove_file(&to);
        std::fs::copy(&from, &to).unwrap();
    });
    report("copy: std::fs::copy (limit)", SIZE, limit, limit);
    let took = best(|| {
        let _ = std::fs::remove_file(&to);
        socair::airlock::files::copy_hashing_with(&from, &to, false).unwrap();
    });
    report("copy: copy_hashing (no fsync)", SIZE, took, limit);
}

fn main() {
    // `cargo test --benches` passes `--bench`-less arguments; only run when asked to bench.
    if std::env::args().any(|a| a == "--bench") {
        fingerprint();
        copy();
    }
}
