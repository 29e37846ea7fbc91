//! Who reads a file when two plugins claim it. A second
//! plugin, built from the out-of-tree template the way a third party would, claims every
//! safetensors file and passes it. Outside a store `scan` reads a file both claim with both,
//! and the safetensors plugin's FAIL counts whoever reads first (`--reader NAME` only orders
//! them); `tensors` needs one reading, so it refuses to choose and names both (`--reader NAME`
//! picks one). In a store whose pins name the safetensors plugin, that plugin alone reads
//! safetensors and the other is refused with its reason; an attestation the unpinned plugin
//! made is refused at promote; `socair plugins` warns about both plugins and about a plugin
//! directory others can write.

use crate::common::{
    fixture, fixture_cargo, fixture_target_dir, json, repo, report_plugins, report_row as row, run,
    socair, target_profile_dir, write_if_changed, Store,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The template's llama2.c reader, turned into a reader that claims every file that starts like
/// safetensors (8 bytes of header length, then `{`) and PASSes it without reading it.
const LENIENT_READER: &str = r#"impl FormatReader for Llama2cReader {
    fn format(&self) -> RString {
        RString::from("safetensors")
    }

    fn detect(&self, head: RSlice<'_, u8>, _file_len: u64) -> bool {
        guard(|| Ok(head.as_slice().get(8) == Some(&b'{')))
            .into_result()
            .unwrap_or(false)
    }

    fn open(
        &self,
        _source: ByteSourceRef<'_>,
        _options: ReadOptions,
    ) -> RResult<OpenedFile, PluginError> {
        guard(|| {
            Ok(OpenedFile {
                format: "safetensors".into(),
                tensors: RVec::new(),
                unread: RVec::new(),
                rows: RVec::from(vec![ReportRow {
                    check: STRUCTURE_CHECK.into(),
                    status: socair_plugin_api::RowStatus::Pass,
                    summary: "looks fine".into(),
                    findings: RVec::new(),
                    names_severities: false,
                }]),
                metadata: RVec::new(),
                not_carried: RVec::new(),
                facts: RVec::new(),
            })
        })
    }
}

"#;

/// `text` with `from` replaced by `to`, which must be there: a template that changed under this
/// test must fail it, not quietly build something else.
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the template no longer has {from:?}");
    text.replace(from, to)
}

fn lib_name(stem: &str) -> String {
    format!(
        "{}{stem}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Builds the lenient plugin once (a copy of the template, renamed `lenient`, with
/// [`LENIENT_READER`]) and puts its library, alone, in a plugin directory.
fn lenient_plugin_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let work = target_profile_dir().join("plugin-fixtures").join("lenient");
        // Written in place (not removed first): unchanged sources are not rebuilt by a warm run.
        let src = work.join("src-tree");
        let template = repo().join("examples/plugin-template");
        for entry in std::fs::read_dir(template.join("src")).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            let text = if name == "lib.rs" {
                let start = text.find("impl FormatReader for Llama2cReader {").unwrap();
                let end = text.find("/// Turns what was read into").unwrap();
                let text = format!("{}{LENIENT_READER}{}", &text[..start], &text[end..]);
                let text = replaced(
                    &text,
                    "pub const PLUGIN_NAME: &str = \"llama2c\";",
                    "pub const PLUGIN_NAME: &str = \"lenient\";",
                );
                replaced(
                    &text,
                    "pub const FORMAT: &str = \"llama2c\";",
                    "pub const FORMAT: &str = \"safetensors\";",
                )
            } else {
                text
            };
            write_if_changed(&src.join("src").join(name), text.as_bytes());
        }
        write_if_changed(
            &src.join("Cargo.lock"),
            &std::fs::read(template.join("Cargo.lock")).unwrap(),
        );
        let manifest = std::fs::read_to_string(template.join("Cargo.toml")).unwrap();
        let manifest = replaced(
            &manifest,
            "name = \"socair-plugin-llama2c\"",
            "name = \"socair-plugin-lenient\"",
        );
        let manifest = replaced(
            &manifest,
            "name = \"socair_plugin_llama2c\"",
            "name = \"socair_plugin_lenient\"",
        );
        let manifest = replaced(
            &manifest,
            "path = \"../../plugin-api\"",
            &format!("path = {:?}", repo().join("plugin-api")),
        );
        write_if_changed(&src.join("Cargo.toml"), manifest.as_bytes());
        // The template's dependencies are already built in the shared fixture target directory.
        let out = fixture_cargo("build", &src.join("Cargo.toml"))
            .arg("--lib")
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "building the lenient plugin failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = work.join("plugins");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let name = lib_name("socair_plugin_lenient");
        std::fs::copy(
            fixture_target_dir().join("debug").join(&name),
            dir.join(&name),
        )
        .unwrap();
        dir
    })
}

