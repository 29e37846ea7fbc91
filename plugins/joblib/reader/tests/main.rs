//! The joblib reader on the committed fixtures (`fixtures/joblib/z-*`, written by joblib 1.5.3:
//! `fixtures/joblib/make_compressed.py`), through its library API: what the profiles make of
//! them, every array `joblib.load` gives described by its path, and the fuzz target's property
//! over mutations of each (the fallback where cargo-fuzz is not installed).

use socair_joblib::read::{read, ReadOptions};
use socair_pickle::pickle::Profile;
use socair_plugin_api::RowStatus;

fn fixture(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/joblib");
    std::fs::read(dir.join(name)).unwrap()
}

/// An estimator is a LEAD under `socair-data/1` and PASSes under `socair-sklearn/1`, in
/// every container; its arrays are described the same either way.
#[test]
fn estimators_pass_under_the_sklearn_profile_only() {
    for c in ["zlib", "bz2", "lz4", "none"] {
        let data = fixture(&format!("z-logreg-{c}.joblib"));
        let mut options = ReadOptions::default();
        let lead = read(&data, &options);
        assert_eq!(
            lead.rows[1].status,
            RowStatus::Lead,
            "{c}: {:?}",
            lead.rows[1]
        );
        options.profile = Profile::Sklearn;
        let pass = read(&data, &options);
        assert_eq!(pass.rows[0].status, RowStatus::Pass, "{c}");
        assert_eq!(
            pass.rows[1].status,
            RowStatus::Pass,
            "{c}: {:?}",
            pass.rows[1]
        );
        assert!(pass.rows[1].summary.contains("socair-sklearn/1"));
        assert_eq!(pass.tensors, lead.tensors, "{c}");
        assert!(pass.tensors.len() >= 3, "{c}");
        assert_eq!(pass.tensors[0].inline.is_some(), c != "none", "{c}");
    }
}

/// Under `socair-sklearn/1`, every array `joblib.load` gives (`.expected.json`) is
/// described, by its path, in every container (a forest's trees' `nodes` and `values`
/// included: `Tree.__reduce__`'s state, which socair-data/1 does not follow).
#[test]
fn every_array_joblib_load_gives_is_described_under_the_sklearn_profile() {
    let options = ReadOptions {
        profile: Profile::Sklearn,
        ..Default::default()
    };
    for model in ["logreg", "forest", "pipeline", "arrays"] {
        for c in ["zlib", "gzip", "bz2", "lzma", "xz", "lz4", "none"] {
            let name = format!("z-{model}-{c}");
            let want: serde_json::Value =
                serde_json::from_slice(&fixture(&format!("{name}.expected.json"))).unwrap();
            let mut want: Vec<(String, String)> = want["arrays"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    // The expected files keep a big-endian array's stored order; joblib.load
                    // gives it back in native order, as it is described.
                    let dtype = a["dtype"].as_str().unwrap();
                    let dtype = match dtype.strip_prefix('>') {
                        Some(rest) => format!("<{rest}"),
                        None => dtype.to_owned(),
                    };
                    (a["path"].as_str().unwrap().into(), dtype)
                })
                .collect();
            let opened = read(&fixture(&format!("{name}.joblib")), &options);
            let mut got: Vec<(String, String)> = opened
                .tensors
                .iter()
                .map(|t| (t.name.to_string(), t.dtype.to_string()))
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{name}");
            assert!(opened.unread.is_empty(), "{name}: {:?}", opened.unread);
        }
    }
}

/// The fallback for a machine without cargo-fuzz: the fuzz target's property over every
/// committed fixture (under 100 kB) and 300 deterministic mutations of each (bytes changed,
/// cut, inserted), compressed or not.
#[test]
fn mutated_fixtures_keep_the_properties() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/joblib");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "joblib") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        if data.len() > 100_000 {
            continue;
        }
        files += 1;
        socair_joblib::fuzzing::joblib_reader(&data);
        for _ in 0..300 {
            let mut m = data.clone();
            let at = (next() as usize) % m.len().max(1);
            match next() % 4 {
                0 => m.truncate(at),
                1 => m.insert(at, next() as u8),
                _ => {
                    if let Some(b) = m.get_mut(at) {
                        *b = next() as u8;
                    }
                }
            }
            socair_joblib::fuzzing::joblib_reader(&m);
        }
    }
    assert!(files > 30, "{files}");
}
