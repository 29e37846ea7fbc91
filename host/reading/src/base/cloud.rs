//! Objects in object storage: `s3://bucket/key` (S3 and every server that speaks its protocol)
//! and `https://host/path` (any server that answers range requests), through the
//! `object_store` crate.
//!
//! Credentials and the endpoint come from the usual AWS variables (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_ENDPOINT_URL`, `AWS_DEFAULT_REGION`,
//! `AWS_ALLOW_HTTP=true` for a local server, and the container and web-identity variables);
//! nothing here ever formats them. A URL that carries credentials itself (user info, or a
//! query string such as a pre-signed URL's signature) is refused, so that no name socair
//! prints or records can hold one.
//!
//! S3 writes that claim a key (`PutMode::Create`) are sent with S3's native
//! `If-None-Match: *`: the builder's conditional-put setting is always `etag`, whatever the
//! environment says, because the shared store's log relies on it.
//!
//! Every byte received is counted ([`bytes_fetched`]), so that a command can say how much of
//! an object it fetched, and so is every wait for a response ([`round_trips`]: requests in
//! flight together count once), so that it can say how many round trips it waited for.
//!
//! An object is the one its URL names, exactly ([`parse`]): the key is never normalised. An
//! `s3://bucket/key` key is the text after the bucket, byte for byte (as the AWS CLI reads
//! it: `%2e` is three characters of the key, a space is a space); an `https://` path is the
//! path as written, each segment percent-decoded once and sent encoded again by
//! `object_store`. A key with an empty segment (`a//b`, a leading `/`), a `.` or `..` segment
//! (written plainly or, for `https://`, as `%2e`), a `%2F` inside a segment, a backslash in an
//! `https://` path or a control character names an object other than the one a normalising
//! client would fetch, and object_store 0.14's paths cannot hold it (`Path::parse` refuses
//! empty, `.` and `..` segments; `Path::from` would rewrite `..` to `%2E%2E`, another key; the
//! `url` crate removes dot segments and reads `%2e` as `.`): such a URL is refused, naming the
//! key, rather than another object fetched.

use crate::base::object_key::{http_key, http_request_url, s3_key, written_host, written_path};
use object_store::aws::{AmazonS3Builder, S3ConditionalPut};
use object_store::http::HttpBuilder;
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// URL schemes read as objects.
pub const SCHEMES: &[&str] = &["s3://", "https://", "http://"];

/// Attempts at one range read or one write before giving up: the client retries failed
/// requests itself; these cover a body cut in the middle, which it does not retry.
pub const ATTEMPTS: u32 = 5;

/// Why an object cannot be reached or read.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// The text is not a URL socair reads.
    #[error("{url}: {why}")]
    BadUrl {
        /// The URL, as given (never one that holds credentials: those are refused unprinted).
        url: String,
        /// Why.
        why: String,
    },
    /// The object store answered with an error (after retries).
    #[error("{url}: {}", explain(source))]
    Store {
        /// Where.
        url: String,
        /// What.
        source: object_store::Error,
    },
}

/// An object store's error as the person reading it needs it: `object_store` reports credentials
/// it found nowhere as a failed request to the instance metadata service, the last place it
/// looks, which says nothing of what to do.
fn explain(e: &object_store::Error) -> String {
    let text = e.to_string();
    if text.contains("169.254.169.254") || text.contains("169.254.170.2") {
        format!("no AWS credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary ones), or run where an instance, task or service-account role provides them (the metadata service, asked last, did not give them: {text})")
    } else {
        text
    }
}

impl CloudError {
    /// Why, without the URL (for a message that names it already).
    pub fn reason(&self) -> String {
        match self {
            CloudError::BadUrl { why, .. } => why.clone(),
            CloudError::Store { source, .. } => explain(source),
        }
    }

    /// Whether the object (or key) does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            CloudError::Store {
                source: object_store::Error::NotFound { .. },
                ..
            }
        )
    }

    /// Whether a conditional write found the key already taken.
    pub fn is_already_taken(&self) -> bool {
        matches!(
            self,
            CloudError::Store {
                source: object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. },
                ..
            }
        )
    }
}

