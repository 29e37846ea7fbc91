//! Replays every saved `documents` and `zip_hints` fuzz input, and the fixtures of their
//! kinds, through the property each fuzz target checks.

use socair_test_support::saved::files_under;
use std::path::PathBuf;

/// Every file under the repository's `dirs`.
fn files_in(dirs: &[&str]) -> Vec<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    dirs.iter()
        .flat_map(|dir| files_under(&repo.join(dir)))
        .collect()
}

#[test]
fn every_saved_input_keeps_the_property() {
    let inputs = files_in(&[
        "fuzz/regressions/documents",
        "fuzz/corpus/documents",
        "fixtures/dsse",
    ]);
    assert!(inputs.len() >= 4);
    for path in &inputs {
        socair::fuzzing::check_documents(&std::fs::read(path).unwrap());
    }
}

/// The `zip_hints` corpus and every committed torch checkpoint and zip: the hints return and
/// stay bounded.
#[test]
fn every_saved_zip_keeps_the_hints_bounded() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = Vec::new();
    for dir in [
        "fuzz/corpus/zip_hints",
        "fixtures/torch",
        "fixtures/archives",
    ] {
        inputs.extend(files_under(&repo.join(dir)));
    }
    assert!(inputs.len() >= 40);
    let hinted = inputs
        .iter()
        .filter(|path| socair::fuzzing::check_zip_hints(&std::fs::read(path).unwrap()))
        .count();
    // The torch fixtures are zips whose directories the hints read.
    assert!(
        hinted >= 20,
        "only {hinted} of {} inputs gave hints",
        inputs.len()
    );
}
