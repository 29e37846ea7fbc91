//! One request, answered: the route read from the path ([`crate::paths`]), the bearer token
//! checked ([`crate::tokens`]), the store asked ([`crate::catalog`]) on a blocking thread, and
//! the answer in the Hub's words, with the headers `huggingface_hub` 2.5.0 reads
//! (`get_hf_file_metadata` and `hf_raise_for_status`): `X-Repo-Commit`, `ETag` and
//! `X-Linked-Etag` (the sha256), `X-Linked-Size`, `Content-Length`, `Accept-Ranges`,
//! `Content-Range`, and on an error `X-Error-Code` and `X-Error-Message`.
//!
//! A refusal is `403` with `X-Error-Code: GatedRepo`: the client raises that as
//! `GatedRepoError` whose text holds socair's message (any other 403 on the file's HEAD would
//! be swallowed into "cannot find the requested files in the local cache",
//! `_raise_on_head_call_error` in `file_download.py`).

use crate::body::Body;
use crate::catalog::{self, header_text, Found};
use crate::hub;
use crate::metrics::Metrics;
use crate::paths::{self, Route};
use crate::ranges::{self, Wanted};
use crate::tokens::{Credentials, Tokens};
use crate::upstream;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use socair_store::airlock::repos::{self, RepoFile, RepoRecord};
use socair_store::airlock::store::{Area, Store};
use socair_store::base::cloud::{self, Location};
use socair_store::read::source::is_remote;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The longest `X-Error-Message` sent (bytes).
const MAX_MESSAGE: usize = 4000;

/// Where the access log's lines go (nothing here prints: the command line does).
pub type AccessLog = Arc<dyn Fn(&str) + Send + Sync>;

/// What every request shares.
pub struct State {
    /// The store served.
    pub store: Store,
    /// The accepted bearer tokens; `None`: no token needed.
    pub tokens: Option<Tokens>,
    /// The counters.
    pub metrics: Metrics,
    /// Told one line per request (`METHOD PATH STATUS`), when set; the command line prints it.
    pub access_log: Option<AccessLog>,
    /// The hub a revision the store lacks is pulled through from, when set.
    pub upstream: Option<crate::upstream::Upstream>,
}

/// A response being built.
type Answer = Response<Body>;

fn answer(status: StatusCode, headers: &[(&str, String)], body: Body) -> Answer {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    for (k, v) in headers {
        if let Ok(v) = HeaderValue::from_str(v) {
            r.headers_mut().append(
                header::HeaderName::from_bytes(k.as_bytes()).expect("a constant name"),
                v,
            );
        }
    }
    r
}

/// An error in the Hub's form: the code and message in headers and in a JSON body.
fn error(status: StatusCode, code: &str, message: &str, commit: Option<&str>) -> Answer {
    let message = header_text(message, MAX_MESSAGE);
    let mut headers = vec![
        ("X-Error-Message", message.clone()),
        ("Content-Type", "application/json".to_owned()),
    ];
    if !code.is_empty() {
        headers.push(("X-Error-Code", code.to_owned()));
    }
    if let Some(c) = commit {
        headers.push(("X-Repo-Commit", c.to_owned()));
    }
    let body = serde_json::to_vec(&serde_json::json!({ "error": message })).unwrap_or_default();
    answer(status, &headers, Body::full(body))
}

fn json(value: &serde_json::Value, commit: &str) -> Answer {
    let body = serde_json::to_vec(value).unwrap_or_default();
    answer(
        StatusCode::OK,
        &[
            ("Content-Type", "application/json".into()),
            ("X-Repo-Commit", commit.into()),
        ],
        Body::full(body),
    )
}

/// The route's name in the metrics.
fn label(route: Option<&Route>) -> &'static str {
    match route {
        None => "other",
        Some(Route::Health) => "health",
        Some(Route::Metrics) => "metrics",
        Some(Route::ModelInfo { .. }) => "model_info",
        Some(Route::Tree { .. }) => "tree",
        Some(Route::Resolve { .. }) => "resolve",
    }
}