/// `text` as socair may print it: a URL without user info, query string or fragment (which
/// can hold credentials), its path as written (not normalised: the object it names is that
/// one); only its scheme when it does not parse.
pub fn redact(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(u) if written_host(text, &u).is_some() => format!(
            "{}://{}{}",
            u.scheme(),
            written_host(text, &u).unwrap_or_default(),
            written_path(text)
        ),
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => format!("{}://…", text.split("://").next().unwrap_or_default()),
    }
}

/// Whether `text` names an object rather than a local path.
pub fn is_url(text: &str) -> bool {
    SCHEMES.iter().any(|s| text.starts_with(s))
}

/// A bucket (or web server) and a key in it.
#[derive(Clone)]
pub struct Location {
    /// The client for the bucket or server.
    pub store: Arc<dyn ObjectStore>,
    /// The key (for a web server, the URL's path, its segments percent-decoded).
    pub key: ObjectPath,
    /// `s3://bucket` or `https://host[:port]`: the key's base, for messages.
    pub base: String,
    /// Whether the URL ended in `/`: it names a prefix (a store's root), not an object.
    pub prefix: bool,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url())
    }
}

impl Location {
    /// The URL, as socair prints it: scheme, bucket or host, key. Never credentials (a URL
    /// with them is refused when parsed).
    /// For a web server, the URL requested (its segments encoded as object_store encodes
    /// them), which [`parse`] reads back to the same key.
    pub fn url(&self) -> String {
        if self.key.as_ref().is_empty() {
            self.base.clone()
        } else if self.base.starts_with("http") {
            http_request_url(&self.base, &self.key).unwrap_or_else(|| self.base.clone())
        } else {
            format!("{}/{}", self.base, self.key)
        }
    }

    /// The last segment of the key: the object's name (a report's `artifact.name`); empty for
    /// a URL that names a prefix (ends in `/`).
    pub fn name(&self) -> String {
        if self.prefix {
            return String::new();
        }
        self.key
            .as_ref()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    /// The same bucket, another key.
    pub fn with_key(&self, key: ObjectPath) -> Location {
        Location {
            store: Arc::clone(&self.store),
            key,
            base: self.base.clone(),
            prefix: false,
        }
    }

    /// The key `self.key/rel` (`rel` is `/`-separated).
    pub fn child(&self, rel: &str) -> Location {
        let joined = if self.key.as_ref().is_empty() {
            rel.to_owned()
        } else {
            format!("{}/{rel}", self.key)
        };
        self.with_key(ObjectPath::from(joined))
    }

    /// An error about this location.
    pub fn error(&self, source: object_store::Error) -> CloudError {
        CloudError::Store {
            url: self.url(),
            source,
        }
    }
}

/// Parses `s3://bucket/key` or `https://host/path` into a location, building (once per bucket
/// or host) a client configured from the environment.
pub fn parse(text: &str) -> Result<Location, CloudError> {
    let bad = |why: &str| CloudError::BadUrl {
        url: text.to_owned(),
        why: why.to_owned(),
    };
    let url = url::Url::parse(text).map_err(|_| CloudError::BadUrl {
        url: redact(text),
        why: "not a URL socair can read".into(),
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(CloudError::BadUrl {
            url: format!("{}://…@{}", url.scheme(), url.host_str().unwrap_or("")),
            why: "a URL with credentials in it is refused (socair would have to print and record it); give credentials through the AWS_* variables".into(),
        });
    }
    if url.query().is_some() || url.fragment().is_some() {
        let mut shown = url.clone();
        shown.set_query(None);
        shown.set_fragment(None);
        return Err(CloudError::BadUrl {
            url: shown.to_string(),
            why: "a URL with a query string or fragment is refused: a pre-signed URL's query is a credential, and socair records the names it reads".into(),
        });
    }
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad("no bucket or host"))?
        .to_owned();
    if url.scheme() != "s3" && text.contains('\\') {
        return Err(bad(
            "a backslash in an https:// URL is refused: the URL standard reads it as `/` (even in the host part), a server may not, so it could name another object",
        ));
    }
    // The path as written, not as the url crate normalised it (it removes `.` and `..`
    // segments, `%2e` included, and percent-encodes what it must).
    let written = written_path(text);
    let prefix = written.ends_with('/') && written.len() > 1;
    let (key, key_text) = match url.scheme() {
        "s3" => s3_key(written).map_err(|why| bad(&why))?,
        _ => http_key(written).map_err(|why| bad(&why))?,
    };
    let (base, client) = match url.scheme() {
        "s3" => {
            let base = format!("s3://{host}");
            (
                base,
                client_for(&format!("s3://{host}"), || s3_client(&host))?,
            )
        }
        "https" | "http" => {
            let origin = url.origin().ascii_serialization();
            (
                origin.clone(),
                client_for(&origin, || http_client(&origin))?,
            )
        }
        other => {
            return Err(bad(&format!(
                "the scheme {other}:// is not one socair reads"
            )))
        }
    };
    let location = Location {
        store: client,
        key,
        base,
        prefix,
    };
    // What will be requested reads back as the key given (the URL socair prints is parsed
    // again to open the object).
    if location.base.starts_with("http") && !location.key.as_ref().is_empty() {
        let sent = location.url();
        if http_key(written_path(&sent)).map(|(_, k)| k) != Ok(key_text.clone()) {
            return Err(bad(&format!(
                "the key {key_text:?} would be requested as {sent:?}, which names another object: refused"
            )));
        }
    }
    Ok(location)
}

type Clients = Mutex<HashMap<String, Arc<dyn ObjectStore>>>;

fn clients() -> &'static Clients {
    static CLIENTS: OnceLock<Clients> = OnceLock::new();
    CLIENTS.get_or_init(Default::default)
}

