//! The claim over every fixture of the repository: it takes the torch7 fixtures and nothing
//! another reader reads (the leading bytes of a torch7 file are weak magic).

use socair_test_support::saved::files_under;
use socair_torch7::claims;
use std::path::PathBuf;

#[test]
fn the_claim_takes_the_torch7_fixtures_and_nothing_else() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let files = files_under(&repo.join("fixtures"));
    assert!(files.len() > 500, "{}", files.len());
    let mut claimed = Vec::new();
    for path in &files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let head = &bytes[..bytes.len().min(4096)];
        if claims(head, bytes.len() as u64) {
            let rel = path
                .strip_prefix(&repo)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            claimed.push(rel);
        }
    }
    let ours: Vec<&String> = claimed
        .iter()
        .filter(|p| p.starts_with("fixtures/torch7/") && p.ends_with(".t7"))
        .collect();
    let others: Vec<&String> = claimed.iter().filter(|p| !ours.contains(p)).collect();
    assert!(
        others.is_empty(),
        "claimed other readers' files: {others:?}"
    );
    assert_eq!(ours.len(), 10, "{claimed:?}");
}
