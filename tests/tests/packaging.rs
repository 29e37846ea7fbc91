//! What a user installs and reads: scripts/install.sh places the binary, the plugins (found
//! without configuration) and shell completions; `--version` names the plugin-api; every
//! command's `--help` carries an example.

use crate::common::{json, repo, run, socair, target_profile_dir};
use std::process::Command;

/// The subcommands `socair <path> --help` lists.
fn subcommands(path: &[String]) -> Vec<String> {
    let r = run(socair().args(path).arg("--help"));
    assert_eq!(r.code, 0, "{path:?}: {}", r.stderr);
    r.stdout
        .lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn every_command_has_help_with_an_example() {
    let mut pending = vec![Vec::<String>::new()];
    let mut seen = 0;
    while let Some(path) = pending.pop() {
        for sub in subcommands(&path) {
            let mut p = path.clone();
            p.push(sub);
            let r = run(socair().args(&p).arg("--help"));
            assert_eq!(r.code, 0, "{p:?}");
            assert!(
                r.stdout.contains("Example: socair"),
                "{p:?} has no example:\n{}",
                r.stdout
            );
            seen += 1;
            pending.push(p);
        }
    }
    // plugins, scan, keygen, attest, verify, convert, completions, tensors (+ diff), airlock
    // (+ init, trust, pin (+ plugin, rules), pull, scan, accept, promote, convert, log).
    assert!(seen >= 20, "{seen}");
}

#[test]
fn version_names_the_plugin_api() {
    let r = run(socair().arg("--version"));
    assert_eq!(r.code, 0);
    let listing = json(&run(socair().args(["plugins", "--json"])).stdout);
    let api = listing["plugin_api"].as_str().unwrap();
    let manifest = std::fs::read_to_string(repo().join("host/cli/Cargo.toml")).unwrap();
    let host_version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap();
    assert_eq!(
        r.stdout.trim(),
        format!("socair {host_version} (plugin-api {api})")
    );
}

#[test]
fn install_places_binary_plugins_and_completions_that_work_without_configuration() {
    let prefix = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(repo().join("scripts/install.sh"))
        .arg("--prefix")
        .arg(prefix.path())
        .arg("--from")
        .arg(target_profile_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = prefix.path().join("bin/socair");
    // The installed socair finds the installed plugins on its own (no flag, no environment),
    // and they are the ones the build made.
    let installed = Command::new(&bin)
        .args(["plugins", "--json"])
        .env_remove("SOCAIR_PLUGIN_PATH")
        .output()
        .unwrap();
    assert!(installed.status.success());
    let installed = json(&String::from_utf8(installed.stdout).unwrap());
    let built = json(&run(socair().args(["plugins", "--json"])).stdout);
    let names = |v: &serde_json::Value| -> Vec<(String, String)> {
        v["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().to_owned(),
                    p["sha256"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(names(&installed), names(&built));
    for p in installed["plugins"].as_array().unwrap() {
        assert!(
            p["file"]
                .as_str()
                .unwrap()
                .starts_with(prefix.path().join("lib/socair/plugins").to_str().unwrap()),
            "{p}"
        );
    }
    for (file, needle) in [
        ("share/bash-completion/completions/socair", "_socair()"),
        ("share/zsh/site-functions/_socair", "#compdef socair"),
        (
            "share/fish/vendor_completions.d/socair.fish",
            "complete -c socair",
        ),
    ] {
        let text = std::fs::read_to_string(prefix.path().join(file)).unwrap();
        assert!(text.contains(needle), "{file}");
        // Subcommands are completed too.
        assert!(
            text.contains("airlock") && text.contains("tensors"),
            "{file}"
        );
    }
}