/// Serves `base` (`s3://bucket`) from `store` in this process from now on, in place of the
/// client the environment would configure: for the store crate's unit tests, which run its
/// object-storage code against object_store's in-memory store. No command calls it.
#[doc(hidden)]
pub fn serve_from(base: &str, store: Arc<dyn ObjectStore>) {
    let mut clients = clients().lock().unwrap_or_else(|e| e.into_inner());
    clients.insert(base.to_owned(), store);
}

/// One client per bucket or host, so that every object of a command shares its connections.
fn client_for(
    base: &str,
    make: impl FnOnce() -> Result<Arc<dyn ObjectStore>, CloudError>,
) -> Result<Arc<dyn ObjectStore>, CloudError> {
    let mut clients = clients().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = clients.get(base) {
        return Ok(Arc::clone(c));
    }
    let c = make()?;
    clients.insert(base.to_owned(), Arc::clone(&c));
    Ok(c)
}

fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 6,
        retry_timeout: Duration::from_secs(120),
    }
}

fn client_options() -> ClientOptions {
    // TLS runs on ring (see the workspace Cargo.toml): rustls needs it installed as the
    // process's provider before a client is built. A second call finds it installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(10))
        .with_timeout(Duration::from_secs(120))
}

fn s3_client(bucket: &str) -> Result<Arc<dyn ObjectStore>, CloudError> {
    let store = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        // The store's log claims keys with `If-None-Match: *`: never another mode.
        .with_conditional_put(S3ConditionalPut::ETagMatch)
        .with_retry(retry())
        .with_client_options(client_options().with_allow_http(allow_http()))
        .build()
        .map_err(|source| CloudError::Store {
            url: format!("s3://{bucket}"),
            source,
        })?;
    Ok(Arc::new(store))
}

fn http_client(origin: &str) -> Result<Arc<dyn ObjectStore>, CloudError> {
    let store = HttpBuilder::new()
        .with_url(origin)
        .with_retry(retry())
        .with_client_options(client_options().with_allow_http(allow_http()))
        .build()
        .map_err(|source| CloudError::Store {
            url: origin.to_owned(),
            source,
        })?;
    Ok(Arc::new(store))
}

/// `AWS_ALLOW_HTTP=true` permits plain HTTP (a local test server); otherwise TLS only.
fn allow_http() -> bool {
    std::env::var("AWS_ALLOW_HTTP").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The runtime the object store's asynchronous client runs on; socair's own code blocks on
/// it from its threads (never from inside it).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("socair-io")
            .enable_all()
            .build()
            .expect("a tokio runtime can be built")
    })
}

/// Runs `future` to completion on the I/O runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// Starts `future` on the I/O runtime, to be awaited later with [`block_on`] (read-ahead).
pub fn spawn<F>(future: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    runtime().spawn(future)
}

static FETCHED: AtomicU64 = AtomicU64::new(0);
static REQUESTS: AtomicU64 = AtomicU64::new(0);
static ROUND_TRIPS: AtomicU64 = AtomicU64::new(0);

/// Counts `n` round trips waited for, one after the other (a batch of requests in flight
/// together counts once per wave).
pub fn waited(n: u64) {
    ROUND_TRIPS.fetch_add(n, Ordering::Relaxed);
}

