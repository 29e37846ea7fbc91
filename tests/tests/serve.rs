//! `socair serve` end to end: a store with a promoted repository (the committed tiny BERT), a
//! blocked one (a FAILing pickle beside it) and one needing a person (a NOT_TESTED row), served
//! by the built binary and asked over plain HTTP (what the Hub's routes answer, hostile
//! requests, tokens, shutdown), then through the real `huggingface_hub` client
//! (tests/python/serve_client.py) when it is installed: required when SOCAIR_REQUIRE_HF=1.

use crate::common::{fixture, python, repo, run, socair};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A store with three repositories pulled `--as`.
struct Served {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
    scan_key: String,
    tiny: String,
    evil: String,
    gpt2: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Served {
    fn ok(&self, args: &[&str]) -> String {
        let r = run(socair().args(args).arg("--store").arg(&self.store));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.stdout.trim().to_owned()
    }

    /// `airlock init`, a key for scan and accept, the three pulls and scans; only the tiny
    /// BERT is promoted.
    fn new() -> Served {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let evil_dir = root.join("evil");
        std::fs::create_dir(&evil_dir).unwrap();
        std::fs::copy(
            fixture("safetensors/tiny-bert/config.json"),
            evil_dir.join("config.json"),
        )
        .unwrap();
        std::fs::copy(
            fixture("torch/malicious/pickle-builtins-exec.pt"),
            evil_dir.join("pytorch_model.bin"),
        )
        .unwrap();
        let key = root.join("scan.key");
        let r = run(socair().arg("keygen").arg("--out").arg(&key));
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut s = Served {
            store: root.join("store"),
            root,
            _dir: dir,
            scan_key: key.display().to_string(),
            tiny: String::new(),
            evil: String::new(),
            gpt2: String::new(),
        };
        s.ok(&["airlock", "init"]);
        s.ok(&[
            "airlock",
            "trust",
            &format!("{}.pub", s.scan_key),
            "--role",
            "scan,accept",
        ]);
        let pull = |s: &Served, dir: &Path, repo: &str| {
            s.ok(&["airlock", "pull", dir.to_str().unwrap(), "--as", repo])
        };
        s.tiny = pull(&s, &fixture("safetensors/tiny-bert"), "org/tiny");
        s.evil = pull(&s, &evil_dir, "org/evil");
        s.gpt2 = pull(&s, &fixture("hf/gpt2"), "org/gpt2");
        s.ok(&["airlock", "scan", &s.tiny, "--key", &s.scan_key]);
        // A FAIL exits 1; NOT_TESTED rows alone exit 0 (the gate still holds them back).
        for (sha, code) in [(&s.evil, 1), (&s.gpt2, 0)] {
            let r = run(socair()
                .args(["airlock", "scan", sha, "--key", &s.scan_key, "--store"])
                .arg(&s.store));
            assert_eq!(r.code, code, "{}", r.stderr);
        }
        s.ok(&["airlock", "promote", &s.tiny]);
        s
    }

    fn serve(&self, extra: &[&str]) -> Server {
        Server::start(&self.store, &self.root, extra)
    }
}

/// A running `socair serve`, stopped when dropped.
pub(crate) struct Server {
    child: Child,
    addr: String,
    stderr: PathBuf,
}

impl Server {
    fn start(store: &Path, root: &Path, extra: &[&str]) -> Server {
        Server::start_with(socair(), store.as_os_str(), root, extra)
    }

