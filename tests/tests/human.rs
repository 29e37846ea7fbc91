//! What a person reads: on a terminal (a pseudo-terminal here, through `script`),
//! `scan`, `tensors`, `verify`, `attest` and `airlock log` print the verdict first in plain
//! words, each row with what it means, and the next step; to a pipe, or with `--json`, the
//! JSON documents exactly as before. Both forms are snapshot-tested (`insta`; the snapshots
//! are in `tests/tests/snapshots/`). The same unreadable input gets the same exit code from
//! every command, and a reader that closes the pipe early ends the output quietly.

use crate::common::{fixture, json, run, socair, socair_bin, Store};
use std::path::Path;
use std::process::Command;

/// Runs socair with `args` under a pseudo-terminal; returns its exit code and what its
/// standard output showed there (with `\r\n` as `\n`), or `None` where `script` is missing.
pub fn on_a_terminal(args: &[&str], envs: &[(&str, &str)]) -> Option<(i32, String)> {
    let bin = socair_bin();
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let line = std::iter::once(bin.display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| quote(&a))
        .collect::<Vec<_>>()
        .join(" ")
        + " 2>/dev/null";
    let mut cmd = Command::new("script");
    cmd.args(["-q", "-e", "-c", &line, "/dev/null"])
        .env_remove("SOCAIR_PLUGIN_PATH")
        .env("COLUMNS", "100");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: no `script` to make a pseudo-terminal ({e})");
            return None;
        }
    };
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n"),
    ))
}

