//! Bounded work on the container side: hostile zip and legacy shapes, generated at test time,
//! each analysed by `bounds-torch-container` (a program of `socair-tests`), which reads the
//! file through `pread` as the host's byte source does and reports its peak resident memory
//! (`VmHWM`) and CPU time (the machine is shared: wall time is printed, not judged). Every
//! shape must stay within 64 MiB + 8x its size and 5 s per 30 MB (debug builds get ten times
//! the time), and its findings within [`FINDINGS_PER_KIND`] per kind plus one count each.
//!
//! Shapes: a torch zip with a data.pkl and hundreds of thousands of tiny records; a central
//! directory of hundreds of thousands of entries over a single local header; a state dict of
//! zero-size tensors each over its own zero-length storage record; a legacy checkpoint whose
//! main pickle and storage-key list name hundreds of thousands of storages. `CONTAINER_BOUNDS_SCALE`
//! multiplies the counts (10 gives the millions; the report's numbers are from release runs).

// The program reads with `pread` and measures through `/proc/self/{status,stat}`: Linux only.
#![cfg(target_os = "linux")]

use socair_test_support::measure::bounds_program;
use socair_torch_zip::checkpoint::{AnalyzeOptions, FINDINGS_PER_KIND};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// A zip laid out as torch's writer lays it out, without the alignment padding (the zip layer
/// does not require it): flags 0x0808, data descriptors, a zip64 end record.
struct ZipWriter {
    out: Vec<u8>,
    central: Vec<u8>,
    count: u64,
}

impl ZipWriter {
    fn new() -> Self {
        ZipWriter {
            out: Vec::new(),
            central: Vec::new(),
            count: 0,
        }
    }

    fn record(&mut self, name: &str, data: &[u8]) {
        let at = self.out.len() as u32;
        let crc = crc32fast::hash(data);
        let len = data.len() as u32;
        self.local(name);
        self.out.extend_from_slice(data);
        for v in [0x0807_4b50u32, crc, len, len] {
            self.out.extend_from_slice(&v.to_le_bytes());
        }
        self.central_entry(name, crc, len, at);
    }

    fn local(&mut self, name: &str) {
        self.out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        self.out.extend_from_slice(&[0, 0, 8, 8, 0, 0, 0, 0, 0, 0]);
        self.out.extend_from_slice(&[0; 12]);
        self.out
            .extend_from_slice(&(name.len() as u16).to_le_bytes());
        self.out.extend_from_slice(&[0, 0]);
        self.out.extend_from_slice(name.as_bytes());
    }

    fn central_entry(&mut self, name: &str, crc: u32, len: u32, at: u32) {
        let c = &mut self.central;
        c.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        c.extend_from_slice(&[0, 0, 0, 0, 8, 8, 0, 0, 0, 0, 0, 0]);
        c.extend_from_slice(&crc.to_le_bytes());
        c.extend_from_slice(&len.to_le_bytes());
        c.extend_from_slice(&len.to_le_bytes());
        c.extend_from_slice(&(name.len() as u16).to_le_bytes());
        c.extend_from_slice(&[0; 12]);
        c.extend_from_slice(&at.to_le_bytes());
        c.extend_from_slice(name.as_bytes());
        self.count += 1;
    }

