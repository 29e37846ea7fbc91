//! CI conventions: the GitHub Action (`action.yml`) and the pre-commit
//! hooks (`.pre-commit-hooks.yaml`) are valid against SchemaStore's schemas of each, and run
//! here as far as this machine allows: the action's steps through
//! `scripts/run-action-locally.py` (every `run:` step in bash as a runner runs it, the upload
//! step shown the SARIF log it would receive), the hooks through pre-commit itself
//! (`pre-commit try-repo`, where SOCAIR_TEST_PRE_COMMIT names it or `pre-commit` is on PATH).

use crate::common::{fixture, json, repo, target_profile_dir};
use crate::formats::{checking_python, validate};
use std::path::Path;
use std::process::Command;

#[test]
fn the_action_and_the_hooks_are_valid_metadata() {
    validate("github-action", &repo().join("action.yml"));
    validate("pre-commit-hooks", &repo().join(".pre-commit-hooks.yaml"));
}

/// A repository to scan: a malicious checkpoint, a clean model directory, a README.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let models = ws.path().join("models");
    std::fs::create_dir_all(models.join("tiny-bert")).unwrap();
    std::fs::copy(
        fixture("torch/malicious/pickle-os-system.pt"),
        models.join("evil.pt"),
    )
    .unwrap();
    for e in std::fs::read_dir(fixture("safetensors/tiny-bert")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), models.join("tiny-bert").join(e.file_name())).unwrap();
    }
    std::fs::write(ws.path().join("README.md"), "# a repository with models\n").unwrap();
    ws
}

/// Runs action.yml's steps in `ws` with these inputs (and socair = the built binary);
/// returns the exit code and what run-action-locally.py printed, or None without PyYAML.
fn run_action(ws: &Path, inputs: &[&str]) -> Option<(i32, serde_json::Value)> {
    let socair = format!("socair={}", target_profile_dir().join("socair").display());
    run_action_with(ws, &[&[socair.as_str()], inputs].concat())
}

/// The wheel `.ci/run` built with scripts/dist.sh, when it names one.
fn built_wheel() -> Option<std::path::PathBuf> {
    std::env::var_os("SOCAIR_TEST_WHEEL")
        .filter(|w| !w.is_empty())
        .map(Into::into)
}

/// Runs action.yml's steps in `ws` with exactly these inputs.
fn run_action_with(ws: &Path, inputs: &[&str]) -> Option<(i32, serde_json::Value)> {
    let Some((python, _)) = checking_python(&["yaml"]) else {
        eprintln!("skipped: no Python with PyYAML to run action.yml's steps");
        return None;
    };
    let out = Command::new(python)
        .arg(repo().join("scripts/run-action-locally.py"))
        .arg(ws)
        .args(inputs)
        .env_remove("SOCAIR_PLUGIN_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        !stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.code().unwrap(), json(&stdout)))
}

fn step<'a>(result: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}: {result:#}"))
}

/// Searching the whole repository (no inputs): the scan step writes the SARIF log, hands it to
/// the upload step, reports the verdict in the job summary, and the last step fails the job
/// because one model is blocked.
#[test]
fn the_action_scans_uploads_and_fails_on_a_blocked_model() {
    let ws = workspace();
    let Some((code, result)) = run_action(ws.path(), &[]) else {
        return;
    };
    assert_eq!(code, 1, "{result:#}");
    assert_eq!(
        step(&result, "Cache socair's build")["ran"],
        false,
        "a socair was given"
    );
    assert_eq!(step(&result, "Install socair")["exit"], 0);
    let scan = step(&result, "Scan");
    assert_eq!(scan["exit"], 0, "the scan step passes so the upload runs");
    assert_eq!(scan["outputs"]["exit-code"], "1");
    assert_eq!(
        scan["outputs"]["summary"],
        "2 artifacts: 1 clean, 1 blocked, 0 needing a person, 0 unreadable"
    );
    let upload = step(&result, "Upload SARIF to code scanning");
    assert_eq!(upload["uses"], "github/codeql-action/upload-sarif@v3");
    assert_eq!(upload["with"]["sarif_file"], "socair.sarif");
    assert_eq!(step(&result, "Verdict")["exit"], 1);
    assert_eq!(result["outputs"]["exit-code"], "1");
    let summary = result["summary"].as_str().unwrap();
    assert!(
        summary.contains("BLOCKED") && summary.contains("models/evil.pt"),
        "{summary}"
    );
    let sarif_path = ws.path().join("socair.sarif");
    validate("sarif", &sarif_path);
    let sarif = json(&std::fs::read_to_string(&sarif_path).unwrap());
    let uris: std::collections::BTreeSet<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        uris.into_iter().collect::<Vec<_>>(),
        ["models/evil.pt"],
        "relative to the repository, as code scanning wants"
    );
}

