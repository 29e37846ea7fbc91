//! `socair tensors diff` and the Tensor reference row on real-shaped cases
//! (fixtures/diff/make_fixtures.py; the expected counts are computed there, in Python, from
//! the written files).

use crate::common::{fixture, json, run, socair};
use serde_json::Value;

fn comparisons() -> Vec<Value> {
    json(&std::fs::read_to_string(fixture("diff/expected.json")).unwrap())["comparisons"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn every_comparison_gives_the_expected_counts_and_pairs() {
    let cases = comparisons();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let (a, r) = (
            case["artifact"].as_str().unwrap(),
            case["reference"].as_str().unwrap(),
        );
        let out = run(socair()
            .args(["tensors", "diff"])
            .arg(fixture(&format!("diff/{a}")))
            .arg(fixture(&format!("diff/{r}"))));
        let c = json(&out.stdout);
        assert_eq!(c["schema"], "socair.tensors.diff/v1");
        // expected.json says what the two files' encodings allow ("not comparable": a
        // block-quantized tensor against a float); with both models at hand the quantized one
        // is measured against its blocks' bounds, and every such pair here is a float tensor
        // quantized by gguf-py's reference quantizer: the same weights, quantized.
        fn measured(k: &str) -> &str {
            match k {
                "not_comparable" => "same_weights_quantized",
                other => other,
            }
        }
        for (k, v) in case["counts"].as_object().unwrap() {
            assert_eq!(
                &c["summary"][measured(k)],
                v,
                "{a} vs {r}: {k}: {}",
                out.stderr
            );
        }
        assert_eq!(c["summary"]["not_comparable"], 0, "{a} vs {r}");
        let own_name_match = case["counts"]["identical"].as_u64().unwrap()
            + case["counts"]["same_values"].as_u64().unwrap();
        let all_match = case["pairs"].as_array().unwrap().len() as u64 == own_name_match
            && case["counts"]["only_in_artifact"] == 0
            && case["counts"]["only_in_reference"] == 0;
        assert_eq!(out.code, if all_match { 0 } else { 1 }, "{a} vs {r}");
        assert_eq!(c["matches"], all_match);
        // Every expected pair is there with its outcome.
        for p in case["pairs"].as_array().unwrap() {
            let got = c["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["artifact"]["name"] == p["artifact"])
                .unwrap_or_else(|| panic!("{a} vs {r}: no pair for {}", p["artifact"]));
            assert_eq!(got["reference"]["name"], p["reference"], "{a} vs {r}");
            let outcome = p["outcome"].as_str().unwrap();
            let want = match outcome {
                "renamed" | "renamed_identical" | "renamed_same_values" => None,
                other => Some(measured(other)),
            };
            if let Some(w) = want {
                assert_eq!(got["outcome"], w, "{a} vs {r}: {}", p["artifact"]);
            }
        }
    }
}

#[test]
fn a_manifest_stands_in_for_its_model_on_either_side() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("reference.tensors.json");
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("diff/reference"))
        .arg("--out")
        .arg(&manifest));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let a = run(socair()
        .args(["tensors", "diff"])
        .arg(fixture("diff/rome-edit"))
        .arg(&manifest));
    let c = json(&a.stdout);
    assert_eq!(c["summary"]["differs"], 1);
    let differs: Vec<&Value> = c["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["outcome"] == "differs")
        .collect();
    assert_eq!(
        differs[0]["artifact"]["name"],
        "model.layers.1.mlp.down_proj.weight"
    );
    assert_eq!(a.code, 1);
    // The same, manifest on the artifact side.
    let b = run(socair()
        .args(["tensors", "diff"])
        .arg(&manifest)
        .arg(fixture("diff/resharded")));
    assert_eq!(b.code, 0, "{}", b.stderr);
    // Something that is JSON but not a manifest is refused, naming it.
    std::fs::write(
        dir.path().join("other.json"),
        "{\"schema\":\"socair.report/v1\"}",
    )
    .unwrap();
    let e = run(socair()
        .args(["tensors", "diff"])
        .arg(dir.path().join("other.json"))
        .arg(&manifest));
    assert_eq!(e.code, 2);
    assert!(e.stderr.contains("other.json"), "{}", e.stderr);
}