/// Replaces what changes from run to run (key ids, times, temporary paths) with names.
fn steady(text: &str, temp: Option<&Path>) -> String {
    let mut out = text.replace(&crate::common::repo().display().to_string(), "[repo]");
    if let Some(t) = temp {
        out = out.replace(&t.display().to_string(), "[tmp]");
    }
    let words: Vec<String> = out
        .split_inclusive(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .map(|w| {
            let core = w.trim_end_matches(|c: char| c.is_whitespace() || c == '(' || c == ')');
            let tail = &w[core.len()..];
            let is_time = core.len() == 20 && core.ends_with('Z') && core.as_bytes()[10] == b'T';
            if is_time {
                format!("[time]{tail}")
            } else {
                w.to_owned()
            }
        })
        .collect();
    words.concat()
}

#[test]
fn scan_speaks_plainly_on_a_terminal_and_json_to_a_pipe() {
    for (name, file) in [
        ("scan-fail", fixture("torch/malicious/pickle-os-system.pt")),
        ("scan-gap", fixture("torch/legit/state-dict.pt")),
        (
            "scan-lead",
            fixture("torch/malicious/argparse-namespace.pt"),
        ),
        ("scan-clean", fixture("safetensors/all-dtypes.safetensors")),
        ("scan-directory", fixture("safetensors/tiny-bert")),
        ("scan-unknown", fixture("dsse/README.md")),
    ] {
        let path = file.to_str().unwrap();
        let Some((code, shown)) = on_a_terminal(&["scan", path], &[]) else {
            return;
        };
        let piped = run(socair().arg("scan").arg(&file));
        assert_eq!(code, piped.code, "{name}: the same verdict either way");
        insta::assert_snapshot!(name, shown);
        // To a pipe: the report, exactly; with --json on a terminal, the same report.
        let report = json(&piped.stdout);
        // Each plugin's sha256 and version change with every build: not part of the snapshot.
        let mut shown_report = report.clone();
        for plugin in shown_report["tool"]["plugins"].as_array_mut().unwrap() {
            plugin["sha256"] = "[plugin sha256]".into();
            plugin["version"] = "[plugin version]".into();
        }
        insta::assert_json_snapshot!(format!("{name}.json"), shown_report);
        let (_, as_json) = on_a_terminal(&["scan", path, "--json"], &[]).unwrap();
        assert_eq!(json(&as_json), report, "{name}: --json on a terminal");
    }
}

#[test]
fn tensors_verify_attest_and_log_speak_plainly_on_a_terminal() {
    let tiny = fixture("safetensors/tiny-bert");
    let Some((code, shown)) = on_a_terminal(&["tensors", tiny.to_str().unwrap()], &[]) else {
        return;
    };
    assert_eq!(code, 0);
    insta::assert_snapshot!("tensors", shown);

    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let store = s.path();
    let store = store.to_str().unwrap();
    let clean = fixture("safetensors/all-dtypes.safetensors");
    let envelope = s.dir.path().join("clean.att.json");
    let (code, shown) = on_a_terminal(
        &[
            "attest",
            clean.to_str().unwrap(),
            "--key",
            &scanner,
            "--out",
            envelope.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(shown.starts_with("Signed with key "), "{shown}");
    assert!(shown.contains("CLEAN — no code found"), "{shown}");

    let (code, shown) = on_a_terminal(
        &[
            "verify",
            envelope.to_str().unwrap(),
            clean.to_str().unwrap(),
            "--store",
            store,
        ],
        &[],
    )
    .unwrap();
    assert_eq!(code, 0, "{shown}");
    let keyid = shown
        .split("signed by key ")
        .nth(1)
        .map(|k| k[..16].to_owned())
        .unwrap();
    insta::assert_snapshot!(
        "verify-trusted",
        steady(&shown.replace(&keyid, "[keyid]"), Some(s.dir.path()))
    );
    let other = fixture("safetensors/tiny-bert/model-00001-of-00004.safetensors");
    let (code, shown) = on_a_terminal(
        &[
            "verify",
            envelope.to_str().unwrap(),
            other.to_str().unwrap(),
            "--store",
            store,
        ],
        &[],
    )
    .unwrap();
    assert_eq!(code, 1, "{shown}");
    assert!(shown.starts_with("NOT TRUSTED — "), "{shown}");

    let (code, shown) = on_a_terminal(&["airlock", "log", "--store", store], &[]).unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(shown.starts_with("THE LOG HOLDS — 2 entries"), "{shown}");
    assert!(shown.contains("trust    ok"), "{shown}");
    // To a pipe, the log's lines exactly.
    let piped = s.run(&["airlock", "log"]);
    assert_eq!(
        piped.stdout,
        std::fs::read_to_string(s.path().join("activity.log")).unwrap()
    );
}

#[test]
fn the_same_unreadable_input_gets_the_same_exit_code_from_every_command() {
    let s = Store::new();
    let key = s.key("k.key", "scan,accept,derive");
    let missing = s.dir.path().join("no-such-file.safetensors");
    let m = missing.to_str().unwrap();
    let out = s.dir.path().join("out.safetensors");
    let o = out.to_str().unwrap();
    let store = s.path();
    let store = store.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["scan", m],
        vec!["tensors", m],
        vec!["tensors", "diff", m, m],
        vec!["attest", m, "--key", &key],
        vec!["convert", m, o, "--from", "safetensors", "--to", "gguf"],
        vec!["verify", m, "--store", store],
        vec!["airlock", "pull", m, "--store", store],
    ];
    for args in &commands {
        let r = run(socair().args(args));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("no-such-file.safetensors"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // A manifest far larger than a pipe's buffer, read by a reader that stops at once.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.safetensors");
    let n = 20_000;
    let mut header = String::from("{");
    for i in 0..n {
        if i > 0 {
            header.push(',');
        }
        header.push_str(&format!(
            "\"t{i:05}\":{{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[{},{}]}}",
            i * 4,
            i * 4 + 4
        ));
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(0u8, n * 4));
    std::fs::write(&file, bytes).unwrap();
    let bin = socair_bin();
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#""$0" tensors "$1" 2>"$2" | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}""#)
        .arg(&bin)
        .arg(&file)
        .arg(dir.path().join("err"))
        .env_remove("SOCAIR_PLUGIN_PATH")
        .output()
        .unwrap();
    let code = String::from_utf8(out.stdout).unwrap();
    let err = std::fs::read_to_string(dir.path().join("err")).unwrap();
    assert_eq!(code.trim(), "0", "the verdict, not an error: {err}");
    assert!(!err.contains("error"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
