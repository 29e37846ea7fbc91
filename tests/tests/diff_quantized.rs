//! `socair tensors diff` across quantization: a float Llama-shaped model against its GGUF
//! quantizations by gguf-py's reference quantizers (Q8_0, Q5_1, Q4_0, MXFP4), honest and with
//! a rank-one edit of a few rows of one matrix made before quantizing
//! (fixtures/diff/quantized/make_quantized.py; expected.json names the edit).

use crate::common::{fixture, json, run, socair};
use serde_json::Value;

fn cases() -> Vec<Value> {
    json(&std::fs::read_to_string(fixture("diff/quantized/expected.json")).unwrap())["cases"]
        .as_array()
        .unwrap()
        .clone()
}

/// Diffs `artifact` against the float model, either way round; the comparison with the GGUF as
/// the artifact, checked to count the same as the other order.
fn diff_both_ways(artifact: &str) -> Value {
    let gguf = fixture(&format!("diff/quantized/{artifact}"));
    let float = fixture("diff/quantized/model.safetensors");
    let out = run(socair().args(["tensors", "diff"]).arg(&gguf).arg(&float));
    assert_eq!(
        out.code, 1,
        "a quantized model is not a match: {}",
        out.stderr
    );
    let c = json(&out.stdout);
    let back = run(socair().args(["tensors", "diff"]).arg(&float).arg(&gguf));
    let b = json(&back.stdout);
    for k in [
        "same_weights_quantized",
        "differs_beyond_quantization",
        "not_comparable",
        "unpermuted",
    ] {
        assert_eq!(
            c["accounting"][k], b["accounting"][k],
            "{artifact}: {k} either way"
        );
    }
    c
}

#[test]
fn an_honest_quantization_is_the_same_weights_in_every_tensor() {
    let honest: Vec<Value> = cases()
        .into_iter()
        .filter(|c| c["edited"].is_null())
        .collect();
    assert_eq!(honest.len(), 4, "Q8_0, Q5_1, Q4_0, MXFP4");
    for case in honest {
        let name = case["artifact"].as_str().unwrap();
        let c = diff_both_ways(name);
        let a = &c["accounting"];
        // 2 layers x 7 matrices + embeddings + output, all quantized; 5 norms F32.
        assert_eq!(a["same_weights_quantized"], 16, "{name}: {a}");
        assert_eq!(a["differs_beyond_quantization"], 0, "{name}");
        assert_eq!(a["not_comparable"], 0, "{name}");
        assert_eq!(a["differs"], 0, "{name}");
        assert_eq!(a["only_in_artifact"], 0, "{name}");
        assert_eq!(a["only_in_reference"], 0, "{name}");
        for p in c["pairs"].as_array().unwrap() {
            if p["outcome"] != "same_weights_quantized" {
                continue;
            }
            let q = &p["quantized"];
            assert_eq!(q["elements_beyond_bound"], 0, "{name}: {p}");
            assert!(q["max_error_over_bound"].as_f64().unwrap() <= 1.0);
            assert_eq!(q["bound"], "reference", "{name}");
            // The converter's names: blk.N.attn_q is model.layers.N.self_attn.q_proj, its rows
            // permuted (undone to compare).
            let g = p["artifact"]["name"].as_str().unwrap();
            if g.contains(".attn_q.") || g.contains(".attn_k.") {
                assert_eq!(p["transform"], "unpermute", "{name}: {g}");
            }
            let layer = g.split('.').nth(1).unwrap();
            if g.starts_with("blk.") {
                assert!(
                    p["reference"]["name"]
                        .as_str()
                        .unwrap()
                        .starts_with(&format!("model.layers.{layer}.")),
                    "{name}: {g} paired with {}",
                    p["reference"]["name"]
                );
            }
        }
    }
}

