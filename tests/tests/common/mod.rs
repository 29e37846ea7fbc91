//! Helpers shared by the end-to-end tests: where the repository, the built binary and the
//! fixtures are.

#![allow(dead_code)]

pub mod png;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the repository")
        .to_owned()
}

/// A fixture path.
pub fn fixture(rel: &str) -> PathBuf {
    repo().join("fixtures").join(rel)
}

/// The directory cargo put the built binaries in (the one holding this test executable's
/// `deps/` directory).
pub fn target_profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("test executable is in target/<profile>/deps")
        .to_owned()
}

/// The one target directory shared by every plugin project the tests build with cargo (the
/// out-of-tree template, the lenient copy of it, the refused libraries of plugins.rs). They lock
/// the same versions of abi_stable and its macros, so a cold run compiles those once, not once
/// per test file. Apart from the workspace's own target directory: the libraries built here must
/// not sit beside `socair`, where it would load them.
pub fn fixture_target_dir() -> PathBuf {
    target_profile_dir().join("plugin-fixtures").join("target")
}

/// `cargo <subcommand>` on the plugin project at `manifest`, offline, into
/// [`fixture_target_dir`], with no debug information (nothing reads it, and the same profile for
/// every project is what lets them share their dependencies).
pub fn fixture_cargo(subcommand: &str, manifest: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["--config", "profile.dev.debug=false", subcommand])
        .args(["--offline", "--quiet", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(fixture_target_dir())
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS");
    cmd
}

/// Writes `bytes` to `path` (making its directory) unless it already holds them: an unchanged
/// source keeps its modification time, so cargo does not rebuild it on the next run.
pub fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return;
    }
    std::fs::create_dir_all(path.parent().expect("a file path")).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The environment variable naming an installed `socair` to test instead of the built one (the
/// command a wheel or the tarball installed: `.ci/run` runs part of this suite against it).
pub const INSTALLED_BIN_ENV: &str = "SOCAIR_TEST_BIN";

/// The `socair` under test: the installed one `SOCAIR_TEST_BIN` names, or the built one.
pub fn socair_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os(INSTALLED_BIN_ENV).filter(|b| !b.is_empty()) {
        return PathBuf::from(bin);
    }
    target_profile_dir().join(format!("socair{}", std::env::consts::EXE_SUFFIX))
}

