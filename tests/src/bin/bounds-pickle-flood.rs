//! `bounds-pickle-flood SHAPE`: builds the flood `SHAPE` of `fuzzing::FLOOD_SHAPES` (8 MiB,
//! with a call of os.system in place of its final `N.`), runs the pickle machine on it, and
//! prints its own peak resident memory (`VmHWM`) before and after, the time and every finding.
//! `plugins/torch-zip/reader/tests/bounds.rs` runs it on every shape and judges what it prints.

use socair_test_support::measure::own_peak_kib;
use socair_torch_zip::fuzzing::{flood, FLOOD_SHAPES};
use socair_torch_zip::pickle::{self, Options, Severity};
use std::time::Instant;

/// The size of each flood.
const SIZE: usize = 8 << 20;

/// The flood, with a call of os.system in place of its final `N.`.
fn hostile(shape: &str) -> Vec<u8> {
    let mut data = flood(shape, SIZE);
    data.truncate(data.len() - 2);
    data.extend_from_slice(b"cos\nsystem\n.");
    data
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(shape), None) = (args.next(), args.next()) else {
        eprintln!("usage: bounds-pickle-flood SHAPE (one of {FLOOD_SHAPES:?})");
        std::process::exit(2);
    };
    if !FLOOD_SHAPES.contains(&shape.as_str()) {
        eprintln!("{shape}: not one of {FLOOD_SHAPES:?}");
        std::process::exit(2);
    }
    let base = own_peak_kib().unwrap_or(0);
    let data = hostile(&shape);
    let start = Instant::now();
    let out = pickle::run(&data, &Options::default());
    let secs = start.elapsed().as_secs_f64();
    let peak = own_peak_kib().unwrap_or(0);
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