#[test]
fn the_reference_row_passes_leads_and_stays_out_of_other_formats() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("reviewed.tensors.json");
    run(socair()
        .arg("tensors")
        .arg(fixture("diff/reference"))
        .arg("--out")
        .arg(&manifest));
    let scan = |target: &str, header_only: bool| {
        let mut cmd = socair();
        cmd.arg("scan");
        if header_only {
            cmd.arg("--header-only");
        }
        let r = run(cmd
            .arg(fixture(&format!("diff/{target}")))
            .env("SOCAIR_TENSOR_REFERENCE", &manifest));
        let report = json(&r.stdout);
        let row = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "Tensor reference")
            .cloned()
            .unwrap_or_else(|| panic!("no reference row: {report:#}"));
        (r.code, row, report)
    };
    let (code, row, report) = scan("resharded", false);
    assert_eq!(row["status"], "PASS", "{row:#}");
    assert_eq!(code, 0);
    assert_eq!(
        report["scope"]["reference_data"]["name"],
        "reviewed.tensors.json"
    );
    assert_eq!(
        report["scope"]["reference_data"]["sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    assert!(
        !report.to_string().contains(dir.path().to_str().unwrap()),
        "no path in the report"
    );

    let (code, row, _) = scan("rome-edit", false);
    assert_eq!(row["status"], "LEAD");
    assert_eq!(code, 1);
    assert!(row["findings"][0]["place"]
        .as_str()
        .unwrap()
        .contains("model.layers.1.mlp.down_proj.weight"));

    let (_, row, _) = scan("renamed", false);
    assert_eq!(
        row["status"], "LEAD",
        "renamed tensors are a difference within one format"
    );

    let (code, row, _) = scan("llama.gguf", false);
    assert_eq!(row["status"], "NOT_TESTED");
    assert!(row["summary"]
        .as_str()
        .unwrap()
        .contains("across file formats"));
    assert_eq!(code, 0, "NOT_TESTED is not a negative verdict");

    let (_, row, report) = scan("rome-edit", true);
    assert_eq!(row["status"], "NOT_TESTED");
    assert_eq!(report["scope"]["mode"], "header-only");

    // Without the variable there is no row.
    let r = run(socair().arg("scan").arg(fixture("diff/resharded")));
    assert!(!r.stdout.contains("Tensor reference"));
}

// ---------------------------------------------------------------------------------------
// What converters really do: llama.cpp's convert_hf_to_gguf.py on tiny GPT-2 and Llama
// models (fixtures/diff/llamacpp/make_llamacpp.py; its expected.json pairs every GGUF tensor
// with the HF tensor the converter's own name map names, and says how, from the files).
// ---------------------------------------------------------------------------------------

const ACCOUNTING_KEYS: [&str; 8] = [
    "identical",
    "same_values",
    "lower_precision",
    "unpermuted",
    "transposed",
    "not_comparable",
    "only_in_artifact",
    "only_in_reference",
];