/// Answers one request.
pub async fn handle<B>(state: Arc<State>, req: Request<B>) -> Answer {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let route = paths::route(&path);
    let name = label(route.as_ref().ok().and_then(Option::as_ref));
    let mut response = match route {
        _ if method != Method::GET && method != Method::HEAD => {
            let mut r = error(
                StatusCode::METHOD_NOT_ALLOWED,
                "",
                "socair serve answers GET and HEAD only",
                None,
            );
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            r
        }
        Err(bad) => error(
            StatusCode::BAD_REQUEST,
            "",
            &format!("socair serve: refused path: {}", bad.0),
            None,
        ),
        Ok(None) => error(
            StatusCode::NOT_FOUND,
            "",
            "socair serve: no such route",
            None,
        ),
        Ok(Some(route)) => match authorize(&state, &route, &req) {
            Some(refused) => refused,
            None => route_answer(&state, route, query.as_deref(), &req).await,
        },
    };
    let status = response.status().as_u16();
    state.metrics.request(name, status);
    if method == Method::HEAD {
        // The headers of the GET, without its body (Content-Length stays as the GET's).
        *response.body_mut() = Body::Empty;
    }
    if let Some(log) = &state.access_log {
        log(&format!("{method} {path} {status}"));
    }
    response
}

/// The refusal of a request whose route needs a token it lacks; `None` when it may go on.
fn authorize<B>(state: &State, route: &Route, req: &Request<B>) -> Option<Answer> {
    let tokens = state.tokens.as_ref()?;
    if matches!(route, Route::Health) {
        return None;
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    let message = match tokens.check(given) {
        Credentials::Valid => return None,
        Credentials::Missing => {
            "socair serve: this endpoint needs a bearer token (set HF_TOKEN to one of the server's tokens)"
        }
        // The Hub's own words: huggingface_hub then raises it as a credentials error rather
        // than as a missing repository (`hf_raise_for_status`).
        Credentials::Invalid => "Invalid credentials in Authorization header",
    };
    state.metrics.unauthorized.fetch_add(1, Ordering::Relaxed);
    Some(error(StatusCode::UNAUTHORIZED, "", message, None))
}

/// Looks a revision up on a blocking thread (the store reads files).
async fn find(state: &Arc<State>, repo: &str, revision: &str) -> Result<Found, Answer> {
    if repos::check_repo_id(repo).is_err() {
        return Err(error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            &format!("socair serve: {repo:?} is not a repository this store holds"),
            None,
        ));
    }
    if repos::check_revision(revision).is_err() {
        return Err(error(
            StatusCode::NOT_FOUND,
            "RevisionNotFound",
            &format!("socair serve: no revision {revision:?} of {repo}"),
            None,
        ));
    }
    let mut found = ask_store(state, repo, revision).await;
    // A revision the store lacks is pulled through from the upstream, then asked again.
    if state.upstream.is_some() && matches!(found, Ok(Found::NotFound { .. })) {
        let pulled = pull_through(state, repo, revision).await;
        found = ask_store(state, repo, revision).await;
        // A failed pull is the answer unless another gateway sharing the store admitted the
        // revision meanwhile (its clean-up of what it staged can take the staged copy from
        // under this one's scan).
        if let (Err(why), false) = (pulled, matches!(found, Ok(Found::Served(_)))) {
            return Err(error(
                StatusCode::BAD_GATEWAY,
                "",
                &format!("socair serve: pulling {repo}@{revision} from the upstream failed: {why}"),
                None,
            ));
        }
    }
    match found {
        Ok(Found::NotFound { repo_known: false }) => Err(error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "socair serve: this store holds no such repository (pull it with `socair airlock pull DIR --as REPO`)",
            None,
        )),
        Ok(Found::NotFound { repo_known: true }) => Err(error(
            StatusCode::NOT_FOUND,
            "RevisionNotFound",
            "socair serve: this store holds no such revision of the repository",
            None,
        )),
        Ok(Found::Refused(rec, refusal)) => {
            state.metrics.refusal(refusal.kind.label());
            Err(error(
                StatusCode::FORBIDDEN,
                "GatedRepo",
                &refusal.message,
                Some(&rec.commit),
            ))
        }
        Ok(served) => Ok(served),
        Err(e) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "",
            &format!("socair serve: the store cannot be read: {e}"),
            None,
        )),
    }
}

