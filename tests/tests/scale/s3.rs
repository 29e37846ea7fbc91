//! The S3-protocol test server the tests run against: its address from `SOCAIR_TEST_S3`, a
//! bucket per test, requests signed with SigV4 (written here, so that the tests check socair
//! against the protocol rather than against the client it uses), and the made-up credentials
//! socair is given.

use crate::common::socair;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

/// Credentials the tests give socair: made up, and distinctive, so that a leak is found by
/// searching for them.
pub(crate) const ACCESS_KEY: &str = "AKIASOCAIRLEAKPROBE7";
pub(crate) const SECRET_KEY: &str = "socair+leak/probe/Secret0fTheTestsXyZ12345";
pub(crate) const SESSION_TOKEN: &str = "socairLeakProbeSessionToken0123456789abcdef";

/// The test server, and a bucket of this test's own.
pub(crate) struct S3 {
    pub(crate) endpoint: String,
    pub(crate) bucket: String,
}

/// The server named by `SOCAIR_TEST_S3`, with a new bucket; `None` (and why, printed) when
/// there is none to use.
pub(crate) fn s3(test: &str) -> Option<S3> {
    let Some(endpoint) = std::env::var("SOCAIR_TEST_S3")
        .ok()
        .filter(|e| !e.is_empty())
    else {
        eprintln!(
            "skipped {test}: SOCAIR_TEST_S3 is not set (.ci/run starts an S3-protocol server on loopback and sets it)"
        );
        return None;
    };
    let addr = endpoint.trim_start_matches("http://").trim_end_matches('/');
    if TcpStream::connect(addr).is_err() {
        eprintln!("skipped {test}: no S3-protocol server answers at {endpoint}");
        return None;
    }
    let bucket = format!(
        "{}-{}-{}",
        test.replace('_', "-"),
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let s = S3 {
        endpoint: endpoint.trim_end_matches('/').to_owned(),
        bucket,
    };
    let r = s.request("PUT", "", b"", &[]);
    assert_eq!(
        r.0,
        200,
        "creating the bucket: {}",
        String::from_utf8_lossy(&r.1)
    );
    Some(s)
}

fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let inner: Vec<u8> = k
        .iter()
        .map(|b| b ^ 0x36)
        .chain(msg.iter().copied())
        .collect();
    let inner = Sha256::digest(&inner);
    let outer: Vec<u8> = k.iter().map(|b| b ^ 0x5c).chain(inner).collect();
    Sha256::digest(&outer).into()
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl S3 {
    /// `s3://bucket/key`.
    pub(crate) fn url(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }

    /// A signed (SigV4) request to the bucket over plain HTTP/1.1; returns status and body.
    fn request(
        &self,
        method: &str,
        key: &str,
        body: &[u8],
        query: &[(&str, &str)],
    ) -> (u16, Vec<u8>) {
        self.request_with(method, key, body, query, "")
    }

    /// [`S3::request`] with extra header lines (`Name: value\r\n`), sent unsigned (moto does
    /// not check signatures).
    pub(crate) fn request_with(
        &self,
        method: &str,
        key: &str,
        body: &[u8],
        query: &[(&str, &str)],
        extra: &str,
    ) -> (u16, Vec<u8>) {
        let host = self.endpoint.trim_start_matches("http://");
        let path = if key.is_empty() {
            format!("/{}", self.bucket)
        } else {
            format!("/{}/{key}", self.bucket)
        };
        let query: String = query
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let (date, stamp) = amz_date(now);
        let payload = hex(&Sha256::digest(body));
        let canonical = format!(
            "{method}\n{path}\n{query}\nhost:{host}\nx-amz-content-sha256:{payload}\nx-amz-date:{stamp}\n\nhost;x-amz-content-sha256;x-amz-date\n{payload}"
        );
        let scope = format!("{date}/us-east-1/s3/aws4_request");
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{}",
            hex(&Sha256::digest(canonical.as_bytes()))
        );
        let mut k = hmac(format!("AWS4{SECRET_KEY}").as_bytes(), date.as_bytes());
        for part in ["us-east-1", "s3", "aws4_request"] {
            k = hmac(&k, part.as_bytes());
        }
        let sig = hex(&hmac(&k, to_sign.as_bytes()));
        let target = if query.is_empty() {
            path.clone()
        } else {
            format!("{path}?{query}")
        };
        let mut stream = TcpStream::connect(host).unwrap();
        let head = format!(
            "{method} {target} HTTP/1.1\r\nHost: {host}\r\nx-amz-date: {stamp}\r\nx-amz-content-sha256: {payload}\r\nAuthorization: AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={sig}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body).unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP response");
        let status: u16 = String::from_utf8_lossy(&response[9..12]).parse().unwrap();
        (status, response[split + 4..].to_vec())
    }

    pub(crate) fn put(&self, key: &str, body: &[u8]) {
        let (status, b) = self.request("PUT", key, body, &[]);
        assert_eq!(status, 200, "PUT {key}: {}", String::from_utf8_lossy(&b));
    }

    pub(crate) fn get(&self, key: &str) -> Option<Vec<u8>> {
        let (status, body) = self.request("GET", key, b"", &[]);
        (status == 200).then_some(body)
    }

    pub(crate) fn delete(&self, key: &str) {
        self.request("DELETE", key, b"", &[]);
    }

    /// Every key in the bucket (ListObjectsV2, all pages), sorted.
    pub(crate) fn keys(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut q = vec![("list-type", "2")];
            let t;
            if let Some(tok) = &token {
                t = tok
                    .replace('=', "%3D")
                    .replace('/', "%2F")
                    .replace('+', "%2B");
                q.push(("continuation-token", &t));
            }
            let (status, body) = self.request("GET", "", b"", &q);
            assert_eq!(status, 200);
            let text = String::from_utf8(body).unwrap();
            for part in text.split("<Key>").skip(1) {
                out.push(part.split("</Key>").next().unwrap().to_owned());
            }
            token = text
                .split("<NextContinuationToken>")
                .nth(1)
                .map(|p| p.split('<').next().unwrap().to_owned());
            if token.is_none() {
                break;
            }
        }
        out.sort();
        out
    }

    /// `socair` with this server's endpoint and the made-up credentials.
    pub(crate) fn socair(&self) -> Command {
        self.socair_via(&self.endpoint)
    }

    /// `socair` talking to `endpoint` (a proxy in front of the server).
    pub(crate) fn socair_via(&self, endpoint: &str) -> Command {
        let mut c = socair();
        c.env("AWS_ENDPOINT_URL", endpoint)
            .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            .env("AWS_SESSION_TOKEN", SESSION_TOKEN)
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .env("AWS_ALLOW_HTTP", "true")
            .env_remove("AWS_PROFILE");
        c
    }
}

/// `YYYYMMDD` and `YYYYMMDDTHHMMSSZ` for a Unix time (civil-from-days, Howard Hinnant's).
fn amz_date(secs: u64) -> (String, String) {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let date = format!("{y:04}{m:02}{d:02}");
    let stamp = format!(
        "{date}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    (date, stamp)
}
