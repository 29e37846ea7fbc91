//! Measuring a child process: peak RSS (from `wait4`), CPU time and output size, against
//! the bounds every reader keeps (64 MiB + 8x the input, 5 s per 30 MB, output 8x the
//! input). Used by `tests/tests/bounds.rs` (end to end, `socair` itself) and each reader
//! plugin's `tests/bounds.rs` (the plugin alone, in a `bounds-*` program of `socair-tests`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The size each shape aims for.
pub const TARGET: usize = 30_000_000;

/// Fixed memory allowance.
const SLACK: u64 = 64 << 20;

/// One shape at a time.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// What one child run cost.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// Peak resident set, bytes.
    pub rss: u64,
    /// Wall time.
    pub wall: Duration,
    /// CPU time (user and system): what the time bound is checked against, since wall time
    /// grows with whatever else the machine runs.
    pub cpu: Duration,
    /// Bytes written to standard output and standard error.
    pub output: u64,
    /// Exit code (or 128 + signal).
    pub code: i32,
}

/// User plus system CPU time of a finished child.
fn cpu_time(usage: &libc::rusage) -> Duration {
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Waits for `pid` and returns its exit code, peak RSS (bytes) and CPU time, polling so that a
/// run past `limit` is killed instead of hanging the suite. The one place the tests call wait4
/// (`measure-child` too).
#[allow(unsafe_code)]
pub fn wait_with_rusage(pid: u32, limit: Duration) -> (i32, u64, Duration) {
    let pid = pid as libc::pid_t;
    let start = Instant::now();
    let mut killed = false;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is a plain C struct for which all-zero bytes is a valid value, and
        // wait4 only writes through the two pointers, which are valid for the call.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(r >= 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if r == pid {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            };
            // ru_maxrss is in KiB on Linux.
            return (code, usage.ru_maxrss as u64 * 1024, cpu_time(&usage));
        }
        if !killed && start.elapsed() > limit {
            // SAFETY: sending a signal to our own child, which has not been reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The most a measured run may take before it is killed.
const KILL_AFTER: Duration = Duration::from_secs(120);

/// Runs `cmd` with its output sent to files in `dir`; returns what it cost.
///
/// Linux carries the peak RSS of the process that forks a child into the child's own
/// `ru_maxrss`, so a child of this (large) test process would report at least the test's own
/// peak. The end-to-end tests therefore run the command under `trampoline`, the
/// `measure-child` program of `socair-tests`, whose child reports only itself; elsewhere (a
/// plugin's own bounds test, `trampoline` none) the child prints its own `VmHWM`, which
/// [`plugin_alone`] reads.
pub fn measure(cmd: Command, dir: &Path, what: &str, trampoline: Option<&Path>) -> Cost {
    let out = dir.join(format!("{what}.out"));
    let err = dir.join(format!("{what}.err"));
    let usage = dir.join(format!("{what}.rusage"));
    let mut cmd = match trampoline {
        Some(trampoline) => {
            let mut outer = Command::new(trampoline);
            outer
                .arg(KILL_AFTER.as_millis().to_string())
                .arg(&usage)
                .arg(cmd.get_program())
                .args(cmd.get_args());
            for (k, v) in cmd.get_envs() {
                match v {
                    Some(v) => outer.env(k, v),
                    None => outer.env_remove(k),
                };
            }
            outer
        }
        None => cmd,
    };
    cmd.stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let start = Instant::now();
    // Reaped by `wait_with_rusage` (wait4), which std's `wait` cannot do with the usage.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("the child starts");
    // The CPU time of a waited-for child includes that of the children it waited for (the
    // trampoline's `socair`); its peak RSS does not, hence the trampoline's own report.
    let (mut code, mut rss, cpu) =
        wait_with_rusage(child.id(), KILL_AFTER + Duration::from_secs(5));
    let wall = start.elapsed();
    if let Ok(text) = std::fs::read_to_string(&usage) {
        let mut words = text.split_whitespace().map(|w| w.parse::<u64>().unwrap());
        code = words.next().unwrap() as i32;
        rss = words.next().unwrap() * 1024;
    }
    let output = std::fs::metadata(&out).unwrap().len() + std::fs::metadata(&err).unwrap().len();
    Cost {
        rss,
        wall,
        cpu,
        output,
        code,
    }
}

/// The bounds for an input of `len` bytes: memory, time (with a one-second floor for process
/// start and plugin loading), output.
pub fn check(shape: &str, what: &str, len: usize, c: &Cost, dir: &Path) {
    let len = len as u64;
    let rss_limit = SLACK + 8 * len;
    // Debug builds compile the readers unoptimised (only dependencies get opt-level 3): there
    // the time bound is checked with a factor of 3; release figures are in the report.
    let factor = if cfg!(debug_assertions) { 3.0 } else { 1.0 };
    let time_limit = Duration::from_secs_f64((5.0 * len as f64 / 30e6).max(1.0) * factor);
    let out_limit = 8 * len;
    eprintln!(
        "bounds: {shape:<26} {what:<8} input {:>6.1} MB  rss {:>7.1} MB (limit {:>6.1})  cpu {:>6.2} s (limit {:>5.2}, wall {:>6.2} s)  output {:>8.2} MB (limit {:>6.1})  exit {}",
        len as f64 / 1e6,
        c.rss as f64 / 1e6,
        rss_limit as f64 / 1e6,
        c.cpu.as_secs_f64(),
        time_limit.as_secs_f64(),
        c.wall.as_secs_f64(),
        c.output as f64 / 1e6,
        out_limit as f64 / 1e6,
        c.code
    );
    let err = std::fs::read_to_string(dir.join(format!("{what}.err"))).unwrap_or_default();
    assert!(
        c.code == 0 || c.code == 1,
        "{shape} {what}: exit {} (killed or crashed): {}",
        c.code,
        &err[..err.char_indices().nth(2000).map_or(err.len(), |(at, _)| at)]
    );
    assert!(
        c.rss <= rss_limit,
        "{shape} {what}: {} bytes resident",
        c.rss
    );
    assert!(
        c.cpu <= time_limit,
        "{shape} {what}: {:?} of CPU ({:?} wall)",
        c.cpu,
        c.wall
    );
    assert!(
        c.output <= out_limit,
        "{shape} {what}: {} bytes out",
        c.output
    );
}

/// Writes `data` to `name` in a fresh directory and returns both.
pub fn write_input(name: &str, data: Vec<u8>) -> (tempfile::TempDir, std::path::PathBuf, usize) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::File::create(&file)
        .unwrap()
        .write_all(&data)
        .unwrap();
    (dir, file, data.len())
}

/// The directory the test executable was built into (`target/<profile>`, its parent's
/// parent: cargo puts test executables in `target/<profile>/deps`), where `cargo build
/// --workspace` puts the `bounds-*` programs.
pub fn target_profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test executable is in target/<profile>/deps")
        .to_owned()
}

