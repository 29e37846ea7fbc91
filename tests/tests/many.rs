//! Many models at once: `socair scan PATH…` and `socair scan --each DIR`
//! scan each artifact on its own; one `socair.reports/v1` document lists every report (each
//! the same as a scan of that path alone) in the order given; `--each` finds artifacts as the
//! readers do (model directories whole, a Hugging Face cache's snapshots, files a reader
//! claims by content); on a terminal one verdict line each and a summary; exit 0 only when all
//! are clean, 2 for a path that does not exist.

use crate::common::{fixture, json, run, socair};
use crate::hfcache::copy_cache;
use std::path::Path;

fn reports(args: &[&str]) -> (i32, serde_json::Value, String) {
    let r = run(socair().arg("scan").args(args).arg("--json"));
    (r.code, json(&r.stdout), r.stderr)
}

fn alone(path: &str) -> serde_json::Value {
    let r = run(socair().args(["scan", path, "--json"]));
    json(&r.stdout)
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

#[test]
fn several_paths_give_one_document_of_every_report_in_order() {
    let blocked = s(&fixture("torch/malicious/pickle-os-system.pt"));
    let clean = s(&fixture("safetensors/tiny-bert"));
    let lead = s(&fixture("onnx/external/offset-past-end"));
    let missing = "hf://socair-fixtures/not-in-any-cache";
    let (code, doc, stderr) = reports(&[&blocked, &clean, &lead, missing]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(doc["schema"], "socair.reports/v1");
    assert_eq!(
        doc["summary"],
        serde_json::json!({"artifacts": 4, "clean": 1, "blocked": 1, "needs_review": 1, "unreadable": 1})
    );
    let entries = doc["artifacts"].as_array().unwrap();
    let paths: Vec<&str> = entries
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [blocked.as_str(), &clean, &lead, missing]);
    let verdicts: Vec<&str> = entries
        .iter()
        .map(|e| e["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["blocked", "clean", "needs_review", "unreadable"]);
    // Each report is the report of that path scanned alone.
    for (e, path) in entries.iter().zip([&blocked, &clean, &lead]) {
        assert_eq!(e["report"], alone(path), "{path}");
    }
    assert!(entries[3].get("report").is_none());
    assert!(entries[3]["error"]
        .as_str()
        .unwrap()
        .contains("not-in-any-cache"));
    // Standard error: the summary, then each artifact that is not clean.
    assert!(
        stderr.contains("4 artifacts: 1 clean, 1 blocked, 1 needing a person, 1 unreadable"),
        "{stderr}"
    );
    assert!(
        stderr.contains("BLOCKED") && stderr.contains("pickle-os-system.pt"),
        "{stderr}"
    );
}

#[test]
fn all_clean_exits_0_and_a_missing_path_is_a_usage_error() {
    let clean = s(&fixture("safetensors/tiny-bert"));
    let shard = s(&fixture(
        "safetensors/tiny-bert/model-00001-of-00004.safetensors",
    ));
    let (code, doc, _) = reports(&[&clean, &shard]);
    assert_eq!(code, 0);
    assert_eq!(doc["summary"]["clean"], 2);
    let r = run(socair().args(["scan", &clean, "no/such/model.pt"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no/such/model.pt"), "{}", r.stderr);
    // --reference compares one model: with several it is a usage error.
    let r = run(socair().args(["scan", &clean, &shard, "--reference", &clean]));
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// A tree as a platform team keeps models: a Hugging Face cache, a transformers directory, a
/// SavedModel, an ONNX model with its external data, loose files (one renamed), notes, a git
/// folder and a link. `--each` finds each model once, whole, and nothing else.
#[test]
fn each_finds_artifacts_as_the_readers_do() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let copy = |from: &Path, to: &str| {
        let to = root.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, &to).unwrap();
    };
    let copy_dir = |from: &Path, to: &str| {
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                copy(
                    &e.path(),
                    &format!("{to}/{}", e.file_name().to_string_lossy()),
                );
            }
        }
    };
    copy_cache(&root.join("hub"));
    copy_dir(&fixture("safetensors/tiny-bert"), "team/bert");
    copy_dir(&fixture("onnx/external/model-dir"), "team/onnx-external");
    let saved = fixture("onnx/tensorflow/saved_model");
    copy_dir(&saved, "team/saved");
    copy_dir(&saved.join("variables"), "team/saved/variables");
    copy(
        &fixture("torch/malicious/pickle-os-system.pt"),
        "loose/evil.pt",
    );
    copy(&fixture("torch/legit/state-dict.pt"), "loose/renamed.dat");
    copy(
        &fixture("safetensors/tiny-bert/model-00001-of-00004.safetensors"),
        "loose/w.safetensors",
    );
    std::fs::write(root.join("loose/notes.md"), "# models\n").unwrap();
    copy(
        &fixture("torch/malicious/pickle-os-system.pt"),
        ".git/objects/evil.pt",
    );
    std::os::unix::fs::symlink(root.join("loose/evil.pt"), root.join("loose/link.pt")).unwrap();
    let (code, doc, stderr) = reports(&["--each", root.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    let found: Vec<String> = doc["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["path"]
                .as_str()
                .unwrap()
                .strip_prefix(&format!("{}/", root.display()))
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        found,
        [
            "hub/models--socair-fixtures--tiny-bert-revs/snapshots/848e72bfc97361631d2bc633be1c16ca91c5bfc4",
            "hub/models--socair-fixtures--tiny-bert-revs/snapshots/b313dc12d5dd30dfcbf55e7208962887f403feff",
            "hub/models--socair-fixtures--tiny-bert/snapshots/1c7bfa26e76b1ee69ff854b401134d895fc7759f",
            "loose/evil.pt",
            "loose/renamed.dat",
            "loose/w.safetensors",
            "team/bert",
            "team/onnx-external",
            "team/saved",
        ]
    );
    let verdict = |i: usize| doc["artifacts"][i]["verdict"].as_str().unwrap().to_owned();
    assert_eq!(verdict(3), "blocked");
    assert_eq!(
        doc["artifacts"][4]["report"]["artifact"]["format"], "torch-zip",
        "claimed by its content, not its name"
    );
    for i in [0, 1, 2, 5, 6, 7, 8] {
        assert_eq!(verdict(i), "clean", "{:#}", doc["artifacts"][i]);
    }
    assert!(
        stderr.contains("9 artifacts found") && stderr.contains("1 symbolic link not followed"),
        "{stderr}"
    );
    // The order does not depend on which scan finishes first.
    let (_, again, _) = reports(&["--each", root.to_str().unwrap()]);
    assert_eq!(doc, again);
    // A file given to --each is scanned only when a reader claims it.
    let (code, doc, _) = reports(&[
        "--each",
        &s(&root.join("loose/notes.md")),
        &s(&root.join("loose/w.safetensors")),
    ]);
    assert_eq!(code, 0);
    assert_eq!(doc["summary"]["artifacts"], 1);
}

/// On a terminal: one line per artifact, its verdict first, in the order given; then the
/// summary and the next step.
#[test]
fn a_person_reads_one_line_per_artifact() {
    let blocked = s(&fixture("torch/malicious/pickle-os-system.pt"));
    let clean = s(&fixture("safetensors/tiny-bert"));
    let lead = s(&fixture("onnx/external/offset-past-end"));
    let Some((code, out)) = crate::human::on_a_terminal(&["scan", &clean, &blocked, &lead], &[])
    else {
        return;
    };
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("CLEAN") && lines[0].contains(&clean),
        "{out}"
    );
    assert!(
        lines[1].starts_with("BLOCKED") && lines[1].contains("os.system"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("NEEDS A PERSON") && lines[2].contains("offset-past-end"),
        "{out}"
    );
    assert!(
        out.contains("3 artifacts: 1 clean, 1 blocked, 1 needing a person, 0 unreadable."),
        "{out}"
    );
    assert!(out.contains("Next: "), "{out}");
}
