use super::*;
use std::collections::HashMap;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/hfcache")
}

/// A copy of the fixture cache (links copied as links: `cp -a`) that a test may break.
fn copy_cache() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixtures().join("hub"))
        .arg(dir.path().join("hub"))
        .status()
        .unwrap();
    assert!(copied.success());
    dir
}

const TINY_BERT: &str = "models--socair-fixtures--tiny-bert";
const TINY_BERT_MAIN: &str = "1c7bfa26e76b1ee69ff854b401134d895fc7759f";
const REVS: &str = "models--socair-fixtures--tiny-bert-revs";
const REVS_V1: &str = "848e72bfc97361631d2bc633be1c16ca91c5bfc4";
const REVS_MAIN: &str = "b313dc12d5dd30dfcbf55e7208962887f403feff";

/// Every URI of uris.json parses as huggingface_hub 2.4.0's `parse_hf_uri` parsed it.
#[test]
fn uris_parse_as_huggingface_hub_parses_them() {
    let text = std::fs::read_to_string(fixtures().join("uris.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = doc["uris"].as_array().unwrap();
    assert!(cases.len() > 30);
    for case in cases {
        let uri = case["uri"].as_str().unwrap();
        let ours = HubUri::parse(uri);
        if case.get("error").is_some() {
            assert!(
                ours.is_err(),
                "{uri}: huggingface_hub refuses it, socair took {ours:?}"
            );
            continue;
        }
        let ours = ours.unwrap_or_else(|e| panic!("{uri}: huggingface_hub parses it: {e}"));
        assert_eq!(
            ours.repo_type,
            format!("{}s", case["type"].as_str().unwrap()),
            "{uri}"
        );
        assert_eq!(ours.repo_id, case["id"].as_str().unwrap(), "{uri}");
        assert_eq!(ours.revision.as_deref(), case["revision"].as_str(), "{uri}");
        assert_eq!(ours.path, case["path"].as_str().unwrap(), "{uri}");
    }
}

/// The cache directory each environment names is the one huggingface_hub 2.4.0's constants
/// computed for it.
#[test]
fn cache_dir_is_chosen_as_huggingface_hub_chooses_it() {
    let text = std::fs::read_to_string(fixtures().join("uris.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for case in doc["cache_dirs"].as_array().unwrap() {
        let mut env: HashMap<String, String> = case["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect();
        env.insert("HOME".into(), "/home/u".into());
        let got = cache_dir(&|name| env.get(name).map(OsString::from));
        assert_eq!(
            got,
            PathBuf::from(case["cache"].as_str().unwrap()),
            "{:?}",
            case["env"]
        );
    }
}

#[test]
fn a_snapshot_is_known_by_its_place() {
    let hub = fixtures().join("hub").canonicalize().unwrap();
    let snap = Snapshot::of(&hub.join(TINY_BERT).join("snapshots").join(TINY_BERT_MAIN)).unwrap();
    assert_eq!(snap.repo_id, "socair-fixtures/tiny-bert");
    assert_eq!(snap.repo_type, "models");
    assert_eq!(snap.commit, TINY_BERT_MAIN);
    assert_eq!(snap.cache, hub);
    assert_eq!(
        snap.name(),
        format!("socair-fixtures/tiny-bert@{TINY_BERT_MAIN}")
    );
    let sub = Snapshot::of(&hub.join(REVS).join("snapshots").join(REVS_V1).join("extra")).unwrap();
    assert_eq!(sub.sub, "extra");
    assert_eq!(
        sub.name(),
        format!("socair-fixtures/tiny-bert-revs@{REVS_V1}/extra")
    );
    // The repository folder, its blobs and an ordinary directory are no snapshot.
    assert!(Snapshot::of(&hub.join(TINY_BERT)).is_none());
    assert!(Snapshot::of(&hub.join(TINY_BERT).join("blobs")).is_none());
    assert!(Snapshot::of(&fixtures()).is_none());
}

/// huggingface_hub's links lead to the repository's blobs, or through them to the shared
/// store; each is followed to the regular file, named by its ETag.
#[test]
fn huggingface_hubs_links_are_followed_to_their_blobs() {
    let hub = fixtures().join("hub").canonicalize().unwrap();
    let dir = hub.join(REVS).join("snapshots").join(REVS_MAIN);
    let snap = Snapshot::of(&dir).unwrap();
    let notes = snap.follow(&dir.join("extra/notes.txt")).unwrap();
    assert_eq!(notes.etag, "dcb6643b702399ab8631fd0478f0d5f95b0269b8");
    assert_eq!(notes.path, hub.join(REVS).join("blobs").join(&notes.etag));
    assert_eq!(notes.shared, None);
    let shard = snap
        .follow(&dir.join("model-00002-of-00004.safetensors"))
        .unwrap();
    assert_eq!(
        shard.etag,
        "5af2a5b50ee6e5db153036c514a2d2b18d3edd6963d03b182053d352e6b35ce4"
    );
    let xet = shard.shared.clone().expect("in the shared store");
    assert_eq!(shard.path, hub.join("blobs").join(&xet[..2]).join(&xet));
    assert_eq!(shard.size, 9256);
}

#[cfg(unix)]
fn follow_in(cache: &Path, rel: &str) -> Result<Blob, String> {
    let dir = cache
        .join("hub")
        .join(REVS)
        .join("snapshots")
        .join(REVS_MAIN);
    Snapshot::of(&dir).unwrap().follow(&dir.join(rel))
}

#[cfg(unix)]
fn relink(path: &Path, to: &str) {
    std::fs::remove_file(path).unwrap();
    std::os::unix::fs::symlink(to, path).unwrap();
}

#[test]
#[cfg(unix)]
fn links_anywhere_else_are_refused_with_the_reason() {
    let cache = copy_cache();
    let snap = cache
        .path()
        .join("hub")
        .join(REVS)
        .join("snapshots")
        .join(REVS_MAIN);
    // Outside the cache, absolute or relative.
    relink(&snap.join("config.json"), "/etc/passwd");
    let why = follow_in(cache.path(), "config.json").unwrap_err();
    assert!(
        why.contains("not a file of this repository's blobs/"),
        "{why}"
    );
    relink(&snap.join("config.json"), "../../../../../../etc/passwd");
    assert!(follow_in(cache.path(), "config.json").is_err());
    // Another repository's blob, a file of the snapshot, the blobs folder itself.
    relink(
        &snap.join("config.json"),
        &format!("../../../{TINY_BERT}/blobs/97b5d4df2785c82a3377e492b3eb820818fd8e07"),
    );
    assert!(follow_in(cache.path(), "config.json").is_err());
    relink(&snap.join("config.json"), "model.safetensors.index.json");
    assert!(follow_in(cache.path(), "config.json").is_err());
    relink(&snap.join("config.json"), "../../blobs");
    assert!(follow_in(cache.path(), "config.json").is_err());
    // A blob that is a link out of the shared store's layout.
    let blobs = cache.path().join("hub").join(REVS).join("blobs");
    let etag = "26ec56ebccec279483b01c3cd951d0d63bb851c7";
    relink(&snap.join("config.json"), &format!("../../blobs/{etag}"));
    assert!(follow_in(cache.path(), "config.json").is_ok());
    relink(&blobs.join(etag), "/etc/passwd");
    let why = follow_in(cache.path(), "config.json").unwrap_err();
    assert!(why.contains("shared blob store"), "{why}");
    // The shared store without its marker is not huggingface_hub's.
    let shard = "model-00002-of-00004.safetensors";
    assert!(follow_in(cache.path(), shard).is_ok());
    let marker = cache.path().join("hub/blobs/.huggingface-shared-blobs");
    std::fs::write(&marker, "2\n").unwrap();
    let why = follow_in(cache.path(), shard).unwrap_err();
    assert!(
        why.contains("marker") || why.contains(SHARED_MARKER),
        "{why}"
    );
    std::fs::write(&marker, "1\n").unwrap();
    assert!(follow_in(cache.path(), shard).is_ok());
}

#[test]
#[cfg(unix)]
fn a_link_on_the_way_is_refused() {
    let cache = copy_cache();
    let repo = cache.path().join("hub").join(REVS);
    // blobs/ moved elsewhere and linked back: the text still names blobs/<etag>.
    let elsewhere = cache.path().join("elsewhere");
    std::fs::rename(repo.join("blobs"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join("blobs")).unwrap();
    let why = follow_in(cache.path(), "extra/notes.txt").unwrap_err();
    assert!(why.contains("another symbolic link"), "{why}");
}

#[test]
fn revisions_resolve_through_refs_or_as_commits() {
    let cache = fixtures().join("hub");
    let resolve = |uri: &str| HubUri::parse(uri).unwrap().resolve_in(&cache);
    let snapshots = cache.join(REVS).join("snapshots");
    let revs = "hf://socair-fixtures/tiny-bert-revs";
    assert_eq!(resolve(revs).unwrap(), snapshots.join(REVS_MAIN));
    assert_eq!(
        resolve(&format!("{revs}@v1")).unwrap(),
        snapshots.join(REVS_V1)
    );
    assert_eq!(
        resolve(&format!("{revs}@{REVS_V1}")).unwrap(),
        snapshots.join(REVS_V1)
    );
    assert_eq!(
        resolve(&format!("{revs}@v1/extra")).unwrap(),
        snapshots.join(REVS_V1).join("extra")
    );
    let missing = resolve(&format!("{revs}@v9")).unwrap_err();
    assert!(matches!(missing, HubError::NotCached { .. }), "{missing}");
    assert!(missing
        .to_string()
        .contains("hf download socair-fixtures/tiny-bert-revs"));
    assert!(matches!(
        resolve("hf://socair-fixtures/absent").unwrap_err(),
        HubError::NotCached { .. }
    ));
    let commit = "0".repeat(40);
    assert!(resolve(&format!("{revs}@{commit}")).is_err());
    // A revision that would leave refs/ is never joined.
    let up = resolve(&format!("{revs}@..%2F..%2Fsnapshots")).unwrap_err();
    assert!(matches!(up, HubError::BadUri { .. }), "{up}");
}

#[test]
fn a_ref_must_hold_a_commit_exactly() {
    let cache = copy_cache();
    let hub = cache.path().join("hub");
    let refs = hub.join(REVS).join("refs");
    std::fs::write(refs.join("v1"), format!("{REVS_V1}\n")).unwrap();
    let uri = HubUri::parse("hf://socair-fixtures/tiny-bert-revs@v1").unwrap();
    let why = uri.resolve_in(&hub).unwrap_err().to_string();
    assert!(why.contains("does not hold a commit id"), "{why}");
    std::fs::write(refs.join("v1"), REVS_V1).unwrap();
    assert!(uri.resolve_in(&hub).is_ok());
}
