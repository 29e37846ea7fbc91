//! Runs one pickle (a file, or a generated flood shape) through the socair-wo/1 machine and
//! prints what it cost: findings, report bytes, time and the process's peak resident memory.
//!
//!     cargo run --release -p socair-plugin-torch-zip --example pickle_scan -- FILE
//!     cargo run --release -p socair-plugin-torch-zip --example pickle_scan -- --flood SHAPE BYTES

use socair_plugin_torch_zip::pickle::{self, Options, Severity};
use std::time::Instant;

fn flood(shape: &str, size: usize) -> Vec<u8> {
    let mut p = b"\x80\x02".to_vec();
    let fill = |p: &mut Vec<u8>, unit: &[u8]| {
        while p.len() + unit.len() < size {
            p.extend_from_slice(unit);
        }
    };
    match shape {
        "empty-list" => fill(&mut p, b"]"),
        "none-tuple" => {
            p.push(b'(');
            fill(&mut p, b"N");
            p.push(b't');
        }
        "proto" => fill(&mut p, b"\x80\x02"),
        "unknown-globals" => fill(&mut p, b"cfoo\nbar\n"),
        "unknown-calls" => {
            p.extend_from_slice(b"cfoo\nbar\nq\x00");
            fill(&mut p, b"h\x00)R");
        }
        "marks" => fill(&mut p, b"("),
        "memoize" => {
            p[1] = 4;
            p.push(b'N');
            fill(&mut p, b"\x94");
        }
        "long4" => {
            p.push(0x8b);
            let n = size - 8;
            p.extend_from_slice(&(n as u32).to_le_bytes());
            p.resize(p.len() + n, 0x41);
        }
        "tuples" => {
            p.push(b'N');
            fill(&mut p, b"\x85");
        }
        other => panic!("unknown shape {other}"),
    }
    p.extend_from_slice(b"N.");
    p
}

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