/// The path of `program`, one of the `bounds-*` programs of `socair-tests` (a plugin's tests
/// cannot name another package's programs through `CARGO_BIN_EXE_*`); fails the test, rather
/// than passing it unmeasured, when it has not been built.
pub fn bounds_program(program: &str) -> PathBuf {
    let path = target_profile_dir().join(format!("{program}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} does not exist: run `cargo build --workspace` (or `cargo build -p socair-tests \
         --bins`) before the tests",
        path.display()
    );
    path
}

/// Measures the plugin alone: writes `data` to `name` in a fresh directory, runs `program`
/// (a `bounds-*` program of `socair-tests`, [`bounds_program`]) on it, and checks the bounds
/// against the peak the program reports of itself ([`print_own_peak`]).
pub fn plugin_alone(shape: &str, name: &str, data: Vec<u8>, program: &str) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, file, len) = write_input(name, data);
    let mut cmd = Command::new(bounds_program(program));
    cmd.arg(&file);
    let mut c = measure(cmd, dir.path(), "plugin", None);
    let summary = std::fs::read_to_string(dir.path().join("plugin.out")).unwrap_or_default();
    if let Some(at) = summary.find("plugin:") {
        let line = summary[at..].lines().next().unwrap_or("");
        eprintln!("bounds: {shape:<26} {line}");
    }
    // The program's own peak, not the one it inherited from this process before its exec.
    let own = summary
        .lines()
        .find_map(|l| l.strip_prefix("vmhwm_kib "))
        .and_then(|v| v.trim().parse::<u64>().ok());
    let err = std::fs::read_to_string(dir.path().join("plugin.err")).unwrap_or_default();
    c.rss = own.unwrap_or_else(|| {
        panic!(
            "{shape}: {program} printed no peak (exit {}): {}",
            c.code,
            &err[..err.char_indices().nth(2000).map_or(err.len(), |(at, _)| at)]
        )
    }) * 1024;
    check(shape, "plugin", len, &c, dir.path());
}

/// In a `bounds-*` program: the bytes of the file its one argument names.
pub fn child_input() -> Vec<u8> {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: bounds-<reader> FILE");
        std::process::exit(2);
    };
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.to_string_lossy()))
}

/// This process's own peak resident set (`VmHWM` of `/proc/self/status`), KiB: unlike
/// `ru_maxrss`, it starts again at the exec, so it is the program's alone.
pub fn own_peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
}

/// In a `bounds-*` program: prints [`own_peak_kib`] as `vmhwm_kib N`, the line
/// [`plugin_alone`] reads.
pub fn print_own_peak() {
    let kib = own_peak_kib().expect("VmHWM in /proc/self/status");
    println!("vmhwm_kib {kib}");
}
