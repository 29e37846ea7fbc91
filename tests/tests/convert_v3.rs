//! `socair-convert/3` end to end: tied weights keep the name transformers keeps
//! (docs/convert-v3.md). The GPT-2 and Llama checkpoints and what transformers did with their
//! conversions are in fixtures/hf (make_fixtures.py, expected.json); these tests need no Python.

use crate::common::{fixture, json, run, socair, tensor_hashes, Store};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const V2: &str = "socair-convert/2";
const V3: &str = "socair-convert/3";

fn expected() -> Value {
    json(&std::fs::read_to_string(fixture("hf/expected.json")).unwrap())
}

fn convert(src: &Path, dst: &Path, from: &str, rules: &str) -> crate::common::Run {
    run(socair().arg("convert").arg(src).arg(dst).args([
        "--from",
        from,
        "--to",
        "safetensors",
        "--rules",
        rules,
    ]))
}

fn sha256_file(path: &Path) -> String {
    hex(&Sha256::digest(std::fs::read(path).unwrap()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A safetensors file's `__metadata__` aliases (`alias → kept name`), without `format`.
fn aliases(path: &Path) -> BTreeMap<String, String> {
    let bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = json(std::str::from_utf8(&bytes[8..8 + n]).unwrap());
    header["__metadata__"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| *k != "format")
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Each tensor's sha256 (of its little-endian bytes), by name, as `socair tensors` reads it.
fn tensors(path: &Path) -> BTreeMap<String, String> {
    let r = run(socair().arg("tensors").arg(path));
    assert_eq!(r.code, 0, "{}: {}", path.display(), r.stderr);
    tensor_hashes(&json(&r.stdout))
}

/// Every name the output accounts for (its tensors and its aliases), with its bytes' sha256.
fn resolved(path: &Path) -> BTreeMap<String, String> {
    let mut all = tensors(path);
    for (alias, kept) in aliases(path) {
        let sha = all[&kept].clone();
        assert!(all.insert(alias.clone(), sha).is_none(), "{alias} twice");
    }
    all
}

/// The transformers releases expected.json has results for.
fn releases(e: &Value) -> Vec<(&String, &Value)> {
    let r: Vec<_> = e["results"].as_object().unwrap().iter().collect();
    assert!(!r.is_empty());
    r
}

#[test]
fn v3_keeps_the_embedding_transformers_keeps_and_v2_keeps_what_it_kept() {
    let e = expected();
    let dir = tempfile::tempdir().unwrap();
    for kind in ["gpt2", "llama"] {
        let ck = &e["checkpoints"][kind];
        let model_dir = fixture(&format!("hf/{kind}"));
        // The committed files are the ones the results were recorded for.
        for (file, sha) in ck["files"].as_object().unwrap() {
            assert_eq!(sha256_file(&model_dir.join(file)), *sha, "{kind}/{file}");
        }
        let embedding = ck["embedding"].as_str().unwrap();
        assert_eq!(
            ck["tied"],
            serde_json::json!([["lm_head.weight", embedding]]),
            "{kind}"
        );
        for (case, src, from) in [
            ("file", model_dir.join("pytorch_model.bin"), "torch-zip"),
            ("model-dir", model_dir.clone(), "model-dir"),
        ] {
            for rules in [V2, V3] {
                let out = dir.path().join(format!("{kind}-{case}-{}", &rules[15..]));
                let r = convert(&src, &out, from, rules);
                assert_eq!(r.code, 0, "{kind} {case} {rules}: {}", r.stderr);
                let got = aliases(&out);
                for (release, results) in releases(&e) {
                    let hf = &results[kind]["hf"];
                    let recorded = &results[kind][format!("{case} {rules}")];
                    // These are the bytes transformers loaded when expected.json was written.
                    assert_eq!(
                        recorded["sha256"].as_str(),
                        Some(sha256_file(&out).as_str()),
                        "{kind} {case} {rules} ({release})"
                    );
                    if rules == V3 {
                        // The name transformers' own save_pretrained keeps, and convert.py with
                        // the class's _tied_weights_keys as discard_names.
                        assert_eq!(hf["save_pretrained_keeps"], serde_json::json!([embedding]));
                        assert_eq!(hf["convert_py_keeps"], serde_json::json!([embedding]));
                        // The same tensors, by name and bytes, as save_pretrained writes.
                        let written: BTreeMap<String, String> =
                            serde_json::from_value(hf["save_pretrained_tensors"].clone()).unwrap();
                        assert_eq!(tensors(&out), written, "{kind} {case} ({release})");
                        assert_eq!(recorded["loaded_without_meta_tensors"], true, "{release}");
                        assert_eq!(recorded["max_abs_logit_delta"], 0.0, "{release}");
                    } else {
                        // safetensors' save_model (no names to discard) keeps lm_head.weight.
                        assert_eq!(
                            hf["remove_duplicate_names_keeps"],
                            serde_json::json!(["lm_head.weight"])
                        );
                    }
                }
                let (alias, kept) = if rules == V3 {
                    ("lm_head.weight", embedding)
                } else {
                    (embedding, "lm_head.weight")
                };
                assert_eq!(
                    got,
                    BTreeMap::from([(alias.to_owned(), kept.to_owned())]),
                    "{kind} {case} {rules}"
                );
                assert!(r.stderr.contains(&format!("under {rules}")), "{}", r.stderr);
            }
        }
    }
}

/// An output's alias groups: each kept name with its aliases.
fn groups(a: &BTreeMap<String, String>) -> BTreeSet<BTreeSet<String>> {
    let mut g: BTreeMap<&String, BTreeSet<String>> = BTreeMap::new();
    for (alias, kept) in a {
        g.entry(kept)
            .or_insert_with(|| [kept.clone()].into())
            .insert(alias.clone());
    }
    g.into_values().collect()
}

/// Every torch checkpoint the repository commits.
fn torch_fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("pt" | "bin" | "pth")
            ) {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    walk(&fixture("torch"), &mut all);
    walk(&fixture("hf"), &mut all);
    all.sort();
    all
}

#[test]
fn v3_writes_v2_bytes_on_every_torch_fixture_unless_a_group_keeps_another_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture("");
    let (mut same_bytes, mut same_with_aliases, mut both_refused) = (0, 0, 0);
    let mut changed = BTreeSet::new();
    let all = torch_fixtures();
    assert!(all.len() >= 90, "{}", all.len());
    for src in all {
        let rel = src.strip_prefix(&root).unwrap().display().to_string();
        let from = if rel.starts_with("torch/legacy") {
            "torch-legacy"
        } else {
            "torch-zip"
        };
        let (d2, d3) = (dir.path().join("v2"), dir.path().join("v3"));
        for d in [&d2, &d3] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir(d).unwrap();
        }
        let (o2, o3) = (d2.join("out.safetensors"), d3.join("out.safetensors"));
        // The two conversions of one file at once: this test converts a hundred files twice.
        let (r2, r3) = std::thread::scope(|s| {
            let v2 = s.spawn(|| convert(&src, &o2, from, V2));
            let r3 = convert(&src, &o3, from, V3);
            (v2.join().unwrap(), r3)
        });
        assert_eq!(r2.code, r3.code, "{rel}: {} / {}", r2.stderr, r3.stderr);
        if r2.code != 0 {
            // Refused for the same reason, in the same words.
            assert_eq!(r2.stderr, r3.stderr, "{rel}");
            assert!(!o3.exists(), "{rel}");
            both_refused += 1;
            continue;
        }
        let (a2, a3) = (aliases(&o2), aliases(&o3));
        let kept = |a: &BTreeMap<String, String>| a.values().cloned().collect::<BTreeSet<_>>();
        if kept(&a2) == kept(&a3) {
            assert_eq!(
                std::fs::read(&o2).unwrap(),
                std::fs::read(&o3).unwrap(),
                "{rel}: /3 must write /2's bytes"
            );
            same_bytes += 1;
            same_with_aliases += usize::from(!a2.is_empty());
            continue;
        }
        // A group keeps another name: the same groups, every name the same bytes.
        assert_eq!(groups(&a2), groups(&a3), "{rel}");
        assert_eq!(resolved(&o2), resolved(&o3), "{rel}");
        assert!(a3.contains_key("lm_head.weight"), "{rel}: {a3:?}");
        changed.insert(rel);
    }
    // Only the GPT-2 and Llama checkpoints tie lm_head.weight to a transformers embedding;
    // tied.pt (embed.weight, lm_head.weight) matches no pair and keeps /2's choice.
    assert_eq!(
        changed,
        BTreeSet::from([
            "hf/gpt2/pytorch_model.bin".to_owned(),
            "hf/llama/pytorch_model.bin".to_owned(),
            "torch/baseline/hf-gpt2-tied-pytorch_model.bin".to_owned(),
        ])
    );
    eprintln!("/3 = /2: {same_bytes} converted byte-equal ({same_with_aliases} with aliases), {both_refused} refused alike, {} kept another name", changed.len());
    assert!(same_with_aliases >= 2, "{same_with_aliases}");
    assert!(same_bytes >= 25, "{same_bytes}");
    assert!(both_refused >= 50, "{both_refused}");
}

/// A model directory: `checkpoint` (a fixtures/hf model) with its config.json changed by
/// `edit` (or replaced by `raw`).
fn crafted(
    dir: &Path,
    checkpoint: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
    raw: Option<&str>,
) -> PathBuf {
    let d = dir.join(format!("dir-{}", std::fs::read_dir(dir).unwrap().count()));
    std::fs::create_dir(&d).unwrap();
    let from = fixture(&format!("hf/{checkpoint}"));
    std::fs::copy(from.join("pytorch_model.bin"), d.join("pytorch_model.bin")).unwrap();
    let text = match raw {
        Some(r) => r.to_owned(),
        None => {
            let mut config = json(&std::fs::read_to_string(from.join("config.json")).unwrap());
            edit(config.as_object_mut().unwrap());
            serde_json::to_string_pretty(&config).unwrap()
        }
    };
    std::fs::write(d.join("config.json"), text).unwrap();
    d
}

#[test]
fn a_model_directory_config_decides_as_documented() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("dirs");
    std::fs::create_dir(&work).unwrap();
    let out = |name: &str| tmp.path().join(format!("{name}.safetensors"));
    let wte = BTreeMap::from([(
        "lm_head.weight".to_owned(),
        "transformer.wte.weight".to_owned(),
    )]);
    let head = BTreeMap::from([(
        "transformer.wte.weight".to_owned(),
        "lm_head.weight".to_owned(),
    )]);
    let same_as_v2 = |d: &Path, name: &str| {
        let (o2, o3) = (out(&format!("{name}-2")), out(&format!("{name}-3")));
        let r = convert(d, &o2, "model-dir", V2);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let r = convert(d, &o3, "model-dir", V3);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert_eq!(
            std::fs::read(&o2).unwrap(),
            std::fs::read(&o3).unwrap(),
            "{name}"
        );
        aliases(&o3)
    };

    // tie_word_embeddings: false over tensors that are one: transformers would build two
    // parameters and initialize the missing one afresh. /3 refuses, naming the pair; /2 still
    // writes lm_head.weight alone (expected.json: that output loads with a random embedding).
    let untied = crafted(
        &work,
        "gpt2",
        |c| {
            c.insert("tie_word_embeddings".into(), false.into());
        },
        None,
    );
    let o = out("untied-3");
    let r = convert(&untied, &o, "model-dir", V3);
    assert_eq!(r.code, 1, "{}", r.stderr);
    for why in [
        "tie_word_embeddings: false",
        "lm_head.weight to transformer.wte.weight",
    ] {
        assert!(r.stderr.contains(why), "{why:?} not in {}", r.stderr);
    }
    assert!(!o.exists());
    let r = convert(&untied, &out("untied-2"), "model-dir", V2);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(aliases(&out("untied-2")), head);
    // The same checkpoint converted alone has no config to say so, and keeps the embedding.
    let r = convert(
        &untied.join("pytorch_model.bin"),
        &out("alone"),
        "torch-zip",
        V3,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(aliases(&out("alone")), wte);

    // No tie_word_embeddings (transformers 4.x omits it when it is true, GPT-2's default), or
    // true: the embedding is kept.
    for (name, edit) in [
        (
            "absent",
            Box::new(|c: &mut serde_json::Map<String, Value>| {
                c.remove("tie_word_embeddings");
            }) as Box<dyn FnOnce(&mut serde_json::Map<String, Value>)>,
        ),
        (
            "true",
            Box::new(|c: &mut serde_json::Map<String, Value>| {
                c.insert("tie_word_embeddings".into(), true.into());
            }),
        ),
    ] {
        let d = crafted(&work, "gpt2", edit, None);
        let r = convert(&d, &out(name), "model-dir", V3);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert_eq!(aliases(&out(name)), wte, "{name}");
    }

    // The class config.json names decides which pairs apply: BERT does not tie lm_head.weight
    // to transformer.wte.weight, so the group keeps /2's choice, and /2's bytes.
    let bert = crafted(
        &work,
        "gpt2",
        |c| {
            c.insert(
                "architectures".into(),
                serde_json::json!(["BertForMaskedLM"]),
            );
        },
        None,
    );
    assert_eq!(same_as_v2(&bert, "bert"), head);

    // true over tensors that are not one (gpt2-untied): there is no group, so /3 writes /2's
    // bytes, every name with its own bytes; transformers then does with the output what it
    // does with the input (expected.json, tied-config).
    let tied_config = crafted(
        &work,
        "gpt2-untied",
        |c| {
            c.insert("tie_word_embeddings".into(), true.into());
        },
        None,
    );
    assert!(same_as_v2(&tied_config, "tied-config").is_empty());

    // A config.json socair cannot read decides nothing where no group is tied, and refuses a
    // tied group, saying why.
    let garbage = crafted(&work, "gpt2-untied", |_| {}, Some("{not json"));
    assert!(same_as_v2(&garbage, "garbage-untied").is_empty());
    for (raw, why) in [
        ("{not json", "config.json is not JSON"),
        (
            r#"{"tie_word_embeddings": "false"}"#,
            "neither true nor false",
        ),
    ] {
        let d = crafted(&work, "gpt2", |_| {}, Some(raw));
        let o = out("unreadable");
        let r = convert(&d, &o, "model-dir", V3);
        assert_eq!(r.code, 1, "{raw}: {}", r.stderr);
        assert!(r.stderr.contains(why), "{why:?} not in {}", r.stderr);
        assert!(!o.exists());
    }
}

#[test]
fn the_derivation_record_names_v3_and_the_rule_that_kept_each_name() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let deriver = s.key("deriver.key", "derive");
    let convert = |file: &Path, rules: Option<&str>| {
        let att = s.attest(file, &scanner);
        let mut args = vec![
            "airlock".to_owned(),
            "convert".into(),
            file.display().to_string(),
            "--attestation".into(),
            att,
            "--key".into(),
            deriver.clone(),
        ];
        if let Some(r) = rules {
            args.extend(["--rules".into(), r.into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        s.run(&args)
    };
    let predicate = |r: &crate::common::Run, input: &Path, out: &str| {
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = s.verify_derivation(r.stdout.trim(), input, out);
        assert_eq!(v.code, 0, "{}", v.stderr);
        json(&v.stdout)["predicate"].clone()
    };
    let gpt2 = s.dir.path().join("pytorch_model.bin");
    std::fs::copy(fixture("hf/gpt2/pytorch_model.bin"), &gpt2).unwrap();

    // Unpinned: /3, the newest. The record names it, the alias, and the rule that kept the
    // embedding.
    let r = convert(&gpt2, None);
    assert!(r.stderr.contains("under socair-convert/3"), "{}", r.stderr);
    let p = predicate(&r, &gpt2, "pytorch_model.safetensors");
    assert_eq!(p["rules"]["socair-convert"], "3");
    assert_eq!(
        p["aliases"],
        serde_json::json!({"lm_head.weight": "transformer.wte.weight"})
    );
    let rules = p["alias_rules"].as_object().unwrap();
    assert_eq!(rules.len(), 1, "{p:#}");
    let why = rules["transformer.wte.weight"].as_str().unwrap();
    assert!(
        why.starts_with("transformers-tied-weights: ")
            && why.contains("lm_head.weight to transformer.wte.weight")
            && why.contains("_tied_weights_keys of "),
        "{why}"
    );
    let names: BTreeSet<&str> = p["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains("transformer.wte.weight") && !names.contains("lm_head.weight"));

    // A group no pair names: the record says it kept the first name in byte order.
    let tied = s.dir.path().join("tied.pt");
    std::fs::copy(fixture("torch/legit/tied.pt"), &tied).unwrap();
    let p = predicate(&convert(&tied, None), &tied, "tied.safetensors");
    assert_eq!(
        p["aliases"],
        serde_json::json!({"lm_head.weight": "embed.weight"})
    );
    assert!(p["alias_rules"]["embed.weight"]
        .as_str()
        .unwrap()
        .starts_with("byte-order: "));

    // Pinned to =2 like any rule set: /2 runs, keeps lm_head.weight, and its record has no
    // alias_rules; asking for /3 is refused, naming the pin. Pinned to =3, /3 runs.
    assert_eq!(
        s.run(&["airlock", "pin", "rules", "socair-convert", "=2"])
            .code,
        0
    );
    let r = convert(&gpt2, None);
    assert!(r.stderr.contains("under socair-convert/2"), "{}", r.stderr);
    let p = predicate(&r, &gpt2, "pytorch_model.safetensors");
    assert_eq!(p["rules"]["socair-convert"], "2");
    assert_eq!(
        p["aliases"],
        serde_json::json!({"transformer.wte.weight": "lm_head.weight"})
    );
    assert!(p.get("alias_rules").is_none(), "{p:#}");
    let r = convert(&gpt2, Some(V3));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("pins socair-convert to =2"),
        "{}",
        r.stderr
    );
    assert_eq!(
        s.run(&["airlock", "pin", "rules", "socair-convert", "=3"])
            .code,
        0
    );
    let r = convert(&gpt2, None);
    assert!(r.stderr.contains("under socair-convert/3"), "{}", r.stderr);
    // `socair plugins` lists the three.
    let listing = run(socair().arg("plugins"));
    for id in ["socair-convert/1", V2, V3] {
        assert!(listing.stdout.contains(id), "{id}: {}", listing.stdout);
    }
}
