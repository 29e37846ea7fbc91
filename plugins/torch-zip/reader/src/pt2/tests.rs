//! The PT2 reader on archives torch 2.15 wrote (fixtures/torch/pt2/, by
//! fixtures/torch/pt2/make_pt2.py, with what socair must say of each in its expected.json).

use super::*;

fn open_fixture(bytes: &[u8]) -> OpenedFile {
    open(bytes, &AnalyzeOptions::default(), crate::opened_file)
}

fn row<'a>(o: &'a OpenedFile, check: &str) -> &'a ReportRow {
    o.rows.iter().find(|r| r.check.as_str() == check).unwrap()
}

fn status(s: RowStatus) -> &'static str {
    match s {
        RowStatus::Pass => "PASS",
        RowStatus::Lead => "LEAD",
        RowStatus::Fail => "FAIL",
        RowStatus::NotTested => "NOT_TESTED",
    }
}

const FIXTURES: &[(&str, &[u8])] = &[
    (
        "tiny.pt2",
        include_bytes!("../../../../../fixtures/torch/pt2/tiny.pt2"),
    ),
    (
        "pickled-weight.pt2",
        include_bytes!("../../../../../fixtures/torch/pt2/pickled-weight.pt2"),
    ),
    (
        "sample-inputs-os-system.pt2",
        include_bytes!("../../../../../fixtures/torch/pt2/sample-inputs-os-system.pt2"),
    ),
    (
        "opaque-os-system.pt2",
        include_bytes!("../../../../../fixtures/torch/pt2/opaque-os-system.pt2"),
    ),
    (
        "sympify-eval.pt2",
        include_bytes!("../../../../../fixtures/torch/pt2/sympify-eval.pt2"),
    ),
    (
        "weight-out-of-bounds.pt2",
        include_bytes!("../../../../../fixtures/torch/pt2/weight-out-of-bounds.pt2"),
    ),
    (
        "aoti-shaped.pt2",
        include_bytes!("../../../../../fixtures/torch/pt2/aoti-shaped.pt2"),
    ),
];

#[test]
fn every_fixture_gets_its_rows_and_places() {
    let expected: serde_json::Value = serde_json::from_str(include_str!(
        "../../../../../fixtures/torch/pt2/expected.json"
    ))
    .unwrap();
    for (file, bytes) in FIXTURES {
        let want = &expected[*file];
        let o = open_fixture(bytes);
        assert_eq!(o.format.as_str(), FORMAT);
        assert!(
            looks_like_pt2(&bytes[..bytes.len().min(4096)], bytes.len() as u64),
            "{file}"
        );
        let structure = row(&o, STRUCTURE_CHECK);
        let pickle = row(&o, PICKLE_CHECK);
        assert_eq!(
            status(structure.status),
            want["structure"],
            "{file}: {structure:#?}"
        );
        let want_pickle = want["pickle"].as_str().unwrap_or("NOT_TESTED");
        assert_eq!(status(pickle.status), want_pickle, "{file}: {pickle:#?}");
        if let (Some(place), Some(reason)) = (want["place"].as_str(), want["reason"].as_str()) {
            let deciding = if want["structure"] == "FAIL" {
                structure
            } else {
                pickle
            };
            assert!(
                deciding.findings.iter().any(|f| f.place.starts_with(place)
                    && f.severity == socair_plugin_api::Severity::Fail
                    && f.reason.contains(reason)),
                "{file}: no FAIL at {place:?} naming {reason:?}: {:#?}",
                deciding.findings
            );
        }
    }
}

#[test]
fn raw_and_pickled_weights_are_located_where_torch_reads_them() {
    for file in ["tiny.pt2", "pickled-weight.pt2"] {
        let bytes = FIXTURES.iter().find(|(f, _)| *f == file).unwrap().1;
        let o = open_fixture(bytes);
        let names: Vec<&str> = o
            .tensors
            .iter()
            .filter(|t| !t.outside_model)
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names.len(), 4, "{file}: {names:?}");
        for n in ["lin.weight", "lin.bias", "buf", "c"] {
            assert!(names.contains(&n), "{file}: {names:?}");
        }
        // Sample inputs are located too, outside the model.
        assert!(o
            .tensors
            .iter()
            .any(|t| t.outside_model && t.name.starts_with("model.sample_inputs")));
        for t in o.tensors.iter() {
            for r in t.ranges.iter() {
                assert!(r.offset + r.len <= bytes.len() as u64, "{file}: {}", t.name);
            }
        }
        assert!(o.unread.is_empty(), "{file}: {:?}", o.unread);
    }
}

#[test]
fn a_torch_checkpoint_is_not_a_pt2_and_the_claims_do_not_overlap() {
    let ckpt = include_bytes!("../../../../../fixtures/torch/legit/state-dict.pt");
    let head = &ckpt[..ckpt.len().min(4096)];
    assert!(!looks_like_pt2(head, ckpt.len() as u64));
    for (file, bytes) in FIXTURES {
        let head = &bytes[..bytes.len().min(4096)];
        assert!(looks_like_pt2(head, bytes.len() as u64), "{file}");
    }
}

#[test]
fn a_truncated_archive_is_refused_with_its_place() {
    let bytes = FIXTURES[0].1;
    let o = open_fixture(&bytes[..bytes.len() - 10]);
    let s = row(&o, STRUCTURE_CHECK);
    assert_eq!(s.status, RowStatus::Fail);
    assert!(s.findings[0].place.starts_with("zip "), "{:?}", s.findings);
    assert!(!o.unread.is_empty());
}
