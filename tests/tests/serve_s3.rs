//! `socair serve --store s3://…`: gateway replicas sharing one store on object storage (the
//! S3-protocol test server of tests/tests/scale.rs; skipped without `SOCAIR_TEST_S3`, which CI
//! sets). What one replica's store holds promoted, every replica serves, byte for byte, ranges
//! included; an object changed after promotion is refused; and replicas pulling the same
//! revision through from an upstream at once leave one promoted copy, a log whose chain
//! holds, and the same answer on each.

use crate::common::{fixture, run, socair};
use crate::scale::s3::{s3, S3};
use crate::serve::{FakeHub, Server};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Bytes of a safetensors file holding one F32 tensor of `n` elements (the values count up,
/// so that a chunk served at the wrong offset shows).
fn safetensors(n: usize) -> Vec<u8> {
    let mut header = format!(
        r#"{{"w":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}}"#,
        4 * n
    );
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    for i in 0..n {
        out.extend_from_slice(&(i as f32).to_le_bytes());
    }
    out
}

/// A model directory of a config and a 5 MiB safetensors file: larger than a few of the
/// ranged reads a gateway makes of an object (host/serve/src/body.rs, `REMOTE_CHUNK`).
fn model_dir(root: &Path) -> std::path::PathBuf {
    let dir = root.join("model");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixture("safetensors/tiny-bert/config.json"),
        dir.join("config.json"),
    )
    .unwrap();
    std::fs::write(dir.join("model.safetensors"), safetensors(5 << 18)).unwrap();
    dir
}

/// `socair … --store url` against the test server; exit 0 asserted, standard output returned.
fn ok(s3: &S3, url: &str, args: &[&str]) -> String {
    let r = run(s3.socair().args(args).arg("--store").arg(url));
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stdout.trim().to_owned()
}

/// A store at `url`, initialised, trusting a new key (written in `root`) with `roles`; the
/// key's path.
fn store_with_key(s3: &S3, url: &str, root: &Path, name: &str, roles: &str) -> String {
    ok(s3, url, &["airlock", "init"]);
    let key = root.join(name);
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&key)).code, 0);
    ok(
        s3,
        url,
        &[
            "airlock",
            "trust",
            &format!("{}.pub", key.display()),
            "--role",
            roles,
        ],
    );
    key.display().to_string()
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Two gateways over one store on object storage serve its promoted revision alike: every
/// file whole with its sha256 as ETag, a range across the gateway's ranged reads of the
/// object, and a refusal once an object is replaced behind the store's back.
#[test]
fn gateways_serve_a_promoted_revision_from_object_storage() {
    let Some(s3) = s3("serve_s3_promoted") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = s3.url("airlock");
    let key = store_with_key(&s3, &url, dir.path(), "scan.key", "scan");
    let model = model_dir(dir.path());
    let sha = ok(
        &s3,
        &url,
        &[
            "airlock",
            "pull",
            model.to_str().unwrap(),
            "--as",
            "org/big",
        ],
    );
    ok(&s3, &url, &["airlock", "scan", &sha, "--key", &key]);
    ok(&s3, &url, &["airlock", "promote", &sha]);

    let gateways = [
        Server::start_with(s3.socair(), url.as_ref(), dir.path(), &[]),
        Server::start_with(s3.socair(), url.as_ref(), dir.path(), &[]),
    ];
    let weights = std::fs::read(model.join("model.safetensors")).unwrap();
    for g in &gateways {
        let info = g.get("/api/models/org/big");
        assert_eq!(info.status, 200, "{}", g.stderr());
        let info = info.json();
        let siblings: Vec<&str> = info["siblings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["rfilename"].as_str().unwrap())
            .collect();
        assert_eq!(siblings, ["config.json", "model.safetensors"]);
        for name in siblings {
            let want = std::fs::read(model.join(name)).unwrap();
            let got = g.get(&format!("/org/big/resolve/main/{name}"));
            assert_eq!(got.status, 200, "{name}: {}", g.stderr());
            assert_eq!(got.body.len(), want.len(), "{name}");
            assert!(got.body == want, "{name}: the bytes differ");
            assert_eq!(
                got.header("etag"),
                Some(format!("\"{}\"", hex_sha256(&want)).as_str())
            );
        }
        // A range that starts in the first ranged read and ends in the third.
        let (start, end) = (2_000_000usize, 4_500_000usize);
        let part = g.request(
            "GET",
            "/org/big/resolve/main/model.safetensors",
            &[&format!("Range: bytes={start}-{end}")],
        );
        assert_eq!(part.status, 206);
        assert!(
            part.body == weights[start..=end],
            "the range's bytes differ"
        );
    }

    // An object replaced after promotion (another size) is not served.
    s3.put(
        &format!("airlock/promoted/{sha}/model/config.json"),
        b"{\"model_type\": \"replaced\"}",
    );
    let refused = gateways[1].get("/org/big/resolve/main/config.json");
    assert_eq!(refused.status, 403);
    let why = refused.header("x-error-message").unwrap_or_default();
    assert!(why.contains("changed after promotion"), "{why}");
}

/// Two pulling gateways over one store on object storage, asked for the same revision at the
/// same moment: each pulls it through from the upstream hub, the store's conditional writes
/// leave one promoted copy, both answer with the upstream's bytes, and the log's chain holds.
#[test]
fn pulling_gateways_share_one_store_on_object_storage() {
    let Some(s3) = s3("serve_s3_pull") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hub_root = dir.path().join("hub");
    let clean = hub_root.join("org/clean");
    std::fs::create_dir_all(&clean).unwrap();
    for f in std::fs::read_dir(fixture("safetensors/tiny-bert")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, clean.join(f.file_name().unwrap())).unwrap();
    }
    let hub = FakeHub::start(&hub_root);

    let url = s3.url("mirror");
    let key = store_with_key(&s3, &url, dir.path(), "gateway.key", "scan");
    let gateways: Vec<Server> = (0..2)
        .map(|_| {
            Server::start_with(
                s3.socair(),
                url.as_ref(),
                dir.path(),
                &["--upstream", &hub.url, "--key", &key],
            )
        })
        .collect();
    let want = std::fs::read(clean.join("config.json")).unwrap();
    let answers: Vec<_> = std::thread::scope(|scope| {
        let asks: Vec<_> = gateways
            .iter()
            .map(|g| scope.spawn(move || g.get("/org/clean/resolve/main/config.json")))
            .collect();
        asks.into_iter().map(|a| a.join().unwrap()).collect()
    });
    for (a, g) in answers.iter().zip(&gateways) {
        assert_eq!(
            a.status,
            200,
            "{}\n{}",
            String::from_utf8_lossy(&a.body),
            g.stderr()
        );
        assert!(a.body == want, "the bytes differ from the upstream's");
    }
    let promoted: Vec<String> = s3
        .keys()
        .into_iter()
        .filter(|k| k.starts_with("mirror/promoted/") && k.ends_with("/.promoted.json"))
        .collect();
    assert_eq!(promoted.len(), 1, "{promoted:?}");
    let log = run(s3.socair().args(["airlock", "log", "--store"]).arg(&url));
    assert_eq!(log.code, 0, "{}\n{}", log.stdout, log.stderr);
    assert!(log.stdout.contains("promote"), "{}", log.stdout);
}
