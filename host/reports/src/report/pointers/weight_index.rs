//! Weight indexes: a JSON file whose `weight_map` maps each tensor name to the shard that holds
//! it (`model.safetensors.index.json`, `pytorch_model.bin.index.json`, their
//! `model.safetensors.index.<variant>.json` forms, diffusers' and any other `*.index.json`).
//!
//! What the loaders do, at the versions read (transformers 5.24.0, accelerate 1.15.0):
//!
//! - transformers `utils/hub.py` `get_checkpoint_shard_files` takes
//!   `sorted(set(index["weight_map"].values()))` and, for a local directory, joins each to it
//!   with `os.path.join`, unchecked: `..`, an absolute path or a link leads anywhere;
//!   accelerate `utils/modeling.py` `load_checkpoint_in_model` does the same from the index's
//!   own directory. So every value must resolve to a file of the directory a reader read.
//! - transformers `modeling_utils.py` `PreTrainedModel._load_pretrained_model` then loads
//!   *every* tensor of every named shard (`for k in file_pointer.keys(): merged_state_dict[k] =
//!   …`), whichever shard the index names for it; a later shard in that sorted order replaces
//!   a tensor an earlier one held. `trainer_utils.py` `load_sharded_checkpoint` loads the shards
//!   in `list(set(...))` order (a Python set's, which varies between runs) and refuses, with
//!   `strict=True`, a model whose keys the index does not list.
//!
//! Hence: a tensor held by two named shards is a FAIL (loaders load different copies); a name
//! the index maps to a shard that does not hold it, and a tensor a shard holds that the index
//! does not list, are LEADs (the model loads, but not as the index describes: the tensor is
//! loaded from another shard or left at its initial value; an unlisted tensor loads anyway).

use super::targets::{judge_target, resolve, tensor_names, Findings, Names, Target};
use crate::read::artifact::Artifact;
use socair_plugin_api::{OpenedFile, ReportRow, RowStatus};
use std::collections::{BTreeMap, BTreeSet};

/// The largest index read (a real one is a few megabytes at most).
pub const MAX_INDEX_BYTES: u64 = 64 << 20;

/// Who follows a weight index, for messages.
const LOADER: &str = "transformers' from_pretrained";

/// What the loader does with a path, for the findings about paths.
const JOINS: &str = "transformers' from_pretrained joins each weight_map value to the model's directory with os.path.join, unchecked (5.24.0 `utils/hub.py` `get_checkpoint_shard_files`), and loads that file";

/// A row per weight index among the directory's files no reader claimed.
pub(super) fn rows(artifact: &Artifact<'_>, names: &Names<'_, '_>) -> Vec<(String, ReportRow)> {
    let mut out = Vec::new();
    for u in &artifact.unclaimed {
        if !u.rel.ends_with(".json") {
            continue;
        }
        if u.input.len() > MAX_INDEX_BYTES {
            continue;
        }
        let mut bytes = vec![0u8; u.input.len() as usize];
        if u.input.read_exact_at(0, &mut bytes).is_err() {
            continue;
        }
        let map = match weight_map_of(&bytes) {
            Ok(Some(map)) => map,
            Ok(None) => continue,
            // Python's json module reads more than strict JSON (NaN, Infinity): an index
            // socair cannot parse is not checked, and says so.
            Err(e) if u.rel.ends_with(".index.json") => {
                let mut found = Findings::default();
                found.add(
                    RowStatus::Lead,
                    "file",
                    format!("not strict JSON ({e}), so its weight_map was not checked, though Python's json module (which transformers uses) may read it"),
                );
                out.push((u.rel.clone(), found.row("a weight index", String::new())));
                continue;
            }
            Err(_) => continue,
        };
        let row = if u.rel.ends_with(".weights.json") {
            judge_keras_shards(names, &u.rel, &map)
        } else {
            judge_index(names, &u.rel, &map)
        };
        out.push((u.rel.clone(), row));
    }
    out
}