#[test]
fn the_action_passes_clean_models_and_follows_its_inputs() {
    let ws = workspace();
    // One path per line (blank lines dropped); the log's folder is made.
    let Some((code, result)) = run_action(
        ws.path(),
        &["paths=models/tiny-bert\n  \n", "sarif-file=out/clean.sarif"],
    ) else {
        return;
    };
    validate("sarif", &ws.path().join("out/clean.sarif"));
    assert_eq!(code, 0, "{result:#}");
    assert_eq!(step(&result, "Scan")["outputs"]["exit-code"], "0");
    assert_eq!(step(&result, "Verdict")["exit"], 0);
    assert_eq!(result["outputs"]["sarif-file"], "out/clean.sarif");
    // upload: false leaves the log unsent; fail-on-findings: false lets the job pass.
    let (code, result) = run_action(
        ws.path(),
        &["each=models", "upload=false", "fail-on-findings=false"],
    )
    .unwrap();
    assert_eq!(code, 0, "{result:#}");
    assert_eq!(step(&result, "Scan")["outputs"]["exit-code"], "1");
    assert!(step(&result, "Upload SARIF to code scanning")
        .get("uses")
        .is_none());
    assert_eq!(step(&result, "Verdict")["ran"], false);
}

/// Without a binary, the action installs socair from a wheel into a virtual environment of its
/// own (here the one scripts/dist.sh built for CI; on a runner, the release's or one built from
/// the action's source) and scans with the command the wheel installed.
#[test]
fn the_action_installs_the_wheel_and_scans_with_it() {
    let Some(wheel) = built_wheel() else {
        eprintln!("skipped: no wheel (SOCAIR_TEST_WHEEL, set by .ci/run after scripts/dist.sh)");
        return;
    };
    let ws = workspace();
    let wheel = format!("wheel={}", wheel.display());
    let Some((code, result)) = run_action_with(ws.path(), &[wheel.as_str(), "upload=false"]) else {
        return;
    };
    assert_eq!(code, 1, "{result:#}");
    assert_eq!(
        step(&result, "Cache socair's build")["ran"],
        false,
        "a wheel was given: nothing is built"
    );
    assert_eq!(step(&result, "Install socair")["exit"], 0, "{result:#}");
    assert_eq!(
        step(&result, "Scan")["outputs"]["summary"],
        "2 artifacts: 1 clean, 1 blocked, 0 needing a person, 0 unreadable"
    );
    validate("sarif", &ws.path().join("socair.sarif"));
}

/// pre-commit itself runs both hooks from this repository on a repository's files: the
/// installed socair (on PATH) and the one built from the hook's checkout (here the test build,
/// through CARGO_TARGET_DIR, so nothing is compiled).
#[test]
fn the_pre_commit_hooks_run_under_pre_commit() {
    let pre_commit =
        std::env::var_os("SOCAIR_TEST_PRE_COMMIT").unwrap_or_else(|| "pre-commit".into());
    let required = std::env::var_os("SOCAIR_TEST_PRE_COMMIT").is_some();
    if Command::new(&pre_commit).arg("--version").output().is_err() {
        assert!(!required, "SOCAIR_TEST_PRE_COMMIT does not run");
        eprintln!("skipped: no pre-commit (set SOCAIR_TEST_PRE_COMMIT)");
        return;
    }
    let ws = workspace();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(ws.path())
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    let home = tempfile::tempdir().unwrap();
    let hook_home = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        target_profile_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // With the wheel .ci/run built, both hooks of the repository, on the same files: the
    // installed socair (here the test build, on PATH) and the one the wheel hook installs. Without
    // it, the installed one alone (the wheel hook would build the wheel: minutes).
    let wheel = built_wheel();
    let hooks = |files: &[&str]| {
        let mut cmd = Command::new(&pre_commit);
        cmd.args(["try-repo"]).arg(repo());
        if wheel.is_none() {
            cmd.arg("socair");
        }
        let out = cmd
            .arg("--files")
            .args(files)
            .current_dir(ws.path())
            .env("PRE_COMMIT_HOME", home.path())
            .env("PATH", &path)
            .env("SOCAIR_HOOK_HOME", hook_home.path())
            .env("SOCAIR_WHEEL", wheel.clone().unwrap_or_default())
            .env_remove("SOCAIR_PLUGIN_PATH")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code().unwrap(), text)
    };
    let runs = if wheel.is_some() { 2 } else { 1 };
    let (code, out) = hooks(&[
        "models/evil.pt",
        "README.md",
        "models/tiny-bert/config.json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("socair scan (installed)...."), "{out}");
    assert_eq!(
        out.contains("socair scan (wheel of this repository's version)"),
        wheel.is_some(),
        "{out}"
    );
    assert_eq!(out.matches("Failed").count(), runs, "{out}");
    assert_eq!(
        out.matches("BLOCKED         models/evil.pt").count(),
        runs,
        "{out}"
    );
    let (code, out) = hooks(&[
        "README.md",
        "models/tiny-bert/model-00001-of-00004.safetensors",
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("Passed").count(), runs, "{out}");
}
