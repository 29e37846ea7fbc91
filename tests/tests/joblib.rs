//! The joblib plugin (`plugins/joblib`, plugin `joblib`) end to end: the built `socair` on the
//! files joblib 1.5.3 wrote with scikit-learn 1.9.1 and NumPy 2.4.6 (`fixtures/joblib/z-*`, by
//! `fixtures/joblib/make_compressed.py`), each checked against what `joblib.load` gave for it
//! (its `.expected.json`): the compressor, the verdicts, every numeric array's fingerprint, and
//! what joblib does with streams that end early, trailing bytes and bombs.

use crate::common::{fixture, has_finding, json, report_plugins, report_row, run, socair};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

const COMPRESSORS: [&str; 7] = ["zlib", "gzip", "bz2", "lzma", "xz", "lz4", "none"];
const MODELS: [&str; 4] = ["logreg", "forest", "pipeline", "arrays"];

fn path(name: &str) -> PathBuf {
    fixture(&format!("joblib/{name}.joblib"))
}

fn expected(name: &str) -> Value {
    json(&std::fs::read_to_string(fixture(&format!("joblib/{name}.expected.json"))).unwrap())
}

fn scan(name: &str) -> Value {
    let r = run(socair().args(["scan", "--json"]).arg(path(name)));
    assert!(r.code == 0 || r.code == 1, "{name}: {}", r.stderr);
    json(&r.stdout)
}

