//! What a request's path asks for, read strictly: the Hub routes `huggingface_hub` 2.5.0 calls
//! on the download path (`hf_hub_url` in `file_download.py`: `/{repo_id}/resolve/{revision}/
//! {quote(filename)}`; `HfApi.model_info` and `_iter_repo_tree_pages` in `hf_api.py`:
//! `/api/models/{repo_id}[/revision/{quote(revision, safe="")}]` and
//! `/api/models/{repo_id}/tree/{revision}[/{path}]`), `/health` and `/metrics`.
//!
//! Every segment is percent-decoded once, and a decoded segment that is empty, `.` or `..`,
//! or holds a `/`, a `\` or a NUL (an encoded separator) is refused here, before the store
//! is asked anything: no request names a path outside what a repository record lists.

/// What a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/health`.
    Health,
    /// `/metrics` (Prometheus text).
    Metrics,
    /// `/api/models/{repo}` (`revision: None`) or `/api/models/{repo}/revision/{rev}`.
    ModelInfo {
        /// The repository id.
        repo: String,
        /// The revision, when named.
        revision: Option<String>,
    },
    /// `/api/models/{repo}/tree/{rev}[/{path}]`.
    Tree {
        /// The repository id.
        repo: String,
        /// The revision.
        revision: String,
        /// The folder listed (`""`: the root).
        path: String,
    },
    /// `/{repo}/resolve/{rev}/{path}`.
    Resolve {
        /// The repository id.
        repo: String,
        /// The revision.
        revision: String,
        /// The file's path in the repository, `/`-separated.
        path: String,
    },
}

/// Why a path was refused (400: the request itself is malformed or hostile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPath(pub String);

/// The longest path socair reads (bytes, still encoded).
pub const MAX_PATH: usize = 4096;

/// Percent-decodes one path segment; refuses a bad escape, what is not UTF-8, and a decoded
/// segment that could name another place (`/`, `\`, NUL, `.`, `..`, empty).
pub fn decode_segment(raw: &str) -> Result<String, BadPath> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| BadPath(format!("{raw:?}: a `%` not followed by two hex digits")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    let text =
        String::from_utf8(out).map_err(|_| BadPath(format!("{raw:?}: not UTF-8 once decoded")))?;
    if text.is_empty() || text == "." || text == ".." {
        return Err(BadPath(format!(
            "{raw:?}: an empty, `.` or `..` path segment"
        )));
    }
    if text.contains(['/', '\\', '\0']) {
        return Err(BadPath(format!(
            "{raw:?}: an encoded separator or NUL in a path segment"
        )));
    }
    if text.chars().any(char::is_control) {
        return Err(BadPath(format!("{raw:?}: a control character")));
    }
    Ok(text)
}

/// Reads a request path (without its query) into a [`Route`]; `Ok(None)` for a path that
/// is no route of this server (404).
pub fn route(path: &str) -> Result<Option<Route>, BadPath> {
    if path.len() > MAX_PATH {
        return Err(BadPath(format!(
            "a path of {} bytes (at most {MAX_PATH})",
            path.len()
        )));
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(BadPath("a path that does not start with `/`".into()));
    };
    match rest {
        "health" => return Ok(Some(Route::Health)),
        "metrics" => return Ok(Some(Route::Metrics)),
        _ => {}
    }
    let segments = rest
        .split('/')
        .map(decode_segment)
        .collect::<Result<Vec<String>, BadPath>>()?;
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    Ok(match s.as_slice() {
        ["api", "models", api @ ..] => api_route(api),
        _ => resolve_route(&s),
    })
}

/// The repository id of `parts` (one or two segments).
fn repo_of(parts: &[&str]) -> String {
    parts.join("/")
}

/// `/api/models/…`: `{repo}`, `{repo}/revision/{rev}`, `{repo}/tree/{rev}[/{path}]`, the
/// repository id being one or two segments (two when the keyword stands third).
fn api_route(s: &[&str]) -> Option<Route> {
    let keyword = |at: usize| matches!(s.get(at), Some(&"revision") | Some(&"tree"));
    let split = if s.len() >= 4 && keyword(2) {
        2
    } else if s.len() >= 3 && keyword(1) {
        1
    } else if s.len() <= 2 && !s.is_empty() {
        return Some(Route::ModelInfo {
            repo: repo_of(s),
            revision: None,
        });
    } else {
        return None;
    };
    let repo = repo_of(&s[..split]);
    match (s[split], &s[split + 1..]) {
        ("revision", [rev]) => Some(Route::ModelInfo {
            repo,
            revision: Some((*rev).to_owned()),
        }),
        ("tree", [rev, path @ ..]) => Some(Route::Tree {
            repo,
            revision: (*rev).to_owned(),
            path: path.join("/"),
        }),
        _ => None,
    }
}