    fn finish(mut self) -> Vec<u8> {
        let cd_at = self.out.len() as u64;
        let cd_len = self.central.len() as u64;
        self.out.extend_from_slice(&self.central);
        let z64 = self.out.len() as u64;
        self.out.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
        self.out.extend_from_slice(&44u64.to_le_bytes());
        self.out
            .extend_from_slice(&[0x1e, 3, 0x2d, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        for v in [self.count, self.count, cd_len, cd_at] {
            self.out.extend_from_slice(&v.to_le_bytes());
        }
        self.out.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
        self.out.extend_from_slice(&0u32.to_le_bytes());
        self.out.extend_from_slice(&z64.to_le_bytes());
        self.out.extend_from_slice(&1u32.to_le_bytes());
        self.out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        self.out
            .extend_from_slice(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        self.out.extend_from_slice(&[0xff; 8]);
        self.out.extend_from_slice(&[0, 0]);
        self.out
    }
}

/// `X` BINUNICODE.
fn unicode(out: &mut Vec<u8>, s: &str) {
    out.push(b'X');
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn zip_of_tiny_records(n: usize) -> Vec<u8> {
    let mut z = ZipWriter::new();
    z.record("p/data.pkl", b"\x80\x02}.");
    z.record("p/version", b"3\n");
    for i in 0..n {
        z.record(&format!("p/x{i}"), b"");
    }
    z.finish()
}

fn central_directory_only(n: usize) -> Vec<u8> {
    let mut z = ZipWriter::new();
    z.record("p/data.pkl", b"\x80\x02}.");
    for i in 0..n {
        z.central_entry(&format!("p/x{i}"), 0, 0, 0);
    }
    z.finish()
}

/// A state dict of `n` zero-size float tensors, each over its own zero-length record.
fn zero_size_tensors(n: usize) -> Vec<u8> {
    let mut p = b"\x80\x02}q\x00(".to_vec();
    let memo_defs = |p: &mut Vec<u8>, i: usize| {
        if i == 0 {
            unicode(p, "storage");
            p.extend_from_slice(b"q\x01ctorch\nFloatStorage\nq\x02");
        } else {
            p.extend_from_slice(b"h\x01h\x02");
        }
    };
    for i in 0..n {
        unicode(&mut p, &format!("t{i}"));
        if i == 0 {
            p.extend_from_slice(b"ctorch._utils\n_rebuild_tensor_v2\nq\x03");
        } else {
            p.extend_from_slice(b"h\x03");
        }
        p.extend_from_slice(b"((");
        memo_defs(&mut p, i);
        unicode(&mut p, &i.to_string());
        if i == 0 {
            unicode(&mut p, "cpu");
            p.extend_from_slice(b"q\x04");
        } else {
            p.extend_from_slice(b"h\x04");
        }
        p.extend_from_slice(b"K\x00tQK\x00K\x00\x85K\x01\x85\x89");
        if i == 0 {
            p.extend_from_slice(b"ccollections\nOrderedDict\nq\x05");
        } else {
            p.extend_from_slice(b"h\x05");
        }
        p.extend_from_slice(b")RtR");
    }
    p.extend_from_slice(b"u.");
    let mut z = ZipWriter::new();
    z.record("p/data.pkl", &p);
    for i in 0..n {
        z.record(&format!("p/data/{i}"), b"");
    }
    z.record("p/version", b"3\n");
    z.finish()
}

/// A legacy checkpoint whose main pickle is a list of `n` zero-element storages, with the
/// storage-key list naming them all and a zero count for each.
fn legacy_key_list(n: usize) -> Vec<u8> {
    let real = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../fixtures/torch/legacy/state-dict.pt"),
    )
    .unwrap();
    let start = socair_torch_zip::legacy::analyze(&real[..], &AnalyzeOptions::default())
        .main_pickle_offset
        .unwrap() as usize;
    let mut out = real[..start].to_vec();
    out.extend_from_slice(b"\x80\x02]q\x00(");
    for i in 0..n {
        out.push(b'(');
        if i == 0 {
            unicode(&mut out, "storage");
            out.extend_from_slice(b"q\x01ctorch\nFloatStorage\nq\x02");
        } else {
            out.extend_from_slice(b"h\x01h\x02");
        }
        unicode(&mut out, &i.to_string());
        if i == 0 {
            unicode(&mut out, "cpu");
            out.extend_from_slice(b"q\x03");
        } else {
            out.extend_from_slice(b"h\x03");
        }
        out.extend_from_slice(b"K\x00NtQ");
    }
    out.extend_from_slice(b"e.\x80\x02]q\x00(");
    for i in 0..n {
        unicode(&mut out, &i.to_string());
    }
    out.extend_from_slice(b"e.");
    out.extend(std::iter::repeat_n(0u8, 8 * n));
    out
}

fn scale() -> usize {
    std::env::var("CONTAINER_BOUNDS_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

#[test]
fn every_container_shape_stays_within_bounds() {
    let k = scale();
    let shapes: Vec<(&str, &str, Vec<u8>)> = vec![
        (
            "zip of tiny records",
            "zip",
            zip_of_tiny_records(100_000 * k),
        ),
        (
            "central directory only",
            "zip",
            central_directory_only(300_000 * k),
        ),
        ("zero-size tensors", "zip", zero_size_tensors(100_000 * k)),
        (
            "legacy storage-key list",
            "legacy",
            legacy_key_list(100_000 * k),
        ),
    ];
    let debug = cfg!(debug_assertions);
    for (name, kind, bytes) in shapes {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "container-bounds-{}-{kind}.bin",
            std::process::id()
        ));
        std::fs::write(&path, &bytes).unwrap();
        let size = bytes.len() as u64;
        drop(bytes);
        let started = Instant::now();
        let out = Command::new(bounds_program("bounds-torch-container"))
            .arg(kind)
            .arg(&path)
            .output()
            .unwrap();
        let elapsed = started.elapsed();
        let _ = std::fs::remove_file(&path);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find_map(|l| l.find("MEASURE").map(|at| &l[at..]))
            .unwrap_or_else(|| panic!("{name}: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
        let field = |key: &str| -> u64 {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{key}=")))
                .unwrap()
                .parse()
                .unwrap()
        };
        let rss = field("hwm_kb") * 1024;
        // CPU time, not wall time: the machine is shared, and the reader is one thread.
        let cpu = field("cpu_ms") as f64 / 1000.0;
        let rss_bound = (64 << 20) + 8 * size;
        let secs_bound = 5.0 * (size as f64 / 30e6).max(1.0) * if debug { 10.0 } else { 1.0 };
        println!(
            "{name}: {size} bytes, peak RSS {:.1} MiB (bound {:.1} MiB), {cpu:.2} s CPU (bound {secs_bound:.1} s), {:.2} s wall; {}",
            rss as f64 / 1048576.0,
            rss_bound as f64 / 1048576.0,
            elapsed.as_secs_f64(),
            line
        );
        assert!(rss <= rss_bound, "{name}: peak RSS {rss} over {rss_bound}");
        assert!(cpu <= secs_bound, "{name}: {cpu} s CPU over {secs_bound} s");
        assert!(
            field("max_per_reason") <= FINDINGS_PER_KIND + 1,
            "{name}: findings not capped: {line}"
        );
    }
}