#[test]
fn the_plugin_is_listed_reading_joblib() {
    let r = run(socair().args(["plugins", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listing = json(&r.stdout);
    let joblib = listing["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "joblib")
        .unwrap_or_else(|| panic!("joblib not loaded: {listing:#}"));
    assert_eq!(joblib["reads"], serde_json::json!(["joblib"]));
}

#[test]
fn every_dump_is_read_by_the_joblib_reader_alone_with_joblibs_compressor() {
    for model in MODELS {
        for c in COMPRESSORS {
            let name = format!("z-{model}-{c}");
            let want = expected(&name);
            assert_eq!(want["loads"], true, "{name}: joblib.load read it");
            let report = scan(&name);
            assert_eq!(report["artifact"]["format"], "joblib", "{name}");
            // One reading: torch-legacy leaves the uncompressed ones to joblib.
            assert_eq!(report_plugins(&report), vec!["joblib"], "{name}");
            let structure = report_row(&report, "Format and structure");
            assert_eq!(structure["status"], "PASS", "{name}: {structure:#}");
            let joblib_name = if c == "none" { "not-compressed" } else { c };
            assert_eq!(want["compressor"], joblib_name);
            let summary = structure["summary"].as_str().unwrap();
            assert!(
                summary.contains(&format!("({joblib_name}-compressed")) || c == "none",
                "{name}: {summary}"
            );
            // A benign dump never FAILs: joblib.load reads it without running code.
            let pickle = report_row(&report, "Pickle opcode scan");
            assert_ne!(pickle["status"], "FAIL", "{name}: {pickle:#}");
        }
    }
}

#[test]
fn a_dict_of_arrays_passes_and_estimators_are_leads_under_socair_data() {
    for c in COMPRESSORS {
        let report = scan(&format!("z-arrays-{c}"));
        let pickle = report_row(&report, "Pickle opcode scan");
        // NumPy arrays (numeric, and an object array of str, int and None) in a dict: data.
        assert_eq!(pickle["status"], "PASS", "z-arrays-{c}: {pickle:#}");
        for model in ["logreg", "forest", "pipeline"] {
            let report = scan(&format!("z-{model}-{c}"));
            let pickle = report_row(&report, "Pickle opcode scan");
            assert_eq!(pickle["status"], "LEAD", "z-{model}-{c}: {pickle:#}");
            assert!(
                has_finding(pickle, "", "sklearn."),
                "z-{model}-{c}: {pickle:#}"
            );
        }
    }
}

#[test]
fn every_numeric_array_fingerprints_as_joblib_load_gives_it() {
    let mut arrays = 0;
    for model in MODELS {
        for c in COMPRESSORS {
            let name = format!("z-{model}-{c}");
            let want = expected(&name);
            let r = run(socair().args(["tensors", "--json"]).arg(path(&name)));
            let m = json(&r.stdout);
            let got: BTreeMap<String, (String, Value)> = m["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap().to_owned(),
                        (t["sha256"].as_str().unwrap().to_owned(), t["shape"].clone()),
                    )
                })
                .collect();
            // The host hashes an array's elements in row-major order: `tobytes(order='C')`,
            // which is `order='A'` for every array but a Fortran-ordered one.
            // Under socair-data/1 (no profile asked for) the pickle machine does not follow
            // `sklearn.tree._tree.Tree`'s REDUCE, so a forest's trees' `nodes` and `values`
            // are not named (plugins/shared/pickle); under socair-sklearn/1 they are (the joblib
            // plugin's unit test `every_array_joblib_load_gives_is_described_…`).
            // A big-endian array: joblib.load gives it back byte-swapped into native order,
            // as socair fingerprints it; these expected files keep the stored
            // order, so its digest is checked by
            // `a_big_endian_array_is_fingerprinted_as_joblib_load_gives_it` and only its name
            // and shape here.
            let swapped: Vec<String> = want["arrays"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| a["dtype"].as_str().unwrap().starts_with('>'))
                .map(|a| a["path"].as_str().unwrap().to_owned())
                .collect();
            let mut got = got;
            for p in &swapped {
                let (_, shape) = got.remove(p).unwrap_or_else(|| panic!("{name}: no {p}"));
                let w = want["arrays"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|a| a["path"] == p.as_str())
                    .unwrap();
                assert_eq!(shape, w["shape"], "{name}: {p}");
            }
            let want: BTreeMap<String, (String, Value)> = want["arrays"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| !a["path"].as_str().unwrap().contains("tree_."))
                .filter(|a| !a["dtype"].as_str().unwrap().starts_with('>'))
                .map(|a| {
                    (
                        a["path"].as_str().unwrap().to_owned(),
                        (
                            a["sha256_c"].as_str().unwrap().to_owned(),
                            a["shape"].clone(),
                        ),
                    )
                })
                .collect();
            assert_eq!(got, want, "{name}: {}", r.stdout);
            arrays += want.len();
        }
    }
    assert!(arrays > 100, "{arrays}");
}

#[test]
fn code_after_an_array_is_found_in_every_stream() {
    for c in ["zlib", "gzip", "bz2", "none"] {
        let name = format!("z-hostile-system-after-array-{c}");
        let report = scan(&name);
        assert_eq!(report_plugins(&report), vec!["joblib"], "{name}");
        let pickle = report_row(&report, "Pickle opcode scan");
        assert_eq!(pickle["status"], "FAIL", "{name}: {pickle:#}");
        let place = if c == "none" {
            "byte "
        } else {
            "inflated byte "
        };
        assert!(has_finding(pickle, place, "system"), "{name}: {pickle:#}");
    }
}

#[test]
fn a_bomb_is_a_lead_naming_the_bound_and_is_stopped_there() {
    let started = std::time::Instant::now();
    let report = scan("z-bomb-zlib");
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    let structure = report_row(&report, "Format and structure");
    assert_eq!(structure["status"], "LEAD", "{structure:#}");
    assert!(
        has_finding(structure, "byte 0", "64 MiB + 8x its size"),
        "{structure:#}"
    );
}

#[test]
fn the_end_of_each_stream_is_read_as_joblib_load_reads_it() {
    for c in ["zlib", "gzip", "bz2", "lzma", "xz", "lz4"] {
        // A stream cut in half: joblib.load raises.
        let name = format!("z-truncated-{c}");
        assert_eq!(expected(&name)["loads"], false, "{name}");
        let structure = report_row(&scan(&name), "Format and structure").clone();
        assert_eq!(structure["status"], "FAIL", "{name}: {structure:#}");
        assert!(
            has_finding(&structure, "byte 0", c),
            "{name}: {structure:#}"
        );
        // 64 bytes after the stream: ignored by bz2.BZ2File and lzma.LZMAFile (a LEAD that
        // names them), a loop for joblib's BinaryZlibFile, an error for LZ4FrameFile.
        let name = format!("z-trailing-{c}");
        let loads = expected(&name)["loads"].as_bool().unwrap();
        let structure = report_row(&scan(&name), "Format and structure").clone();
        let (status, reason) = if loads {
            ("LEAD", "64 bytes after the last")
        } else {
            ("FAIL", "64 bytes follow its")
        };
        assert_eq!(structure["status"], status, "{name}: {structure:#}");
        assert!(
            has_finding(&structure, "byte ", reason),
            "{name}: {structure:#}"
        );
        assert_eq!(loads, matches!(c, "bz2" | "lzma" | "xz"), "{name}");
    }
    // A second gzip member: joblib's BinaryGzipFile reads one.
    assert_eq!(expected("z-concat-gzip")["loads"], false);
    let structure = report_row(&scan("z-concat-gzip"), "Format and structure").clone();
    assert_eq!(structure["status"], "FAIL", "{structure:#}");
    assert!(
        has_finding(&structure, "byte ", "never returns"),
        "{structure:#}"
    );
}

#[test]
fn a_zf_file_of_joblib_before_0_10_is_read_through_read_zfile() {
    assert_eq!(expected("z-compat-zf")["loads"], true);
    let report = scan("z-compat-zf");
    assert_eq!(report["artifact"]["format"], "joblib");
    let structure = report_row(&report, "Format and structure");
    assert_eq!(structure["status"], "PASS", "{structure:#}");
    assert!(structure["summary"].as_str().unwrap().contains("compat"));
    assert_eq!(expected("z-compat-zf-short")["loads"], false);
    let structure = report_row(&scan("z-compat-zf-short"), "Format and structure").clone();
    assert_eq!(structure["status"], "FAIL", "{structure:#}");
    assert!(has_finding(&structure, "byte 2", "assert"), "{structure:#}");
}

#[test]
fn joblib_16_dumps_are_the_joblib_readers_and_plain_pickles_stay_torch_legacys() {
    // fixtures/joblib/plain-*, written by joblib 1.6.0 and pickle (fixtures/joblib/make_fixtures.py),
    // with every array joblib.load gives in expected.json (C-ordered: tobytes() is row-major).
    let e = json(&std::fs::read_to_string(fixture("joblib/expected.json")).unwrap());
    let mut dumps = 0;
    for (file, arrays) in e.as_object().unwrap() {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("joblib/{file}"))));
        let report = json(&r.stdout);
        if file.ends_with(".pkl") {
            assert_eq!(report_plugins(&report), vec!["torch-zip"], "{file}");
            continue;
        }
        dumps += 1;
        assert_eq!(report_plugins(&report), vec!["joblib"], "{file}");
        assert_eq!(report["artifact"]["format"], "joblib", "{file}");
        let r = run(socair()
            .args(["tensors", "--json"])
            .arg(fixture(&format!("joblib/{file}"))));
        let mut got = crate::common::tensor_hashes(&json(&r.stdout));
        // expected.json gives no sha256 for a record dtype (a tree's `nodes`, `|V64`); a
        // tree's arrays are not named under socair-data/1 (see above).
        let want: BTreeMap<String, String> = arrays
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| !a["path"].as_str().unwrap().starts_with("tree_."))
            .filter_map(|a| {
                let path = a["path"].as_str().unwrap().to_owned();
                match a["sha256"].as_str() {
                    Some(sha) => Some((path, sha.to_owned())),
                    None => {
                        got.remove(&path);
                        None
                    }
                }
            })
            .collect();
        assert_eq!(got, want, "{file}");
    }
    assert!(dumps >= 5, "{dumps}");
}