/// What the store says of `repo` at `revision`, asked on a blocking thread.
async fn ask_store(state: &Arc<State>, repo: &str, revision: &str) -> Result<Found, String> {
    let (s, repo, revision) = (state.clone(), repo.to_owned(), revision.to_owned());
    tokio::task::spawn_blocking(move || catalog::find(&s.store, &repo, &revision))
        .await
        .map_err(|e| e.to_string())?
}

/// Pulls `repo` at `revision` through from the upstream unless the store has it by the time
/// this request holds the revision's lock (another request pulled it); the caller then asks
/// the store again.
async fn pull_through(state: &Arc<State>, repo: &str, revision: &str) -> Result<(), String> {
    let Some(up) = state.upstream.as_ref() else {
        return Ok(());
    };
    let lock = up.lock_for(repo, revision).await;
    let _held = lock.lock().await;
    if !matches!(
        ask_store(state, repo, revision).await?,
        Found::NotFound { .. }
    ) {
        return Ok(());
    }
    let staged = upstream::fetch(&state.store, up, &state.metrics, repo, revision).await?;
    let (s, r, v) = (state.clone(), repo.to_owned(), revision.to_owned());
    tokio::task::spawn_blocking(move || {
        let up = s.upstream.as_ref().ok_or("no upstream")?;
        upstream::admit(&s.store, up, &s.metrics, staged, &r, &v)
    })
    .await
    .map_err(|e| e.to_string())?
}

/// The record of a served revision.
async fn served(state: &Arc<State>, repo: &str, revision: &str) -> Result<RepoRecord, Answer> {
    match find(state, repo, revision).await? {
        Found::Served(rec) => Ok(*rec),
        // `find` answers every other case itself.
        _ => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "",
            "socair serve: unexpected answer",
            None,
        )),
    }
}

async fn route_answer<B>(
    state: &Arc<State>,
    route: Route,
    query: Option<&str>,
    req: &Request<B>,
) -> Answer {
    let result = match route {
        Route::Health => Ok(answer(
            StatusCode::OK,
            &[("Content-Type", "text/plain".into())],
            Body::full("ok\n"),
        )),
        Route::Metrics => Ok(answer(
            StatusCode::OK,
            &[("Content-Type", "text/plain; version=0.0.4".into())],
            Body::full(state.metrics.render()),
        )),
        Route::ModelInfo { repo, revision } => {
            let revision = revision.as_deref().unwrap_or(repos::DEFAULT_REVISION);
            served(state, &repo, revision)
                .await
                .map(|rec| json(&hub::model_info(&rec), &rec.commit))
        }
        Route::Tree {
            repo,
            revision,
            path,
        } => served(state, &repo, &revision).await.map(|rec| {
            match hub::tree(&rec, &path, paths::query_flag(query, "recursive")) {
                Some(v) => json(&v, &rec.commit),
                None => error(
                    StatusCode::NOT_FOUND,
                    "EntryNotFound",
                    &format!(
                        "socair serve: no folder {path:?} in {}@{}",
                        rec.repo, rec.commit
                    ),
                    Some(&rec.commit),
                ),
            }
        }),
        Route::Resolve {
            repo,
            revision,
            path,
        } => match served(state, &repo, &revision).await {
            Ok(rec) => Ok(resolve(state, rec, &path, req).await),
            Err(e) => Err(e),
        },
    };
    result.unwrap_or_else(|refused| refused)
}

