//! Fault injection for the crash tests: `SOCAIR_FAULT=<point>` makes the process abort at that
//! point, as a SIGKILL or a power cut would stop it: no destructor runs, nothing is cleaned
//! up. The points sit between the steps that must survive a crash (a copy and its rename, a
//! rename and its log entry, half of a log line). Without the variable this does nothing.

/// Aborts the process if `SOCAIR_FAULT` names this point.
pub fn point(name: &str) {
    if armed(name) {
        std::process::abort();
    }
}

/// Whether `SOCAIR_FAULT` names this point (for points that must do something first, such as
/// write half a line).
pub fn armed(name: &str) -> bool {
    std::env::var("SOCAIR_FAULT").is_ok_and(|v| v == name)
}
