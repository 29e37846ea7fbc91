//! `socair-convert/3`: the name an exact-alias group keeps follows transformers' tied weights
//! (docs/convert-v3.md).
//!
//! `/1` and `/2` keep the first name in byte order, as safetensors' `_remove_duplicate_names`
//! does with no names to discard. For a checkpoint whose tied output (`lm_head.weight`) sorts
//! before its input embedding (GPT-2's `transformer.wte.weight`, Llama's
//! `model.embed_tokens.weight`) that keeps the output, and transformers 4.x then loads the
//! model with both on the meta device: its `tie_weights` always makes the output the input's
//! parameter, never the reverse. transformers itself drops the *targets* of
//! `_tied_weights_keys` and keeps their *source* (`remove_tied_weights_from_state_dict`), and so
//! does safetensors' convert.py (`discard_names` from the same attribute). `/3` does the same
//! with the pairs read from transformers' classes ([`crate::convert::tied_table`]):
//!
//! 1. The pairs that apply: those of the architecture a model directory's `config.json` names
//!    first in `architectures` (as convert.py takes `config["architectures"][0]`) when the table
//!    knows it, otherwise every pair.
//! 2. A pair applies to a group when both its target and its source are names of the group.
//!    None does: the group keeps `/2`'s choice (the first name in byte order).
//! 3. `config.json` says `tie_word_embeddings: false`: transformers ties nothing in that model,
//!    so a file holding one of the names loads the other freshly initialized; socair writes no
//!    tensor twice, so the conversion is refused, naming the group.
//! 4. Otherwise the group keeps the first name, in byte order, that is the source of an
//!    applying pair and the target of none; the targets and any other names become aliases.
//!    When every source is also a target (two classes tie the names in opposite directions and
//!    no `config.json` says which class this is), the group keeps `/2`'s choice.

use crate::convert::tied_table::{TiedPair, TIED_WEIGHTS, TRANSFORMERS_VERSION};
use std::io::Read;
use std::path::Path;

/// The most of a `config.json` that is read (real ones are a few kilobytes).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// What a model directory's `config.json` says about tying, as far as `/3` reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ModelConfig {
    /// No `config.json`: a single checkpoint, or a directory without one.
    #[default]
    Absent,
    /// Read.
    Read {
        /// `tie_word_embeddings` (or `text_config.tie_word_embeddings` when the top level has
        /// none), when it is present.
        tie_word_embeddings: Option<bool>,
        /// `architectures[0]`, when it is a string.
        architecture: Option<String>,
    },
    /// Present, but not a JSON object whose `tie_word_embeddings` is true or false: why. It
    /// matters only when a tied pair applies to a group.
    Unusable(String),
}

impl ModelConfig {
    /// Reads `config.json` at `path` (at most [`MAX_CONFIG_BYTES`]).
    pub fn read(path: &Path) -> ModelConfig {
        let mut bytes = Vec::new();
        let read = std::fs::File::open(path)
            .and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes));
        match read {
            Err(e) => ModelConfig::Unusable(format!("cannot be read: {e}")),
            Ok(_) if bytes.len() as u64 > MAX_CONFIG_BYTES => ModelConfig::Unusable(format!(
                "is larger than the {MAX_CONFIG_BYTES} bytes socair reads of it"
            )),
            Ok(_) => ModelConfig::parse(&bytes),
        }
    }

    /// Parses `config.json`'s bytes.
    pub fn parse(bytes: &[u8]) -> ModelConfig {
        let value: serde_json::Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => return ModelConfig::Unusable(format!("is not JSON: {e}")),
        };
        let Some(top) = value.as_object() else {
            return ModelConfig::Unusable("is not a JSON object".into());
        };
        // transformers 4.x reads the decoder's text config (`get_text_config(decoder=True)`);
        // composite configs keep the flag there when the top level has none.
        let tie = top.get("tie_word_embeddings").or_else(|| {
            top.get("text_config")
                .and_then(|t| t.get("tie_word_embeddings"))
        });
        let tie_word_embeddings = match tie {
            None => None,
            Some(serde_json::Value::Bool(b)) => Some(*b),
            Some(other) => {
                return ModelConfig::Unusable(format!(
                    "says tie_word_embeddings is {}, which is neither true nor false",
                    cut(&other.to_string(), 40)
                ))
            }
        };
        let architecture = top
            .get("architectures")
            .and_then(|a| a.get(0))
            .and_then(|a| a.as_str())
            .map(str::to_owned);
        ModelConfig::Read {
            tie_word_embeddings,
            architecture,
        }
    }
}

