//! Object storage end to end, against a real S3-protocol server on loopback: the
//! one `.ci/run` starts (moto with its writes serialised, `scripts/s3-test-server.py`) and
//! names in `SOCAIR_TEST_S3`. Without it every test here skips and says why.
//!
//! What is checked: a remote scan reads what a local scan reads (the same report, byte for
//! byte, for the committed fixtures), a header-only scan fetches a sliver of a large
//! checkpoint, a store under an S3 prefix shared by 8 processes loses nothing and keeps its
//! chain, connections cut in the middle of transfers are retried with nothing half-written,
//! and no credential appears in any output or stored object.
//!
//! This file holds the tests; what they run against is apart: the S3 test server with its
//! signed requests (`s3`), a store under an S3 prefix (`store`), a proxy that cuts
//! connections (`proxy`) and the inputs the tests read and measure (`inputs`).

mod inputs;
mod proxy;
pub(crate) mod s3;
mod store;

use inputs::{big_checkpoint, checkpoint_of, fetched, fixture_files, requests, sha256_file};
use proxy::{cutting_proxy, cutting_transfers};
use s3::{hex, s3, ACCESS_KEY, SECRET_KEY, SESSION_TOKEN};
use store::{passing_artifacts, r_last_entry, Shared};

use crate::common::{fixture, json, run, socair, spawn_paused, Run};
use sha2::{Digest, Sha256};
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[test]
fn remote_scans_read_what_local_scans_read() {
    let Some(s3) = s3("remote_scans") else {
        return;
    };
    let files = fixture_files();
    assert!(files.len() >= 20, "{} fixtures", files.len());
    let mut compared = 0;
    for (i, f) in files.iter().enumerate() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let key = format!("fixtures/{i}/{name}");
        s3.put(&key, &std::fs::read(f).unwrap());
        let local = run(socair().arg("scan").arg(f).arg("--json"));
        let remote = run(s3.socair().arg("scan").arg(s3.url(&key)).arg("--json"));
        assert_eq!(local.code, remote.code, "{name}: {}", remote.stderr);
        assert_eq!(
            local.stdout, remote.stdout,
            "{name}: the remote report differs"
        );
        // Every byte was hashed for the digest, each fetched once (the digest is computed from
        // the readers' reads, and finished through the same cache of fetched ranges).
        let size = std::fs::metadata(f).unwrap().len();
        let got = fetched(&remote.stderr);
        eprintln!("{name}: {got} of {size}");
        assert!(got >= size, "{name}: {}", remote.stderr);
        compared += 1;
    }
    eprintln!("remote and local reports identical for {compared} fixtures");
    // Header-only, all of them at once (their scans run side by side, more than the cores:
    // `report::batch`): each report's rows are its file's, in the order given.
    let urls: Vec<String> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            s3.url(&format!("fixtures/{i}/{name}"))
        })
        .collect();
    let remote = run(s3
        .socair()
        .args(["scan", "--header-only", "--json"])
        .args(&urls));
    let local = run(socair()
        .args(["scan", "--header-only", "--json"])
        .args(&files));
    assert_eq!(remote.code, local.code, "{}", remote.stderr);
    let (remote, local) = (json(&remote.stdout), json(&local.stdout));
    let (remote, local) = (
        remote["artifacts"].as_array().unwrap(),
        local["artifacts"].as_array().unwrap(),
    );
    assert_eq!(remote.len(), files.len());
    for ((r, l), url) in remote.iter().zip(local).zip(&urls) {
        assert_eq!(r["path"], url.as_str());
        assert_eq!(r["verdict"], l["verdict"], "{url}");
        assert_eq!(r["report"]["rows"], l["report"]["rows"], "{url}");
    }
    // The same through a plain web server (HTTPS in use; HTTP on loopback here): an object
    // anyone may read, fetched with unsigned range requests.
    let f = fixture("torch/legit/state-dict.pt");
    let (status, _) = s3.request_with(
        "PUT",
        "public/state-dict.pt",
        &std::fs::read(&f).unwrap(),
        &[],
        "x-amz-acl: public-read\r\n",
    );
    assert_eq!(status, 200);
    let web = format!("{}/{}/public/state-dict.pt", s3.endpoint, s3.bucket);
    let remote = run(s3.socair().arg("scan").arg(&web).arg("--json"));
    let local = run(socair().arg("scan").arg(&f).arg("--json"));
    assert_eq!(remote.code, 0, "{}", remote.stderr);
    assert_eq!(remote.stdout, local.stdout);
    // A missing object is an unreadable input (exit 2) that names it.
    let r = run(s3.socair().arg("scan").arg(s3.url("no/such.pt")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no/such.pt"), "{}", r.stderr);
}

/// A prefix holding a model directory's files scans as that directory does on disk: the same
/// report (its files named by their keys below the prefix, the same digest), with or without
/// the trailing `/`; a malicious file beside a config there is found as it is on disk.
#[test]
fn a_prefix_scans_as_the_model_directory_it_holds() {
    let Some(s3) = s3("remote_dirs") else {
        return;
    };
    let tiny = fixture("safetensors/tiny-bert");
    for f in std::fs::read_dir(&tiny).unwrap() {
        let f = f.unwrap();
        let key = format!("models/tiny-bert/{}", f.file_name().to_string_lossy());
        s3.put(&key, &std::fs::read(f.path()).unwrap());
    }
    let local = run(socair().arg("scan").arg(&tiny).arg("--json"));
    assert_eq!(local.code, 0, "{}", local.stderr);
    for url in [s3.url("models/tiny-bert"), s3.url("models/tiny-bert/")] {
        let remote = run(s3.socair().arg("scan").arg(&url).arg("--json"));
        assert_eq!(remote.code, 0, "{url}: {}", remote.stderr);
        assert_eq!(remote.stdout, local.stdout, "{url}: the report differs");
    }
    s3.put(
        "models/evil/config.json",
        &std::fs::read(tiny.join("config.json")).unwrap(),
    );
    s3.put(
        "models/evil/pytorch_model.bin",
        &std::fs::read(fixture("torch/malicious/pickle-builtins-exec.pt")).unwrap(),
    );
    let remote = run(s3
        .socair()
        .arg("scan")
        .arg(s3.url("models/evil"))
        .arg("--json"));
    assert_eq!(remote.code, 1, "{}", remote.stderr);
    let report = json(&remote.stdout);
    assert_eq!(report["artifact"]["name"], "evil");
    assert!(
        remote.stdout.contains("pytorch_model.bin") && remote.stdout.contains("\"FAIL\""),
        "{}",
        remote.stdout
    );
    // Nothing there at all: unreadable, named.
    let r = run(s3.socair().arg("scan").arg(s3.url("models/none/")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no objects under it"), "{}", r.stderr);
}

#[test]
fn header_only_scans_fetch_a_sliver_and_name_no_subject() {
    let Some(s3) = s3("header_only") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(big) = big_checkpoint(dir.path(), 64) else {
        return;
    };
    let size = std::fs::metadata(&big).unwrap().len();
    s3.put("models/big64.pt", &std::fs::read(&big).unwrap());
    let url = s3.url("models/big64.pt");

    let local = json(&run(socair().args(["scan", "--header-only", "--json"]).arg(&big)).stdout);
    assert_eq!(local["rows"][1]["status"], "PASS", "{local}");

    let r = run(s3
        .socair()
        .args(["scan", "--header-only", "--json"])
        .arg(&url));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = json(&r.stdout);
    assert_eq!(report["artifact"]["name"], "big64.pt");
    assert_eq!(
        report["artifact"]["sha256"], "",
        "no digest without every byte"
    );
    assert!(report["scope"]["digest"]
        .as_str()
        .unwrap()
        .starts_with("not computed"));
    assert_eq!(
        report["rows"], local["rows"],
        "the same verdict as a full local scan but for CRC-32s"
    );
    let header_bytes = fetched(&r.stderr);
    eprintln!("header-only scan of a {size}-byte checkpoint fetched {header_bytes} bytes");
    assert!(header_bytes * 100 < size, "{header_bytes} of {size}");

    // The full scan hashes every byte and names the same subject as a local scan, from one
    // fetch of each byte (the digest from the readers' CRC-32 reads).
    let r = run(s3.socair().args(["scan", "--json"]).arg(&url));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json(&r.stdout)["artifact"]["sha256"], sha256_file(&big));
    let full = fetched(&r.stderr);
    assert!(
        full >= size && full <= size * 102 / 100,
        "{full} bytes fetched for {size}: {}",
        r.stderr
    );

    // tensors streams the object and fingerprints it as a local run does.
    let remote = run(s3.socair().args(["tensors", "--json"]).arg(&url));
    let local = run(socair().args(["tensors", "--json"]).arg(&big));
    assert_eq!(remote.code, 0, "{}", remote.stderr);
    assert_eq!(remote.stdout, local.stdout);

    // attest hashes every byte: its subject is the object's sha256.
    let key = dir.path().join("k");
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&key)).code, 0);
    let out = dir.path().join("big.att.json");
    let r = run(s3
        .socair()
        .arg("attest")
        .arg(&url)
        .arg("--key")
        .arg(&key)
        .arg("--out")
        .arg(&out)
        .arg("--json"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(socair()
        .arg("verify")
        .arg(&out)
        .arg(&big)
        .arg("--pub")
        .arg(format!("{}.pub", key.display())));
    assert_eq!(
        r.code, 0,
        "the attestation of the object verifies against the local file: {}",
        r.stderr
    );
}

/// An HDF5 file's objects are found through B-trees, each only once the one before it is read:
/// walked depth-first over object storage, a round trip each. The reader reads the groups ahead,
/// a level at a time, and hints what it reads next (`ByteSource::prefetch`).
#[test]
fn an_hdf5_file_of_many_groups_costs_a_few_round_trips() {
    let Some(s3) = s3("many_groups") else {
        return;
    };
    let file = fixture("hdf5/valid/many-groups.h5");
    let size = std::fs::metadata(&file).unwrap().len();
    s3.put("models/many-groups.h5", &std::fs::read(&file).unwrap());
    let url = s3.url("models/many-groups.h5");
    for args in [
        &["scan", "--json"][..],
        &["scan", "--header-only", "--json"],
    ] {
        let local = run(socair().args(args).arg(&file));
        let r = run(s3.socair().args(args).arg(&url));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        if args.contains(&"--header-only") {
            // A header-only scan of an object computes no digest; its rows are a local one's.
            assert_eq!(json(&r.stdout)["rows"], json(&local.stdout)["rows"]);
        } else {
            assert_eq!(r.stdout, local.stdout);
        }
        let (requests, trips) = requests(&r.stderr);
        eprintln!("{args:?} of 96 groups: {requests} range requests, {trips} round trips");
        // 96 groups and 96 datasets, read depth-first without hints: 105 round trips
        // header-only, 32 in full (measured); read ahead, a few a level.
        assert!(trips <= 12, "{args:?}: {}", r.stderr);
        // Never a byte twice (in full, without hints: 1.05x): what the cache holds is not
        // fetched again. Headers 16 KiB apart are fetched with the bytes between them.
        assert!(fetched(&r.stderr) <= size + size / 50, "{}", r.stderr);
    }
}

#[test]
fn many_records_cost_a_few_round_trips_and_each_byte_is_fetched_once() {
    let Some(s3) = s3("many_records") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // 64 storage records of 512 KiB: a header-only scan reads 64 local headers, each too
    // far from the next to be fetched with it.
    let Some(many) = checkpoint_of(&dir.path().join("many.pt"), "32", 64) else {
        return;
    };
    let size = std::fs::metadata(&many).unwrap().len();
    s3.put("models/many.pt", &std::fs::read(&many).unwrap());
    let url = s3.url("models/many.pt");

    let local = run(socair()
        .args(["scan", "--header-only", "--json"])
        .arg(&many));
    let r = run(s3
        .socair()
        .args(["scan", "--header-only", "--json"])
        .arg(&url));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json(&r.stdout)["rows"], json(&local.stdout)["rows"]);
    let (requests, trips) = requests(&r.stderr);
    eprintln!("header-only scan of 64 records: {requests} range requests, {trips} round trips");
    // One request per local header still, but fetched together (the plugin announces them
    // once the central directory lists them): a handful of waits, not one per record.
    assert!(requests >= 64, "{}", r.stderr);
    assert!(trips <= 10, "{}", r.stderr);
    assert!(fetched(&r.stderr) * 20 < size, "{}", r.stderr);

    // The full scan: the same report as a local one, each byte fetched once.
    let local = run(socair().args(["scan", "--json"]).arg(&many));
    let r = run(s3.socair().args(["scan", "--json"]).arg(&url));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, local.stdout);
    let full = fetched(&r.stderr);
    eprintln!("full scan of {size} bytes: {full} bytes fetched");
    assert!(
        full >= size && full <= size * 102 / 100,
        "{full} of {size}: {}",
        r.stderr
    );
}

