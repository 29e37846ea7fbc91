//! Bounded work on every input (issue 16, item 3): every flood shape of
//! `fuzzing::FLOOD_SHAPES` runs in a child process (this test binary run again with
//! `SOCAIR_BOUNDS_SHAPE` set) that reports its own peak resident memory (`VmHWM` of
//! `/proc/self/status`) before and after building and running the pickle. The parent asserts
//! the memory bound (64 MiB + 8× the input), the report's size, exact counts of what was left
//! out of the findings, and that a dangerous global after the flood is still named. Time is
//! asserted against 5 s per 30 MB in release builds only (a debug build of the machine is
//! several times slower); `examples/pickle_scan.rs` gives the release figures.

use socair_torch_zip::fuzzing::{flood, FLOOD_SHAPES};
use socair_torch_zip::pickle::{self, group, Options, Severity, MAX_PER_KIND};
use std::process::Command;
use std::time::Instant;

const SIZE: usize = 8 << 20;
const TEST: &str = "bounds::every_flood_shape_stays_within_bounds";

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The flood, with a call of os.system in place of its final `N.`.
fn hostile(shape: &str) -> Vec<u8> {
    let mut data = flood(shape, SIZE);
    data.truncate(data.len() - 2);
    data.extend_from_slice(b"cos\nsystem\n.");
    data
}

/// In the child: runs one shape and prints what it cost and found.
fn child(shape: &str) {
    let base = vm_hwm_kib().unwrap_or(0);
    let data = hostile(shape);
    let start = Instant::now();
    let out = pickle::run(&data, &Options::default());
    let secs = start.elapsed().as_secs_f64();
    let peak = vm_hwm_kib().unwrap_or(0);
    let report: usize = out.findings.iter().map(|f| f.reason.len() + 64).sum();
    println!(
        "BOUNDS input={} base_kib={base} peak_kib={peak} secs={secs:.3} findings={} report={report}",
        data.len(),
        out.findings.len()
    );
    for f in &out.findings {
        let sev = match f.severity {
            Severity::Fail => "FAIL",
            Severity::Lead => "LEAD",
        };
        println!("FINDING {sev} {} {}: {}", f.offset, f.opcode, f.reason);
    }
}

struct Measured {
    input: u64,
    base_kib: u64,
    peak_kib: u64,
    secs: f64,
    report: u64,
    findings: Vec<String>,
}

fn measure(shape: &str) -> Measured {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env("SOCAIR_BOUNDS_SHAPE", shape)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shape}: {stdout}");
    // The harness may print its own "test … " before the child's line.
    let line = stdout
        .lines()
        .find_map(|l| l.find("BOUNDS ").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("{shape}: no report in {stdout}"));
    let field = |name: &str| -> String {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("{name} missing in {line}"))
            .to_owned()
    };
    Measured {
        input: field("input").parse().unwrap(),
        base_kib: field("base_kib").parse().unwrap(),
        peak_kib: field("peak_kib").parse().unwrap(),
        secs: field("secs").parse().unwrap(),
        report: field("report").parse().unwrap(),
        findings: stdout
            .lines()
            .filter_map(|l| l.strip_prefix("FINDING "))
            .map(str::to_owned)
            .collect(),
    }
}

/// How many times `unit` repeats in the flood body of `shape` (between its header and the
/// tail), counted on the bytes themselves.
fn units(shape: &str, header: usize, unit: &[u8]) -> u64 {
    let data = flood(shape, SIZE);
    let body = &data[header..data.len() - 2];
    (body.len() / unit.len()) as u64
}

#[test]
fn every_flood_shape_stays_within_bounds() {
    if let Ok(shape) = std::env::var("SOCAIR_BOUNDS_SHAPE") {
        child(&shape);
        return;
    }
    if vm_hwm_kib().is_none() {
        eprintln!("skipped: no /proc/self/status to read peak memory from");
        return;
    }
    for &shape in FLOOD_SHAPES {
        let m = measure(shape);
        let allowed_kib = (64 << 10) + 8 * m.input / 1024;
        let used_kib = m.peak_kib.saturating_sub(m.base_kib);
        eprintln!(
            "{shape:16} {:>9} bytes: {:>7} KiB over the test's own {} KiB (allowed {allowed_kib}), {:.3} s, {} findings, ~{} report bytes",
            m.input,
            used_kib,
            m.base_kib,
            m.secs,
            m.findings.len(),
            m.report
        );
        assert!(
            used_kib <= allowed_kib,
            "{shape}: {used_kib} KiB > {allowed_kib} KiB"
        );
        if !cfg!(debug_assertions) {
            let allowed_secs = 5.0 * (m.input as f64 / 30e6).max(0.1);
            assert!(m.secs <= allowed_secs, "{shape}: {} s", m.secs);
        }
        // The report stays a constant size, whatever the flood: at most MAX_PER_KIND findings
        // of each of ten kinds and a summary each.
        assert!(m.findings.len() <= 10 * (MAX_PER_KIND + 1), "{shape}");
        assert!(m.report <= 64 << 10, "{shape}: {} report bytes", m.report);
        // The flood hides nothing after it.
        assert!(
            m.findings
                .iter()
                .any(|f| f.starts_with("FAIL") && f.contains("global os.system")),
            "{shape}: os.system after the flood is not named: {:#?}",
            m.findings
        );
        // Exact counts of what was not listed.
        let summary = |total: u64, what: &str| {
            format!(
                "… and {} more {what} from here on, not listed",
                group(total - MAX_PER_KIND as u64)
            )
        };
        let expect = match shape {
            // Every PROTO after the first is out of place.
            "proto" => Some(summary(
                units("proto", 2, b"\x80\x02"),
                "opcodes outside socair-wo/1 or out of place",
            )),
            // Every REDUCE calls foo.bar (and os.system is a reference, not a call).
            "unknown-calls" => Some(summary(
                units("unknown-calls", 13, b"h\x00)R"),
                "calls outside socair-wo/1",
            )),
            // Every frame's BININT straddles its end.
            "frames-straddle" => Some(summary(
                units(
                    "frames-straddle",
                    2,
                    b"\x95\x02\x00\x00\x00\x00\x00\x00\x00J\x01\x00\x00\x000",
                ),
                "framing findings",
            )),
            _ => None,
        };
        if let Some(expect) = expect {
            assert!(
                m.findings.iter().any(|f| f.ends_with(&expect)),
                "{shape}: no {expect:?} in {:#?}",
                m.findings
            );
        }
    }
}
