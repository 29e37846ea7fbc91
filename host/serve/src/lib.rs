//! `socair serve`: a Hugging Face Hub endpoint over an airlock store that serves only what
//! passed the gate. Every `huggingface_hub` client (transformers, diffusers, `hf download`...)
//! pointed at it with `HF_ENDPOINT` gets the files of a repository revision recorded by
//! `socair airlock pull DIR --as org/name` once its artifact is promoted, and a refusal that
//! names the verdict, the reason and the command that would let it through otherwise
//! (docs/serve.md).
//!
//! The rooms: the request path read strictly ([`paths`]), the `Range` header ([`ranges`]),
//! bearer tokens ([`tokens`]), what the store says of a revision ([`catalog`]), the Hub's JSON
//! ([`hub`]), response bodies ([`body`]), the answer to one request ([`handler`]), the
//! listening loop ([`server`]) and the counters ([`metrics`]). May use the store crate; never
//! the command line (`socair serve`'s arguments live there, and call [`serve`]).
//!
//! With an upstream hub ([`upstream`]), a revision the store lacks is fetched, scanned,
//! signed and promoted (when the gate lets it through) before it is answered.

pub mod body;
pub mod catalog;
pub mod handler;
pub mod hub;
pub mod metrics;
pub mod paths;
pub mod ranges;
pub mod server;
pub mod tokens;
pub mod upstream;

use socair_store::airlock::store::Store;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub use handler::AccessLog;

/// What `socair serve` was asked.
pub struct Options {
    /// The store.
    pub store: PathBuf,
    /// The address to listen on (`HOST:PORT`; port 0 picks a free one).
    pub listen: String,
    /// The file of accepted bearer tokens; `None`: every client is served.
    pub tokens: Option<PathBuf>,
    /// Told one line per request (`METHOD PATH STATUS`); `None`: no access log.
    pub access_log: Option<AccessLog>,
    /// How long a client has to send a request's headers.
    pub header_timeout: std::time::Duration,
    /// Pull-through: the upstream hub's address, the scan key and the readers.
    pub upstream: Option<(
        String,
        ed25519_dalek::SigningKey,
        socair_store::read::plugins::PluginSet,
    )>,
}

/// Serves the store until a shutdown signal; `bound` is told the address once it listens.
pub fn serve(options: Options, bound: impl FnOnce(SocketAddr)) -> Result<(), String> {
    let store = Store::open(&options.store).map_err(|e| e.to_string())?;
    let tokens = options
        .tokens
        .as_deref()
        .map(tokens::Tokens::load)
        .transpose()?;
    let upstream = options
        .upstream
        .map(|(base, key, plugins)| upstream::Upstream::new(&base, key, plugins))
        .transpose()?;
    let state = Arc::new(handler::State {
        store,
        tokens,
        metrics: metrics::Metrics::default(),
        access_log: options.access_log.clone(),
        upstream,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    runtime.block_on(server::run(
        state,
        &options.listen,
        options.header_timeout,
        bound,
    ))
}
