//! Object keys exactly as a URL writes them: the `s3://` key byte for byte, the `https://`
//! path segment by segment, and the refusal of a key `object_store` cannot request without
//! rewriting it into another (see [`crate::base::cloud`]). Uses nothing of the crate.

use object_store::path::Path as ObjectPath;

/// The path part of a URL as written: after `scheme://authority`, before `?` or `#` (a URL
/// with either is refused before this is used).
pub(crate) fn written_path(text: &str) -> &str {
    let rest = text.split_once("://").map_or("", |(_, r)| r);
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    rest.find('/').map_or("", |i| &rest[i..])
}

/// The host (and port) as written, without user info, when it is what the url crate parsed
/// (so that printing it hides nothing and shows nothing else).
pub(crate) fn written_host<'t>(text: &'t str, u: &url::Url) -> Option<&'t str> {
    let rest = text.split_once("://")?.1;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let parsed = match u.port() {
        Some(p) => format!("{}:{p}", u.host_str()?),
        None => u.host_str()?.to_owned(),
    };
    (host.eq_ignore_ascii_case(&parsed) && !text.contains('\\')).then_some(host)
}

/// Why object_store cannot address a key with this segment (`None`: it can).
fn bad_segment(segment: &str) -> Option<&'static str> {
    if segment.is_empty() {
        Some("an empty segment (a doubled or leading `/`)")
    } else if segment == "." {
        Some("a `.` segment")
    } else if segment == ".." {
        Some("a `..` segment")
    } else if segment.chars().any(|c| c.is_control()) {
        Some("a control character")
    } else {
        None
    }
}

/// The refusal for a key object_store cannot address exactly.
fn cannot_address(key: &str, what: &str) -> String {
    format!(
        "the key {key:?} has {what}: socair fetches exactly the object a URL names, and its object-store client (object_store 0.14, whose paths hold no empty, `.` or `..` segment) cannot request this key without rewriting it into another; refused rather than another object fetched"
    )
}

/// An `s3://` key: the written path after the bucket, byte for byte. A trailing `/` (a
/// prefix, a store's root) is not part of it.
pub(crate) fn s3_key(written: &str) -> Result<(ObjectPath, String), String> {
    let key = written.strip_prefix('/').unwrap_or(written);
    let key = key.strip_suffix('/').unwrap_or(key);
    if key.is_empty() {
        return Ok((ObjectPath::ROOT, String::new()));
    }
    if let Some(what) = key.split('/').find_map(bad_segment) {
        return Err(cannot_address(key, what));
    }
    match ObjectPath::parse(key) {
        Ok(path) if path.as_ref() == key => Ok((path, key.to_owned())),
        _ => Err(cannot_address(key, "a segment object_store rewrites")),
    }
}

/// An `https://` path: each written segment percent-decoded once (object_store encodes it
/// again when it sends the request). `%2F` in a segment, a segment that decodes to `.` or
/// `..`, a backslash (the URL standard reads it as `/`, a server may not) and escapes that are
/// not UTF-8 are refused.
pub(crate) fn http_key(written: &str) -> Result<(ObjectPath, String), String> {
    let raw = written.strip_prefix('/').unwrap_or(written);
    let raw = raw.strip_suffix('/').unwrap_or(raw);
    if raw.is_empty() {
        return Ok((ObjectPath::ROOT, String::new()));
    }
    if raw.contains('\\') {
        return Err(cannot_address(
            raw,
            "a backslash, which the URL standard reads as `/` and a server may not",
        ));
    }
    let mut decoded = Vec::new();
    for segment in raw.split('/') {
        let text = percent_decode(segment)
            .ok_or_else(|| cannot_address(raw, "a percent-escape that is not UTF-8"))?;
        if text.contains('/') {
            return Err(cannot_address(raw, "a `%2F` inside a segment"));
        }
        if let Some(what) = bad_segment(&text) {
            let what = if text != segment && (text == "." || text == "..") {
                "a segment that decodes to `.` or `..` (`%2e`)"
            } else {
                what
            };
            return Err(cannot_address(raw, what));
        }
        decoded.push(text);
    }
    let key = decoded.join("/");
    match ObjectPath::parse(&key) {
        Ok(path) if path.as_ref() == key => Ok((path, key)),
        _ => Err(cannot_address(raw, "a segment object_store rewrites")),
    }
}

/// `text` with each `%XX` decoded once; `None` when the result is not UTF-8. A `%` not
/// followed by two hex digits stays as it is (as object_store and the url crate read it).
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The URL object_store's HTTP client requests for `key` under `origin`
/// (`object_store::http::client::Client::path_url`: the base URL's path segments extended
/// with the key's parts, which the url crate percent-encodes).
pub(crate) fn http_request_url(origin: &str, key: &ObjectPath) -> Option<String> {
    let mut url = url::Url::parse(origin).ok()?;
    url.path_segments_mut().ok()?.extend(key.parts());
    Some(url.to_string())
}
