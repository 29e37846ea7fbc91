//! `measure-child LIMIT_MS OUT COMMAND [ARG…]`: runs COMMAND (its standard streams are this
//! program's), kills it after LIMIT_MS, and writes `<exit code> <peak RSS in KiB>` to OUT.
//!
//! The end-to-end bounds tests measure `socair` through this small process rather than
//! directly: Linux carries the peak RSS of the process that forks a child into the child's
//! own `ru_maxrss` (the pre-exec copy of the parent counts), so a child of the large test
//! process would report at least the test's peak. A child of this program reports its own.

use std::process::Command;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [limit, out, command, rest @ ..] = args.as_slice() else {
        eprintln!("usage: measure-child LIMIT_MS OUT COMMAND [ARG…]");
        std::process::exit(2);
    };
    let limit = Duration::from_millis(limit.parse().expect("LIMIT_MS is a number"));
    // Reaped by wait4 (socair_test_support::measure::wait_with_rusage), which std's `wait`
    // cannot do with the usage.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(command)
        .args(rest)
        .spawn()
        .unwrap_or_else(|e| panic!("{command}: {e}"));
    let (code, peak_bytes, _) = socair_test_support::measure::wait_with_rusage(child.id(), limit);
    std::fs::write(out, format!("{code} {}\n", peak_bytes / 1024)).expect("OUT is writable");
}
