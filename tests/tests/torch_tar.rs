//! torch's oldest checkpoint format, a tar archive, end to end: the files
//! fixtures/torch/tar/make_tar.py wrote as torch 0.1 wrote them (Python 2.7), which torch 2.15
//! reads back with weights_only=False (check_tar.py), through the built `socair`: claimed by
//! the torch-legacy reader by their content, whatever their name; every pickle of the
//! `storages`, `tensors` and `pickle` members through the machine; a member that is a link a
//! FAIL.

use crate::common::{fixture, has_finding, json, report_row, run, socair};

#[test]
fn torch_tar_checkpoints_get_their_verdicts() {
    let e = json(&std::fs::read_to_string(fixture("torch/tar/expected.json")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    for (file, want) in e.as_object().unwrap() {
        if file == "generator" {
            continue;
        }
        let path = fixture(&format!("torch/tar/{file}"));
        // Claimed by content: the same bytes named .tar are read alike.
        let renamed = dir.path().join(file.replace(".pt", ".tar"));
        std::fs::copy(&path, &renamed).unwrap();
        for p in [&path, &renamed] {
            let r = run(socair().arg("scan").arg(p));
            assert_eq!(r.code, 1, "{file}: {}", r.stderr);
            let report = json(&r.stdout);
            assert_eq!(report["artifact"]["format"], "torch-legacy", "{file}");
            let pickle = report_row(&report, "Pickle opcode scan");
            assert_eq!(pickle["status"], want["status"], "{file}: {pickle:#}");
            let keyword = want["keyword"].as_str().unwrap();
            let place = want["place"].as_str().unwrap_or("");
            assert!(
                has_finding(pickle, place, keyword),
                "{file}: no finding at {place:?} naming {keyword:?}: {pickle:#}"
            );
        }
        let r = run(socair().arg("tensors").arg(&path));
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        assert!(
            !json(&r.stdout)["unread"].as_array().unwrap().is_empty(),
            "{file}"
        );
    }
}