/// The transform tensor `gguf` has in the f32 conversion of `case`'s model.
fn f32_transform(conversions: &[Value], case: &Value, gguf: &str) -> String {
    let f32_case = conversions
        .iter()
        .find(|c| c["reference"] == case["reference"] && c["outtype"] == "f32")
        .expect("an f32 conversion of the same model");
    f32_case["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["gguf"] == gguf)
        .and_then(|t| t["transform"].as_str())
        .unwrap_or_else(|| panic!("{gguf} in the f32 conversion"))
        .to_owned()
}

#[test]
fn llama_cpp_conversions_are_accounted_for_in_either_order() {
    let expected = json(&std::fs::read_to_string(fixture("diff/llamacpp/expected.json")).unwrap());
    let conversions = expected["conversions"].as_array().unwrap();
    assert_eq!(
        conversions.len(),
        8,
        "GPT-2 and Llama at f32, f16, bf16, q8_0"
    );
    let mut table = String::new();
    for case in conversions {
        let gguf = fixture(&format!(
            "diff/llamacpp/{}",
            case["artifact"].as_str().unwrap()
        ));
        let hf = fixture(&format!(
            "diff/llamacpp/{}",
            case["reference"].as_str().unwrap()
        ));
        for gguf_first in [true, false] {
            let (a, r) = if gguf_first {
                (&gguf, &hf)
            } else {
                (&hf, &gguf)
            };
            let out = run(socair().args(["tensors", "diff"]).arg(a).arg(r));
            assert_eq!(
                out.code, 1,
                "renamed tensors are not a match under their own names"
            );
            let c = json(&out.stdout);
            let label = format!(
                "{} ({})",
                case["artifact"],
                if gguf_first { "GGUF first" } else { "HF first" }
            );
            for k in ACCOUNTING_KEYS {
                let want = match (k, gguf_first) {
                    ("only_in_artifact", false) => &case["counts"]["only_in_reference"],
                    ("only_in_reference", false) => &case["counts"]["only_in_artifact"],
                    _ => &case["counts"][k],
                };
                // expected.json counts the Q8_0 weights as not comparable by their encodings;
                // measured, each is its HF tensor quantized by the converter.
                let k = match k {
                    "not_comparable" => "same_weights_quantized",
                    other => other,
                };
                assert_eq!(&c["accounting"][k], want, "{label}: {k}: {}", out.stderr);
            }
            assert_eq!(c["accounting"]["differs"], 0, "{label}");
            assert_eq!(c["accounting"]["not_comparable"], 0, "{label}");
            assert_eq!(c["accounting"]["differs_beyond_quantization"], 0, "{label}");
            // Every GGUF tensor with the HF tensor it came from, transformed as the converter did.
            for t in case["tensors"].as_array().unwrap() {
                let g = t["gguf"].as_str().unwrap();
                let (gs, hs) = if gguf_first {
                    ("artifact", "reference")
                } else {
                    ("reference", "artifact")
                };
                let pair = c["pairs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p[gs]["name"] == g)
                    .unwrap_or_else(|| panic!("{label}: {g} not paired: {}", out.stderr));
                assert_eq!(pair[hs]["name"], t["hf"], "{label}: {g}");
                let want_outcome = match t["how"].as_str().unwrap() {
                    "quantized" => "same_weights_quantized",
                    "lower_precision" => "lower_precision",
                    "identical" => "identical",
                    _ => match t["transform"].as_str().unwrap() {
                        "unpermute" => "same_values_after_unpermute",
                        "transpose" => "same_values_transposed",
                        _ => "same_values",
                    },
                };
                assert_eq!(pair["outcome"], want_outcome, "{label}: {g}");
                // expected.json names no transform for the Q8_0 weights (it could not compare
                // their values); the converter reshapes a tensor alike at every outtype, so
                // the transform is the one the same tensor has in the f32 conversion.
                let how_converted = if t["how"] == "quantized" {
                    f32_transform(conversions, case, g)
                } else {
                    t["transform"].as_str().unwrap().to_owned()
                };
                let transform = match how_converted.as_str() {
                    "none" => Value::Null,
                    other => Value::from(other),
                };
                assert_eq!(
                    pair.get("transform").cloned().unwrap_or(Value::Null),
                    transform,
                    "{label}: {g}"
                );
                if want_outcome == "lower_precision" {
                    assert_eq!(
                        pair["numbers"]["narrower_is_rounded_wider"], true,
                        "{label}: {g}"
                    );
                    assert!(pair["numbers"]["elements_changed"].as_u64().unwrap() > 0);
                }
            }
            if gguf_first {
                let a = &c["accounting"];
                table.push_str(&format!(
                    "{:<16} {:>3} {:>3} {:>3} {:>3} {:>3} {:>3} {:>3}\n",
                    case["artifact"].as_str().unwrap(),
                    a["identical"],
                    a["same_values"],
                    a["lower_precision"],
                    a["unpermuted"],
                    a["transposed"],
                    a["same_weights_quantized"],
                    a["only_in_artifact"].as_u64().unwrap()
                        + a["only_in_reference"].as_u64().unwrap()
                ));
            }
        }
    }
    eprintln!("artifact         ide sam low unp tra qua left\n{table}");
}

#[test]
fn a_converted_checkpoint_accounts_for_tied_weights_through_its_alias() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture("torch/baseline/hf-gpt2-tied-pytorch_model.bin");
    let converted = dir.path().join("model.safetensors");
    let r = run(socair()
        .arg("convert")
        .arg(&original)
        .arg(&converted)
        .args(["--from", "torch-zip", "--to", "safetensors"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (a, b) in [(&converted, &original), (&original, &converted)] {
        let d = run(socair().args(["tensors", "diff"]).arg(a).arg(b));
        assert_eq!(
            d.code, 0,
            "every tensor accounted for under its own name: {}",
            d.stderr
        );
        let c = json(&d.stdout);
        assert_eq!(c["summary"]["aliased"], 1);
        assert_eq!(c["summary"]["only_in_artifact"], 0);
        assert_eq!(c["summary"]["only_in_reference"], 0);
        let alias = c["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["matched_by"] == "alias")
            .unwrap();
        assert_eq!(alias["outcome"], "identical");
        // socair-convert/3 keeps the embedding, as transformers does; lm_head is its alias.
        assert!(
            d.stderr.contains("lm_head.weight")
                && d.stderr.contains("alias of transformer.wte.weight"),
            "{}",
            d.stderr
        );
    }
    // The manifest of the converted file keeps the alias, and stands in for it.
    let manifest = dir.path().join("converted.tensors.json");
    let m = run(socair()
        .arg("tensors")
        .arg(&converted)
        .arg("--out")
        .arg(&manifest));
    assert_eq!(m.code, 0, "{}", m.stderr);
    let mj = json(&std::fs::read_to_string(&manifest).unwrap());
    assert_eq!(mj["aliases"][0]["name"], "lm_head.weight");
    assert_eq!(mj["aliases"][0]["of"], "transformer.wte.weight");
    let d = run(socair()
        .args(["tensors", "diff"])
        .arg(&manifest)
        .arg(&original));
    assert_eq!(d.code, 0, "{}", d.stderr);
    assert!(json(&d.stdout)["numbers_missing"]
        .as_str()
        .unwrap()
        .contains("manifest"));
}

/// A safetensors file's tensors: name → (dtype, shape, bytes), and its metadata.
fn read_safetensors(path: &std::path::Path) -> Vec<(String, String, Vec<u64>, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = json(std::str::from_utf8(&bytes[8..8 + n]).unwrap());
    let data = &bytes[8 + n..];
    let mut out = Vec::new();
    for (name, t) in header.as_object().unwrap() {
        if name == "__metadata__" {
            continue;
        }
        let off: Vec<usize> = t["data_offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        out.push((
            name.clone(),
            t["dtype"].as_str().unwrap().to_owned(),
            t["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect(),
            data[off[0]..off[1]].to_vec(),
        ));
    }
    out
}

fn write_safetensors(path: &std::path::Path, tensors: &[(String, String, Vec<u64>, Vec<u8>)]) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [data.len(), data.len() + bytes.len()]}),
        );
        data.extend_from_slice(bytes);
    }
    let mut h = serde_json::to_vec(&Value::Object(header)).unwrap();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(data);
    std::fs::write(path, out).unwrap();
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// bfloat16 by round to nearest, ties to even (written here independently of the host).
fn bf16_rne(x: f32) -> [u8; 2] {
    let b = x.to_bits();
    let lsb = (b >> 16) & 1;
    (((b as u64 + 0x7fff + lsb as u64) >> 16) as u16).to_le_bytes()
}

/// A "fine-tune" of the tiny Llama: edits of known size in layer 1, one tensor rounded to
/// BF16, one truncated to BF16, one dropped and one added.
fn fine_tune(dir: &std::path::Path) -> std::path::PathBuf {
    let base = read_safetensors(&fixture("diff/llamacpp/llama/model.safetensors"));
    let mut out = Vec::new();
    for (name, dtype, shape, bytes) in base {
        let v = f32s(&bytes);
        let scaled = |scale: f32| -> Vec<u8> {
            v.iter()
                .enumerate()
                .flat_map(|(i, x)| {
                    (x + scale * ((i as f32) * 0.37).sin() * x.abs().max(1e-3)).to_le_bytes()
                })
                .collect()
        };
        let new = match name.as_str() {
            "model.layers.1.mlp.down_proj.weight" => Some(("F32", scaled(0.2))),
            "model.layers.1.mlp.up_proj.weight" => Some(("F32", scaled(0.01))),
            "model.layers.1.self_attn.o_proj.weight" => Some(("F32", scaled(1e-4))),
            "model.layers.0.self_attn.v_proj.weight" => {
                Some(("BF16", v.iter().flat_map(|x| bf16_rne(*x)).collect()))
            }
            "model.layers.0.mlp.gate_proj.weight" => Some((
                "BF16",
                v.iter()
                    .flat_map(|x| ((x.to_bits() >> 16) as u16).to_le_bytes())
                    .collect(),
            )),
            "model.layers.1.post_attention_layernorm.weight" => continue,
            _ => None,
        };
        match new {
            Some((d, b)) => out.push((name, d.to_owned(), shape, b)),
            None => out.push((name, dtype, shape, bytes)),
        }
    }
    out.push((
        "model.layers.1.extra.bias".into(),
        "F32".into(),
        vec![4],
        vec![0u8; 16],
    ));
    let d = dir.join("fine-tune");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(
        fixture("diff/llamacpp/llama/config.json"),
        d.join("config.json"),
    )
    .unwrap();
    write_safetensors(&d.join("model.safetensors"), &out);
    d
}

#[test]
fn numbers_tell_an_edit_from_a_rounded_copy() {
    let dir = tempfile::tempdir().unwrap();
    let tuned = fine_tune(dir.path());
    let base = fixture("diff/llamacpp/llama");
    let out = run(socair()
        .args(["tensors", "diff"])
        .arg(&tuned)
        .arg(&base)
        .args(["--limit", "3"]));
    assert_eq!(out.code, 1);
    let c = json(&out.stdout);
    let pair = |name: &str| -> Value {
        c["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["artifact"]["name"] == name)
            .cloned()
            .unwrap()
    };
    // The numbers, recomputed here from the bytes.
    let tensors = |p: &std::path::Path| read_safetensors(&p.join("model.safetensors"));
    let (t, b) = (tensors(&tuned), tensors(&base));
    for name in [
        "model.layers.1.mlp.down_proj.weight",
        "model.layers.1.mlp.up_proj.weight",
        "model.layers.1.self_attn.o_proj.weight",
    ] {
        let x = f32s(&t.iter().find(|e| e.0 == name).unwrap().3);
        let y = f32s(&b.iter().find(|e| e.0 == name).unwrap().3);
        let (mut d2, mut r2, mut a2, mut ar, mut max, mut changed) =
            (0f64, 0f64, 0f64, 0f64, 0f64, 0u64);
        for (&p, &q) in x.iter().zip(&y) {
            let (p, q) = (f64::from(p), f64::from(q));
            changed += u64::from(p != q);
            max = max.max((p - q).abs());
            d2 += (p - q) * (p - q);
            r2 += q * q;
            a2 += p * p;
            ar += p * q;
        }
        let n = &pair(name)["numbers"];
        assert_eq!(pair(name)["outcome"], "differs", "{name}");
        assert_eq!(n["elements"], x.len());
        assert_eq!(n["elements_changed"], changed, "{name}");
        assert_eq!(n["max_abs_delta"].as_f64().unwrap(), max, "{name}");
        let rel = (d2.sqrt() / r2.sqrt() - n["relative_l2"].as_f64().unwrap()).abs();
        assert!(rel < 1e-12, "{name}: relative L2 {n}");
        let cos = (ar / (a2.sqrt() * r2.sqrt()) - n["cosine"].as_f64().unwrap()).abs();
        assert!(cos < 1e-12, "{name}: cosine {n}");
    }
    // A BF16 copy rounded to nearest even is lower precision; a truncated one differs.
    let rounded = pair("model.layers.0.self_attn.v_proj.weight");
    assert_eq!(rounded["outcome"], "lower_precision");
    assert_eq!(rounded["numbers"]["narrower_is_rounded_wider"], true);
    let truncated = pair("model.layers.0.mlp.gate_proj.weight");
    assert_eq!(truncated["outcome"], "differs");
    assert_eq!(truncated["numbers"]["narrower_is_rounded_wider"], false);
    assert_eq!(
        c["only_in_reference"][0]["name"],
        "model.layers.1.post_attention_layernorm.weight"
    );
    assert_eq!(
        c["only_in_artifact"][0]["name"],
        "model.layers.1.extra.bias"
    );
    // The summary names them, largest change first, at most --limit per list.
    let s = &out.stderr;
    assert!(s.contains("differ (4):"), "{s}");
    let first = s.find("model.layers.1.mlp.down_proj.weight: ").expect(s);
    assert!(first < s.find("model.layers.1.mlp.up_proj.weight: ").expect(s));
    assert!(s.contains("… and 1 more"), "{s}");
    assert!(s.contains("only in the reference (1):\nsocair:     model.layers.1.post_attention_layernorm.weight"), "{s}");
    assert!(s.contains("relative L2"), "{s}");
}

#[test]
fn a_manifest_side_has_no_numbers_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("reference.tensors.json");
    run(socair()
        .arg("tensors")
        .arg(fixture("diff/reference"))
        .arg("--out")
        .arg(&manifest));
    let out = run(socair()
        .args(["tensors", "diff"])
        .arg(fixture("diff/rome-edit"))
        .arg(&manifest));
    let c = json(&out.stdout);
    assert!(c["numbers_missing"]
        .as_str()
        .unwrap()
        .contains("the reference is a manifest"));
    let p = c["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["outcome"] == "differs")
        .unwrap();
    assert!(p.get("numbers").is_none());
    assert!(
        out.stderr
            .contains("no numbers: the reference is a manifest"),
        "{}",
        out.stderr
    );
    // With both models, the ROME edit's numbers: 3 elements, each by 2^-7.
    let out = run(socair()
        .args(["tensors", "diff"])
        .arg(fixture("diff/rome-edit"))
        .arg(fixture("diff/reference")));
    let c = json(&out.stdout);
    let p = c["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["outcome"] == "differs")
        .unwrap();
    assert_eq!(p["numbers"]["elements_changed"], 3);
    assert_eq!(p["numbers"]["max_abs_delta"], 0.0078125);
}

// ---------------------------------------------------------------------------------------
// The HTML page, in headless Chromium (skipped when there is none).
// ---------------------------------------------------------------------------------------

fn chromium() -> Option<std::path::PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

/// Loads `page` in headless Chromium: its DOM after the scripts ran, what it logged, and a
/// screenshot (decoded RGBA, width, height).
fn load_in_chromium(
    chrome: &std::path::Path,
    page: &std::path::Path,
    dir: &std::path::Path,
) -> (String, String, Vec<u8>, u32, u32) {
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let url = format!("file://{}", page.display());
    let dom = std::process::Command::new(chrome)
        .args(common)
        .arg(format!(
            "--user-data-dir={}",
            dir.join("profile-dom").display()
        ))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let png_path = dir.join("shot.png");
    let shot = std::process::Command::new(chrome)
        .args(common)
        .arg(format!(
            "--user-data-dir={}",
            dir.join("profile-shot").display()
        ))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(&url)
        .output()
        .unwrap();
    let (rgba, width, height) = crate::common::png::read_rgba(&std::fs::read(&png_path).unwrap());
    let logged = format!(
        "{}{}",
        String::from_utf8_lossy(&dom.stderr),
        String::from_utf8_lossy(&shot.stderr)
    );
    (
        String::from_utf8_lossy(&dom.stdout).into_owned(),
        logged,
        rgba,
        width,
        height,
    )
}

/// Console errors Chromium logs (`CONSOLE` lines at error level, uncaught exceptions,
/// refused loads), ignoring its own complaints about the machine (no D-Bus, no GPU).
fn page_errors(logged: &str) -> Vec<&str> {
    logged
        .lines()
        .filter(|l| {
            l.contains("Uncaught")
                || (l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("error")))
                || l.contains("Refused to")
                || l.contains("net::ERR")
        })
        .collect()
}

#[test]
fn the_html_page_loads_without_errors_and_shows_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let tuned = fine_tune(dir.path());
    let page = dir.path().join("report.html");
    let out = run(socair()
        .args(["tensors", "diff"])
        .arg(&tuned)
        .arg(fixture("diff/llamacpp/llama"))
        .arg("--html")
        .arg(&page));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing fetched, no external script, style or font.
    for forbidden in [
        "src=\"http",
        "href=\"http",
        "<link",
        "@import",
        "url(",
        "@font-face",
    ] {
        assert!(!html.contains(forbidden), "{forbidden} in the page");
    }
    assert!(html.contains("default-src 'none'"));
    assert!(html.contains("model.layers.1.mlp.down_proj.weight"));
    let Some(chrome) = chromium() else {
        eprintln!("no chromium: the page was not loaded in a browser (skipped)");
        return;
    };
    let (dom, logged, rgba, w, h) = load_in_chromium(&chrome, &page, dir.path());
    assert!(
        page_errors(&logged).is_empty(),
        "{:?}",
        page_errors(&logged)
    );
    // The script ran to its end: it writes what it drew.
    assert!(
        dom.contains("22 tensors in 3 rows"),
        "the map script did not finish: {}",
        &dom[dom.len().saturating_sub(2000)..]
    );
    // The screenshot is not blank: its pixels vary, and the map's colours are in it.
    let n = (w * h) as f64;
    let mean = rgba
        .chunks_exact(4)
        .map(|p| f64::from(p[0]) + f64::from(p[1]) + f64::from(p[2]))
        .sum::<f64>()
        / n;
    let var = rgba
        .chunks_exact(4)
        .map(|p| (f64::from(p[0]) + f64::from(p[1]) + f64::from(p[2]) - mean).powi(2))
        .sum::<f64>()
        / n;
    assert!(var > 100.0, "a blank screenshot (variance {var})");
    let has = |rgb: [u8; 3]| rgba.chunks_exact(4).filter(|p| p[..3] == rgb).count();
    assert!(has([0x1b, 0x78, 0x37]) > 200, "identical cells are drawn");
    assert!(
        has([0xa6, 0xdb, 0xa0]) > 50,
        "a lower-precision cell is drawn"
    );
    if let Some(keep) = std::env::var_os("SOCAIR_DIFF_SCREENSHOT") {
        std::fs::copy(dir.path().join("shot.png"), keep).unwrap();
    }
}

/// A `socair.tensors/v1` manifest of `layers × roles` tensors; `edit` changes a tensor's
/// hashes, `keep` drops it when false.
fn big_manifest(
    layers: usize,
    roles: usize,
    edit: impl Fn(usize, usize) -> bool,
    keep: impl Fn(usize, usize) -> bool,
) -> String {
    let mut s = String::from("{\"schema\":\"socair.tensors/v1\",\"artifact\":{\"name\":\"big\",\"format\":\"safetensors\",\"sha256\":\"00\"},\"value_encoding\":\"float32-le-bits/v1\",\"tensors\":[");
    let mut first = true;
    for l in 0..layers {
        for r in 0..roles {
            if !keep(l, r) {
                continue;
            }
            let h = format!("{:064x}", (l * roles + r) * 2 + usize::from(edit(l, r)));
            if !first {
                s.push(',');
            }
            first = false;
            s.push_str(&format!(
                "{{\"file\":\"model.safetensors\",\"name\":\"model.layers.{l}.block.role{r}.weight\",\"dtype\":\"F16\",\"shape\":[64,64],\"bytes\":8192,\"sha256\":\"{h}\",\"values\":\"{h}\"}}"
            ));
        }
    }
    s.push_str("],\"unread\":[]}");
    s
}

#[test]
fn a_100k_tensor_manifest_pair_renders_quickly_into_a_small_page() {
    let dir = tempfile::tempdir().unwrap();
    let (a, r) = (dir.path().join("a.json"), dir.path().join("r.json"));
    std::fs::write(
        &a,
        big_manifest(
            1000,
            100,
            |l, r| l % 97 == 3 && r % 7 == 0,
            |l, r| !(l == 500 && r < 3),
        ),
    )
    .unwrap();
    std::fs::write(
        &r,
        big_manifest(1000, 100, |_, _| false, |l, r| !(l == 900 && r == 50)),
    )
    .unwrap();
    let page = dir.path().join("big.html");
    let started = std::time::Instant::now();
    let out = run(socair()
        .args(["tensors", "diff"])
        .arg(&a)
        .arg(&r)
        .arg("--html")
        .arg(&page)
        .arg("--out")
        .arg(dir.path().join("c.json")));
    let took = started.elapsed();
    assert_eq!(out.code, 1, "{}", out.stderr);
    let size = std::fs::metadata(&page).unwrap().len();
    eprintln!("100k-tensor manifests: diff + JSON + HTML {took:?}, page {size} bytes");
    assert!(size < 8 << 20, "the page stays small: {size} bytes");
    assert!(took < std::time::Duration::from_secs(60), "{took:?}");
    let c = json(&std::fs::read_to_string(dir.path().join("c.json")).unwrap());
    assert_eq!(c["summary"]["differs"], 11 * 15, "{}", out.stderr);
    assert_eq!(c["summary"]["only_in_reference"], 3);
    assert_eq!(c["summary"]["only_in_artifact"], 1);
    let Some(chrome) = chromium() else {
        eprintln!("no chromium: the page was not loaded in a browser (skipped)");
        return;
    };
    let started = std::time::Instant::now();
    let (dom, logged, _, _, _) = load_in_chromium(&chrome, &page, dir.path());
    eprintln!(
        "100k-tensor page: loaded and drawn twice (DOM, screenshot) in {:?}",
        started.elapsed()
    );
    assert!(
        page_errors(&logged).is_empty(),
        "{:?}",
        page_errors(&logged)
    );
    assert!(
        dom.contains("99999 tensors in 1001 rows")
            || dom.contains("100000 tensors in 1001 rows")
            || dom.contains("tensors in 1001 rows"),
        "the map was drawn"
    );
}
