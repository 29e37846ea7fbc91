//! Bounded work on every input: every flood shape of `fuzzing::FLOOD_SHAPES` runs in
//! `bounds-pickle-flood` (a program of `socair-tests`), which builds the flood and reports its
//! own peak resident memory (`VmHWM` of `/proc/self/status`) before and after building and
//! running the pickle. This test asserts the memory bound (64 MiB + 8× the input), the
//! report's size, exact counts of what was left out of the findings, and that a dangerous
//! global after the flood is still named. Time is asserted against 5 s per 30 MB in release
//! builds only (a debug build of the machine is several times slower);
//! `examples/pickle_scan.rs` gives the release figures.

use socair_test_support::measure::{bounds_program, own_peak_kib};
use socair_torch_zip::fuzzing::{flood, FLOOD_SHAPES};
use socair_torch_zip::pickle::{group, MAX_PER_KIND};
use std::process::Command;

/// The size of each flood, as `bounds-pickle-flood` builds it.
const SIZE: usize = 8 << 20;

struct Measured {
    input: u64,
    base_kib: u64,
    peak_kib: u64,
    secs: f64,
    report: u64,
    findings: Vec<String>,
}

fn measure(shape: &str) -> Measured {
    let out = Command::new(bounds_program("bounds-pickle-flood"))
        .arg(shape)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shape}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("BOUNDS "))
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
    if own_peak_kib().is_none() {
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