#[test]
fn estimators_pass_under_a_pinned_socair_sklearn_and_are_leads_without_it() {
    let s = crate::common::Store::new();
    let scanner = s.key("scanner.key", "scan");
    let r = s.run(&["airlock", "pin", "rules", "socair-sklearn", "=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut passed = 0;
    for model in ["logreg", "forest", "pipeline"] {
        for c in COMPRESSORS {
            let name = format!("z-{model}-{c}");
            let src = s.dir.path().join(format!("{name}.joblib"));
            std::fs::copy(path(&name), &src).unwrap();
            let report = s.pull_and_scan(&src, &scanner);
            let pickle = report_row(&report, "Pickle opcode scan");
            assert_eq!(pickle["status"], "PASS", "{name}: {pickle:#}");
            assert!(
                pickle["summary"]
                    .as_str()
                    .unwrap()
                    .contains("socair-sklearn/1"),
                "{name}: {pickle:#}"
            );
            // The same asked for per scan (`socair scan --profile sklearn`).
            let r = run(socair()
                .args(["scan", "--json", "--profile", "sklearn"])
                .arg(path(&name)));
            assert_eq!(r.code, 0, "{name}: {}", r.stderr);
            passed += 1;
            // Without either: a LEAD (a_dict_of_arrays_passes_and_estimators_are_leads_…).
        }
    }
    assert_eq!(passed, 21);
}

#[test]
fn a_dump_whose_first_wrapper_is_past_the_head_is_read_in_joblib_mode_by_torch_legacy() {
    // The joblib reader claims only what the first bytes show; torch-zip's legacy reader reads
    // the rest of the pickles, and reads one naming joblib's wrappers as joblib.load does:
    // not the false FAIL of its array bytes run as opcodes.
    let want = expected("z-late-wrapper-none");
    assert_eq!(want["loads"], true);
    let report = scan("z-late-wrapper-none");
    assert_eq!(report_plugins(&report), vec!["torch-zip"]);
    let pickle = report_row(&report, "Pickle opcode scan");
    assert_eq!(pickle["status"], "PASS", "{pickle:#}");
    assert!(
        pickle["summary"].as_str().unwrap().contains("w (<f8 [4])"),
        "{pickle:#}"
    );
}

// Dumps of the joblib scikit-learn <= 0.20 bundled (fixtures/joblib/
// make_sklearn_externals.py: scikit-learn's own `test_old_pickle` bytes, and joblib 1.4.2 dumps
// under the vendored module name), read as joblib.load reads them (every array it gave back in
// skext.expected.json), not as pickle code.
#[test]
fn a_dump_of_scikit_learns_bundled_joblib_is_read_as_joblib_reads_it() {
    let e = json(&std::fs::read_to_string(fixture("joblib/skext.expected.json")).unwrap());
    let mut arrays = 0;
    for (name, want) in e.as_object().unwrap() {
        let data = std::fs::read(path(name)).unwrap();
        let named = data
            .windows(37)
            .any(|w| w == b"sklearn.externals.joblib.numpy_pickle");
        assert!(named || name.ends_with("zlib"), "{name}");
        let report = scan(name);
        assert_eq!(report_plugins(&report), vec!["joblib"], "{name}");
        let pickle = report_row(&report, "Pickle opcode scan");
        assert_eq!(pickle["status"], "PASS", "{name}: {pickle:#}");
        let structure = report_row(&report, "Format and structure");
        assert_eq!(structure["status"], "PASS", "{name}: {structure:#}");
        let r = run(socair().args(["tensors", "--json"]).arg(path(name)));
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let got: Vec<String> = crate::common::tensor_hashes(&json(&r.stdout))
            .into_values()
            .collect();
        let mut want: Vec<String> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["sha256"].as_str().unwrap().to_owned())
            .collect();
        let mut got = got;
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name}: {}", r.stdout);
        arrays += want.len();
    }
    assert_eq!(arrays, 11);
}

