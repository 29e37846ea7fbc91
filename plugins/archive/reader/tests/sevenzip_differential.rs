//! The 7z fixtures read by 7-Zip itself (`7z`, Debian's p7zip-full) and by this plugin: the
//! member names the crate reads from the header are the ones `7z l -slt` lists, and an archive
//! `7z t` tests clean gets no FAIL here while one it refuses is a FAIL (or a LEAD, when it is
//! encrypted: 7-Zip asks for the password). Skipped, saying so, where `7z` is not installed:
//! CI never needs it.

use socair_archive::scan::scan_7z_bytes;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/archive")
}

fn seven_zip() -> Option<&'static str> {
    Command::new("7z")
        .arg("i")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "7z")
}

/// 7-Zip's listing of `path`: the `Path = ` of every entry after the archive's own block.
fn listed(seven: &str, path: &Path) -> Option<Vec<String>> {
    let out = Command::new(seven)
        .args(["l", "-slt", "-p-"])
        .arg(path)
        .output()
        .unwrap();
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let entries = text.split_once("----------")?.1;
    Some(
        entries
            .lines()
            .filter_map(|l| l.strip_prefix("Path = "))
            .map(str::to_owned)
            .collect(),
    )
}

#[test]
fn seven_zip_and_socair_agree_on_the_fixtures() {
    let Some(seven) = seven_zip() else {
        eprintln!("7z is not installed: the differential test against 7-Zip is skipped");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "7z"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{files:?}");
    let (mut agreed_names, mut agreed_verdicts) = (0, 0);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let a = scan_7z_bytes(&bytes, socair_archive::scan::Scope::data(&[]));
        let tested = Command::new(seven)
            .args(["t", "-p-"])
            .arg(path)
            .output()
            .unwrap();
        let clean = tested.status.success();
        let fail = a.structure.worst == Some(socair_pickle::pickle::Severity::Fail);
        let encrypted = a
            .structure
            .shown
            .iter()
            .chain(&a.unchecked.shown)
            .any(|f| f.reason.contains("encrypted"));
        if clean {
            assert!(!fail, "{}: 7-Zip tests it clean: {a:#?}", path.display());
        } else {
            assert!(
                fail || encrypted,
                "{}: 7-Zip refuses it ({}): {a:#?}",
                path.display(),
                String::from_utf8_lossy(&tested.stdout)
            );
        }
        agreed_verdicts += 1;
        if let Some(names) = listed(seven, path) {
            if !encrypted {
                let ours = sevenz_rust2::Archive::read(
                    &mut std::io::Cursor::new(&bytes),
                    &sevenz_rust2::Password::empty(),
                )
                .map(|ar| ar.files.iter().map(|f| f.name.clone()).collect::<Vec<_>>())
                .unwrap_or_default();
                if !ours.is_empty() {
                    let mut want = names.clone();
                    let mut got = ours;
                    want.sort();
                    got.sort();
                    assert_eq!(got, want, "{}", path.display());
                    agreed_names += 1;
                }
            }
        }
    }
    eprintln!(
        "7-Zip and socair agree on {agreed_verdicts} verdicts and {agreed_names} member lists of {} 7z fixtures",
        files.len()
    );
}
