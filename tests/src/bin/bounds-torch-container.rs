//! `bounds-torch-container zip|legacy FILE`: analyses FILE as a torch zip checkpoint or a
//! legacy one, reading it through `pread` as the host's byte source does for a file it cannot
//! map, and runs the plugin's `opened_file` glue; then prints its own peak resident memory
//! (`VmHWM`), its CPU time and counts of what it found. `plugins/torch-zip/reader/tests/
//! container_bounds.rs` runs it on each hostile container shape and judges what it prints.

// Reads with `pread`: Unix only (and its measurements read `/proc`: Linux only).
#![cfg_attr(not(unix), allow(unused))]

use socair_test_support::measure::own_peak_kib;
use socair_torch_zip::checkpoint::{analyze, AnalyzeOptions};
use socair_torch_zip::zip::ReadAt;
use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::FileExt;

#[cfg(not(unix))]
fn main() {
    eprintln!("bounds-torch-container reads with pread: Unix only");
    std::process::exit(2);
}

/// A file read with `pread`, as the host's byte source reads a file it cannot map.
#[cfg(unix)]
struct FileSource(std::fs::File, u64);

#[cfg(unix)]
impl ReadAt for FileSource {
    fn size(&self) -> u64 {
        self.1
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        self.0.read_exact_at(buf, offset).map_err(|e| e.to_string())
    }
}

#[cfg(unix)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, path] = args.as_slice() else {
        eprintln!("usage: bounds-torch-container zip|legacy FILE");
        std::process::exit(2);
    };
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let size = file.metadata().unwrap().len();
    let src = FileSource(file, size);
    let options = AnalyzeOptions::default();
    let a = match kind.as_str() {
        "zip" => analyze(&src, &options),
        "legacy" => socair_torch_zip::legacy::analyze(&src, &options),
        other => {
            eprintln!("{other}: not zip or legacy");
            std::process::exit(2);
        }
    };
    let opened = socair_torch_zip::opened_file(&a, false);
    let hwm = own_peak_kib().expect("VmHWM in /proc/self/status");
    // utime and stime (clock ticks, 100 per second on Linux), after the command's parentheses.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let cpu_ms = (fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()) * 10;
    let mut kinds = std::collections::HashMap::<String, u64>::new();
    for f in &a.findings {
        *kinds
            .entry(f.reason.chars().take(40).collect())
            .or_default() += 1;
    }
    println!(
        "MEASURE hwm_kb={hwm} cpu_ms={cpu_ms} findings={} max_per_reason={} tensors={} unread={} worst={:?}",
        a.findings.len(),
        kinds.values().max().copied().unwrap_or(0),
        opened.tensors.len(),
        opened.unread.len(),
        a.worst()
    );
    std::io::stdout().flush().unwrap();
}
