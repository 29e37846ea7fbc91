//! `measure-child LIMIT_MS OUT COMMAND [ARG…]`: runs COMMAND (its standard streams are this
//! program's), kills it after LIMIT_MS, and writes `<exit code> <peak RSS in KiB>` to OUT.
//!
//! The end-to-end bounds tests measure `socair` through this small process rather than
//! directly: Linux carries the peak RSS of the process that forks a child into the child's
//! own `ru_maxrss` (the pre-exec copy of the parent counts), so a child of the large test
//! process would report at least the test's peak. A child of this program reports its own.

use std::process::Command;
use std::time::{Duration, Instant};

#[allow(unsafe_code)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [limit, out, command, rest @ ..] = args.as_slice() else {
        eprintln!("usage: measure-child LIMIT_MS OUT COMMAND [ARG…]");
        std::process::exit(2);
    };
    let limit = Duration::from_millis(limit.parse().expect("LIMIT_MS is a number"));
    // Reaped below by wait4, which std's `wait` cannot do with the usage.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(command)
        .args(rest)
        .spawn()
        .unwrap_or_else(|e| panic!("{command}: {e}"));
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let mut killed = false;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is a plain C struct for which all-zero bytes is a valid value, and
        // wait4 only writes through the two pointers, which are valid for the call.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if r == pid {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            };
            // ru_maxrss is in KiB on Linux.
            std::fs::write(out, format!("{code} {}\n", usage.ru_maxrss)).expect("OUT is writable");
            return;
        }
        if !killed && start.elapsed() > limit {
            // SAFETY: a signal to our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
