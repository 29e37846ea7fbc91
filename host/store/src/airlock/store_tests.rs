//! The store's behaviour, each test body run over both backends: a directory (a temporary
//! one) and object storage (object_store's in-memory store, serving a bucket name of the
//! test's own through [`cloud::serve_from`], so that the URLs the bucket code opens again by
//! name reach the same objects).

use crate::airlock::bucket::STAGED_MARKER;
use crate::airlock::bucket_backend::BucketBackend;
use crate::airlock::error::StoreError;
use crate::airlock::log::{line_hash, LogEntry};
use crate::airlock::store::{Area, Store, ACCEPTANCES, ATTESTATION, DERIVATION, DERIVATIONS};
use crate::base::cloud;
use crate::base::digest::hex;
use crate::read::modeldir;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A store of one kind, and a local directory for the files a test pulls (and, for the
/// directory backend, the store itself).
struct Case {
    kind: &'static str,
    store: Store,
    /// Where a second `Store` can open the same store.
    root: String,
    files: tempfile::TempDir,
}

fn on_files() -> Case {
    let files = tempfile::tempdir().unwrap();
    let root = files.path().join("store");
    Case {
        kind: "files",
        store: Store::init(&root).unwrap(),
        root: root.display().to_string(),
        files,
    }
}

fn on_bucket() -> Case {
    static N: AtomicUsize = AtomicUsize::new(0);
    let bucket = format!(
        "socair-unit-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    cloud::serve_from(
        &format!("s3://{bucket}"),
        Arc::new(object_store::memory::InMemory::new()),
    );
    let root = format!("s3://{bucket}/store");
    let backend = BucketBackend::new(cloud::parse(&root).unwrap());
    Case {
        kind: "bucket",
        store: Store::init_on(Arc::new(backend)).unwrap(),
        root,
        files: tempfile::tempdir().unwrap(),
    }
}

fn both() -> [Case; 2] {
    [on_files(), on_bucket()]
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

impl Case {
    /// Writes `bytes` to the local file `name` and pulls it.
    fn pull(&self, name: &str, bytes: &[u8]) -> (String, String) {
        let path = self.files.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        self.store.pull(&path).unwrap()
    }

    /// Each log entry's action, in order; the chain is checked whole.
    fn actions(&self) -> Vec<String> {
        let check = self.store.read_log().unwrap();
        assert_eq!(check.broken, None, "{}", self.kind);
        assert!(check.problems.is_empty(), "{}: {:?}", self.kind, check);
        let mut prev = "0".repeat(64);
        let mut out = Vec::new();
        for line in &check.lines {
            let e: LogEntry = serde_json::from_str(line).unwrap();
            assert_eq!(e.prev, prev, "{}: {line}", self.kind);
            prev = line_hash(line);
            out.push(e.action);
        }
        out
    }
}

fn text(r: Result<impl std::fmt::Debug, StoreError>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_pulled_file_is_staged_with_its_documents_then_promoted_once() {
    for c in both() {
        let bytes = b"weights of some model".as_slice();
        let (sha, name) = c.pull("model.bin", bytes);
        assert_eq!(
            (sha.as_str(), name.as_str()),
            (sha256(bytes).as_str(), "model.bin")
        );
        assert!(c.store.is_staged(&sha).unwrap(), "{}", c.kind);
        assert!(!c.store.is_promoted(&sha).unwrap(), "{}", c.kind);
        assert_eq!(c.store.staged(&sha).unwrap(), name);
        assert_eq!(c.store.shas(Area::Incoming).unwrap(), vec![sha.clone()]);
        assert_eq!(c.store.rehash(&sha).unwrap(), sha, "{}", c.kind);
        assert_eq!(c.store.resolve(&sha[..6]).unwrap(), sha);

        c.store
            .put_beside(&sha, ATTESTATION, b"signed scan")
            .unwrap();
        for n in ["a", "b"] {
            let rel = format!("{ACCEPTANCES}/{n}.dsse.json");
            c.store.put_beside(&sha, &rel, n.as_bytes()).unwrap();
        }
        let read = c
            .store
            .read_beside(Area::Incoming, &sha, ATTESTATION)
            .unwrap();
        assert_eq!(
            read.as_deref(),
            Some(b"signed scan".as_slice()),
            "{}",
            c.kind
        );
        let none = c
            .store
            .read_beside(Area::Incoming, &sha, DERIVATION)
            .unwrap();
        assert_eq!(none, None, "{}", c.kind);

        let mut seen = None;
        let promoted = c.store.promote(&sha, |now| {
            seen = Some(now.map(str::to_owned));
            Ok(())
        });
        assert!(promoted.unwrap(), "{}", c.kind);
        // Object storage hashes the bytes as it copies them; a directory leaves it to the gate.
        let expected = (c.kind == "bucket").then(|| sha.clone());
        assert_eq!(seen, Some(expected), "{}", c.kind);
        assert!(c.store.is_promoted(&sha).unwrap(), "{}", c.kind);
        assert!(!c.store.is_staged(&sha).unwrap(), "{}", c.kind);
        assert!(
            c.store.shas(Area::Incoming).unwrap().is_empty(),
            "{}",
            c.kind
        );
        assert_eq!(c.store.shas(Area::Promoted).unwrap(), vec![sha.clone()]);
        assert_eq!(c.store.name_in(Area::Promoted, &sha).unwrap(), name);
        // The documents went with it.
        let read = c
            .store
            .read_beside(Area::Promoted, &sha, ATTESTATION)
            .unwrap();
        assert_eq!(
            read.as_deref(),
            Some(b"signed scan".as_slice()),
            "{}",
            c.kind
        );
        let mut docs = c
            .store
            .docs_beside(Area::Promoted, &sha, ACCEPTANCES)
            .unwrap();
        docs.sort();
        assert_eq!(docs, vec![b"a".to_vec(), b"b".to_vec()], "{}", c.kind);

        // Promoted before: no gate, no second promotion.
        let again = c.store.promote(&sha, |_| panic!("the gate ran again"));
        assert!(!again.unwrap(), "{}", c.kind);

        let out = tempfile::tempdir().unwrap();
        assert_eq!(c.store.copy_promoted(&sha, &name, out.path()).unwrap(), sha);
        assert_eq!(std::fs::read(out.path().join(&name)).unwrap(), bytes);
        assert_eq!(c.actions(), ["init", "pull"], "{}", c.kind);
    }
}

#[test]
fn a_refusing_gate_leaves_the_artifact_staged_and_nothing_promoted() {
    for c in both() {
        let (sha, _) = c.pull("m.bin", b"bytes");
        let refused = c
            .store
            .promote(&sha, |_| Err(StoreError::Refused("no".into())));
        assert_eq!(text(refused), "refused: no", "{}", c.kind);
        assert!(c.store.is_staged(&sha).unwrap(), "{}", c.kind);
        assert!(!c.store.is_promoted(&sha).unwrap(), "{}", c.kind);
        assert!(
            c.store.shas(Area::Promoted).unwrap().is_empty(),
            "{}",
            c.kind
        );
        if c.kind == "bucket" {
            // The copies made on the way to the gate are deleted again.
            let promoted = cloud::parse(&c.root).unwrap().child("promoted");
            assert_eq!(cloud::list(&promoted, None).unwrap(), vec![]);
        }
        // It can still pass later.
        assert!(c.store.promote(&sha, |_| Ok(())).unwrap(), "{}", c.kind);
    }
}

#[test]
fn the_same_bytes_pulled_twice_are_staged_once_and_logged_twice() {
    for c in both() {
        let first = c.pull("a.bin", b"same");
        let second = c.pull("a.bin", b"same");
        assert_eq!(first, second, "{}", c.kind);
        assert_eq!(c.store.shas(Area::Incoming).unwrap(), vec![first.0.clone()]);
        assert_eq!(c.actions(), ["init", "pull", "pull"], "{}", c.kind);
    }
}

#[test]
fn a_model_directory_is_staged_and_exported_with_its_directory_digest() {
    for c in both() {
        let dir = c.files.path().join("model");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("config.json"), b"{}").unwrap();
        std::fs::write(dir.join("sub/w.bin"), b"weights").unwrap();
        let (sha, name) = c.store.pull(&dir).unwrap();
        let expected = modeldir::digest_of(&[
            ("config.json".into(), 2, sha256(b"{}")),
            ("sub/w.bin".into(), 7, sha256(b"weights")),
        ]);
        assert_eq!((sha.as_str(), name.as_str()), (expected.as_str(), "model"));
        assert_eq!(c.store.rehash(&sha).unwrap(), sha, "{}", c.kind);
        assert!(c.store.promote(&sha, |_| Ok(())).unwrap(), "{}", c.kind);
        let out = tempfile::tempdir().unwrap();
        assert_eq!(c.store.copy_promoted(&sha, &name, out.path()).unwrap(), sha);
        let copied = std::fs::read(out.path().join("model/sub/w.bin")).unwrap();
        assert_eq!(copied, b"weights", "{}", c.kind);
    }
}

/// A model directory fetched into the store's scratch area with its files' hashes is staged
/// under the digest a pull of the same files gives (moved in on a local store, uploaded to a
/// bucket), and its bytes are those files; a listing that does not match the folder (a size,
/// a file more) is refused and nothing is staged.
#[test]
fn a_fetched_directory_is_staged_as_its_pull_would_be() {
    for c in both() {
        let listed = vec![
            ("config.json".to_owned(), 2, sha256(b"{}")),
            ("sub/w.bin".to_owned(), 7, sha256(b"weights")),
        ];
        let fetched = |files: &[(&str, &[u8])]| {
            let scratch = c.store.scratch(".tmp", "upstream-").unwrap();
            for (rel, bytes) in files {
                let at = scratch.path().join("model").join(rel);
                std::fs::create_dir_all(at.parent().unwrap()).unwrap();
                std::fs::write(at, bytes).unwrap();
            }
            scratch
        };
        let extra: [(&str, &[u8]); 3] = [
            ("config.json", b"{}"),
            ("sub/w.bin", b"weights"),
            ("sub/more.bin", b"x"),
        ];
        if c.kind == "files" {
            // The bucket copies (and so hashes) what it is given; a local store takes the
            // listing's word for the hashes, so it checks the folder against it.
            let refused = c.store.pull_fetched(fetched(&extra), "model", &listed);
            assert!(text(refused).contains("not the 2 listed"), "{}", c.kind);
            let short: [(&str, &[u8]); 2] = [("config.json", b"{}"), ("sub/w.bin", b"weight")];
            assert!(c
                .store
                .pull_fetched(fetched(&short), "model", &listed)
                .is_err());
            assert!(c.store.shas(Area::Incoming).unwrap().is_empty());
        }
        let (sha, name) = c
            .store
            .pull_fetched(fetched(&extra[..2]), "model", &listed)
            .unwrap();
        assert_eq!(sha, modeldir::digest_of(&listed), "{}", c.kind);
        assert_eq!(name, "model");
        assert_eq!(c.store.rehash(&sha).unwrap(), sha, "{}", c.kind);
        if c.kind == "files" {
            // Every scratch folder went: moved in, or dropped with its refusal.
            let probe = c.store.scratch(".tmp", "probe-").unwrap();
            let tmp = probe.path().parent().unwrap();
            assert_eq!(
                std::fs::read_dir(tmp).unwrap().count(),
                1,
                "{}",
                tmp.display()
            );
        }
    }
}

#[test]
fn refused_pulls_stage_nothing_and_are_logged_as_refused() {
    for c in both() {
        let missing = c.files.path().join("absent.bin");
        assert!(c.store.pull(&missing).is_err(), "{}", c.kind);
        let reserved = c.files.path().join(ATTESTATION);
        std::fs::write(&reserved, b"x").unwrap();
        let why = text(c.store.pull(&reserved));
        assert!(
            why.contains("is not a name an artifact may have"),
            "{}: {why}",
            c.kind
        );
        assert!(
            c.store.shas(Area::Incoming).unwrap().is_empty(),
            "{}",
            c.kind
        );
        let check = c.store.read_log().unwrap();
        let last: LogEntry = serde_json::from_str(check.lines.last().unwrap()).unwrap();
        assert_eq!(
            (last.action.as_str(), last.outcome.as_str()),
            ("pull", "refused")
        );
        assert_eq!(last.subject, Some(sha256(b"x")), "{}", c.kind);
    }
}

#[test]
fn names_and_sha256s_that_are_not_there_are_said_so() {
    for c in both() {
        let nothing = "0".repeat(64);
        assert!(!c.store.is_staged(&nothing).unwrap(), "{}", c.kind);
        assert!(!c.store.is_promoted(&nothing).unwrap(), "{}", c.kind);
        let why = text(c.store.staged(&nothing));
        let said = format!(
            "{nothing}: nothing with this sha256 is staged in {}",
            c.root
        );
        assert_eq!(why, said, "{}", c.kind);
        assert_eq!(text(c.store.staged("abc")), "\"abc\" is not a sha256");
        let why = text(c.store.put_beside(&nothing, ATTESTATION, b"x"));
        assert!(why.contains("nothing with this sha256 is staged"), "{why}");
        assert_eq!(
            c.store
                .read_beside(Area::Promoted, &nothing, ATTESTATION)
                .unwrap(),
            None
        );
        assert!(c
            .store
            .docs_beside(Area::Incoming, &nothing, ACCEPTANCES)
            .unwrap()
            .is_empty());
        let why = text(c.store.resolve("abcd"));
        assert!(
            why.contains("has a sha256 starting abcd"),
            "{}: {why}",
            c.kind
        );
    }
}

#[test]
fn policy_changes_are_logged_in_order_and_read_back() {
    for c in both() {
        assert!(
            c.store.policy().unwrap().pins.rules.is_empty(),
            "{}",
            c.kind
        );
        c.store.pin_rules("pickle", Some("^1")).unwrap();
        c.pull("m.bin", b"m");
        c.store.pin_rules("onnx", Some(">=2")).unwrap();
        c.store.pin_rules("pickle", None).unwrap();
        let rules = c.store.policy().unwrap().pins.rules;
        let names: Vec<&str> = rules.keys().map(String::as_str).collect();
        assert_eq!(names, ["onnx"], "{}", c.kind);
        let refused = c.store.pin_rules("x", Some("not a requirement"));
        assert!(refused.is_err(), "{}", c.kind);
        assert_eq!(
            c.actions(),
            ["init", "pin", "pull", "pin", "pin"],
            "{}",
            c.kind
        );
    }
}

#[test]
fn a_store_is_created_once_and_opened_again() {
    for c in both() {
        c.store.pin_rules("pickle", Some("^1")).unwrap();
        let again = Store::open(Path::new(&c.root)).unwrap();
        assert_eq!(again.display(), c.root);
        assert!(again.policy().unwrap().pins.rules.contains_key("pickle"));
        let why = text(Store::init(Path::new(&c.root)));
        assert_eq!(why, format!("{}: already a store", c.root), "{}", c.kind);
    }
    let empty = tempfile::tempdir().unwrap();
    let why = text(Store::open(empty.path()));
    assert!(why.contains("not a socair store (no policy.json)"), "{why}");
    let bucket = on_bucket();
    let other = format!("{}-other", bucket.root);
    let why = text(Store::open(Path::new(&other)));
    assert!(why.contains("not a socair store (no log)"), "{why}");
}

#[test]
fn reviews_are_written_listed_and_removed() {
    for c in both() {
        assert!(c.store.reviews("reviews").unwrap().is_empty(), "{}", c.kind);
        c.store
            .put_review("reviews", "r1.dsse.json", b"one")
            .unwrap();
        c.store
            .put_review("reviews", "r2.dsse.json", b"two")
            .unwrap();
        c.store
            .put_review("reviews", "r1.dsse.json", b"uno")
            .unwrap();
        let mut got = c.store.reviews("reviews").unwrap();
        got.sort();
        let want = [("r1.dsse.json", b"uno"), ("r2.dsse.json", b"two")];
        let want: Vec<(String, Vec<u8>)> = want
            .iter()
            .map(|(n, b)| (n.to_string(), b.to_vec()))
            .collect();
        assert_eq!(got, want, "{}", c.kind);
        c.store.remove_review("reviews", "r1.dsse.json").unwrap();
        assert_eq!(c.store.reviews("reviews").unwrap().len(), 1, "{}", c.kind);
    }
}

/// A conversion's scratch directory holding the artifact `name` and its records.
fn converted(c: &Case, name: &str, bytes: &[u8], input: &str) -> tempfile::TempDir {
    let dir = c.store.scratch("work", "convert-").unwrap();
    std::fs::write(dir.path().join(name), bytes).unwrap();
    std::fs::write(dir.path().join(DERIVATION), b"record").unwrap();
    let records = dir.path().join(DERIVATIONS);
    std::fs::create_dir_all(&records).unwrap();
    std::fs::write(records.join(format!("{input}.dsse.json")), input).unwrap();
    dir
}

#[test]
fn a_conversion_is_staged_with_its_derivation_records() {
    for c in both() {
        let bytes = b"converted weights";
        let sha = sha256(bytes);
        let dir = converted(&c, "out.safetensors", bytes, "first");
        assert!(c
            .store
            .stage_converted(&sha, dir, "out.safetensors")
            .unwrap());
        assert_eq!(
            c.store.staged(&sha).unwrap(),
            "out.safetensors",
            "{}",
            c.kind
        );
        assert_eq!(c.store.rehash(&sha).unwrap(), sha, "{}", c.kind);
        let record = c
            .store
            .read_beside(Area::Incoming, &sha, DERIVATION)
            .unwrap();
        assert_eq!(record.as_deref(), Some(b"record".as_slice()), "{}", c.kind);
        let records = c
            .store
            .docs_beside(Area::Incoming, &sha, DERIVATIONS)
            .unwrap();
        assert_eq!(records, vec![b"first".to_vec()], "{}", c.kind);

        // The same bytes again: a directory's rename finds them staged and says so (the
        // caller then writes its record beside them); object storage uploads the documents
        // and leaves the standing marker as it is.
        let dir = converted(&c, "out.safetensors", bytes, "second");
        let again = c
            .store
            .stage_converted(&sha, dir, "out.safetensors")
            .unwrap();
        assert_eq!(again, c.kind == "bucket", "{}", c.kind);
        assert_eq!(c.store.shas(Area::Incoming).unwrap(), vec![sha.clone()]);
        assert_eq!(
            c.store.staged(&sha).unwrap(),
            "out.safetensors",
            "{}",
            c.kind
        );
    }
}

#[test]
fn scratch_directories_are_made_fresh_each_time() {
    for c in both() {
        let a = c.store.scratch("work", "convert-").unwrap();
        let b = c.store.scratch("work", "convert-").unwrap();
        assert_ne!(a.path(), b.path(), "{}", c.kind);
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("convert-"), "{}: {name}", c.kind);
        assert!(a.path().is_dir() && b.path().is_dir(), "{}", c.kind);
    }
}

#[test]
fn on_object_storage_nothing_is_staged_until_its_marker_stands() {
    let c = on_bucket();
    let sha = sha256(b"half");
    let root = cloud::parse(&c.root).unwrap();
    let object = root.child(&format!("incoming/{sha}/half.bin"));
    cloud::put(&object, b"half".to_vec().into(), false).unwrap();
    assert!(c.store.shas(Area::Incoming).unwrap().is_empty());
    assert!(!c.store.is_staged(&sha).unwrap());
    let why = text(c.store.promote(&sha, |_| Ok(())));
    assert!(why.contains("nothing with this sha256 is staged"), "{why}");
    // Pulling the same bytes writes the marker; the artifact is then staged.
    let (pulled, _) = c.pull("half.bin", b"half");
    assert_eq!(pulled, sha);
    let marker = root.child(&format!("incoming/{sha}/{STAGED_MARKER}"));
    assert!(cloud::exists(&marker).unwrap());
    assert!(c.store.is_staged(&sha).unwrap());
}

#[test]
fn in_a_directory_a_staged_link_is_refused() {
    let c = on_files();
    let elsewhere = c.files.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("m.bin"), b"m").unwrap();
    let sha = sha256(b"m");
    let link = Path::new(&c.root).join("incoming").join(&sha);
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let why = text(c.store.staged(&sha));
    assert!(why.contains("not a directory (a symbolic link?)"), "{why}");
}