/// `/{repo}/resolve/{rev}/{path…}`, the repository id being one or two segments.
fn resolve_route(s: &[&str]) -> Option<Route> {
    let split = if s.len() >= 5 && s[2] == "resolve" {
        2
    } else if s.len() >= 4 && s[1] == "resolve" {
        1
    } else {
        return None;
    };
    Some(Route::Resolve {
        repo: repo_of(&s[..split]),
        revision: s[split + 1].to_owned(),
        path: s[split + 2..].join("/"),
    })
}

/// The value of `key` in a query string (`a=1&b=2`), undecoded; the last one wins.
pub fn query_value<'a>(query: Option<&'a str>, key: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .next_back()
}

/// Whether a query flag is set (`True`, `true`, `1`, as `httpx` writes Python's `True`).
pub fn query_flag(query: Option<&str>, key: &str) -> bool {
    matches!(query_value(query, key), Some("True" | "true" | "1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(repo: &str, revision: &str, path: &str) -> Option<Route> {
        Some(Route::Resolve {
            repo: repo.into(),
            revision: revision.into(),
            path: path.into(),
        })
    }

    #[test]
    fn resolve_routes_take_one_or_two_segment_ids() {
        assert_eq!(
            route("/org/tiny/resolve/main/config.json").unwrap(),
            resolve("org/tiny", "main", "config.json")
        );
        assert_eq!(
            route("/tiny/resolve/main/config.json").unwrap(),
            resolve("tiny", "main", "config.json")
        );
        assert_eq!(
            route("/org/tiny/resolve/main/sub/dir/a%20b.bin").unwrap(),
            resolve("org/tiny", "main", "sub/dir/a b.bin")
        );
        assert_eq!(route("/org/tiny/resolve/main").unwrap(), None);
        assert_eq!(route("/org/tiny").unwrap(), None);
    }

    #[test]
    fn api_routes() {
        assert_eq!(
            route("/api/models/org/tiny").unwrap(),
            Some(Route::ModelInfo {
                repo: "org/tiny".into(),
                revision: None
            })
        );
        assert_eq!(
            route("/api/models/org/tiny/revision/main").unwrap(),
            Some(Route::ModelInfo {
                repo: "org/tiny".into(),
                revision: Some("main".into())
            })
        );
        assert_eq!(
            route("/api/models/tiny/revision/v1").unwrap(),
            Some(Route::ModelInfo {
                repo: "tiny".into(),
                revision: Some("v1".into())
            })
        );
        assert_eq!(
            route("/api/models/org/tiny/tree/main").unwrap(),
            Some(Route::Tree {
                repo: "org/tiny".into(),
                revision: "main".into(),
                path: String::new()
            })
        );
        assert_eq!(
            route("/api/models/tiny/tree/main/sub").unwrap(),
            Some(Route::Tree {
                repo: "tiny".into(),
                revision: "main".into(),
                path: "sub".into()
            })
        );
        assert_eq!(route("/api/models").unwrap(), None);
        assert_eq!(route("/api/models/a/b/c").unwrap(), None);
        assert_eq!(route("/health").unwrap(), Some(Route::Health));
        assert_eq!(route("/metrics").unwrap(), Some(Route::Metrics));
    }

    #[test]
    fn traversal_and_encoded_separators_are_refused() {
        for bad in [
            "/org/tiny/resolve/main/../../policy.json",
            "/org/tiny/resolve/main/%2e%2e/policy.json",
            "/org/tiny/resolve/main/a%2fb",
            "/org/tiny/resolve/main/a%2Fb",
            "/org/tiny/resolve/main/a%5cb",
            "/org/tiny/resolve/main/a%00b",
            "/org/tiny/resolve/main//etc/passwd",
            "/org/tiny/resolve/main/./config.json",
            "/org/tiny/resolve/main/%zz",
            "/org/tiny/resolve/main/%c3",
            "/org/tiny/resolve/main/a%0ab",
            "/api/models/org/tiny/revision/refs%2Fpr%2F1",
            "org/tiny/resolve/main/x",
            "/org/tiny/resolve/main/x/",
        ] {
            assert!(route(bad).is_err(), "{bad}");
        }
        let long = format!("/org/tiny/resolve/main/{}", "a".repeat(MAX_PATH));
        assert!(route(&long).is_err());
    }

    #[test]
    fn queries() {
        let q = Some("recursive=True&expand=False&cursor=");
        assert!(query_flag(q, "recursive"));
        assert!(!query_flag(q, "expand"));
        assert_eq!(query_value(q, "cursor"), Some(""));
        assert_eq!(query_value(q, "missing"), None);
        assert!(!query_flag(None, "recursive"));
    }
}