#[test]
fn a_store_on_s3_works_like_a_local_one() {
    let Some(s3) = s3("store_commands") else {
        return;
    };
    let store = Shared::new(&s3);
    // A second init of the same prefix is refused.
    assert_eq!(store.run(&["airlock", "init"]).code, 2);
    let scan = store.key("scan", "scan,accept");
    let files = passing_artifacts(store.dir.path(), 1);
    let r = store.run(&["airlock", "pull", files[0].to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sha = r.stdout.trim().to_owned();
    assert_eq!(sha, sha256_file(&files[0]));
    // Promotion before a scan is refused by the gate; nothing is promoted.
    let r = store.run(&["airlock", "promote", &sha[..8]]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no attestation"), "{}", r.stderr);
    let r = store.run(&["airlock", "scan", &sha[..8], "--key", &scan]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The staged bytes changed by hand after the scan: the gate rehashes and refuses.
    let key = format!("airlock/incoming/{sha}/model-0.safetensors");
    let good = s3.get(&key).unwrap();
    s3.put(&key, b"not the scanned bytes");
    let r = store.run(&["airlock", "promote", &sha]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("changed after the scan"), "{}", r.stderr);
    assert!(s3
        .get(&format!("airlock/promoted/{sha}/.promoted.json"))
        .is_none());
    s3.put(&key, &good);
    let r = store.run(&["airlock", "promote", &sha]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = store.run(&["airlock", "promote", &sha]);
    assert!(r.stderr.contains("already promoted"), "{}", r.stderr);
    let listed = json(&store.run(&["airlock", "ls", "--json"]).stdout);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["state"], "promoted");
    assert!(listed[0]["verdict"].as_str().unwrap().contains("PASS"));
    // Export re-checks the hash on the way out.
    let out = store.dir.path().join("exported.safetensors");
    let r = store.run(&["airlock", "export", &sha, out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(sha256_file(&out), sha);
    // The log: every action, the chain holding, the policy logged.
    let r = store.run(&["airlock", "log", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let actions: Vec<String> = r
        .stdout
        .lines()
        .map(|l| json(l)["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        actions,
        ["init", "trust", "pull", "promote", "scan", "promote", "promote", "promote", "export"]
    );
    let head = store
        .run(&["airlock", "log", "--head"])
        .stdout
        .trim()
        .to_owned();
    assert!(head.starts_with("9:"), "{head}");

    // An entry removed by hand breaks the chain, and nothing is appended after an edit.
    let entry4 = s3.get("airlock/log/000000000004.json").unwrap();
    s3.delete("airlock/log/000000000004.json");
    let r = store.run(&["airlock", "log"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("entry 4 is missing"), "{}", r.stderr);
    s3.put("airlock/log/000000000004.json", &entry4);
    // An edited entry breaks the chain at the next one.
    let edited = String::from_utf8(entry4.clone())
        .unwrap()
        .replace("\"refused\"", "\"ok\"");
    s3.put("airlock/log/000000000004.json", edited.as_bytes());
    let r = store.run(&["airlock", "log"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("breaks at line 5"), "{}", r.stderr);
    s3.put("airlock/log/000000000004.json", &entry4);
    // A policy written by hand (a key added without a trust entry) is not the one in force,
    // and a policy object that no longer hashes to its name is refused.
    let last = r_last_entry(&store);
    let in_force = format!(
        "airlock/policy/{}.json",
        last["policy_sha256"].as_str().unwrap()
    );
    let original = s3.get(&in_force).unwrap();
    s3.put(
        &in_force,
        b"{\"schema\":\"socair.policy/v1\",\"keys\":[]}\n",
    );
    let r = store.run(&["airlock", "ls"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("edited by hand"), "{}", r.stderr);
    s3.put(&in_force, &original);
    let r = store.run(&["airlock", "log", "--since", &head]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The last entry removed leaves no gap, but the head record names it: the log is
    // reported cut, and nothing is appended to it (an append would reuse its number).
    let entry9 = s3.get("airlock/log/000000000009.json").unwrap();
    s3.delete("airlock/log/000000000009.json");
    let r = store.run(&["airlock", "log"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("last entries were removed"),
        "{}",
        r.stderr
    );
    let r = store.run(&["airlock", "pull", files[0].to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("last entries were removed"),
        "{}",
        r.stderr
    );
    assert!(s3.get("airlock/log/000000000009.json").is_none());
    s3.put("airlock/log/000000000009.json", &entry9);
    // An edited head record is reported as an edit.
    let record = s3.get("airlock/log-head.json").unwrap();
    let head_record: serde_json::Value = serde_json::from_slice(&record).unwrap();
    assert_eq!(head_record["lines"], 9, "{head_record}");
    s3.put(
        "airlock/log-head.json",
        format!("{{\"lines\":9,\"sha256\":\"{}\"}}", "0".repeat(64)).as_bytes(),
    );
    let r = store.run(&["airlock", "log"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("does not hash to what the head record"),
        "{}",
        r.stderr
    );
    s3.put("airlock/log-head.json", &record);
    let r = store.run(&["airlock", "log"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn eight_processes_share_one_store_on_s3() {
    let Some(s3) = s3("eight_processes") else {
        return;
    };
    let store = Arc::new(Shared::new(&s3));
    let scan = store.key("scan", "scan");
    let files = passing_artifacts(store.dir.path(), 8);
    // Each worker pulls, scans and promotes its own artifact, and all of them also promote
    // artifact 0 once it is scanned: exactly one may win that race.
    let outcomes: Vec<(String, Vec<Run>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .iter()
            .map(|f| {
                let store = &store;
                let scan = scan.clone();
                scope.spawn(move || {
                    let pulled = store.run(&["airlock", "pull", f.to_str().unwrap()]);
                    assert_eq!(pulled.code, 0, "{}", pulled.stderr);
                    let sha = pulled.stdout.trim().to_owned();
                    let scanned = store.run(&["airlock", "scan", &sha, "--key", &scan]);
                    let promoted = store.run(&["airlock", "promote", &sha]);
                    (sha, vec![pulled, scanned, promoted])
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (sha, runs) in &outcomes {
        for r in runs {
            assert_eq!(r.code, 0, "{sha}: {}", r.stderr);
        }
    }
    let first = outcomes[0].0.clone();
    let racers: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let store = &store;
                let first = first.clone();
                scope.spawn(move || store.run(&["airlock", "promote", &first]))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(racers.iter().all(|r| r.code == 0));
    assert!(racers.iter().all(|r| r.stderr.contains("already promoted")));

    let r = store.run(&["airlock", "log", "--json"]);
    assert_eq!(r.code, 0, "the chain holds: {}", r.stderr);
    let entries: Vec<serde_json::Value> = r.stdout.lines().map(json).collect();
    let count = |action: &str| entries.iter().filter(|e| e["action"] == action).count();
    // init, trust, then 8 × (pull, scan, promote), then 4 "already promoted".
    assert_eq!(entries.len(), 2 + 8 * 3 + 4, "{}", r.stdout);
    assert_eq!((count("pull"), count("scan"), count("promote")), (8, 8, 12));
    let promoted_ok = entries
        .iter()
        .filter(|e| e["action"] == "promote" && e["outcome"] == "ok" && e.get("detail").is_none())
        .count();
    assert_eq!(promoted_ok, 8);
    let listed = json(&store.run(&["airlock", "ls", "--json"]).stdout);
    let promoted: Vec<&serde_json::Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["state"] == "promoted")
        .collect();
    assert_eq!(promoted.len(), 8, "{listed}");
    assert_eq!(
        listed.as_array().unwrap().len(),
        8,
        "nothing is left staged: {listed}"
    );
    // Each log object was claimed once: numbered 1..=N with no gap.
    let log_keys: Vec<String> = s3
        .keys()
        .into_iter()
        .filter(|k| k.starts_with("airlock/log/"))
        .collect();
    assert_eq!(log_keys.len(), entries.len());
    eprintln!(
        "8 processes: {} log entries, {} promoted, chain valid",
        entries.len(),
        promoted.len()
    );
}

/// Two machines promoting one staged model directory at once, held at the worst moment: the
/// second has read the staging marker when the first, promoted, has begun deleting what was
/// staged. The second lists what is left, copies it over the promoted objects and finds too
/// few: it must see the first's promotion marker and leave the promoted objects alone
/// ("already promoted"), not delete them as a failed copy; the export of what was promoted
/// hashes to the artifact.
#[test]
fn promotions_racing_for_one_staged_directory_leave_it_whole() {
    let Some(s3) = s3("racing_promotions") else {
        return;
    };
    let store = Shared::new(&s3);
    let scan = store.key("scan", "scan");
    let dir = store.dir.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    for (i, f) in passing_artifacts(store.dir.path(), 6).iter().enumerate() {
        std::fs::rename(f, dir.join(format!("model-0000{i}-of-00006.safetensors"))).unwrap();
    }
    let pulled = store.run(&["airlock", "pull", dir.to_str().unwrap()]);
    assert_eq!(pulled.code, 0, "{}", pulled.stderr);
    let sha = pulled.stdout.trim().to_owned();
    let scanned = store.run(&["airlock", "scan", &sha, "--key", &scan]);
    assert_eq!(scanned.code, 0, "{}", scanned.stderr);
    let paused = |point: &str| {
        spawn_paused(
            store.cmd(&["airlock", "promote", &sha]),
            point,
            store.dir.path(),
        )
    };
    let (second, second_gate) = paused("promote.staged-read");
    let (first, first_gate) = paused("unstage.first-deleted");
    std::fs::write(&second_gate, b"").unwrap();
    let second = second.wait_with_output().unwrap();
    std::fs::write(&first_gate, b"").unwrap();
    let first = first.wait_with_output().unwrap();
    let said = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(first.status.success(), "{}", said(&first));
    assert!(second.status.success(), "{}", said(&second));
    assert!(
        said(&second).contains("already promoted"),
        "{}",
        said(&second)
    );
    let out = store.dir.path().join("exported");
    let exported = store.run(&["airlock", "export", &sha, out.to_str().unwrap()]);
    assert_eq!(
        exported.code, 0,
        "the promoted copy is whole: {}",
        exported.stderr
    );
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap();
        assert_eq!(
            std::fs::read(out.join(f.file_name())).unwrap(),
            std::fs::read(f.path()).unwrap()
        );
    }
}

#[test]
fn cut_connections_are_retried_and_leave_nothing_half_written() {
    let Some(s3) = s3("cut_connections") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(big) = big_checkpoint(dir.path(), 32) else {
        return;
    };
    let sha = sha256_file(&big);
    s3.put("models/big32.pt", &std::fs::read(&big).unwrap());
    let url = s3.url("models/big32.pt");

    // Reads: the first 6 connections to carry 1 MiB are cut there (the first connections
    // opened carry the readers' headers, fetched together); the scan still hashes every byte.
    let (proxy, cut) = cutting_transfers(
        s3.endpoint.trim_start_matches("http://").to_owned(),
        1 << 20,
        6,
    );
    let r = run(s3.socair_via(&proxy).args(["scan", "--json"]).arg(&url));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json(&r.stdout)["artifact"]["sha256"], sha);
    assert!(
        cut.load(Ordering::SeqCst) >= 1,
        "the proxy cut no connection"
    );

    // A pull into a local store through cut connections stages the right bytes.
    let local = dir.path().join("store");
    assert_eq!(
        run(socair().args(["airlock", "init", "--store"]).arg(&local)).code,
        0
    );
    let (proxy, _) = cutting_proxy(
        s3.endpoint.trim_start_matches("http://").to_owned(),
        1 << 20,
        6,
    );
    let r = run(s3
        .socair_via(&proxy)
        .args(["airlock", "pull"])
        .arg(&url)
        .arg("--store")
        .arg(&local));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), sha);
    assert_eq!(
        sha256_file(&local.join("incoming").join(&sha).join("big32.pt")),
        sha
    );

    // Writes: a pull into a store on S3 through a proxy that cuts uploads too.
    let store = Shared::new(&s3);
    let (proxy, cut) = cutting_proxy(
        s3.endpoint.trim_start_matches("http://").to_owned(),
        3 << 20,
        8,
    );
    let r = run(s3
        .socair_via(&proxy)
        .args(["airlock", "pull"])
        .arg(&big)
        .arg("--store")
        .arg(&store.url));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), sha);
    assert!(cut.load(Ordering::SeqCst) >= 1);
    let staged = s3.get(&format!("airlock/incoming/{sha}/big32.pt")).unwrap();
    assert_eq!(
        hex(&Sha256::digest(&staged)),
        sha,
        "the staged object is whole"
    );

    // A server that cuts every connection: the command fails, and nothing is staged.
    let (proxy, _) = cutting_proxy(
        s3.endpoint.trim_start_matches("http://").to_owned(),
        64 << 10,
        usize::MAX,
    );
    let other = dir.path().join("other.pt");
    std::fs::write(&other, &staged[..4 << 20]).unwrap();
    let r = run(s3
        .socair_via(&proxy)
        .args(["airlock", "pull"])
        .arg(&other)
        .arg("--store")
        .arg(&store.url));
    assert_ne!(r.code, 0, "{}", r.stderr);
    let other_sha = sha256_file(&other);
    assert!(
        s3.keys().iter().all(|k| !k.contains(&other_sha)),
        "nothing of a failed pull is left"
    );
    let r = store.run(&["airlock", "log"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn no_credential_appears_in_any_output_or_stored_object() {
    let Some(s3) = s3("no_leaks") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixture_pt = fixture("torch/legit/state-dict.pt");
    s3.put("m/state-dict.pt", &std::fs::read(&fixture_pt).unwrap());
    let url = s3.url("m/state-dict.pt");
    let store = Shared::new(&s3);
    let key = store.key("k", "scan,accept,derive");
    let att = dir.path().join("att.json");
    let mut outputs: Vec<Run> = vec![
        run(s3.socair().args(["scan", "--json"]).arg(&url)),
        run(s3.socair().args(["scan", "--header-only"]).arg(&url)),
        run(s3.socair().args(["tensors", "--json"]).arg(&url)),
        run(s3.socair().arg("attest").arg(&url).arg("--key").arg(&key).arg("--out").arg(&att)),
        run(s3.socair().arg("scan").arg(s3.url("m/missing.pt"))),
        run(s3.socair().arg("scan").arg("s3://no-such-bucket-socair/x.pt")),
        run(s3.socair_via("http://127.0.0.1:9").arg("scan").arg(&url)),
        run(s3
            .socair()
            .arg("scan")
            .arg(format!("https://{ACCESS_KEY}:{SECRET_KEY}@example.invalid/m.pt"))),
        run(s3
            .socair()
            .arg("scan")
            .arg(format!("https://example.invalid/m.pt?X-Amz-Credential={ACCESS_KEY}&X-Amz-Signature={SECRET_KEY}"))),
    ];
    let pulled = store.run(&["airlock", "pull", &url]);
    let sha = pulled.stdout.trim().to_owned();
    outputs.push(pulled);
    for args in [
        vec!["airlock", "scan", &sha, "--key", &key],
        vec!["airlock", "promote", &sha],
        vec!["airlock", "ls", "--json"],
        vec!["airlock", "log", "--json"],
        vec!["airlock", "log"],
    ] {
        outputs.push(store.run(&args));
    }
    outputs.push(run(s3
        .socair()
        .args(["airlock", "convert"])
        .arg(&url)
        .arg("--attestation")
        .arg(&att)
        .arg("--key")
        .arg(&key)
        .arg("--store")
        .arg(&store.url)));
    let secrets = [ACCESS_KEY, SECRET_KEY, SESSION_TOKEN];
    let mut searched = 0;
    for r in &outputs {
        for text in [&r.stdout, &r.stderr] {
            searched += 1;
            for s in secrets {
                assert!(!text.contains(s), "a credential in an output:\n{text}");
            }
        }
    }
    let mut files = vec![std::fs::read(&att).unwrap()];
    let keys = s3.keys();
    for k in &keys {
        files.push(s3.get(k).unwrap());
    }
    for bytes in &files {
        let text = String::from_utf8_lossy(bytes);
        for s in secrets {
            assert!(!text.contains(s), "a credential in a stored document");
        }
    }
    eprintln!(
        "no credential in {searched} outputs of {} commands, {} stored objects and the attestation",
        outputs.len(),
        keys.len()
    );
}

#[test]
fn reviews_and_conversions_work_on_a_store_on_s3() {
    let Some(s3) = s3("reviews_convert") else {
        return;
    };
    let store = Shared::new(&s3);
    let scanner = store.key("scanner", "scan");
    let reviewer = store.key("reviewer", "accept");
    let deriver = store.key("deriver", "derive");
    // A pickle global a person reviews: a LEAD until the review is in the store.
    let src = fixture("torch/malicious/argparse-namespace.pt");
    let r = store.run(&["airlock", "pull", src.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sha = r.stdout.trim().to_owned();
    assert_eq!(
        store
            .run(&["airlock", "scan", &sha, "--key", &scanner])
            .code,
        1
    );
    let r = store.run(&[
        "airlock",
        "review",
        "add",
        "os.system",
        "--reason",
        "x",
        "--key",
        &reviewer,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let r = store.run(&[
        "airlock",
        "review",
        "add",
        "argparse.Namespace",
        "--reason",
        "a plain namespace",
        "--key",
        &reviewer,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let review_id = r.stdout.trim().to_owned();
    assert!(
        s3.keys()
            .iter()
            .any(|k| k.starts_with("airlock/reviews/") && k.contains(&review_id[..16])),
        "the review is an object under reviews/"
    );
    let ls = store.run(&["airlock", "review", "ls"]);
    assert!(ls.stdout.contains("argparse.Namespace"), "{}", ls.stdout);
    let r = store.run(&["airlock", "scan", &sha, "--key", &scanner]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = store.run(&[
        "airlock",
        "review",
        "remove",
        &review_id[..12],
        "--key",
        &reviewer,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!store
        .run(&["airlock", "review", "ls"])
        .stdout
        .contains("argparse"));
    let r = store.run(&["airlock", "scan", &sha, "--key", &scanner]);
    assert_eq!(r.code, 1, "withdrawn: {}", r.stderr);

    // A conversion stages its output with its derivation records beside it, one per input.
    let input = store.dir.path().join("pytorch_model.bin");
    std::fs::copy(
        fixture("torch/baseline/hf-gpt2-tied-pytorch_model.bin"),
        &input,
    )
    .unwrap();
    let in_sha = sha256_file(&input);
    let att = store.dir.path().join("att.json");
    let r = run(socair()
        .arg("attest")
        .arg(&input)
        .arg("--key")
        .arg(&scanner)
        .arg("--out")
        .arg(&att));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = store.run(&[
        "airlock",
        "convert",
        input.to_str().unwrap(),
        "--attestation",
        att.to_str().unwrap(),
        "--key",
        &deriver,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out_sha = r.stdout.trim().to_owned();
    let base = format!("airlock/incoming/{out_sha}");
    for key in [
        format!("{base}/pytorch_model.safetensors"),
        format!("{base}/derivation.dsse.json"),
        format!("{base}/derivations/{in_sha}.dsse.json"),
        format!("{base}/.staged.json"),
    ] {
        assert!(s3.get(&key).is_some(), "{key} is missing: {:?}", s3.keys());
    }
    let out = s3
        .get(&format!("{base}/pytorch_model.safetensors"))
        .unwrap();
    assert_eq!(hex(&Sha256::digest(&out)), out_sha);
    // The output is a new artifact: scanned and gated like any other.
    let r = store.run(&["airlock", "promote", &out_sha]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no attestation"), "{}", r.stderr);
    let log = store.run(&["airlock", "log", "--json"]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    let actions: Vec<String> = log
        .stdout
        .lines()
        .map(|l| json(l)["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(actions.iter().filter(|a| *a == "review").count(), 3);
    assert_eq!(actions.iter().filter(|a| *a == "convert").count(), 1);
}