// Estimators holding scikit-learn's loss objects (SGD's Cython `Hinge`, a GLM's
// `HalfTweedieLoss` with its `CyHalfTweedieLoss(power)`, links and intervals) and NumPy's
// scalar types as parameters (`OneHotEncoder(dtype=np.float64)`), pickled and dumped by
// scikit-learn 1.9.1 (fixtures/joblib/make_sklearn_losses.py), PASS under `--profile sklearn`;
// without it they are LEADs whose first finding names that profile and the command.
#[test]
fn loss_objects_and_numpy_types_pass_under_the_sklearn_profile_which_the_verdict_names() {
    let e = json(&std::fs::read_to_string(fixture("joblib/sk40.expected.json")).unwrap());
    let mut files = 0;
    for (name, want) in e.as_object().unwrap() {
        assert_eq!(want["predicts_the_same"], true, "{name}");
        let file = fixture(&format!("joblib/{name}"));
        let r = run(socair()
            .args(["scan", "--json", "--profile", "sklearn"])
            .arg(&file));
        assert_eq!(r.code, 0, "{name}: {}", r.stdout);
        let r = run(socair().args(["scan", "--json"]).arg(&file));
        assert_eq!(r.code, 1, "{name}");
        let report = json(&r.stdout);
        let pickle = report_row(&report, "Pickle opcode scan");
        assert_eq!(pickle["status"], "LEAD", "{name}: {pickle:#}");
        let first = pickle["findings"][0]["reason"].as_str().unwrap();
        assert!(
            first.contains("socair-sklearn/1") && first.contains("`socair scan --profile sklearn`"),
            "{name}: {pickle:#}"
        );
        files += 1;
    }
    assert_eq!(files, 12);
}