/// The name a group keeps, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Its index in the group.
    pub index: usize,
    /// The rule, as the derivation record says it: `transformers-tied-weights: …` or
    /// `byte-order: …`.
    pub rule: String,
}

/// Chooses the name an exact-alias group keeps under `/3`. `group` holds the names in byte
/// order (its first is `/2`'s choice); a refusal says why.
pub fn choose(group: &[&str], config: &ModelConfig) -> Result<Kept, String> {
    let architecture = match config {
        ModelConfig::Read {
            architecture: Some(a),
            ..
        } if TIED_WEIGHTS
            .iter()
            .any(|p| p.architectures.contains(&a.as_str())) =>
        {
            Some(a.as_str())
        }
        _ => None,
    };
    let applying: Vec<&TiedPair> = TIED_WEIGHTS
        .iter()
        .filter(|p| architecture.is_none_or(|a| p.architectures.contains(&a)))
        .filter(|p| group.contains(&p.target) && group.contains(&p.source))
        .collect();
    if applying.is_empty() {
        return Ok(Kept {
            index: 0,
            rule: format!(
                "byte-order: no tied-weights pair of transformers {TRANSFORMERS_VERSION}{} names two of these names, so the first in byte order is kept, as under socair-convert/2",
                architecture.map_or(String::new(), |a| format!(" for {a}"))
            ),
        });
    }
    let pairs = applying
        .iter()
        .map(|p| format!("{} to {}", p.target, p.source))
        .collect::<Vec<_>>()
        .join(", ");
    match config {
        ModelConfig::Unusable(why) => {
            return Err(format!(
                "config.json {why}; socair-convert/3 reads its tie_word_embeddings to choose the name the tied tensors {} keep",
                listed(group)
            ))
        }
        ModelConfig::Read {
            tie_word_embeddings: Some(false),
            ..
        } => {
            return Err(format!(
                "config.json says tie_word_embeddings: false, yet {} are one tensor in the checkpoint (transformers ties {pairs} only when it is true): transformers would build them as separate parameters and load a name missing from the file freshly initialized, and socair writes no tensor twice. Correct config.json if the model ties them, or convert the checkpoint file alone",
                listed(group)
            ))
        }
        _ => {}
    }
    let is_target = |n: &str| applying.iter().any(|p| p.target == n);
    let is_source = |n: &str| applying.iter().any(|p| p.source == n);
    let Some(index) = group.iter().position(|n| is_source(n) && !is_target(n)) else {
        return Ok(Kept {
            index: 0,
            rule: format!(
                "byte-order: transformers {TRANSFORMERS_VERSION} ties {pairs}, in opposite directions in different classes, and no config.json names the class, so the first in byte order is kept, as under socair-convert/2"
            ),
        });
    };
    let declared_by = match architecture {
        Some(a) => format!("{a}, named by config.json"),
        None => {
            let mut all: Vec<&str> = applying
                .iter()
                .flat_map(|p| p.architectures.iter().copied())
                .collect();
            all.sort_unstable();
            all.dedup();
            match all.len() {
                0..=3 => all.join(", "),
                n => format!("{} and {} more", all[..3].join(", "), n - 3),
            }
        }
    };
    Ok(Kept {
        index,
        rule: format!(
            "transformers-tied-weights: transformers {TRANSFORMERS_VERSION} ties {pairs} (_tied_weights_keys of {declared_by}), saves the source and ties the rest to it on load"
        ),
    })
}

