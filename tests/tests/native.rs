//! The native plugin end to end: XGBoost JSON and UBJSON models, LightGBM text models and Flax
//! msgpack state dicts written by xgboost 3.2.0, lightgbm 4.6.0 and flax 0.12.8
//! (fixtures/native, from its make_fixtures.py), scanned and fingerprinted by the built socair,
//! against the arrays each library's own loader parsed (expected.json), and the hostile
//! variants refused or LEAD at the place the generator names.

use crate::common::{fixture, json, report_plugins, run, socair};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("native/expected.json")).unwrap())
}

fn tensors(path: &std::path::Path) -> BTreeMap<String, Value> {
    let r = run(socair().arg("tensors").arg(path));
    assert_eq!(r.code, 0, "{}: {}", path.display(), r.stderr);
    json(&r.stdout)["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect()
}

fn scan(path: &std::path::Path) -> (i32, Value) {
    let r = run(socair().arg("scan").arg(path));
    (r.code, json(&r.stdout))
}

fn element(numpy: &str) -> &'static str {
    match numpy {
        "float32" => "F32",
        "float64" => "F64",
        "float16" => "F16",
        "bfloat16" => "BF16",
        "int8" => "I8",
        "int32" => "I32",
        "int64" => "I64",
        "uint8" => "U8",
        "uint32" => "U32",
        other => panic!("{other}"),
    }
}

#[test]
fn models_the_libraries_wrote_pass_and_every_array_fingerprints_as_the_library_parsed_it() {
    let e = expected();
    let mut checked = 0;
    for (lib, format_of) in [
        ("xgboost", None),
        ("lightgbm", Some("lightgbm-text")),
        ("flax", Some("flax-msgpack")),
    ] {
        for (rel, want) in e[lib].as_object().unwrap() {
            let path = fixture(&format!("native/{rel}"));
            let (code, report) = scan(&path);
            assert_eq!(code, 0, "{rel}: {:#}", report["rows"]);
            let format = format_of.unwrap_or(if rel.ends_with(".ubj") {
                "xgboost-ubj"
            } else {
                "xgboost-json"
            });
            assert_eq!(report["artifact"]["format"], format, "{rel}");
            assert!(
                report["rows"][0]["summary"]
                    .as_str()
                    .unwrap()
                    .starts_with("read as data"),
                "{rel}: {:#}",
                report["rows"]
            );
            let got = tensors(&path);
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.as_object().unwrap().keys().collect::<Vec<_>>(),
                "{rel}: the arrays the library parsed, by path"
            );
            for (name, w) in want.as_object().unwrap() {
                let t = &got[name];
                assert_eq!(t["shape"], w["shape"], "{rel}: {name}");
                let dtype = w["dtype"].as_str().unwrap();
                if rel.ends_with(".ubj") {
                    // Stored big-endian: `sha256` is of the stored bytes; `values` of an F32 is
                    // of its little-endian binary32 elements, as NumPy holds them.
                    assert_eq!(t["sha256"], w["sha256_be"], "{rel}: {name}");
                    if dtype == "float32" {
                        assert_eq!(t["values"], w["sha256"], "{rel}: {name}");
                    }
                } else {
                    assert_eq!(t["sha256"], w["sha256"], "{rel}: {name}");
                    assert!(
                        t["dtype"].as_str().unwrap().starts_with(element(dtype))
                            || t["dtype"] == dtype,
                        "{rel}: {name}: {} for {dtype}",
                        t["dtype"]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "{checked} arrays checked");
}

#[test]
fn a_json_model_and_its_ubj_twin_hold_the_same_arrays() {
    let e = expected();
    for name in ["binary", "multiclass", "dart", "gblinear"] {
        let j = tensors(&fixture(&format!("native/xgboost/{name}.json")));
        let u = tensors(&fixture(&format!("native/xgboost/{name}.ubj")));
        assert_eq!(j.len(), u.len(), "{name}");
        let want = &e["xgboost"][format!("xgboost/{name}.ubj")];
        for (k, t) in &j {
            assert_eq!(t["sha256"], want[k]["sha256"], "{name}: {k}");
            assert_eq!(u[k]["sha256"], want[k]["sha256_be"], "{name}: {k}");
        }
    }
}

#[test]
fn hostile_and_malformed_files_are_refused_or_leads_at_their_place() {
    let e = expected();
    let hostile = e["hostile"].as_object().unwrap();
    assert!(hostile.len() >= 20);
    for (rel, want) in hostile {
        let (code, report) = scan(&fixture(&format!("native/{rel}")));
        let row = &report["rows"][0];
        let verdict = want["verdict"].as_str().unwrap();
        assert_eq!(row["status"], verdict, "{rel}: {row:#}");
        assert_eq!(code, 1, "{rel}: {row:#}");
        let place = want["place"].as_str().unwrap();
        assert!(
            row["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["place"].as_str().unwrap().starts_with(place)),
            "{rel}: no finding at {place}: {row:#}"
        );
    }
}

#[test]
fn the_place_and_the_kept_value_of_a_duplicate_are_named() {
    let (_, report) = scan(&fixture("native/xgboost/hostile/duplicate.json"));
    let f = &report["rows"][0]["findings"][0];
    assert_eq!(f["place"], "learner.objective.name");
    assert!(
        f["reason"]
            .as_str()
            .unwrap()
            .contains("XGBoost keeps the last"),
        "{f}"
    );
    let (_, report) = scan(&fixture("native/lightgbm/hostile/tree-sizes-outside.txt"));
    assert!(
        report["rows"][0]["findings"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("begins no line of the file"),
        "{:#}",
        report["rows"]
    );
}

#[test]
fn a_model_directory_reads_its_flax_msgpack_and_leaves_its_json_companions_to_the_companion_rules()
{
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("native/flax/flax_model.msgpack"),
        dir.path().join("flax_model.msgpack"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        br#"{"version": "1.0", "learner": {"x": 1}, "model_type": "bert"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tokenizer.json"),
        br#"{"version":"1.0","truncation":null}"#,
    )
    .unwrap();
    let (code, report) = scan(dir.path());
    assert_eq!(code, 0, "{:#}", report["rows"]);
    assert_eq!(report["artifact"]["format"], "model directory");
    let plugins = report_plugins(&report);
    assert_eq!(plugins, ["native"]);
    let m = tensors(dir.path());
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m.contains_key("model.embed"), "{m:?}");
}

#[test]
fn the_plugin_is_listed_with_its_formats() {
    let r = run(socair().arg("plugins"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for format in [
        "xgboost-json",
        "xgboost-ubj",
        "lightgbm-text",
        "flax-msgpack",
    ] {
        assert!(r.stdout.contains(format), "{format}: {}", r.stdout);
    }
}