/// Round trips this process waited for, one after the other, so far: requests made one at a
/// time, and batches of requests in flight together.
pub fn round_trips() -> u64 {
    ROUND_TRIPS.load(Ordering::Relaxed)
}

/// Bytes received from object storage by this process so far.
pub fn bytes_fetched() -> u64 {
    FETCHED.load(Ordering::Relaxed)
}

/// Range and whole-object reads issued by this process so far.
pub fn requests() -> u64 {
    REQUESTS.load(Ordering::Relaxed)
}

/// Whether an error is worth another attempt: not a missing key, a refused condition, a
/// permission or a bad request, but a connection cut or a server error.
fn transient(e: &object_store::Error) -> bool {
    !matches!(
        e,
        object_store::Error::NotFound { .. }
            | object_store::Error::AlreadyExists { .. }
            | object_store::Error::Precondition { .. }
            | object_store::Error::NotModified { .. }
            | object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. }
            | object_store::Error::NotSupported { .. }
            | object_store::Error::NotImplemented { .. }
            | object_store::Error::InvalidPath { .. }
    )
}

/// Reads bytes `range` of the object, counting them; a cut connection is tried again.
pub fn get_range(at: &Location, range: std::ops::Range<u64>) -> Result<bytes::Bytes, CloudError> {
    waited(1);
    get_range_async_blocking(at.clone(), range)
}

fn get_range_async_blocking(
    at: Location,
    range: std::ops::Range<u64>,
) -> Result<bytes::Bytes, CloudError> {
    block_on(get_range_async(at, range))
}

/// [`get_range`], as a future (for read-ahead on the runtime).
pub async fn get_range_async(
    at: Location,
    range: std::ops::Range<u64>,
) -> Result<bytes::Bytes, CloudError> {
    let want = range.end - range.start;
    let mut attempt = 0;
    loop {
        attempt += 1;
        REQUESTS.fetch_add(1, Ordering::Relaxed);
        let got = object_store::ObjectStoreExt::get_range(&*at.store, &at.key, range.clone()).await;
        match got {
            Ok(b) if b.len() as u64 == want => {
                FETCHED.fetch_add(want, Ordering::Relaxed);
                return Ok(b);
            }
            Ok(b) => {
                FETCHED.fetch_add(b.len() as u64, Ordering::Relaxed);
                if attempt >= ATTEMPTS {
                    return Err(at.error(object_store::Error::Generic {
                        store: "socair",
                        source: format!(
                            "asked for {want} bytes at {}, the server sent {}",
                            range.start,
                            b.len()
                        )
                        .into(),
                    }));
                }
            }
            Err(e) if transient(&e) && attempt < ATTEMPTS => {}
            Err(e) => return Err(at.error(e)),
        }
        tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
    }
}

/// The object's size (a HEAD request).
pub fn size(at: &Location) -> Result<u64, CloudError> {
    waited(1);
    block_on(async {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match object_store::ObjectStoreExt::head(&*at.store, &at.key).await {
                Ok(meta) => return Ok(meta.size),
                Err(e) if transient(&e) && attempt < ATTEMPTS => {
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await
                }
                Err(e) => return Err(at.error(e)),
            }
        }
    })
}

/// The size of each part of a multipart upload (S3 wants at least 5 MiB but for the last).
pub const PART: usize = 8 << 20;

/// Parts of one upload in flight at once.
const PARTS_IN_FLIGHT: usize = 2;

/// Writes an object from a stream of bytes, hashing them: in one request when it is small, as
/// a multipart upload otherwise. Nothing is visible at the key until [`Uploader::finish`]
/// completes the upload (a dropped or failed uploader aborts it), so a reader never sees half
/// an object.
pub struct Uploader {
    at: Location,
    buf: Vec<u8>,
    upload: Option<Box<dyn object_store::MultipartUpload>>,
    in_flight: std::collections::VecDeque<object_store::UploadPart>,
    hasher: sha2::Sha256,
    len: u64,
}

impl std::fmt::Debug for Uploader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uploader")
            .field("to", &self.at.url())
            .field("len", &self.len)
            .finish()
    }
}

impl Uploader {
    /// Starts writing the object at `at` (replacing one that is there, once finished).
    pub fn new(at: &Location) -> Uploader {
        Uploader {
            at: at.clone(),
            buf: Vec::with_capacity(PART),
            upload: None,
            in_flight: Default::default(),
            hasher: sha2::Digest::new(),
            len: 0,
        }
    }