    /// `socair serve` of `store` as `socair` (a command with its environment) runs it; its
    /// standard error goes to a new file in `root`.
    pub(crate) fn start_with(
        mut socair: Command,
        store: &std::ffi::OsStr,
        root: &Path,
        extra: &[&str],
    ) -> Server {
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stderr = root.join(format!("serve-{n}.err"));
        let mut child = socair
            .args(["serve", "--listen", "127.0.0.1:0", "--store"])
            .arg(store)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("socair serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("http://")
            .unwrap_or_else(|| {
                panic!(
                    "no address on stdout: {line:?}; {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                )
            })
            .to_owned();
        Server {
            child,
            addr,
            stderr,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// What the server wrote to its standard error so far.
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends `raw` (a whole request) and reads the answer to the end (the request closes).
    fn raw(&self, raw: &[u8]) -> Answer {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(raw).unwrap();
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        Answer::parse(&bytes)
    }

    pub(crate) fn request(&self, method: &str, path: &str, headers: &[&str]) -> Answer {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        self.raw(req.as_bytes())
    }

    pub(crate) fn get(&self, path: &str) -> Answer {
        self.request("GET", path, &[])
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    fn parse(bytes: &[u8]) -> Answer {
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(bytes)));
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        Answer {
            status,
            headers,
            body: bytes[end + 4..].to_vec(),
        }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[test]
fn serves_promoted_files_with_the_hubs_headers() {
    let s = Served::new();
    let server = s.serve(&[]);
    let commit = &s.tiny[..40];
    let config = std::fs::read(fixture("safetensors/tiny-bert/config.json")).unwrap();
    let sha = hex(&Sha256::digest(&config));

    let head = server.request("HEAD", "/org/tiny/resolve/main/config.json", &[]);
    assert_eq!(head.status, 200, "{head:?}");
    assert_eq!(head.header("x-repo-commit"), Some(commit));
    assert_eq!(head.header("etag"), Some(format!("\"{sha}\"").as_str()));
    assert_eq!(
        head.header("x-linked-etag"),
        Some(format!("\"{sha}\"").as_str())
    );
    assert_eq!(
        head.header("x-linked-size"),
        Some(config.len().to_string().as_str())
    );
    assert_eq!(
        head.header("content-length"),
        Some(config.len().to_string().as_str())
    );
    assert_eq!(head.header("accept-ranges"), Some("bytes"));
    assert!(head.body.is_empty());

    let get = server.get("/org/tiny/resolve/main/config.json");
    assert_eq!((get.status, &get.body), (200, &config));
    // The commit names the same bytes as the branch.
    let by_commit = server.get(&format!("/org/tiny/resolve/{commit}/config.json"));
    assert_eq!((by_commit.status, &by_commit.body), (200, &config));

    let part = server.request(
        "GET",
        "/org/tiny/resolve/main/config.json",
        &["Range: bytes=5-"],
    );
    assert_eq!(part.status, 206);
    assert_eq!(part.body, config[5..]);
    assert_eq!(
        part.header("content-range"),
        Some(format!("bytes 5-{}/{}", config.len() - 1, config.len()).as_str())
    );
    // Eight clients at once get the same bytes.
    let weights = "/org/tiny/resolve/main/model-00001-of-00004.safetensors";
    let want = std::fs::read(fixture(
        "safetensors/tiny-bert/model-00001-of-00004.safetensors",
    ))
    .unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| server.get(weights)))
            .collect();
        for h in handles {
            let a = h.join().unwrap();
            assert_eq!((a.status, a.body.len()), (200, want.len()));
            assert!(a.body == want);
        }
    });
    let past = server.request(
        "GET",
        "/org/tiny/resolve/main/config.json",
        &["Range: bytes=99999-"],
    );
    assert_eq!(past.status, 416);

    let info = server.get("/api/models/org/tiny/revision/main");
    assert_eq!(info.status, 200);
    let info = info.json();
    assert_eq!(info["sha"], commit);
    let mut names: Vec<String> = info["siblings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["rfilename"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture("safetensors/tiny-bert"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    on_disk.sort();
    assert_eq!(names, on_disk);
    let tree = server.get("/api/models/org/tiny/tree/main?recursive=True&expand=False");
    assert_eq!(tree.status, 200);
    assert_eq!(tree.json().as_array().unwrap().len(), on_disk.len());

    let missing = server.get("/org/tiny/resolve/main/nothing.bin");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("x-error-code"), Some("EntryNotFound"));
    assert_eq!(missing.header("x-repo-commit"), Some(commit));
    let no_rev = server.get("/org/tiny/resolve/v9/config.json");
    assert_eq!(no_rev.header("x-error-code"), Some("RevisionNotFound"));
    let no_repo = server.get("/org/none/resolve/main/config.json");
    assert_eq!(no_repo.header("x-error-code"), Some("RepoNotFound"));

    assert_eq!(server.get("/health").status, 200);
    let metrics = String::from_utf8(server.get("/metrics").body).unwrap();
    assert!(
        metrics.contains("socair_serve_requests_total{route=\"resolve\",status=\"200\"} 11"),
        "{metrics}"
    );
    assert!(metrics.contains(&format!(
        "socair_serve_bytes_sent_total {}",
        2 * config.len() + config.len() - 5 + 8 * want.len()
    )));

    // One file pulled `--as` is a repository of that one file; a tag is pinned like a branch.
    let one = fixture("safetensors/all-dtypes.safetensors");
    let sha = s.ok(&[
        "airlock",
        "pull",
        one.to_str().unwrap(),
        "--as",
        "org/one",
        "--revision",
        "v1",
    ]);
    s.ok(&["airlock", "scan", &sha, "--key", &s.scan_key]);
    s.ok(&["airlock", "promote", &sha]);
    let a = server.get("/org/one/resolve/v1/all-dtypes.safetensors");
    assert_eq!(a.header("x-repo-commit"), Some(&sha[..40]));
    assert_eq!((a.status, a.body), (200, std::fs::read(&one).unwrap()));
    assert_eq!(
        server
            .get("/org/one/resolve/main/all-dtypes.safetensors")
            .status,
        404
    );

    // Every --as is in the chained log, which still holds.
    let log = s.ok(&["airlock", "log", "--json"]);
    assert_eq!(log.matches("\"action\":\"map\"").count(), 4, "{log}");
    assert!(log.contains(&format!("org/tiny@main is commit {commit}")));
}

#[test]
fn what_has_not_passed_the_gate_is_refused_with_the_way_through() {
    let s = Served::new();
    let server = s.serve(&[]);
    let blocked = server.request("HEAD", "/org/evil/resolve/main/config.json", &[]);
    assert_eq!(blocked.status, 403);
    assert_eq!(blocked.header("x-error-code"), Some("GatedRepo"));
    let why = blocked.header("x-error-message").unwrap();
    assert!(why.contains("FAIL Pickle opcode scan"), "{why}");
    assert!(why.contains("no acceptance lets it through"), "{why}");
    assert_eq!(server.get("/api/models/org/evil").status, 403);

    let review = server.get("/org/gpt2/resolve/main/config.json");
    assert_eq!(review.status, 403);
    let why = review.header("x-error-message").unwrap().to_owned();
    let accept = format!(
        "socair airlock accept {} --row \"Format and structure\"",
        s.gpt2
    );
    assert!(why.contains(&accept), "{why}");
    assert!(
        why.contains("NOT_TESTED Format and structure, PASS Pickle opcode scan"),
        "{why}"
    );
    // The body says it too (what a client reads from a GET).
    assert!(String::from_utf8_lossy(&review.body).contains("socair airlock accept"));

    // The command it names lets it through.
    s.ok(&[
        "airlock",
        "accept",
        &s.gpt2,
        "--row",
        "Format and structure",
        "--reason",
        "weights-only pickle read by the opcode scan",
        "--key",
        &s.scan_key,
    ]);
    s.ok(&["airlock", "promote", &s.gpt2]);
    let served = server.get("/org/gpt2/resolve/main/config.json");
    assert_eq!(served.status, 200);
    assert_eq!(
        served.body,
        std::fs::read(fixture("hf/gpt2/config.json")).unwrap()
    );
    let metrics = String::from_utf8(server.get("/metrics").body).unwrap();
    assert!(
        metrics.contains("socair_serve_refusals_total{verdict=\"blocked\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("socair_serve_refusals_total{verdict=\"needs_review\"} 1"),
        "{metrics}"
    );
}

#[test]
fn hostile_requests_are_refused() {
    let s = Served::new();
    let server = s.serve(&["--header-timeout", "1"]);
    for path in [
        "/org/tiny/resolve/main/../../policy.json",
        "/org/tiny/resolve/main/..%2f..%2fpolicy.json",
        "/org/tiny/resolve/main/%2e%2e/%2e%2e/policy.json",
        "/org/tiny/resolve/main/%2fetc%2fpasswd",
        "/org/tiny/resolve/main//etc/passwd",
        "/org/tiny/resolve/main/a%5c..%5cpolicy.json",
        "/org/tiny/resolve/main/config.json%00",
        "/api/models/org/tiny/revision/..%2f..",
    ] {
        let a = server.get(path);
        assert!((400..500).contains(&a.status), "{path}: {a:?}");
        assert!(
            !String::from_utf8_lossy(&a.body).contains("\"keys\""),
            "{path}"
        );
    }
    // Names the record does not list are not files of the repository, whatever is on disk.
    assert_eq!(
        server.get("/org/tiny/resolve/main/activity.log").status,
        404
    );
    assert_eq!(
        server
            .request("POST", "/org/tiny/resolve/main/config.json", &[])
            .status,
        405
    );

    // Headers past the bound: 431.
    let big = format!("X-Big: {}", "a".repeat(40 * 1024));
    assert_eq!(server.request("GET", "/health", &[&big]).status, 431);

    // A client that trickles its headers is cut off after --header-timeout.
    let mut slow = TcpStream::connect(&server.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    assert!(started.elapsed() < Duration::from_secs(8), "not cut off");
    assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));
    // The server still answers others.
    assert_eq!(server.get("/health").status, 200);

    // A symbolic link put into the store after promotion is not followed.
    let promoted = s.store.join("promoted").join(&s.tiny).join("tiny-bert");
    std::fs::remove_file(promoted.join("config.json")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(s.store.join("policy.json"), promoted.join("config.json"))
            .unwrap();
        let a = server.get("/org/tiny/resolve/main/config.json");
        assert_eq!(a.status, 403, "{a:?}");
        assert!(a
            .header("x-error-message")
            .unwrap()
            .contains("symbolic link"));
    }
}

#[test]
fn tokens_guard_everything_but_health_and_shutdown_is_graceful() {
    let s = Served::new();
    let tokens = s.root.join("tokens.txt");
    std::fs::write(&tokens, "# the team\nhf_sesame\n").unwrap();
    let mut server = s.serve(&["--tokens", tokens.to_str().unwrap()]);
    assert_eq!(server.get("/health").status, 200);
    let none = server.get("/org/tiny/resolve/main/config.json");
    assert_eq!(none.status, 401);
    assert!(none
        .header("x-error-message")
        .unwrap()
        .contains("bearer token"));
    let wrong = server.request(
        "GET",
        "/org/tiny/resolve/main/config.json",
        &["Authorization: Bearer hf_sesam"],
    );
    assert_eq!(wrong.status, 401);
    let right = server.request(
        "GET",
        "/org/tiny/resolve/main/config.json",
        &["Authorization: Bearer hf_sesame"],
    );
    assert_eq!(right.status, 200);
    assert_eq!(server.get("/metrics").status, 401);

    // SIGTERM (what Kubernetes sends): it stops accepting and exits 0.
    #[cfg(unix)]
    {
        let pid = server.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let status = server.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
        let err = std::fs::read_to_string(&server.stderr).unwrap();
        assert!(err.contains("stopped serving"), "{err}");
    }
}

#[test]
fn huggingface_hub_downloads_through_the_airlock() {
    let has_hub = Command::new(python())
        .args(["-c", "import huggingface_hub"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_hub {
        assert!(
            std::env::var("SOCAIR_REQUIRE_HF").as_deref() != Ok("1"),
            "SOCAIR_REQUIRE_HF=1 but `{} -c \"import huggingface_hub\"` fails: install huggingface_hub==2.5.0",
            python()
        );
        eprintln!(
            "serve: huggingface_hub is not installed for {}; the real client's test is skipped",
            python()
        );
        return;
    }
    let s = Served::new();
    let tokens = s.root.join("tokens.txt");
    std::fs::write(&tokens, "hf_sesame\n").unwrap();
    let server = s.serve(&["--tokens", tokens.to_str().unwrap()]);
    let promoted = s.store.join("promoted").join(&s.tiny).join("tiny-bert");
    // transformers (AutoConfig; AutoModel when torch is there too), when installed: CI
    // installs it and sets SOCAIR_REQUIRE_TRANSFORMERS=1.
    let has_transformers = Command::new(python())
        .args(["-c", "import transformers"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_transformers || std::env::var("SOCAIR_REQUIRE_TRANSFORMERS").as_deref() != Ok("1"),
        "SOCAIR_REQUIRE_TRANSFORMERS=1 but `{} -c \"import transformers\"` fails",
        python()
    );
    let mut client = Command::new(python());
    client.arg(repo().join("tests/python/serve_client.py"));
    if has_transformers {
        client.arg(format!("--transformers=org/tiny={}", promoted.display()));
    }
    let out = client
        .args(["--endpoint", &server.url(), "--token", "hf_sesame"])
        .arg(format!("--served=org/tiny={}", promoted.display()))
        .args(["--blocked", "org/evil=FAIL Pickle opcode scan"])
        .arg(format!(
            "--review=org/gpt2=socair airlock accept {}",
            s.gpt2
        ))
        .env_remove("HF_HUB_OFFLINE")
        .env("HF_HOME", s.root.join("hf-home"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok snapshot_download org/tiny"), "{stdout}");
    assert!(
        stdout.contains("ok hf_hub_download org/evil refused"),
        "{stdout}"
    );
    eprintln!("{stdout}");
    if has_transformers {
        assert!(stdout.contains("ok AutoConfig org/tiny"), "{stdout}");
        assert!(
            stdout.contains("ok AutoConfig org/evil refused"),
            "{stdout}"
        );
    }
}

/// A new store in `dir` trusting a new key with the role `scan`, served with `--upstream
/// upstream --key` that key: the store's path and the running gateway.
fn pulling_gateway(dir: &Path, upstream: &str) -> (PathBuf, Server) {
    let (store, key) = (dir.join("gateway"), dir.join("gateway.key"));
    let ok = |args: &[&str]| {
        let r = run(socair().args(args).arg("--store").arg(&store));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    };
    ok(&["airlock", "init"]);
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&key)).code, 0);
    ok(&[
        "airlock",
        "trust",
        &format!("{}.pub", key.display()),
        "--role",
        "scan",
    ]);
    let gateway = Server::start(
        &store,
        dir,
        &["--upstream", upstream, "--key", key.to_str().unwrap()],
    );
    (store, gateway)
}

/// A gateway with `--upstream` (another socair serve, whose store holds the tiny BERT
/// promoted and the GPT-2 accepted and promoted): a revision the gateway's store lacks is
/// fetched once, scanned and signed with the gateway's key, promoted when its own gate lets it
/// through, and served; the GPT-2, accepted upstream but not here, is held for a person.
#[test]
fn pull_through_fetches_scans_and_gates_what_the_store_lacks() {
    let up = Served::new();
    up.ok(&[
        "airlock",
        "accept",
        &up.gpt2,
        "--row",
        "Format and structure",
        "--reason",
        "accepted upstream",
        "--key",
        &up.scan_key,
    ]);
    up.ok(&["airlock", "promote", &up.gpt2]);
    let upstream = up.serve(&[]);

    let dir = tempfile::tempdir().unwrap();
    let (store, gateway) = pulling_gateway(dir.path(), &upstream.url());

    // Two clients ask for the same revision at once: one pull serves both.
    let (a, b) = std::thread::scope(|scope| {
        let ask = || scope.spawn(|| gateway.get("/api/models/org/tiny/revision/main"));
        let (a, b) = (ask(), ask());
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    assert_eq!(b.status, 200);
    let info: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    let files = info["siblings"].as_array().unwrap().len();
    assert_eq!(
        files,
        std::fs::read_dir(fixture("safetensors/tiny-bert"))
            .unwrap()
            .count()
    );
    let commit = info["sha"].as_str().unwrap();
    let got = gateway.get(&format!("/org/tiny/resolve/{commit}/config.json"));
    assert_eq!(got.status, 200);
    assert_eq!(
        got.body,
        std::fs::read(fixture("safetensors/tiny-bert/config.json")).unwrap()
    );
    let metrics = String::from_utf8(gateway.get("/metrics").body).unwrap();
    assert!(
        metrics.contains(&format!("socair_serve_upstream_fetches_total {files}\n")),
        "each file fetched once: {metrics}"
    );
    assert!(
        metrics.contains("socair_serve_upstream_pulls_total{outcome=\"passed\"} 1"),
        "{metrics}"
    );
    // Signed by the gateway's key and promoted in its store, every step in its log.
    let log = run(socair().args(["airlock", "log", "--store"]).arg(&store));
    assert_eq!(log.code, 0, "{}", log.stderr);
    for action in ["\"pull\"", "\"map\"", "\"scan\"", "\"promote\""] {
        assert!(log.stdout.contains(action), "{action}: {}", log.stdout);
    }

    // Accepted upstream is not accepted here: held, with the command that would let it in.
    let held = gateway.get("/org/gpt2/resolve/main/config.json");
    assert_eq!(held.status, 403, "{}", String::from_utf8_lossy(&held.body));
    assert_eq!(held.header("x-error-code"), Some("GatedRepo"));
    let why = held.header("x-error-message").unwrap();
    assert!(why.contains("socair airlock accept"), "{why}");
    assert!(why.contains("NOT_TESTED Format and structure"), "{why}");

    // What the upstream does not serve is not pulled: its refusal is the answer's reason.
    let evil = gateway.get("/api/models/org/evil/revision/main");
    assert_eq!(evil.status, 502, "{}", String::from_utf8_lossy(&evil.body));
    let why = evil.header("x-error-message").unwrap();
    assert!(why.contains("403"), "{why}");
    assert!(!store
        .join("incoming")
        .read_dir()
        .unwrap()
        .any(|e| { e.unwrap().path().join("evil").exists() }));
}

/// A fake upstream hub (tests/python/fake_hub.py) holding a clean repository and a malicious
/// one: through a pulling gateway, eight clients at once get the clean one (each file fetched
/// from the upstream once), and the malicious one is refused with socair's reason; with
/// huggingface_hub installed, the real client downloads the clean one and raises socair's
/// reason for the other.
#[test]
fn a_pulling_gateway_admits_the_clean_repository_and_blocks_the_malicious_one() {
    let dir = tempfile::tempdir().unwrap();
    let hub_root = dir.path().join("hub");
    let (clean, evil) = (hub_root.join("org/clean"), hub_root.join("org/evil"));
    for d in [&clean, &evil] {
        std::fs::create_dir_all(d).unwrap();
    }
    for f in std::fs::read_dir(fixture("safetensors/tiny-bert")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, clean.join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(
        fixture("safetensors/tiny-bert/config.json"),
        evil.join("config.json"),
    )
    .unwrap();
    std::fs::copy(
        fixture("torch/malicious/pickle-builtins-exec.pt"),
        evil.join("pytorch_model.bin"),
    )
    .unwrap();
    let hub = FakeHub::start(&hub_root);
    let hub_url = hub.url.clone();

    let (_store, gateway) = pulling_gateway(dir.path(), &hub_url);
    let answers: Vec<Answer> = std::thread::scope(|scope| {
        let asks: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| gateway.get("/org/clean/resolve/main/config.json")))
            .collect();
        asks.into_iter().map(|a| a.join().unwrap()).collect()
    });
    for a in &answers {
        assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
        assert_eq!(a.body, std::fs::read(clean.join("config.json")).unwrap());
    }
    let files = std::fs::read_dir(&clean).unwrap().count();
    let metrics = String::from_utf8(gateway.get("/metrics").body).unwrap();
    assert!(
        metrics.contains(&format!("socair_serve_upstream_fetches_total {files}\n")),
        "{metrics}"
    );
    let blocked = gateway.get("/org/evil/resolve/main/config.json");
    assert_eq!(blocked.status, 403);
    let why = blocked.header("x-error-message").unwrap();
    assert!(why.contains("FAIL Pickle opcode scan"), "{why}");
    assert!(
        metrics.contains("socair_serve_upstream_pulls_total{outcome=\"passed\"} 1"),
        "{metrics}"
    );

    // The real client, when installed (required in CI).
    let has_hub = Command::new(python())
        .args(["-c", "import huggingface_hub"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_hub {
        let out = Command::new(python())
            .arg(repo().join("tests/python/serve_client.py"))
            .args(["--endpoint", &gateway.url()])
            .arg(format!("--served=org/clean={}", clean.display()))
            .args(["--blocked", "org/evil=FAIL Pickle opcode scan"])
            .env_remove("HF_HUB_OFFLINE")
            .env("HF_HOME", dir.path().join("hf-home"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("ok snapshot_download org/clean"),
            "{stdout}"
        );
    } else {
        assert!(
            std::env::var("SOCAIR_REQUIRE_HF").as_deref() != Ok("1"),
            "SOCAIR_REQUIRE_HF=1 but huggingface_hub is not installed for {}",
            python()
        );
    }
}

/// tests/python/fake_hub.py serving the folders of a root, stopped when dropped.
pub(crate) struct FakeHub {
    child: Child,
    pub(crate) url: String,
}

impl FakeHub {
    /// Serves every `root/<namespace>/<name>/` as a repository.
    pub(crate) fn start(root: &Path) -> FakeHub {
        let mut child = Command::new(python())
            .arg(repo().join("tests/python/fake_hub.py"))
            .arg(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the fake hub");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://"), "{line:?}");
        // Its request lines are read and dropped: a full pipe would stall it.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        FakeHub { child, url }
    }
}

impl Drop for FakeHub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
