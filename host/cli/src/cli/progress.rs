//! Progress bars on standard error, shown only when standard error is a terminal.

use crate::base::progress::{self, Display, Sink};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set while many artifacts are scanned at once: their count is the bar, and the bars of
/// each one's hashing (drawn from several threads at once) would garble it.
static BYTE_BARS_OFF: AtomicBool = AtomicBool::new(false);

/// Draws [`progress::Progress`] as indicatif bars.
struct TerminalBars;

impl Sink for TerminalBars {
    fn start(&self, total: u64, what: &str) -> Option<Box<dyn Display>> {
        if !std::io::stderr().is_terminal() || BYTE_BARS_OFF.load(Ordering::Relaxed) {
            return None;
        }
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg} {bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(what.to_owned());
        Some(Box::new(Bar(bar)))
    }
}

struct Bar(indicatif::ProgressBar);

impl Display for Bar {
    fn add(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Installs the terminal bars as the process's progress sink.
pub fn install() {
    progress::install(Box::new(TerminalBars));
}

/// A bar counting `total` artifacts on standard error (none when it is not a terminal); the
/// bars of bytes hashed are off from then on.
pub fn artifacts_bar(total: u64) -> Option<indicatif::ProgressBar> {
    BYTE_BARS_OFF.store(true, Ordering::Relaxed);
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "scanning {bar:30} {pos}/{len} artifacts, eta {eta}",
    ) {
        bar.set_style(style);
    }
    Some(bar)
}
