//! Object names used exactly as given: an `s3://` key is the text after the
//! bucket, byte for byte, and an `https://` path is requested as written; a key a normalising
//! client would rewrite (`.`/`..` segments, `%2e`, doubled slashes) is refused with exit 2,
//! naming it, rather than another object fetched. Against the S3-protocol test server
//! (`SOCAIR_TEST_S3`, see tests/tests/scale.rs); without it every test here skips.
//!
//! Each test puts a different object at the key a normalising client would fetch, so that
//! fetching the wrong object shows in the report's sha256.

use crate::common::{fixture, json, run};
use crate::scale::s3::s3;
use sha2::{Digest, Sha256};

/// A clean file and a hostile one (two tensors sharing bytes: FAIL).
fn clean_and_hostile() -> (Vec<u8>, Vec<u8>) {
    (
        std::fs::read(fixture(
            "safetensors/tiny-bert/model-00004-of-00004.safetensors",
        ))
        .unwrap(),
        std::fs::read(fixture("safetensors/malformed/aliased-tensors.safetensors")).unwrap(),
    )
}

fn sha(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// `key` for a request target: `%` and space encoded, so that the server's decoding gives
/// back exactly `key`.
fn target(key: &str) -> String {
    key.replace('%', "%25").replace(' ', "%20")
}

#[test]
fn s3_keys_are_fetched_exactly_as_written() {
    let Some(s3) = s3("remote_keys_s3") else {
        return;
    };
    let (clean, hostile) = clean_and_hostile();
    // The object a normalising client would fetch instead, and the one the key names.
    s3.put("keys/m.safetensors", &clean);
    s3.put(&target("keys/a/%2e%2e/m.safetensors"), &hostile);
    s3.put(&target("keys/my model.safetensors"), &hostile);
    for key in ["keys/a/%2e%2e/m.safetensors", "keys/my model.safetensors"] {
        let r = run(s3.socair().arg("scan").arg(s3.url(key)).arg("--json"));
        assert_eq!(r.code, 1, "{key}: {}", r.stderr);
        let report = json(&r.stdout);
        assert_eq!(
            report["artifact"]["sha256"],
            sha(&hostile),
            "{key}: another object was read"
        );
        let name = key.rsplit('/').next().unwrap();
        assert_eq!(report["artifact"]["name"], name);
    }
    // Keys object_store cannot address exactly are refused, naming the key; nothing is read.
    for (key, what) in [
        ("keys/a/../m.safetensors", "`..`"),
        ("keys/./m.safetensors", "`.`"),
        ("keys//m.safetensors", "empty segment"),
    ] {
        let r = run(s3.socair().arg("scan").arg(s3.url(key)));
        assert_eq!(r.code, 2, "{key}: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.is_empty(), "{key}");
        assert!(
            r.stderr.contains(&format!("the key {key:?}"))
                && r.stderr.contains(what)
                && r.stderr.contains("refused"),
            "{key}: {}",
            r.stderr
        );
    }
}

#[test]
fn https_paths_are_requested_as_written() {
    let Some(s3) = s3("remote_keys_https") else {
        return;
    };
    let (clean, hostile) = clean_and_hostile();
    let public = "x-amz-acl: public-read\r\n";
    let put = |key: &str, body: &[u8]| {
        let (status, b) = s3.request_with("PUT", &target(key), body, &[], public);
        assert_eq!(status, 200, "PUT {key}: {}", String::from_utf8_lossy(&b));
    };
    put("web/m.safetensors", &clean);
    put("web/my model.safetensors", &hostile);
    let base = format!("{}/{}", s3.endpoint, s3.bucket);
    // A percent-escape is decoded once and sent encoded again: the same object.
    let r = run(s3
        .socair()
        .arg("scan")
        .arg(format!("{base}/web/my%20model.safetensors"))
        .arg("--json"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(json(&r.stdout)["artifact"]["sha256"], sha(&hostile));
    // What the url crate would normalise into web/m.safetensors is refused, not fetched.
    for (path, what) in [
        ("web/a/%2e%2e/m.safetensors", "`%2e`"),
        ("web/a/.%2E/m.safetensors", "`%2e`"),
        ("web/a/../m.safetensors", "`..`"),
        ("web/./m.safetensors", "`.`"),
        ("web//m.safetensors", "empty segment"),
        ("web/a%2F..%2Fm.safetensors", "`%2F`"),
    ] {
        let r = run(s3.socair().arg("scan").arg(format!("{base}/{path}")));
        assert_eq!(r.code, 2, "{path}: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.is_empty(), "{path}");
        assert!(
            r.stderr.contains(what) && r.stderr.contains("refused"),
            "{path}: {}",
            r.stderr
        );
    }
}
