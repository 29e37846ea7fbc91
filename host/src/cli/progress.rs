//! Progress bars on standard error, shown only when standard error is a terminal.

use crate::base::progress::{self, Display, Sink};
use std::io::IsTerminal;

/// Draws [`progress::Progress`] as indicatif bars.
struct TerminalBars;

impl Sink for TerminalBars {
    fn start(&self, total: u64, what: &str) -> Option<Box<dyn Display>> {
        if !std::io::stderr().is_terminal() {
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
