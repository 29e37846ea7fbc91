//! Runs one pickle (a file, or a generated flood shape) through the socair-wo/1 machine and
//! prints what it cost: findings, report bytes, time and the process's peak resident memory.
//!
//!     cargo run --release -p socair-plugin-torch-zip --example pickle_scan -- FILE
//!     cargo run --release -p socair-plugin-torch-zip --example pickle_scan -- --flood SHAPE BYTES
//!     cargo run --release -p socair-plugin-torch-zip --example pickle_scan -- --emit SHAPE BYTES > FILE

use socair_torch_zip::fuzzing::flood;
use socair_torch_zip::pickle::{self, Options, Severity};
use std::time::Instant;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, shape, size] = args.as_slice() {
        if flag == "--emit" {
            use std::io::Write;
            let data = flood(shape, size.parse().expect("size"));
            std::io::stdout().write_all(&data).expect("write");
            return;
        }
    }
    let data = match args.as_slice() {
        [flag, shape, size] if flag == "--flood" => flood(shape, size.parse().expect("size")),
        [path] => std::fs::read(path).expect("read"),
        _ => panic!("usage: pickle_scan FILE | --flood SHAPE BYTES"),
    };
    let before = peak_rss_kib();
    let start = Instant::now();
    let out = pickle::run(&data, &Options::default());
    let secs = start.elapsed().as_secs_f64();
    let fails = out
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Fail)
        .count();
    let report: usize = out.findings.iter().map(|f| f.reason.len() + 40).sum();
    println!(
        "input {} bytes; {} findings ({fails} FAIL), report ~{report} bytes; {secs:.3} s; peak RSS {} KiB (before the run {} KiB)",
        data.len(),
        out.findings.len(),
        peak_rss_kib(),
        before
    );
    for f in out
        .findings
        .iter()
        .take(3)
        .chain(out.findings.iter().rev().take(2))
    {
        println!(
            "  {:?} @{} {}: {}",
            f.severity,
            f.offset,
            f.opcode,
            f.reason.chars().take(160).collect::<String>()
        );
    }
}
