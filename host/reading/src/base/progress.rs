//! Progress of long work (hashing, copying, writing), counted in bytes from any thread.
//!
//! The library counts; it never draws. The command line installs a [`Sink`] once (a bar on
//! standard error when that is a terminal); without one, and for work too small to take more
//! than about a second, counting costs nothing.

use std::sync::OnceLock;

/// Work below this many bytes finishes in well under a second: no bar.
const MIN_BYTES: u64 = 512 << 20;

/// Where progress is shown.
pub trait Sink: Send + Sync {
    /// A display for `total` bytes of `what`, or none when this sink shows nothing now.
    fn start(&self, total: u64, what: &str) -> Option<Box<dyn Display>>;
}

/// One piece of work being shown.
pub trait Display: Send + Sync {
    /// `n` more bytes are done.
    fn add(&self, n: u64);
    /// The work is over (done or abandoned).
    fn finish(&self);
}

static SINK: OnceLock<Box<dyn Sink>> = OnceLock::new();

/// Installs the process's sink; the first one installed stays.
pub fn install(sink: Box<dyn Sink>) {
    let _ = SINK.set(sink);
}

/// Progress over bytes, shown by the installed sink when the work is large enough.
pub struct Progress(Option<Box<dyn Display>>);

impl Progress {
    /// Progress over `total` bytes of `what`.
    pub fn bytes(total: u64, what: &str) -> Progress {
        if total < MIN_BYTES {
            return Progress(None);
        }
        Progress(SINK.get().and_then(|s| s.start(total, what)))
    }

    /// Nothing shown (benchmarks, tests).
    pub fn hidden() -> Progress {
        Progress(None)
    }

    /// Counts `n` more bytes done (from any thread).
    pub fn add(&self, n: u64) {
        if let Some(d) = &self.0 {
            d.add(n);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(d) = &self.0 {
            d.finish();
        }
    }
}