    /// Adds bytes.
    pub fn write(&mut self, mut bytes: &[u8]) -> Result<(), CloudError> {
        sha2::Digest::update(&mut self.hasher, bytes);
        self.len += bytes.len() as u64;
        while !bytes.is_empty() {
            let n = bytes.len().min(PART - self.buf.len());
            self.buf.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.buf.len() == PART {
                self.send_part()?;
            }
        }
        Ok(())
    }

    fn send_part(&mut self) -> Result<(), CloudError> {
        let part = std::mem::replace(&mut self.buf, Vec::with_capacity(PART));
        if self.upload.is_none() {
            let at = self.at.clone();
            let upload = block_on(async move {
                object_store::ObjectStoreExt::put_multipart(&*at.store, &at.key).await
            })
            .map_err(|e| self.at.error(e))?;
            self.upload = Some(upload);
        }
        let upload = self.upload.as_mut().expect("started above");
        let _io = runtime().enter();
        self.in_flight.push_back(upload.put_part(part.into()));
        while self.in_flight.len() > PARTS_IN_FLIGHT {
            let next = self.in_flight.pop_front().expect("more than two");
            block_on(next).map_err(|e| self.at.error(e))?;
        }
        Ok(())
    }

    /// Completes the object; returns the hex SHA-256 of its bytes and its length.
    pub fn finish(mut self) -> Result<(String, u64), CloudError> {
        let digest = crate::base::digest::hex(&sha2::Digest::finalize(self.hasher.clone()));
        let len = self.len;
        match self.upload.take() {
            None => {
                let payload = std::mem::take(&mut self.buf);
                put(&self.at, payload.into(), false)?;
            }
            Some(mut upload) => {
                if !self.buf.is_empty() {
                    let last = std::mem::take(&mut self.buf);
                    let _io = runtime().enter();
                    self.in_flight.push_back(upload.put_part(last.into()));
                }
                let parts = std::mem::take(&mut self.in_flight);
                let sent = block_on(async move {
                    for p in parts {
                        p.await?;
                    }
                    Ok::<_, object_store::Error>(())
                });
                let done = sent.and_then(|()| block_on(upload.complete()).map(|_| ()));
                if let Err(e) = done {
                    let _ = block_on(upload.abort());
                    return Err(self.at.error(e));
                }
            }
        }
        Ok((digest, len))
    }
}

impl Drop for Uploader {
    fn drop(&mut self) {
        // Not finished: nothing was completed, and the parts sent are discarded.
        if let Some(mut upload) = self.upload.take() {
            let _ = block_on(upload.abort());
        }
    }
}

/// Writes `payload` at `at`; with `create`, only if nothing is there yet (`If-None-Match: *`),
/// an error that [`CloudError::is_already_taken`] recognises otherwise.
pub fn put(
    at: &Location,
    payload: object_store::PutPayload,
    create: bool,
) -> Result<(), CloudError> {
    let mode = if create {
        object_store::PutMode::Create
    } else {
        object_store::PutMode::Overwrite
    };
    block_on(async {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let opts = object_store::PutOptions {
                mode: mode.clone(),
                ..Default::default()
            };
            match at.store.put_opts(&at.key, payload.clone(), opts).await {
                Ok(_) => return Ok(()),
                Err(e) if transient(&e) && attempt < ATTEMPTS => {
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await
                }
                Err(e) => return Err(at.error(e)),
            }
        }
    })
}

/// The whole object (a small document), or `None` when there is none.
pub fn get_if_any(at: &Location) -> Result<Option<bytes::Bytes>, CloudError> {
    block_on(async {
        let mut attempt = 0;
        loop {
            attempt += 1;
            REQUESTS.fetch_add(1, Ordering::Relaxed);
            let got = async {
                object_store::ObjectStoreExt::get(&*at.store, &at.key)
                    .await?
                    .bytes()
                    .await
            }
            .await;
            match got {
                Ok(b) => {
                    FETCHED.fetch_add(b.len() as u64, Ordering::Relaxed);
                    return Ok(Some(b));
                }
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) if transient(&e) && attempt < ATTEMPTS => {
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await
                }
                Err(e) => return Err(at.error(e)),
            }
        }
    })
}

