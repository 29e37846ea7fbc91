//! A TCP proxy in front of the test server that cuts the first connections part-way, for the
//! test of retries after cut connections.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A TCP proxy in front of the server that cuts each of the first `cuts` connections after
/// `after` bytes have passed (either way), then forwards faithfully.
pub(super) fn cutting_proxy(
    upstream: String,
    after: usize,
    cuts: usize,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let cut = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let cut_count = Arc::clone(&cut);
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { break };
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let limit = (n < cuts).then_some(after);
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let cut = Arc::clone(&cut_count);
            std::thread::spawn(move || pipe_pair(client, server, limit, &cut));
        }
    });
    (format!("http://{addr}"), cut)
}

fn pipe_pair(client: TcpStream, server: TcpStream, limit: Option<usize>, cut: &AtomicUsize) {
    let passed = Arc::new(AtomicUsize::new(0));
    let copy = move |mut from: TcpStream, mut to: TcpStream, passed: Arc<AtomicUsize>| {
        let mut buf = [0u8; 16 << 10];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let total = passed.fetch_add(n, Ordering::SeqCst) + n;
            if limit.is_some_and(|l| total > l) {
                break;
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = from.shutdown(std::net::Shutdown::Both);
        let _ = to.shutdown(std::net::Shutdown::Both);
    };
    let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let p2 = Arc::clone(&passed);
    let up = std::thread::spawn(move || copy(c2, s2, p2));
    copy(server, client, Arc::clone(&passed));
    let _ = up.join();
    if limit.is_some_and(|l| passed.load(Ordering::SeqCst) > l) {
        cut.fetch_add(1, Ordering::SeqCst);
    }
}