/// `/{repo}/resolve/{rev}/{path}` of a served revision.
async fn resolve<B>(state: &Arc<State>, rec: RepoRecord, path: &str, req: &Request<B>) -> Answer {
    let Some(file) = rec.files.iter().find(|f| f.path == path).cloned() else {
        return error(
            StatusCode::NOT_FOUND,
            "EntryNotFound",
            &format!(
                "socair serve: no file {path:?} in {}@{}",
                rec.repo, rec.commit
            ),
            Some(&rec.commit),
        );
    };
    let s = state.clone();
    let rec_for_open = rec.clone();
    let file_for_open = file.clone();
    let opened =
        tokio::task::spawn_blocking(move || open_served(&s.store, &rec_for_open, &file_for_open))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r);
    let opened = match opened {
        Ok(o) => o,
        // A link, a swapped or resized file: the store is not as promotion left it.
        Err(why) => {
            return error(
                StatusCode::FORBIDDEN,
                "",
                &format!("socair serve: not served: {why}"),
                Some(&rec.commit),
            )
        }
    };
    let etag = format!("\"{}\"", file.sha256);
    let mut headers = vec![
        ("X-Repo-Commit", rec.commit.clone()),
        ("ETag", etag.clone()),
        ("X-Linked-Etag", etag),
        ("X-Linked-Size", file.size.to_string()),
        ("Accept-Ranges", "bytes".to_owned()),
        ("Content-Type", "application/octet-stream".to_owned()),
    ];
    let range = req
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok());
    let (status, start, len) = match ranges::wanted(range, file.size) {
        Wanted::All => (StatusCode::OK, 0, file.size),
        Wanted::Part { start, end } => {
            headers.push((
                "Content-Range",
                format!("bytes {start}-{end}/{}", file.size),
            ));
            (StatusCode::PARTIAL_CONTENT, start, end - start + 1)
        }
        Wanted::Unsatisfiable => {
            headers.push(("Content-Range", format!("bytes */{}", file.size)));
            return answer(StatusCode::RANGE_NOT_SATISFIABLE, &headers, Body::Empty);
        }
    };
    headers.push(("Content-Length", len.to_string()));
    let body = if req.method() == Method::HEAD || len == 0 {
        Body::Empty
    } else {
        let sent = state.metrics.bytes_sent.clone();
        match opened {
            Opened::Local(handle) => Body::file(handle, start, len, sent),
            Opened::Object(at) => Body::object(at, start, len, sent),
        }
    };
    answer(status, &headers, body)
}

/// A promoted file, opened to be served.
#[derive(Debug)]
pub enum Opened {
    /// In a store on this machine.
    Local(std::fs::File),
    /// In a store on object storage: the object, its size checked against the record.
    Object(Location),
}

/// Opens a promoted file the record lists. In a store on this machine, refuses a symbolic
/// link anywhere below the artifact's folder (`promoted/<sha256>/`), a file that is not
/// regular, one swapped between the check and the opening, and one whose size is not the
/// recorded size; on object storage, an object whose size is not the recorded size.
pub fn open_served(store: &Store, rec: &RepoRecord, file: &RepoFile) -> Result<Opened, String> {
    let path = rec.file_path(store, Area::Promoted, file);
    if is_remote(&path) {
        return open_object(&path, file);
    }
    let base = store.artifact_path(Area::Promoted, &rec.sha256, "");
    let rel = path
        .strip_prefix(&base)
        .map_err(|_| format!("{} is not inside {}", path.display(), base.display()))?;
    let mut at = base.clone();
    let mut last = std::fs::symlink_metadata(&at).map_err(|e| format!("{}: {e}", at.display()))?;
    if !last.is_dir() {
        return Err(format!("{}: not a directory", at.display()));
    }
    for part in rel.components() {
        let std::path::Component::Normal(part) = part else {
            return Err(format!("{}: not a plain path", path.display()));
        };
        at.push(part);
        last = std::fs::symlink_metadata(&at).map_err(|e| format!("{}: {e}", at.display()))?;
        if last.file_type().is_symlink() {
            return Err(format!(
                "{}: a symbolic link in the store; socair serves only what it copied",
                at.display()
            ));
        }
    }
    if !last.is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    let handle = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let opened = handle
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (opened.dev(), opened.ino()) != (last.dev(), last.ino()) {
            return Err(format!("{}: changed while it was opened", path.display()));
        }
    }
    if opened.len() != file.size {
        return Err(format!(
            "{}: {} bytes, not the {} its record says; the store was changed after promotion",
            path.display(),
            opened.len(),
            file.size
        ));
    }
    Ok(Opened::Local(handle))
}

/// The promoted object at `url`, when its size is the one its record holds (the promotion
/// marker, which the catalog checked, says the copy is whole; the size says it was not
/// replaced since).
fn open_object(url: &std::path::Path, file: &RepoFile) -> Result<Opened, String> {
    let text = url.to_str().ok_or("a store URL that is not UTF-8")?;
    let at = cloud::parse(text).map_err(|e| e.reason())?;
    let size = cloud::size(&at).map_err(|e| format!("{}: {}", at.url(), e.reason()))?;
    if size != file.size {
        return Err(format!(
            "{}: {size} bytes, not the {} its record says; the store was changed after promotion",
            at.url(),
            file.size
        ));
    }
    Ok(Opened::Object(at))
}