/// Whether an object exists at `at`.
pub fn exists(at: &Location) -> Result<bool, CloudError> {
    match size(at) {
        Ok(_) => Ok(true),
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

/// The keys under `prefix` (a directory-like prefix: `a/b` lists `a/b/…`), after `offset`
/// when one is given, in the order the store lists them (S3: byte order).
pub fn list(
    prefix: &Location,
    offset: Option<&ObjectPath>,
) -> Result<Vec<(ObjectPath, u64)>, CloudError> {
    use futures::TryStreamExt;
    block_on(async {
        let prefix_path = (!prefix.key.as_ref().is_empty()).then_some(&prefix.key);
        let stream = match offset {
            Some(o) => prefix.store.list_with_offset(prefix_path, o),
            None => prefix.store.list(prefix_path),
        };
        stream
            .map_ok(|m| (m.location, m.size))
            .try_collect::<Vec<_>>()
            .await
            .map_err(|e| prefix.error(e))
    })
}

/// [`list`] from the start, stopping after `max + 1` keys: the keys, and whether there were
/// more than `max` (the listing of a prefix a hostile bucket fills is bounded).
pub fn list_at_most(
    prefix: &Location,
    max: usize,
) -> Result<(Vec<(ObjectPath, u64)>, bool), CloudError> {
    use futures::{StreamExt, TryStreamExt};
    let mut keys = block_on(async {
        let prefix_path = (!prefix.key.as_ref().is_empty()).then_some(&prefix.key);
        prefix
            .store
            .list(prefix_path)
            .take(max.saturating_add(1))
            .map_ok(|m| (m.location, m.size))
            .try_collect::<Vec<_>>()
            .await
            .map_err(|e| prefix.error(e))
    })?;
    let more = keys.len() > max;
    keys.truncate(max);
    Ok((keys, more))
}

/// Deletes the object at `at` (nothing there is no error).
pub fn delete(at: &Location) -> Result<(), CloudError> {
    match block_on(object_store::ObjectStoreExt::delete(&*at.store, &at.key)) {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(at.error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_credentials_are_said_as_such_and_the_url_once() {
        let at = parse("s3://models/x.bin").unwrap();
        let imds = at.error(object_store::Error::Generic {
            store: "S3",
            source: "Error performing PUT http://169.254.169.254/latest/api/token in 1ms - Server returned non-2xx status code: 403 Forbidden".into(),
        });
        let shown = imds.to_string();
        assert!(
            shown.starts_with(
                "s3://models/x.bin: no AWS credentials were found: set AWS_ACCESS_KEY_ID"
            ),
            "{shown}"
        );
        assert_eq!(shown.matches("s3://models/x.bin").count(), 1, "{shown}");
        // What the store said is kept, after the explanation.
        assert!(imds.reason().contains("169.254.169.254/latest/api/token"));
        assert!(!imds.reason().contains("s3://models"));
        let other = at.error(object_store::Error::Generic {
            store: "S3",
            source: "connection reset".into(),
        });
        assert_eq!(other.reason(), "Generic S3 error: connection reset");
    }

    #[test]
    fn urls_with_credentials_are_refused_without_echoing_them() {
        for url in [
            "https://user:hunter2@example.com/m.pt",
            "https://example.com/m.pt?X-Amz-Signature=hunter2",
            "s3://bucket/m.pt?versionId=hunter2",
            "https://example.com/m.pt#hunter2",
            "https://AKIA:hunter2+x/y@example.com/m.pt",
        ] {
            let e = parse(url).unwrap_err().to_string();
            assert!(!e.contains("hunter2"), "{e}");
            assert!(e.contains("refused") || e.contains("not a URL"), "{e}");
            assert!(!redact(url).contains("hunter2"));
        }
    }

    #[test]
    fn names_and_urls() {
        let at = parse("s3://bucket-name/models/a/m.pt").unwrap();
        assert_eq!(at.name(), "m.pt");
        assert_eq!(at.url(), "s3://bucket-name/models/a/m.pt");
        assert_eq!(at.child("x/y").url(), "s3://bucket-name/models/a/m.pt/x/y");
        let web = parse("https://example.com:8443/a/b.safetensors").unwrap();
        assert_eq!(web.url(), "https://example.com:8443/a/b.safetensors");
        assert_eq!(web.name(), "b.safetensors");
        assert!(parse("ftp://example.com/a").is_err());
        assert!(parse("s3://bucket/a//b").is_err());
        assert!(is_url("s3://b/k") && is_url("https://h/p") && !is_url("./s3:/x"));
    }

    /// The key as the URL names it, or why it is refused.
    fn key_of(url: &str) -> Result<String, String> {
        parse(url)
            .map(|at| at.key.as_ref().to_owned())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn s3_keys_are_the_text_after_the_bucket_exactly() {
        // What a normalising URL parser would change is kept: `%2e` is three characters of the
        // key, a space and non-ASCII are themselves, and the URL printed reads back the same.
        for (url, key) in [
            ("s3://b/models/a/m.pt", "models/a/m.pt"),
            ("s3://b/a/%2e%2e/m.pt", "a/%2e%2e/m.pt"),
            ("s3://b/a/.%2E/m.pt", "a/.%2E/m.pt"),
            ("s3://b/my model.pt", "my model.pt"),
            ("s3://b/my%20model.pt", "my%20model.pt"),
            ("s3://b/modèle.pt", "modèle.pt"),
            ("s3://b/a\\..\\m.pt", "a\\..\\m.pt"),
            ("s3://b/prefix/", "prefix"),
        ] {
            assert_eq!(key_of(url).as_deref(), Ok(key), "{url}");
            let at = parse(url).unwrap();
            assert_eq!(
                key_of(&at.url()).as_deref(),
                Ok(key),
                "{url} -> {}",
                at.url()
            );
        }
        assert_eq!(parse("s3://b/prefix/").unwrap().name(), "");
        // Keys with segments object_store cannot hold are refused, naming the key.
        for (url, key, what) in [
            ("s3://b/a/../m.pt", "a/../m.pt", "`..`"),
            ("s3://b/a/./m.pt", "a/./m.pt", "`.`"),
            ("s3://b/a//m.pt", "a//m.pt", "empty segment"),
            ("s3://b//m.pt", "/m.pt", "empty segment"),
            ("s3://b/..", "..", "`..`"),
        ] {
            let e = key_of(url).unwrap_err();
            assert!(e.contains(&format!("{key:?}")), "{url}: {e}");
            assert!(e.contains(what) && e.contains("refused"), "{url}: {e}");
        }
    }

    #[test]
    fn https_paths_are_requested_as_written() {
        // Segments are decoded once and encoded again by object_store: the request names the
        // same object (RFC 3986 §6.2.2), and the URL printed is the one requested.
        for (url, key, requested) in [
            ("https://h/a/m.pt", "a/m.pt", "https://h/a/m.pt"),
            (
                "https://h/my%20model.pt",
                "my model.pt",
                "https://h/my%20model.pt",
            ),
            ("https://h/a%41.pt", "aA.pt", "https://h/aA.pt"),
            ("https://h/100%25.pt", "100%.pt", "https://h/100%25.pt"),
            ("https://h/a%2e.pt", "a..pt", "https://h/a..pt"),
        ] {
            let at = parse(url).unwrap();
            assert_eq!(at.key.as_ref(), key, "{url}");
            assert_eq!(at.url(), requested, "{url}");
            assert_eq!(key_of(&at.url()).as_deref(), Ok(key), "{url}");
        }
        // Printed as written: the path a message names is the one given.
        assert_eq!(redact("s3://b/a/../m.pt?versionId=x"), "s3://b/a/../m.pt");
        assert_eq!(
            redact("https://u:p@h:8443/a/%2e%2e/m.pt#f"),
            "https://h:8443/a/%2e%2e/m.pt"
        );
        // What the url crate would normalise away is refused, not fetched as another object.
        for (url, what) in [
            ("https://h/a/../m.pt", "`..`"),
            ("https://h/a/%2e%2e/m.pt", "`%2e`"),
            ("https://h/a/.%2E/m.pt", "`%2e`"),
            ("https://h/a/%2E/m.pt", "`%2e`"),
            ("https://h/a/./m.pt", "`.`"),
            ("https://h/a//m.pt", "empty segment"),
            ("https://h/a%2Fb.pt", "`%2F`"),
            ("https://h/a\\m.pt", "backslash"),
            ("https://h/%ff.pt", "UTF-8"),
        ] {
            let e = key_of(url).unwrap_err();
            assert!(e.contains(what) && e.contains("refused"), "{url}: {e}");
        }
    }
}