/// A group's names for a message: the first few, and how many more (a hostile checkpoint can
/// alias one storage under any number of names).
fn listed(group: &[&str]) -> String {
    const SHOWN: usize = 4;
    let shown: Vec<String> = group
        .iter()
        .take(SHOWN)
        .map(|n| format!("{:?}", cut(n, 200)))
        .collect();
    match group.len().saturating_sub(SHOWN) {
        0 => format!("[{}]", shown.join(", ")),
        more => format!("[{}, and {more} more]", shown.join(", ")),
    }
}

/// The first `n` characters of `s`, marked when cut.
fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(tie: Option<bool>, arch: Option<&str>) -> ModelConfig {
        ModelConfig::Read {
            tie_word_embeddings: tie,
            architecture: arch.map(str::to_owned),
        }
    }

    #[test]
    fn the_table_is_sorted_and_names_parameters() {
        assert!(TIED_WEIGHTS.len() > 50, "{}", TIED_WEIGHTS.len());
        for w in TIED_WEIGHTS.windows(2) {
            let key = |p: &TiedPair| (p.target.as_bytes(), p.source.as_bytes());
            assert!(key(&w[0]) < key(&w[1]), "{:?} {:?}", w[0], w[1]);
        }
        for p in TIED_WEIGHTS {
            assert_ne!(p.target, p.source);
            assert!(!p.architectures.is_empty());
            for n in [p.target, p.source] {
                assert!(n.ends_with(".weight") || n.ends_with(".bias"), "{n}");
            }
        }
        let gpt2 = TIED_WEIGHTS
            .iter()
            .find(|p| p.target == "lm_head.weight" && p.source == "transformer.wte.weight")
            .unwrap();
        assert!(gpt2.architectures.contains(&"GPT2LMHeadModel"));
    }

    #[test]
    fn gpt2_and_llama_keep_the_input_embedding() {
        for (group, kept) in [
            (
                ["lm_head.weight", "transformer.wte.weight"],
                "transformer.wte.weight",
            ),
            (
                ["lm_head.weight", "model.embed_tokens.weight"],
                "model.embed_tokens.weight",
            ),
        ] {
            for config in [
                ModelConfig::Absent,
                read(None, None),
                read(Some(true), None),
                read(Some(true), Some("NotAClassTransformersKnows")),
            ] {
                let k = choose(&group, &config).unwrap();
                assert_eq!(group[k.index], kept, "{config:?}");
                assert!(k.rule.starts_with("transformers-tied-weights: "), "{k:?}");
                assert!(k.rule.contains("lm_head.weight to "), "{k:?}");
            }
        }
        let k = choose(
            &["lm_head.weight", "transformer.wte.weight"],
            &read(Some(true), Some("GPT2LMHeadModel")),
        )
        .unwrap();
        assert_eq!(k.index, 1);
        assert!(
            k.rule.contains("GPT2LMHeadModel, named by config.json"),
            "{k:?}"
        );
    }

    #[test]
    fn a_group_no_pair_names_keeps_the_first_name_in_byte_order() {
        for group in [
            &["embed.weight", "lm_head.weight"][..],
            &["a", "b", "c"][..],
            // One name of a pair, without its partner.
            &["lm_head.weight", "other.weight"][..],
        ] {
            let k = choose(group, &ModelConfig::Absent).unwrap();
            assert_eq!(k.index, 0);
            assert!(k.rule.starts_with("byte-order: "), "{k:?}");
            // A config that says false changes nothing for a group transformers does not tie.
            assert_eq!(choose(group, &read(Some(false), None)).unwrap().index, 0);
            assert_eq!(
                choose(group, &ModelConfig::Unusable("is not JSON".into()))
                    .unwrap()
                    .index,
                0
            );
        }
        // GPT2's pair does not apply to a model that config.json says is a BERT.
        let k = choose(
            &["lm_head.weight", "transformer.wte.weight"],
            &read(None, Some("BertForMaskedLM")),
        )
        .unwrap();
        assert_eq!(k.index, 0);
        assert!(k.rule.contains("for BertForMaskedLM"), "{k:?}");
    }

    #[test]
    fn t5_keeps_shared_for_all_four_names() {
        let group = [
            "decoder.embed_tokens.weight",
            "encoder.embed_tokens.weight",
            "lm_head.weight",
            "shared.weight",
        ];
        let k = choose(&group, &ModelConfig::Absent).unwrap();
        assert_eq!(group[k.index], "shared.weight", "{k:?}");
    }

    #[test]
    fn pairs_in_both_directions_need_the_class() {
        // OpenAIGPTLMHeadModel ties lm_head to tokens_embed, OpenAIGPTDoubleHeadsModel the
        // reverse.
        let group = ["lm_head.weight", "transformer.tokens_embed.weight"];
        let k = choose(&group, &ModelConfig::Absent).unwrap();
        assert_eq!(k.index, 0);
        assert!(k.rule.contains("opposite directions"), "{k:?}");
        let k = choose(&group, &read(None, Some("OpenAIGPTLMHeadModel"))).unwrap();
        assert_eq!(group[k.index], "transformer.tokens_embed.weight");
        let k = choose(&group, &read(None, Some("OpenAIGPTDoubleHeadsModel"))).unwrap();
        assert_eq!(group[k.index], "lm_head.weight");
    }

    #[test]
    fn a_config_that_unties_or_cannot_be_read_refuses_a_tied_group() {
        let group = ["lm_head.weight", "transformer.wte.weight"];
        let e = choose(&group, &read(Some(false), None)).unwrap_err();
        assert!(e.contains("tie_word_embeddings: false"), "{e}");
        assert!(
            e.contains("lm_head.weight to transformer.wte.weight"),
            "{e}"
        );
        let e = choose(&group, &ModelConfig::parse(b"[1]")).unwrap_err();
        assert!(e.contains("not a JSON object"), "{e}");
        // However many names a group has, a message lists a few.
        let many: Vec<String> = (0..10_000).map(|i| format!("x{i}.weight")).collect();
        let mut group: Vec<&str> = many.iter().map(String::as_str).collect();
        group.extend(["lm_head.weight", "transformer.wte.weight"]);
        group.sort_unstable();
        let e = choose(&group, &read(Some(false), None)).unwrap_err();
        assert!(e.len() < 1000 && e.contains("and 9998 more"), "{e}");
        let k = choose(&group, &ModelConfig::Absent).unwrap();
        assert_eq!(group[k.index], "transformer.wte.weight");
    }

    #[test]
    fn config_json_is_read_as_transformers_writes_it() {
        assert_eq!(
            ModelConfig::parse(br#"{"architectures": ["GPT2LMHeadModel"], "n_embd": 32}"#),
            read(None, Some("GPT2LMHeadModel"))
        );
        assert_eq!(
            ModelConfig::parse(br#"{"tie_word_embeddings": false, "architectures": []}"#),
            read(Some(false), None)
        );
        assert_eq!(
            ModelConfig::parse(br#"{"text_config": {"tie_word_embeddings": true}}"#),
            read(Some(true), None)
        );
        // The top level decides over text_config.
        assert_eq!(
            ModelConfig::parse(
                br#"{"tie_word_embeddings": false, "text_config": {"tie_word_embeddings": true}}"#
            ),
            read(Some(false), None)
        );
        for bad in [
            &br#"{"tie_word_embeddings": "false"}"#[..],
            br#"{"tie_word_embeddings": 0}"#,
            b"not json",
            b"[]",
        ] {
            assert!(
                matches!(ModelConfig::parse(bad), ModelConfig::Unusable(_)),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
