//! The inner loops, each beside the limit it is measured against in the same run.
//!
//!   cargo bench -p socair --bench inner_loops
//!
//! `fingerprint/*` hash one 64 MiB tensor through a mapped file; `fingerprint/sha256 (limit)` is
//! the same bytes through the same SHA-256 implementation with nothing else done, so the ratio of
//! the throughputs is what fingerprinting costs over hashing. (Whole commands are measured
//! against `openssl dgst -sha256` by bench/fingerprint.sh.) `copy/*` copies a 64 MiB file:
//! `std::fs::copy` (the limit) against the store's hashing copy, which hashes on a second core.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use socair::base::progress::Progress;
use socair::fingerprint::hashing::{encode_values, hash_tensor};
use socair::read::source::{hash_file, InputFile};
use socair_plugin_api::abi_stable::std_types::{ROption, RVec};
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};
use std::hint::black_box;

const SIZE: usize = 64 << 20;

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

fn fingerprint(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tensor.bin");
    std::fs::write(&path, data()).unwrap();
    let file = InputFile::open(&path).unwrap();
    let quiet = Progress::hidden();
    let mut g = c.benchmark_group("fingerprint");
    g.throughput(Throughput::Bytes(SIZE as u64));
    g.sample_size(10);
    g.bench_function("sha256 (limit)", |b| {
        b.iter(|| black_box(hash_file(&file).unwrap()))
    });
    for dtype in ["F32", "BF16", "F16"] {
        let t = tensor(dtype, SIZE as u64);
        g.bench_with_input(BenchmarkId::new("tensor", dtype), &t, |b, t| {
            b.iter(|| black_box(hash_tensor(&file, t, &quiet).unwrap()))
        });
    }
    let input = data();
    let mut out = vec![0u8; SIZE * 2];
    for dtype in ["BF16", "F16"] {
        g.bench_function(BenchmarkId::new("widen only", dtype), |b| {
            b.iter(|| encode_values(dtype, ByteOrder::Little, &input, &mut out).unwrap())
        });
    }
    g.finish();
}

fn copy(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from.bin");
    std::fs::write(&from, data()).unwrap();
    let to = dir.path().join("to.bin");
    let mut g = c.benchmark_group("copy");
    g.throughput(Throughput::Bytes(SIZE as u64));
    g.sample_size(10);
    g.bench_function("std::fs::copy (limit)", |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(&to);
            std::fs::copy(&from, &to).unwrap()
        })
    });
    g.bench_function("copy_hashing (no fsync)", |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(&to);
            socair::airlock::store::copy_hashing_with(&from, &to, false).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, fingerprint, copy);
criterion_main!(benches);
