//! A TCP proxy in front of the test server that cuts connections part-way, for the test of
//! retries after cut connections: the first ones opened ([`cutting_proxy`]), or the first ones
//! to carry much ([`cutting_transfers`]).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// A TCP proxy in front of the server that cuts each of the first `cuts` connections after
/// `after` bytes have passed (either way), then forwards faithfully.
pub(super) fn cutting_proxy(
    upstream: String,
    after: usize,
    cuts: usize,
) -> (String, Arc<AtomicUsize>) {
    let cut = Arc::new(AtomicUsize::new(0));
    let cut_count = Arc::clone(&cut);
    let mut seen = 0;
    let addr = listen(upstream, move |client, server| {
        let limit = (seen < cuts).then_some(after);
        seen += 1;
        let cut = Arc::clone(&cut_count);
        let counted = AtomicBool::new(false);
        pipe_pair(client, server, move |total| {
            let over = limit.is_some_and(|l| total > l);
            if over && !counted.swap(true, Ordering::SeqCst) {
                cut.fetch_add(1, Ordering::SeqCst);
            }
            over
        });
    });
    (addr, cut)
}

/// A TCP proxy in front of the server that cuts each of the first `cuts` connections to
/// carry more than `after` bytes (either way) at that point, and forwards everything else
/// faithfully. Counted by the connections that carry that much, not by the order they were
/// opened in: a client's first connections may carry small requests only (a zip's headers,
/// fetched together), its transfers coming later on others. Returns the proxy's address and
/// the number of connections it cut.
pub(super) fn cutting_transfers(
    upstream: String,
    after: usize,
    cuts: usize,
) -> (String, Arc<AtomicUsize>) {
    let cut = Arc::new(AtomicUsize::new(0));
    let left = Arc::new(AtomicUsize::new(cuts));
    let cut_count = Arc::clone(&cut);
    let addr = listen(upstream, move |client, server| {
        let (cut, left) = (Arc::clone(&cut_count), Arc::clone(&left));
        // Whether this connection is one to cut, decided once it carries more than `after`.
        let doomed = AtomicUsize::new(UNDECIDED);
        pipe_pair(client, server, move |total| {
            total > after && decide(&doomed, &left, &cut) == CUT
        });
    });
    (addr, cut)
}

/// Listens on a free loopback port and hands each connection, with one opened to `upstream`
/// for it, to `connected`; returns the proxy's address.
fn listen(
    upstream: String,
    mut connected: impl FnMut(TcpStream, TcpStream) + Send + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { break };
            if let Ok(server) = TcpStream::connect(&upstream) {
                connected(client, server);
            }
        }
    });
    format!("http://{addr}")
}

/// Forwards both ways between `client` and `server` (on a thread of its own), until
/// `cut_now(bytes passed so far, both ways)` says to cut: then both ends are shut down.
fn pipe_pair(
    client: TcpStream,
    server: TcpStream,
    cut_now: impl Fn(usize) -> bool + Send + Sync + 'static,
) {
    std::thread::spawn(move || {
        let passed = AtomicUsize::new(0);
        let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::scope(|scope| {
            scope.spawn(|| forward(c2, s2, &passed, &cut_now));
            forward(server, client, &passed, &cut_now);
        });
    });
}

/// Copies `from` to `to` until either end closes or `cut_now` says to cut.
fn forward(
    mut from: TcpStream,
    mut to: TcpStream,
    passed: &AtomicUsize,
    cut_now: &impl Fn(usize) -> bool,
) {
    let mut buf = [0u8; 16 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let total = passed.fetch_add(n, Ordering::SeqCst) + n;
        if cut_now(total) || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(std::net::Shutdown::Both);
    let _ = to.shutdown(std::net::Shutdown::Both);
}

/// A connection not yet decided, one cut, and one spared.
const UNDECIDED: usize = 0;
const CUT: usize = 1;
const SPARED: usize = 2;

/// Decides once whether a connection that carries more than the limit is cut: while cuts are
/// left, it is (and counted).
fn decide(doomed: &AtomicUsize, left: &AtomicUsize, cut: &AtomicUsize) -> usize {
    let state = doomed.load(Ordering::SeqCst);
    if state != UNDECIDED {
        return state;
    }
    let take = left
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(1))
        .is_ok();
    let wanted = if take { CUT } else { SPARED };
    match doomed.compare_exchange(UNDECIDED, wanted, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {
            if take {
                cut.fetch_add(1, Ordering::SeqCst);
            }
            wanted
        }
        // The other direction decided first: its decision stands, the cut taken goes back.
        Err(decided) => {
            if take {
                left.fetch_add(1, Ordering::SeqCst);
            }
            decided
        }
    }
}
