//! The server's counters, written in the Prometheus text exposition format (version 0.0.4):
//! requests by route and status, bytes of files sent, refusals by the verdict behind them,
//! requests refused for their credentials, files fetched from an upstream hub and revisions
//! pulled through from it.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    refusals: Mutex<BTreeMap<&'static str, u64>>,
    pulls: Mutex<BTreeMap<&'static str, u64>>,
    /// Bytes of file bodies sent.
    pub bytes_sent: Arc<AtomicU64>,
    /// Requests refused for a missing or unknown bearer token.
    pub unauthorized: AtomicU64,
    /// Fetches from an upstream hub.
    pub upstream_fetches: AtomicU64,
}

impl Metrics {
    /// Counts a request to `route` answered with `status`.
    pub fn request(&self, route: &'static str, status: u16) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((route, status)).or_default() += 1;
        }
    }

    /// Counts a refusal for `verdict`.
    pub fn refusal(&self, verdict: &'static str) {
        if let Ok(mut m) = self.refusals.lock() {
            *m.entry(verdict).or_default() += 1;
        }
    }

    /// Counts a revision pulled through from the upstream, by its scan's outcome (`passed`:
    /// no FAIL or LEAD; `held`: the gate decides, and refuses without an acceptance).
    pub fn pulled(&self, outcome: &'static str) {
        if let Ok(mut m) = self.pulls.lock() {
            *m.entry(outcome).or_default() += 1;
        }
    }

    /// The Prometheus text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP socair_serve_requests_total HTTP requests answered, by route and status.\n# TYPE socair_serve_requests_total counter\n");
        if let Ok(m) = self.requests.lock() {
            for ((route, status), n) in m.iter() {
                let _ = writeln!(
                    out,
                    "socair_serve_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
                );
            }
        }
        out.push_str("# HELP socair_serve_refusals_total Requests refused because the artifact has not passed the gate, by why.\n# TYPE socair_serve_refusals_total counter\n");
        if let Ok(m) = self.refusals.lock() {
            for (verdict, n) in m.iter() {
                let _ = writeln!(
                    out,
                    "socair_serve_refusals_total{{verdict=\"{verdict}\"}} {n}"
                );
            }
        }
        out.push_str("# HELP socair_serve_upstream_pulls_total Revisions pulled through from the upstream, by their scan's outcome.\n# TYPE socair_serve_upstream_pulls_total counter\n");
        if let Ok(m) = self.pulls.lock() {
            for (outcome, n) in m.iter() {
                let _ = writeln!(
                    out,
                    "socair_serve_upstream_pulls_total{{outcome=\"{outcome}\"}} {n}"
                );
            }
        }
        for (name, help, v) in [
            (
                "socair_serve_bytes_sent_total",
                "Bytes of promoted files sent.",
                self.bytes_sent.as_ref(),
            ),
            (
                "socair_serve_unauthorized_total",
                "Requests refused for a missing or unknown bearer token.",
                &self.unauthorized,
            ),
            (
                "socair_serve_upstream_fetches_total",
                "Files fetched from an upstream hub.",
                &self.upstream_fetches,
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                v.load(Ordering::Relaxed)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        m.request("resolve", 200);
        m.request("resolve", 200);
        m.request("resolve", 403);
        m.refusal("blocked");
        m.bytes_sent.fetch_add(42, Ordering::Relaxed);
        let text = m.render();
        assert!(text.contains("socair_serve_requests_total{route=\"resolve\",status=\"200\"} 2\n"));
        assert!(text.contains("socair_serve_requests_total{route=\"resolve\",status=\"403\"} 1\n"));
        assert!(text.contains("socair_serve_refusals_total{verdict=\"blocked\"} 1\n"));
        assert!(text.contains("socair_serve_bytes_sent_total 42\n"));
        assert!(text.contains("# TYPE socair_serve_upstream_fetches_total counter\n"));
    }
}