/// A command running the `socair` under test ([`socair_bin`]), with the plugin path cleared so
/// that only the plugins installed with it (and any --plugin-dir the test adds) are found.
pub fn socair() -> Command {
    let bin = socair_bin();
    assert!(
        bin.exists(),
        "{} does not exist: run `cargo build --workspace` before the tests",
        bin.display()
    );
    if std::env::var_os(INSTALLED_BIN_ENV).is_none() {
        let plugin = target_profile_dir().join(format!(
            "{}socair_plugin_safetensors{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ));
        assert!(
            plugin.exists(),
            "{} does not exist: run `cargo build --workspace` before the tests",
            plugin.display()
        );
    }
    let mut cmd = Command::new(bin);
    cmd.env_remove("SOCAIR_PLUGIN_PATH");
    cmd.env_remove("SOCAIR_NO_MMAP");
    cmd
}

/// The result of a run: exit code, stdout, stderr.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the command and captures everything.
pub fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("socair runs");
    Run {
        code: out.status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// Paths scanned by one `socair scan` of many (the command reads them over the cores).
const SCAN_BATCH: usize = 256;

/// `socair scan --json` of many files, a batch of them per process (`socair` gives a fresh
/// command, with whatever flags the test needs): each path's entry of the socair.reports/v1
/// document (`path`, `verdict`, and `report` or why none), in the order given, and every
/// batch's standard error. One process per batch, not per file: the plugins load once and the
/// files are read over the cores, as `socair scan a b c` reads them for a user.
pub fn scan_many(
    mut socair: impl FnMut() -> Command,
    paths: &[PathBuf],
) -> (Vec<(PathBuf, serde_json::Value)>, String) {
    let mut entries = Vec::with_capacity(paths.len());
    let mut stderr = String::new();
    for batch in paths.chunks(SCAN_BATCH) {
        let r = run(socair().args(["scan", "--json"]).args(batch));
        assert!(
            r.code <= 1,
            "socair scan of {} paths: {}",
            batch.len(),
            r.stderr
        );
        stderr.push_str(&r.stderr);
        let mut doc = json(&r.stdout);
        if batch.len() == 1 {
            // One path is one report (socair.report/v1), not a list of them.
            doc = serde_json::json!({"artifacts": [{
                "path": batch[0].display().to_string(),
                "report": doc,
            }]});
        }
        let mut by_path: std::collections::HashMap<String, serde_json::Value> = doc["artifacts"]
            .as_array()
            .unwrap_or_else(|| panic!("no artifacts: {doc:#}"))
            .iter()
            .map(|e| (e["path"].as_str().unwrap_or_default().to_owned(), e.clone()))
            .collect();
        for p in batch {
            let entry = by_path
                .remove(&p.display().to_string())
                .unwrap_or_else(|| panic!("{}: not in the scan's document", p.display()));
            entries.push((p.clone(), entry));
        }
    }
    (entries, stderr)
}

/// Asserts that no file [`scan_many`] read was refused because several plugins claim it.
pub fn assert_claimed_once(scanned: &[(PathBuf, serde_json::Value)], stderr: &str) {
    assert!(!stderr.contains("plugins claim it"), "{stderr}");
    for (path, entry) in scanned {
        assert!(
            !entry.to_string().contains("plugins claim it"),
            "{}: {entry}",
            path.display()
        );
    }
}

/// Starts `cmd` with `SOCAIR_FAULT=pause:<point>:<dir>/<point>.go` and waits until it stands at
/// `point` (it writes `<point>.go.reached`); the process goes on once the returned gate file
/// is written. Panics, with its standard error, if it ends first or never gets there (60 s).
pub fn spawn_paused(mut cmd: Command, point: &str, dir: &Path) -> (std::process::Child, PathBuf) {
    let gate = dir.join(format!("{point}.go"));
    cmd.env("SOCAIR_FAULT", format!("pause:{point}:{}", gate.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let reached = dir.join(format!("{point}.go.reached"));
    let start = std::time::Instant::now();
    while !reached.exists() {
        assert!(start.elapsed().as_secs() < 60, "{point} never reached");
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "the process ended before {point}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    (child, gate)
}

/// Parses JSON output.
pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}):\n{s}"))
}

/// A report's row for `check`.
pub fn report_row<'a>(report: &'a serde_json::Value, check: &str) -> &'a serde_json::Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} row in {report:#}"))
}

/// The names of the plugins a report says read the artifact, in its order.
pub fn report_plugins(report: &serde_json::Value) -> Vec<&str> {
    report["tool"]["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect()
}

/// Whether some finding of `row` is placed at `place` (a prefix) and names `reason`.
pub fn has_finding(row: &serde_json::Value, place: &str, reason: &str) -> bool {
    row["findings"].as_array().is_some_and(|f| {
        f.iter().any(|f| {
            f["place"].as_str().is_some_and(|p| p.starts_with(place))
                && f["reason"].as_str().is_some_and(|r| r.contains(reason))
        })
    })
}

/// A `socair tensors` manifest's tensors: name to sha256.
pub fn tensor_hashes(manifest: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    manifest["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["sha256"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A store in a temporary directory, with helpers to make keys and attestations.
pub struct Store {
    pub dir: tempfile::TempDir,
}

impl Store {
    pub fn new() -> Store {
        let s = Store {
            dir: tempfile::tempdir().unwrap(),
        };
        assert_eq!(s.run(&["airlock", "init"]).code, 0);
        s
    }
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("store")
    }
    pub fn run(&self, args: &[&str]) -> Run {
        run(socair().args(args).arg("--store").arg(self.path()))
    }
    pub fn key(&self, name: &str, roles: &str) -> String {
        let k = self.dir.path().join(name);
        assert_eq!(run(socair().arg("keygen").arg("--out").arg(&k)).code, 0);
        if !roles.is_empty() {
            let r = self.run(&[
                "airlock",
                "trust",
                &format!("{}.pub", k.display()),
                "--role",
                roles,
            ]);
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
        k.display().to_string()
    }
    /// `socair verify` of the derivation record staged in `incoming/<sha>/` against the store's
    /// keys, re-reading `input` and that directory's `output` file.
    pub fn verify_derivation(&self, sha: &str, input: &Path, output: &str) -> Run {
        let staged = self.path().join("incoming").join(sha);
        run(socair()
            .arg("verify")
            .arg(staged.join("derivation.dsse.json"))
            .arg("--store")
            .arg(self.path())
            .arg("--input")
            .arg(input)
            .arg("--output")
            .arg(staged.join(output)))
    }

    /// Pulls `src`, scans it with `key`, and returns the report of the scan attestation
    /// (checked for its signature only).
    pub fn pull_and_scan(&self, src: &Path, key: &str) -> serde_json::Value {
        let sha = self.run(&["airlock", "pull", src.to_str().unwrap()]);
        assert_eq!(sha.code, 0, "{}", sha.stderr);
        let sha = sha.stdout.trim().to_owned();
        let _ = self.run(&["airlock", "scan", &sha, "--key", key]);
        let attestation = self
            .path()
            .join("incoming")
            .join(&sha)
            .join("attestation.dsse.json");
        let verified = self.run(&["verify", "--signature-only", attestation.to_str().unwrap()]);
        assert_eq!(verified.code, 0, "{}", verified.stderr);
        json(&verified.stdout)["predicate"].clone()
    }

    pub fn attest(&self, src: &Path, key: &str) -> String {
        let out = self.dir.path().join(format!(
            "{}.{}.att.json",
            src.file_name().unwrap().to_string_lossy(),
            Path::new(key).file_name().unwrap().to_string_lossy()
        ));
        run(socair()
            .arg("attest")
            .arg(src)
            .arg("--key")
            .arg(key)
            .arg("--out")
            .arg(&out));
        out.display().to_string()
    }
}

/// A report's verdict from its rows: `FAIL` when any row fails, else `LEAD` when any row is
/// a lead, else `PASS`.
pub fn verdict(report: &serde_json::Value) -> &'static str {
    let statuses: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    if statuses.contains(&"FAIL") {
        "FAIL"
    } else if statuses.contains(&"LEAD") {
        "LEAD"
    } else {
        "PASS"
    }
}

/// The Python the tests run helpers and clients with: SOCAIR_TEST_PYTHON, else `python3`.
pub fn python() -> String {
    std::env::var("SOCAIR_TEST_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}
