//! Fault injection for the crash tests: `SOCAIR_FAULT=<point>` makes the process abort at that
//! point, as a SIGKILL or a power cut would stop it: no destructor runs, nothing is cleaned
//! up. The points sit between the steps that must survive a crash (a copy and its rename, a
//! rename and its log entry, half of a log line). `SOCAIR_FAULT=hang:<point>` makes the process
//! stop there and wait, so that a test can kill it with SIGKILL itself.
//! `SOCAIR_FAULT=pause:<point>:<file>` makes it create `<file>.reached` there and go on once
//! `<file>` exists, so that a test can run another process at exactly that point (two
//! processes racing for one name). Without the variable this does nothing.

/// Aborts the process if `SOCAIR_FAULT` names this point; waits to be killed if it names it
/// as `hang:<point>`.
pub fn point(name: &str) {
    if armed(name) {
        std::process::abort();
    }
    let Ok(value) = std::env::var("SOCAIR_FAULT") else {
        return;
    };
    if value.strip_prefix("hang:") == Some(name) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    if let Some(gate) = value
        .strip_prefix("pause:")
        .and_then(|rest| rest.strip_prefix(name))
        .and_then(|rest| rest.strip_prefix(':'))
    {
        let gate = std::path::Path::new(gate);
        let _ = std::fs::write(format!("{}.reached", gate.display()), b"");
        // Bounded: a test that never opens the gate must not leave the process behind.
        for _ in 0..6000 {
            if gate.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::process::abort();
    }
}

/// Whether `SOCAIR_FAULT` names this point (for points that must do something first, such as
/// write half a line).
pub fn armed(name: &str) -> bool {
    std::env::var("SOCAIR_FAULT").is_ok_and(|v| v == name)
}
