//! Fault injection for the crash tests: `SOCAIR_FAULT=<point>` makes the process abort at that
//! point, as a SIGKILL or a power cut would stop it: no destructor runs, nothing is cleaned
//! up. The points sit between the steps that must survive a crash (a copy and its rename, a
//! rename and its log entry, half of a log line). `SOCAIR_FAULT=hang:<point>` makes the process
//! stop there and wait, so that a test can kill it with SIGKILL itself. Without the variable
//! this does nothing.

/// Aborts the process if `SOCAIR_FAULT` names this point; waits to be killed if it names it
/// as `hang:<point>`.
pub fn point(name: &str) {
    if armed(name) {
        std::process::abort();
    }
    if std::env::var("SOCAIR_FAULT").is_ok_and(|v| v.strip_prefix("hang:") == Some(name)) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

/// Whether `SOCAIR_FAULT` names this point (for points that must do something first, such as
/// write half a line).
pub fn armed(name: &str) -> bool {
    std::env::var("SOCAIR_FAULT").is_ok_and(|v| v == name)
}
