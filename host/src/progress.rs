//! A progress bar on standard error for long work (hashing, copying), shown only when standard
//! error is a terminal and the work is large enough to take more than about a second.

use std::io::IsTerminal;

/// Work below this many bytes finishes in well under a second: no bar.
const MIN_BYTES: u64 = 512 << 20;

/// A progress bar over bytes, or nothing.
pub struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    /// A bar for `total` bytes of `what`, when it is worth showing.
    pub fn bytes(total: u64, what: &str) -> Progress {
        if total < MIN_BYTES || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg} {bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(what.to_owned());
        Progress(Some(bar))
    }

    /// No bar (benchmarks, tests).
    pub fn hidden() -> Progress {
        Progress(None)
    }

    /// Counts `n` more bytes done (from any thread).
    pub fn add(&self, n: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(n);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
