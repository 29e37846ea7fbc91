//! A file two plugins' readers claim as different formats is judged, not
//! refused: fixtures/polyglot/safetensors-pickle.safetensors (hand-built by
//! fixtures/polyglot/make_polyglot.py, which checks that safetensors 0.8.0's safe_open reads
//! its one tensor and that pickle's Unpickler asks for os.system) is valid safetensors and a
//! pickle that calls os.system. The scan reads it with both readers and FAILs it, saying that
//! the pickle reading found the call; `tensors` needs one reading and still asks for a reader.

use crate::common::{fixture, json, report_plugins, report_row as row, run, socair};

fn polyglot() -> std::path::PathBuf {
    fixture("polyglot/safetensors-pickle.safetensors")
}

#[test]
fn both_readings_count_and_the_pickle_fails_the_file() {
    let expected = json(&std::fs::read_to_string(fixture("polyglot/expected.json")).unwrap());
    let bytes = std::fs::read(polyglot()).unwrap();
    assert_eq!(
        expected["safetensors-pickle.safetensors"]["size"].as_u64(),
        Some(bytes.len() as u64)
    );
    for args in [vec!["scan"], vec!["--reader", "safetensors", "scan"]] {
        let r = run(socair().args(&args).arg(polyglot()).arg("--json"));
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        let report = json(&r.stdout);
        assert_eq!(
            report_plugins(&report),
            ["safetensors", "torch-zip"],
            "{args:?}"
        );
        assert_eq!(report["artifact"]["format"], "safetensors");
        let pickle = row(&report, "Pickle opcode scan");
        assert_eq!(pickle["status"], "FAIL", "{pickle:#}");
        let summary = pickle["summary"].as_str().unwrap();
        assert!(
            summary.starts_with("also read as torch-legacy by plugin torch-zip:")
                && summary.contains("os.system"),
            "{summary}"
        );
        let structure = row(&report, "Format and structure");
        assert_eq!(structure["status"], "LEAD", "{structure:#}");
        assert!(
            structure["summary"].as_str().unwrap().contains(
                "read as safetensors by plugin safetensors and as torch-legacy by plugin torch-zip: a file that readers of two formats both claim is a polyglot"
            ),
            "{structure:#}"
        );
    }
    // On a terminal's stream the first line says so too.
    let r = run(socair().arg("scan").arg(polyglot()));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("FAIL Pickle opcode scan"), "{}", r.stderr);
}

#[test]
fn reading_its_tensors_needs_one_reader_and_says_why() {
    let r = run(socair().arg("tensors").arg(polyglot()));
    assert_eq!(r.code, 2, "{}", r.stderr);
    for part in [
        "2 plugins claim it: plugin safetensors (safetensors reader) and plugin torch-zip (torch-legacy reader)",
        "this command reads a file with one reader",
        "--reader NAME",
        "`socair scan` judges such a file with every reader that claims it",
    ] {
        assert!(r.stderr.contains(part), "{part:?} not in {}", r.stderr);
    }
    let picked = run(socair()
        .args(["--reader", "safetensors", "tensors"])
        .arg(polyglot())
        .arg("--json"));
    assert_eq!(picked.code, 0, "{}", picked.stderr);
    assert!(picked.stdout.contains("\"payload\""), "{}", picked.stdout);
}