/// A safetensors file the safetensors plugin FAILs (its tensors overlap) and the lenient
/// plugin claims and passes.
fn hostile_safetensors() -> PathBuf {
    fixture("safetensors/malformed/aliased-tensors.safetensors")
}

fn with_lenient() -> Command {
    let mut cmd = socair();
    cmd.arg("--plugin-dir").arg(lenient_plugin_dir());
    cmd
}

/// A file only the lenient plugin claims: it starts like safetensors (`{` at byte 8), but its
/// header length (1000) runs past its end, so the safetensors plugin does not claim it.
fn lenient_only(dir: &Path) -> PathBuf {
    let path = dir.join("lenient-only.safetensors");
    let mut bytes = 1000u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn outside_a_store_scan_reads_with_both_and_tensors_needs_a_reader() {
    let file = hostile_safetensors();
    // The safetensors plugin alone FAILs the file.
    let alone = run(socair().arg("scan").arg(&file));
    assert_eq!(alone.code, 1, "{}", alone.stderr);
    assert_eq!(
        row(&json(&alone.stdout), "Format and structure")["status"],
        "FAIL"
    );

    // Both claim it: the scan reads it with both, and the safetensors plugin's FAIL counts
    // (this once asserted exit 2, "socair does not choose": a lenient reader
    // found first must not hide another reader's FAIL).
    let both = run(with_lenient().arg("scan").arg(&file));
    assert_eq!(both.code, 1, "{}{}", both.stdout, both.stderr);
    let report = json(&both.stdout);
    let structure = row(&report, "Format and structure");
    assert_eq!(structure["status"], "FAIL");
    let summary = structure["summary"].as_str().unwrap();
    for part in [
        "looks fine",
        "also read as safetensors by plugin safetensors:",
        "read by plugin lenient and also by plugin safetensors (both safetensors readers); each one's verdict counts",
    ] {
        assert!(summary.contains(part), "{part:?} not in {summary}");
    }
    assert_eq!(report_plugins(&report), ["lenient", "safetensors"]);
    // A command that reads the file's tensors needs one reading: no choice is made, both
    // are named, and the message says why.
    let t = run(with_lenient().arg("tensors").arg(&file));
    assert_eq!(t.code, 2, "{}", t.stderr);
    for name in [
        "plugin safetensors",
        "plugin lenient",
        "--reader",
        "one reader",
    ] {
        assert!(t.stderr.contains(name), "{name:?} not in {}", t.stderr);
    }
    assert!(t.stdout.is_empty());
    let picked = run(with_lenient()
        .args(["--reader", "lenient", "tensors"])
        .arg(&file));
    // Read by the plugin chosen (what `tensors` makes of a reading without tensors is not
    // this test's business): not refused.
    assert_ne!(picked.code, 2, "{}", picked.stderr);

    // For a scan, --reader says whose reading comes first (and names the artifact's format);
    // the other still reads it (`--reader lenient scan` once passed this file,
    // exit 0: now the safetensors plugin's FAIL counts).
    let picked = run(with_lenient()
        .args(["--reader", "safetensors", "scan"])
        .arg(&file));
    assert_eq!(picked.code, 1, "{}", picked.stderr);
    let report = json(&picked.stdout);
    assert_eq!(row(&report, "Format and structure")["status"], "FAIL");
    assert_eq!(report["tool"]["plugins"][0]["name"], "safetensors");
    let lenient = run(with_lenient()
        .args(["--reader", "lenient", "scan"])
        .arg(&file));
    assert_eq!(lenient.code, 1, "{}", lenient.stderr);
    let report = json(&lenient.stdout);
    assert_eq!(report["tool"]["plugins"][0]["name"], "lenient");
    assert_eq!(row(&report, "Format and structure")["status"], "FAIL");
    let nobody = run(with_lenient()
        .args(["--reader", "nobody", "scan"])
        .arg(&file));
    assert_eq!(nobody.code, 1, "{}", nobody.stderr);
    assert!(
        row(&json(&nobody.stdout), "Format and structure")["summary"]
            .as_str()
            .unwrap()
            .contains("--reader nobody: that plugin does not claim this file"),
        "{}",
        nobody.stdout
    );

    // A file only one plugin claims needs no choice.
    let torch = run(with_lenient()
        .arg("scan")
        .arg(fixture("torch/legit/state-dict.pt")));
    assert_eq!(torch.code, 0, "{}", torch.stderr);
}

#[test]
fn in_a_store_the_pinned_plugin_reads_its_format_and_others_are_refused() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let src = s.dir.path().join("model.safetensors");
    std::fs::copy(hostile_safetensors(), &src).unwrap();
    let r = s.run(&["airlock", "pin", "plugin", "safetensors"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sha = s.run(&["airlock", "pull", src.to_str().unwrap()]);
    assert_eq!(sha.code, 0, "{}", sha.stderr);
    let sha = sha.stdout.trim().to_owned();

    let scan = run(with_lenient()
        .args(["airlock", "scan", &sha, "--key", &scanner, "--store"])
        .arg(s.path()));
    assert_eq!(scan.code, 1, "the pinned reader FAILs it: {}", scan.stderr);
    let attestation = s
        .path()
        .join("incoming")
        .join(&sha)
        .join("attestation.dsse.json");
    let verified = s.run(&["verify", "--signature-only", attestation.to_str().unwrap()]);
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    let payload = json(&verified.stdout);
    let report = &payload["predicate"];
    assert_eq!(report["tool"]["plugins"][0]["name"], "safetensors");
    let structure = row(report, "Format and structure");
    assert_eq!(structure["status"], "FAIL");
    assert!(
        structure["summary"]
            .as_str()
            .unwrap()
            .contains("plugin lenient (safetensors reader) also claims it and was refused: the store pins plugin safetensors to read safetensors"),
        "{structure:#}"
    );
    let promote = s.run(&["airlock", "promote", &sha]);
    assert_eq!(promote.code, 1, "{}", promote.stderr);

    // An attestation the unpinned plugin made (outside the store, of a file only it claims)
    // is refused by the gate, though it verifies under a trusted key and holds no FAIL.
    // (This once attested `src` with `--reader lenient`; a scan now counts every
    // claimant, so that attestation would hold the safetensors plugin's FAIL.)
    let only = lenient_only(s.dir.path());
    let pulled = s.run(&["airlock", "pull", only.to_str().unwrap()]);
    assert_eq!(pulled.code, 0, "{}", pulled.stderr);
    let sha = pulled.stdout.trim().to_owned();
    let attestation = s
        .path()
        .join("incoming")
        .join(&sha)
        .join("attestation.dsse.json");
    let lenient_att = s.dir.path().join("lenient.att.json");
    let made = run(with_lenient()
        .arg("attest")
        .arg(&only)
        .arg("--key")
        .arg(&scanner)
        .arg("--out")
        .arg(&lenient_att));
    assert_eq!(made.code, 0, "{}", made.stderr);
    std::fs::copy(&lenient_att, &attestation).unwrap();
    let promote = s.run(&["airlock", "promote", &sha]);
    assert_eq!(promote.code, 1, "{}", promote.stderr);
    assert!(
        promote.stderr.contains(
            "the attestation's scan used plugin lenient 0.1.0, which the store's pins do not name"
        ),
        "{}",
        promote.stderr
    );
}

#[test]
fn plugins_warns_about_two_readers_of_one_format_and_writable_directories() {
    let listing = run(with_lenient().arg("plugins"));
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    assert!(
        listing
            .stdout
            .contains("2 plugins read safetensors: lenient, safetensors"),
        "{}",
        listing.stdout
    );
    // A plugin directory every user can write.
    let open = tempfile::tempdir().unwrap();
    let dir = open.path().join("plugins");
    std::fs::create_dir(&dir).unwrap();
    let name = lib_name("socair_plugin_lenient");
    std::fs::copy(lenient_plugin_dir().join(&name), dir.join(&name)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = run(socair()
        .arg("--plugin-dir")
        .arg(&dir)
        .args(["plugins", "--json"]));
    let warnings = json(&r.stdout)["warnings"].clone();
    let expected = format!(
        "{} is writable by every user (mode 777)",
        Path::new(&dir).display()
    );
    assert!(
        warnings
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with(&expected)),
        "{warnings:#}"
    );
}
