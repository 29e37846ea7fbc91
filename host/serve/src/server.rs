//! The listening loop: HTTP/1.1 connections on tokio with hyper, bounded as a server facing a
//! network must be. Request headers must arrive whole within [`HEADER_TIMEOUT`] (a client
//! that trickles them, "slowloris", is cut off; `--header-timeout`) and fit in [`MAX_HEADER_BYTES`] and
//! [`MAX_HEADERS`] (else 431); at most [`MAX_CONNECTIONS`] connections are served at once;
//! request bodies are never read. Ctrl-C or SIGTERM stops accepting, lets the requests under
//! way finish for up to [`SHUTDOWN_GRACE`], and returns.

use crate::handler::{self, State};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long a client has to send a request's headers, unless told otherwise.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes of request headers read.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// The most request headers read.
pub const MAX_HEADERS: usize = 64;
/// The most connections served at once (others wait to be accepted).
pub const MAX_CONNECTIONS: usize = 512;
/// How long requests under way may take to finish once shutdown begins.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Ctrl-C, or SIGTERM where there are signals (what Kubernetes sends a pod it stops).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Binds `listen`, tells `bound` the address, and serves until a shutdown signal; a client
/// has `header_timeout` to send a request's headers.
pub async fn run(
    state: Arc<State>,
    listen: &str,
    header_timeout: Duration,
    bound: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| format!("--listen {listen}: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("--listen {listen}: {e}"))?;
    bound(addr);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A connection that failed before it was accepted (reset, or out of file
                // descriptors): nothing to answer; wait a little so a full table can drain.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let service = service_fn(move |req| {
            let state = state.clone();
            async move { Ok::<_, Infallible>(handler::handle(state, req).await) }
        });
        let conn = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .max_buf_size(MAX_HEADER_BYTES.max(8192) * 4)
            .max_header_size(MAX_HEADER_BYTES)
            .max_headers(MAX_HEADERS)
            .serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = watched.await;
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(SHUTDOWN_GRACE) => {}
    }
    Ok(())
}
