//! socair's model of CPython's `tarfile.open(..., mode="r:", format=PAX_FORMAT)`
//! (`src/lib.rs`) against CPython itself, on the same bytes.
//!
//! `tests/differential.py` generates seeded tar headers and mutations, runs CPython's
//! tarfile on each through `io.BytesIO` and writes what happened; this test runs the model under
//! the profile of that CPython release and requires the same answer for every case. It uses
//! `python3` and, when present, every CPython 3.8+ under `~/.pyenv/versions` and in
//! `SOCAIR_TEST_PYTHONS` (`:`-separated paths); it skips cleanly when there is none. The first
//! interpreter also runs with `sys.set_int_max_str_digits(0)` (CPython before the digit limit)
//! and with the upstream negative-offset check of gh-130577 applied to `TarInfo._block` (the
//! releases that carry it), so every profile but the newest is compared with CPython's own code.
//! `SOCAIR_TARFILE_CASES` sets the number of cases per run (default 4000), `SOCAIR_TARFILE_SEED`
//! the seed (default 16).

use socair_tar::{open_outcome, profile_for, Profile};
use std::path::{Path, PathBuf};
use std::process::Command;

fn seed() -> u32 {
    std::env::var("SOCAIR_TARFILE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16)
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/differential.py")
}

/// `(minor, micro)` of a CPython 3 interpreter, if it runs.
fn version(python: &Path) -> Option<(u32, u32)> {
    let out = Command::new(python)
        .args(["-c", "import sys; print(*sys.version_info[:3])"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let v: Vec<u32> = text
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    (v.len() == 3 && v[0] == 3 && v[1] >= 8).then(|| (v[1], v[2]))
}

fn interpreters() -> Vec<(PathBuf, (u32, u32))> {
    let mut candidates = vec![PathBuf::from("python3")];
    if let Ok(list) = std::env::var("SOCAIR_TEST_PYTHONS") {
        candidates.extend(list.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    if let Some(home) = std::env::var_os("HOME") {
        if let Ok(entries) = std::fs::read_dir(Path::new(&home).join(".pyenv/versions")) {
            let mut found: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path().join("bin/python3"))
                .filter(|p| p.exists())
                .collect();
            found.sort();
            candidates.extend(found);
        }
    }
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for c in candidates {
        if let Some(v) = version(&c) {
            if !seen.contains(&v) {
                seen.push(v);
                out.push((c, v));
            }
        }
    }
    out
}

/// The cases CPython wrote: bytes and outcome.
fn cases(
    python: &Path,
    flags: &[&str],
    count: usize,
    tag: &str,
) -> (String, Vec<(Vec<u8>, String)>) {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tarfile-cases-{}-{tag}.bin", std::process::id()));
    let out = Command::new(python)
        .arg(script())
        .args(["--seed", &seed().to_string(), "--count", &count.to_string()])
        .arg("--out")
        .arg(&path)
        .args(flags)
        .output()
        .expect("run the case generator");
    assert!(
        out.status.success(),
        "{}: {}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let mut list = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let len = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        at += 4;
        let bytes = data[at..at + len].to_vec();
        at += len;
        let label_len = data[at] as usize;
        at += 1;
        let label = String::from_utf8(data[at..at + label_len].to_vec()).unwrap();
        at += label_len;
        list.push((bytes, label));
    }
    (String::from_utf8_lossy(&out.stdout).trim().to_owned(), list)
}

/// Compares every case; returns the number of disagreements after printing the counts.
fn compare(label: &str, profile: Profile, summary: &str, list: &[(Vec<u8>, String)]) -> usize {
    let mut disagree = Vec::new();
    let mut by_outcome = std::collections::BTreeMap::<&str, usize>::new();
    for (i, (bytes, python)) in list.iter().enumerate() {
        *by_outcome.entry(python.as_str()).or_default() += 1;
        let model = open_outcome(&bytes[..], profile);
        if model.kind() != python {
            disagree.push((i, python.clone(), model));
        }
    }
    println!(
        "{label} [profile {}]: {} cases, CPython outcomes {by_outcome:?}; agree {}, disagree {}; generator: {summary}",
        profile.name,
        list.len(),
        list.len() - disagree.len(),
        disagree.len()
    );
    for (i, python, model) in disagree.iter().take(10) {
        let bytes = &list[*i].0;
        let hex: String = bytes.iter().take(64).map(|b| format!("{b:02x}")).collect();
        println!(
            "  case {i} ({} bytes, {hex}…): CPython {python}, model {model:?}",
            bytes.len()
        );
    }
    disagree.len()
}

#[test]
fn the_model_agrees_with_every_cpython_on_this_machine() {
    let found = interpreters();
    if found.is_empty() {
        eprintln!("skipped: no python3 (3.8+) on this machine");
        return;
    }
    let count: usize = std::env::var("SOCAIR_TARFILE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    // Every run of the generator, decided first and then run at once (each is a CPython process
    // writing `count` cases); compared in this order afterwards.
    let mut runs: Vec<(String, Profile, &Path, &[&str], String)> = Vec::new();
    for (n, (python, (minor, micro))) in found.iter().enumerate() {
        let profile = profile_for(*minor, *micro);
        let label = format!("CPython 3.{minor}.{micro} ({})", python.display());
        runs.push((label.clone(), profile, python, &[], format!("{n}")));
        if n == 0 {
            if profile.int_max_str_digits.is_some() {
                let unlimited = Profile {
                    int_max_str_digits: None,
                    ..profile
                };
                runs.push((
                    format!("{label} with sys.set_int_max_str_digits(0)"),
                    unlimited,
                    python,
                    &["--no-int-limit"],
                    "nolimit".into(),
                ));
            }
            if !profile.negative_block_raises {
                let checked = Profile {
                    negative_block_raises: true,
                    ..profile
                };
                runs.push((
                    format!("{label} with gh-130577's TarInfo._block check"),
                    checked,
                    python,
                    &["--negative-block-check"],
                    "block".into(),
                ));
            }
        }
    }
    let generated: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .iter()
            .map(|(_, _, python, flags, tag)| s.spawn(move || cases(python, flags, count, tag)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total_disagree = 0;
    let mut total_cases = 0;
    for ((label, profile, ..), (summary, list)) in runs.iter().zip(&generated) {
        total_cases += list.len();
        total_disagree += compare(label, *profile, summary, list);
    }
    println!("total: {total_cases} cases, {total_disagree} disagreements");
    assert_eq!(
        total_disagree, 0,
        "the model disagrees with CPython (see above)"
    );
}