#[test]
fn a_rank_one_edit_of_a_few_rows_differs_beyond_quantization_in_that_tensor_only() {
    let edited: Vec<Value> = cases()
        .into_iter()
        .filter(|c| !c["edited"].is_null())
        .collect();
    assert_eq!(edited.len(), 4);
    for case in edited {
        let name = case["artifact"].as_str().unwrap();
        let edit = &case["edited"];
        let c = diff_both_ways(name);
        let a = &c["accounting"];
        assert_eq!(a["differs_beyond_quantization"], 1, "{name}: {a}");
        assert_eq!(a["same_weights_quantized"], 15, "{name}");
        let beyond: Vec<&Value> = c["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["outcome"] == "differs_beyond_quantization")
            .collect();
        let p = beyond[0];
        assert_eq!(p["artifact"]["name"], edit["gguf"], "{name}");
        assert_eq!(p["reference"]["name"], edit["hf"], "{name}");
        let q = &p["quantized"];
        // Exactly the edited rows leave the bound, and they are the ones named.
        let mut rows: Vec<u64> = q["rows_listed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["row"].as_u64().unwrap())
            .collect();
        rows.sort_unstable();
        let want: Vec<u64> = edit["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_u64().unwrap())
            .collect();
        assert_eq!(rows, want, "{name}: {q}");
        assert_eq!(q["rows_beyond_bound"], 3, "{name}");
        assert_eq!(q["same_weights"], false, "{name}");
        // The edit was 4 steps: the error is a few steps, well past the bound.
        let step = edit["step"].as_f64().unwrap();
        let max = q["max_abs_error"].as_f64().unwrap();
        assert!(
            max > 2.0 * step && max < 8.0 * step,
            "{name}: {max} vs step {step}"
        );
    }
}

#[test]
fn the_terminal_names_the_tensor_and_rows_beyond_quantization() {
    let out = run(socair()
        .args(["tensors", "diff"])
        .arg(fixture("diff/quantized/llama-q4_0-edited.gguf"))
        .arg(fixture("diff/quantized/model.safetensors")));
    assert_eq!(out.code, 1);
    // The summary a person reads is on standard error, the JSON on standard output.
    let text = &out.stderr;
    assert!(text.contains("15 quantized"), "{text}");
    assert!(text.contains("1 differ (1 beyond quantization)"), "{text}");
    assert!(text.contains("differ beyond quantization (1):"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("blk.1.attn_v.weight (Q4_0 vs F32"))
        .unwrap_or_else(|| panic!("{text}"));
    for row in ["row 3 ", "row 17 ", "row 29 "] {
        assert!(line.contains(row), "{line}");
    }
}

/// The GGUFs ggml's own searching quantizers wrote (make_search_quants.py): Q4_K, whose
/// reference quantizer searches scales, and Q4_0 under an importance matrix.
#[test]
fn searching_quantizers_are_the_same_weights_and_their_edits_are_not() {
    let expected =
        json(&std::fs::read_to_string(fixture("diff/quantized/search-expected.json")).unwrap());
    let cases = expected["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let name = case["artifact"].as_str().unwrap();
        let out = run(socair()
            .args(["tensors", "diff"])
            .arg(fixture(&format!("diff/quantized/{name}")))
            .arg(fixture("diff/quantized/search-model.safetensors")));
        let c = json(&out.stdout);
        let pairs = c["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 2, "{name}: {}", out.stderr);
        for p in pairs {
            let q = &p["quantized"];
            assert_eq!(q["imatrix"], name.contains("imatrix"), "{name}");
            let g = p["artifact"]["name"].as_str().unwrap();
            let edit = &case["edited"];
            if edit.is_null() || edit["gguf"] != g {
                // The quantizer's own error: a little past the bound, scattered.
                assert_eq!(p["outcome"], "same_weights_quantized", "{name}: {g}: {q}");
                assert_eq!(q["outlier_rows"], 0);
                assert_eq!(q["outlier_columns"], 0);
                let share =
                    q["elements_beyond_bound"].as_f64().unwrap() / q["elements"].as_f64().unwrap();
                assert!(share < 0.01, "{name}: {g}: {share}");
                continue;
            }
            assert_eq!(p["outcome"], "differs_beyond_quantization", "{name}: {q}");
            let (kind, listed) = if edit.get("rows").is_some() {
                ("rows", "rows_listed")
            } else {
                ("columns", "columns_listed")
            };
            assert_eq!(q[format!("outlier_{kind}")], 3, "{name}: {q}");
            let mut top: Vec<u64> = q[listed].as_array().unwrap()[..3]
                .iter()
                .map(|r| r["row"].as_u64().unwrap())
                .collect();
            top.sort_unstable();
            let want: Vec<u64> = edit[kind]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_u64().unwrap())
                .collect();
            assert_eq!(top, want, "{name}: {q}");
        }
    }
}