// A big-endian array in a joblib dump (fixtures/joblib/make_big_endian.py, joblib
// 1.6.0) is fingerprinted as `joblib.load` gives it back: swapped into native (little-endian)
// order, its dtype `<`, Fortran order read row-major; compressed or not.
#[test]
fn a_big_endian_array_is_fingerprinted_as_joblib_load_gives_it() {
    let e = json(&std::fs::read_to_string(fixture("joblib/be.expected.json")).unwrap());
    for (name, want) in e.as_object().unwrap() {
        let r = run(socair().args(["tensors", "--json"]).arg(path(name)));
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let got = crate::common::tensor_hashes(&json(&r.stdout));
        assert_eq!(got, expected_hashes(want), "{name}: {}", r.stdout);
        assert_eq!(got.len(), 5);
    }
}

/// An expected.json list of `{path, sha256}` as a map.
fn expected_hashes(list: &serde_json::Value) -> BTreeMap<String, String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_owned(),
                a["sha256"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

// A model pickled below protocol 3 (fixtures/joblib/make_low_protocol.py, scikit-learn
// 1.9.1): its arrays' bytes are latin-1 text in the pickle; `socair tensors` fingerprints each as
// `pickle.load` gives it (under socair-data/1, the estimator's attributes at protocol 2; at
// protocol 0 `copyreg._reconstructor` of a class outside the profile is not followed).
#[test]
fn arrays_pickled_below_protocol_3_are_fingerprinted_as_numpy_holds_them() {
    let e = json(&std::fs::read_to_string(fixture("joblib/lowproto.expected.json")).unwrap());
    let name = "lowproto-logreg-p2.pkl";
    let r = run(socair()
        .args(["tensors", "--json"])
        .arg(fixture(&format!("joblib/{name}"))));
    let got = crate::common::tensor_hashes(&json(&r.stdout));
    assert_eq!(got, expected_hashes(&e[name]), "{}", r.stdout);
    let r = run(socair()
        .args(["scan", "--json", "--profile", "sklearn"])
        .arg(fixture("joblib/lowproto-forest-p2.pkl")));
    assert_eq!(r.code, 0, "{}", r.stdout);
    let report = json(&r.stdout);
    let summary = report_row(&report, "Pickle opcode scan")["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        summary.contains("estimators_.1.tree_.values (<f8 ["),
        "{summary}"
    );
}
