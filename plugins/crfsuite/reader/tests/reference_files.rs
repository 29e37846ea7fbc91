//! The reader on the models python-crfsuite 0.9.12 trained and their hostile edits
//! (fixtures/crfsuite/make_crfsuite.py): each file's verdict and word are expected.json's, and
//! a valid model's counts are those the real header and FEAT chunk hold, and its weights hash
//! as the generator hashed the f64s it unpacked.

use serde_json::Value;
use sha2::{Digest, Sha256};
use socair_crfsuite::read_crfsuite;
use socair_plugin_api::RowStatus;
use std::path::PathBuf;

#[test]
fn fixtures_get_their_verdicts() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/crfsuite");
    let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
    let cases: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(cases.len(), 6);
    for (rel, case) in &cases {
        let bytes = std::fs::read(dir.join(rel)).unwrap();
        let f = read_crfsuite(&bytes, bytes.len() as u64);
        let row = &f.rows[0];
        let want = match case["verdict"].as_str().unwrap() {
            "PASS" => RowStatus::Pass,
            _ => RowStatus::Fail,
        };
        let text: String = std::iter::once(row.summary.to_string())
            .chain(
                row.findings
                    .iter()
                    .map(|x| format!("{} | {}", x.place, x.reason)),
            )
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(row.status, want, "{rel}: {text}");
        let word = case["keyword"].as_str().unwrap();
        assert!(text.contains(word), "{rel}: no {word:?} in {text}");
        if want == RowStatus::Pass {
            let t = &f.tensors[0];
            let bytes = t.inline.as_ref().unwrap();
            let hex: String = Sha256::digest(bytes.as_slice())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(hex, case["weights_sha256"].as_str().unwrap(), "{rel}");
            assert_eq!(t.shape[0], case["features"].as_u64().unwrap(), "{rel}");
            for key in ["labels", "attrs", "features"] {
                let n = case[key].as_u64().unwrap();
                assert!(
                    text.contains(&format!(
                        "{n} {}",
                        if key == "attrs" { "attributes" } else { key }
                    )),
                    "{rel}: {key} {n}: {text}"
                );
            }
        }
    }
}