/// The top-level `weight_map` of a JSON document, decoded as Python's `json.loads` reads it
/// (escapes in keys decoded, the last of duplicate keys kept); every other value is skipped
/// unallocated. `Ok(None)` for a document that is not an object or has no `weight_map`.
fn weight_map_of(bytes: &[u8]) -> Result<Option<serde_json::Value>, serde_json::Error> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Top;
    impl<'de> Visitor<'de> for Top {
        type Value = Option<serde_json::Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON document")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "weight_map" {
                    found = Some(map.next_value::<serde_json::Value>()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
        // Anything but an object: no index.
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let map = (&mut de).deserialize_any(Top)?;
    de.end()?;
    Ok(map)
}

/// `weight_map["name"]`, or `weight_map["name"] (and N more entries)`.
fn place(keys: &[&str]) -> String {
    let first = keys.first().copied().unwrap_or_default();
    match keys.len() {
        0 | 1 => format!("weight_map[{first:?}]"),
        n => format!("weight_map[{first:?}] (and {} more entries)", n - 1),
    }
}

/// Keras 3's sharded weights (`model.save_weights("m.weights.json", max_shard_size=...)`):
/// `weight_map` maps each layer's variable group (`/layers/dense/vars`) to a shard file name
/// or a list of them, which keras 3.15.1 opens beside the index (`saving_lib.py`
/// `ShardedH5IOStore.get`: `self.path.with_name(filename)`). Each named file must be a shard
/// of the directory a reader read; the groups are not tensor names, so what each shard holds
/// is the keras plugin's to judge.
fn judge_keras_shards(names: &Names<'_, '_>, index: &str, map: &serde_json::Value) -> ReportRow {
    let mut found = Findings::default();
    let what = "a Keras sharded-weights index";
    let Some(map) = map.as_object() else {
        found.add(
            RowStatus::Lead,
            "weight_map",
            "is not an object: Keras' sharded loader raises on it",
        );
        return found.row(what, String::new());
    };
    let mut by_value: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (key, value) in map {
        let files: Vec<&str> = match value {
            serde_json::Value::String(s) => vec![s.as_str()],
            serde_json::Value::Array(a) if a.iter().all(|v| v.is_string()) => {
                a.iter().filter_map(|v| v.as_str()).collect()
            }
            _ => {
                found.add(
                    RowStatus::Lead,
                    format!("weight_map[{key:?}]"),
                    "is neither a file name nor a list of them: Keras' sharded loader does not read it",
                );
                continue;
            }
        };
        for f in files {
            by_value.entry(f).or_default().push(key);
        }
    }
    for (value, keys) in &by_value {
        let rel = match resolve(index, value) {
            Ok(rel) => rel,
            Err(why) => {
                found.add(
                    RowStatus::Fail,
                    place(keys),
                    format!("{why}: Keras opens each shard beside the index"),
                );
                continue;
            }
        };
        if let Some((status, why)) = judge_target(&names.target(&rel), &rel, "Keras' load_weights")
        {
            found.add(status, place(keys), why);
        }
    }
    found.row(what, format!("{} shard file(s), each read", by_value.len()))
}

fn judge_index(names: &Names<'_, '_>, index: &str, map: &serde_json::Value) -> ReportRow {
    let mut found = Findings::default();
    let what = "a weight index";
    let Some(map) = map.as_object() else {
        found.add(
            RowStatus::Lead,
            "weight_map",
            "is not an object: transformers' get_checkpoint_shard_files raises on it, and what a loader would read instead is unknown",
        );
        return found.row(what, String::new());
    };
    // Entries grouped by the shard named, so that ten thousand entries naming one bad path
    // are one finding.
    let mut by_value: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (key, value) in map {
        match value.as_str() {
            Some(v) => by_value.entry(v).or_default().push(key),
            None => found.add(
                RowStatus::Lead,
                format!("weight_map[{key:?}]"),
                "is not a string: transformers' get_checkpoint_shard_files raises on it",
            ),
        }
    }
    // The shards read, each with the entries that name it.
    let mut shards: BTreeMap<String, (&OpenedFile, Vec<&str>)> = BTreeMap::new();
    for (value, keys) in &by_value {
        let rel = match resolve(index, value) {
            Ok(rel) => rel,
            Err(why) => {
                found.add(RowStatus::Fail, place(keys), format!("{why}: {JOINS}"));
                continue;
            }
        };
        let t = names.target(&rel);
        if let Some((status, why)) = judge_target(&t, &rel, LOADER) {
            let why = if *value == rel {
                why
            } else {
                format!("{value:?} {why}")
            };
            found.add(status, place(keys), why);
            continue;
        }
        let Target::Read(job) = t else { continue };
        match names.opened(&job.rel) {
            Some(o) => {
                let entry = shards.entry(rel).or_insert((o, Vec::new()));
                entry.1.extend(keys.iter().copied());
            }
            None => found.add(
                RowStatus::Lead,
                place(keys),
                format!("{value:?} names {rel:?}, which was read as data for another file, not as a shard"),
            ),
        }
    }
    // What each named shard holds.
    let mut holders: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (rel, (o, _)) in &shards {
        let mut seen = BTreeSet::new();
        for name in tensor_names(o) {
            if seen.insert(name) {
                holders.entry(name).or_default().push(rel.as_str());
            }
        }
    }
    for (name, held_by) in &holders {
        if held_by.len() > 1 {
            found.add(
                RowStatus::Fail,
                format!("tensor {name:?}"),
                format!(
                    "is held by {} shards the index names ({}): transformers 5.24.0 `_load_pretrained_model` keeps the copy in the shard sorted last, `load_sharded_checkpoint` the one its Python set yields last (which varies between runs), so loaders load different tensors",
                    held_by.len(),
                    held_by.join(", ")
                ),
            );
        }
    }
    for (rel, (o, keys)) in &shards {
        let held: BTreeSet<&str> = tensor_names(o).collect();
        for key in keys {
            if held.contains(key) {
                continue;
            }
            let why = match holders.get(key) {
                Some(others) => format!(
                    "names {rel:?}, which does not hold it; {} does: transformers 5.24.0 `_load_pretrained_model` loads every tensor of every shard the index names, so it loads it from there, not from where the index says",
                    others.join(", ")
                ),
                None => format!(
                    "names {rel:?}, which does not hold it, and no shard the index names does: transformers 5.24.0 leaves that weight at its initial value (a missing key), `load_sharded_checkpoint` does not notice"
                ),
            };
            found.add(RowStatus::Lead, format!("weight_map[{key:?}]"), why);
        }
        for name in held.iter().filter(|n| !map.contains_key(**n)) {
            found.add(
                RowStatus::Lead,
                format!("{rel}: tensor {name:?}"),
                "is not in the index's weight_map: transformers 5.24.0 `_load_pretrained_model` loads it anyway (every tensor of each named shard), while `load_sharded_checkpoint(strict=True)` refuses a model that has it: the index does not describe what loads",
            );
        }
    }
    let tensors = map.len();
    let clean = format!(
        "a weight index of {tensors} tensors in {} shards: each entry names a file of the directory that a reader read, and each shard holds exactly the tensors the index names for it",
        shards.len()
    );
    found.row(what, clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weight_map_is_read_as_pythons_json_reads_it() {
        // Escapes in the key are decoded, and the last of duplicate keys wins, as in
        // json.loads.
        let doc = br#"{"weight\u005fmap": {"a": "x"}, "metadata": {"n": [1, {"b": 2}]}, "weight_map": {"a": "../y", "a": "../z"}}"#;
        let map = weight_map_of(doc).unwrap().unwrap();
        assert_eq!(map, serde_json::json!({"a": "../z"}));
        assert_eq!(weight_map_of(br#"[{"weight_map": {}}]"#).unwrap(), None);
        assert_eq!(weight_map_of(br#"{"metadata": {}}"#).unwrap(), None);
        assert!(weight_map_of(br#"{"weight_map": {"a": NaN}}"#).is_err());
        assert!(weight_map_of(br#"{"weight_map": {}} x"#).is_err());
    }
}
