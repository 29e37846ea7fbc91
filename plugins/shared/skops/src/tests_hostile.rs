//! Hostile schemas: nesting past every bound, huge counts, every field of every node type
//! replaced by every kind of JSON value, byte-level mutations of real schemas, and cycles. The
//! judgement never panics, never recurses without a bound, stays within its output bounds, and
//! never calls data what it did not read whole.

use super::json::{self, MAX_DEPTH};
use super::nodes::MAX_NODE_DEPTH;
use super::{judge, Judged, SHOWN};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn fixture_schema(name: &str) -> Vec<u8> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/skops")
        .join(name);
    let zip = std::fs::read(path).unwrap();
    // skops writes schema.json last, stored: its bytes run from its local header's data to
    // the central directory.
    let start = zip.windows(11).rposition(|w| w == b"schema.json").unwrap();
    let local = zip[..start]
        .windows(4)
        .rposition(|w| w == b"PK\x03\x04")
        .unwrap();
    let data = local + 30 + 11;
    let end = zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    zip[data..end].to_vec()
}

/// Runs `f` on a thread with a small stack: the judgement must not need a big one.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn json_nested_past_the_bound_is_refused_without_recursion() {
    for depth in [MAX_DEPTH, MAX_DEPTH + 1, 100_000] {
        let text = format!(
            "{{\"__loader__\": \"ListNode\", \"x\": {}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let j = on_small_stack(move || judge(text.as_bytes()));
        let j = j.expect("it names a loader");
        assert!(!j.is_data());
        if depth > MAX_DEPTH {
            assert!(
                j.lead().unwrap().contains("nested deeper"),
                "{:?}",
                j.lead()
            );
        }
    }
    // Objects too, and nothing named loader: not a skops schema.
    let text = format!("{}1{}", "{\"a\":".repeat(50_000), "}".repeat(50_000));
    assert!(on_small_stack(move || judge(text.as_bytes())).is_none());
}

#[test]
fn nodes_nested_past_the_bound_are_not_walked() {
    for depth in [MAX_NODE_DEPTH - 1, MAX_NODE_DEPTH, MAX_NODE_DEPTH * 2, 440] {
        let mut node = json!({"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode", "content": "1"});
        for _ in 0..depth {
            node = json!({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": [node]});
        }
        node["protocol"] = json!(2);
        let text = node.to_string();
        let j = on_small_stack(move || judge(text.as_bytes()).unwrap());
        if depth < MAX_NODE_DEPTH {
            assert!(j.is_data(), "{depth}: {:?}", j.lead());
        } else {
            assert!(
                j.untrusted.is_none() && !j.is_data() && !j.unchecked.is_empty(),
                "{depth}"
            );
            assert!(j.lead().unwrap().contains("deeper than"));
        }
    }
}

#[test]
fn huge_counts_stay_bounded_in_time_and_output() {
    // 200,000 untrusted types, each dangerous-looking name distinct.
    let items: Vec<Value> = (0..200_000)
        .map(|i| json!({"__class__": format!("C{i}"), "__module__": "m", "__loader__": "ObjectNode"}))
        .collect();
    let dangerous: Vec<Value> = (0..500)
        .map(|i| json!({"__class__": format!("f{i}"), "__module__": "os", "__loader__": "FunctionNode"}))
        .collect();
    let root = json!({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "protocol": 2,
        "content": items.into_iter().chain(dangerous).collect::<Vec<_>>()});
    let text = root.to_string();
    let started = Instant::now();
    let j = judge(text.as_bytes()).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(j.untrusted.as_ref().map(Vec::len), Some(200_500));
    assert_eq!(j.dangerous.len(), super::danger::MAX_FINDINGS);
    assert_eq!(j.more, 500 - super::danger::MAX_FINDINGS as u64);
    let lead = j.lead().unwrap();
    assert!(lead.contains("(and 200480 more)"), "{}", &lead[..200]);
    assert!(lead.len() < 64 * SHOWN + 400, "{} bytes", lead.len());
    assert_eq!(j.types.len(), 200_501, "every type once, the list too");
}

#[test]
fn too_many_values_are_refused() {
    let n = json::MAX_VALUES + 10;
    let text = format!(
        "{{\"__loader__\": \"ListNode\", \"x\": [{}0]}}",
        "0,".repeat(n)
    );
    let j = judge(text.as_bytes()).unwrap();
    assert!(j.lead().unwrap().contains("values"), "{:?}", j.lead());
}

/// Every kind of JSON value.
fn values() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(7),
        json!(-1),
        json!(1.5),
        json!(""),
        json!("x"),
        json!("numpy"),
        json!([]),
        json!([1]),
        json!(["a"]),
        json!({}),
        json!({"a": 1}),
        json!({"__id__": 1}),
        json!({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": []}),
    ]
}

#[test]
fn every_field_of_every_node_type_may_hold_anything() {
    let loaders = [
        "DictNode",
        "DefaultDictNode",
        "ListNode",
        "SetNode",
        "TupleNode",
        "BytesNode",
        "BytearrayNode",
        "SliceNode",
        "FunctionNode",
        "MethodNode",
        "PartialNode",
        "TypeNode",
        "ConstructorFromReduceNode",
        "ObjectNode",
        "JsonNode",
        "OperatorFuncNode",
        "NdArrayNode",
        "MaskedArrayNode",
        "DTypeNode",
        "RandomStateNode",
        "RandomGeneratorNode",
        "SparseMatrixNode",
        "LossNode",
        "TreeNode",
        "CachedNode",
        "QuantileForestNode",
        "_DictWithDeprecatedKeysNode",
    ];
    let fields = [
        "__class__",
        "__module__",
        "__loader__",
        "__id__",
        "content",
        "key_types",
        "attrs",
        "type",
        "file",
        "shape",
        "__reduce__",
    ];
    let mut judged = 0;
    for protocol in [0, 1, 2] {
        for loader in loaders {
            for field in fields {
                for value in values() {
                    let mut root = json!({"__class__": "c", "__module__": "m", "__loader__": loader,
                        "protocol": protocol, "__id__": 1,
                        "content": {"obj": {"__id__": 1}, "func": "f", "main": {"__id__": 1},
                            "bit_generator": {"__id__": 1}, "seed_seq": {"__id__": 1}, "data": {"__id__": 1},
                            "mask": {"__id__": 1}, "default_factory": {"__id__": 1}, "args": {"__id__": 1},
                            "kwds": {"__id__": 1}, "namespace": {"__id__": 1}, "start": 1, "stop": 2, "step": 3,
                            "module_path": "numpy", "function": "negative"},
                        "key_types": {"__id__": 1}, "attrs": {"__id__": 1}, "type": "json", "file": "0.npy",
                        "shape": {"__id__": 1}, "__reduce__": {"args": {"__id__": 1}}});
                    root[field] = value;
                    let j: Judged = judge(root.to_string().as_bytes()).unwrap();
                    // Never data unless skops would load it, and every problem is placed.
                    if j.is_data() {
                        assert!(j.untrusted.as_ref().is_some_and(Vec::is_empty));
                    }
                    assert!(j.problems.len() <= SHOWN + 1);
                    judged += 1;
                }
            }
        }
    }
    assert!(judged > 10_000);
}

#[test]
fn mutated_real_schemas_never_panic() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for name in [
        "pipeline.skops",
        "numpy-random.skops",
        "bound-method.skops",
        "loss.skops",
        "containers.skops",
    ] {
        let schema = fixture_schema(name);
        assert!(judge(&schema).is_some(), "{name}");
        for _ in 0..400 {
            let mut m = schema.clone();
            for _ in 0..1 + next() % 4 {
                if m.is_empty() {
                    break;
                }
                let at = (next() as usize) % m.len();
                match next() % 4 {
                    0 => m[at] = next() as u8,
                    1 => {
                        m.remove(at);
                    }
                    2 => m.insert(at, b"{}[]\",:0\\u"[(next() % 10) as usize]),
                    _ => m.truncate(at),
                }
            }
            let _ = judge(&m);
        }
    }
}

#[test]
fn cycles_and_self_reference_end() {
    // A MethodNode whose object is itself, and a dict that holds its own node.
    let text = br#"{"__class__": "Est", "__module__": "m", "__loader__": "MethodNode", "__id__": 3, "protocol": 2,
        "content": {"func": "f", "obj": {"__id__": 3}}}"#;
    let j = judge(text).unwrap();
    assert_eq!(
        j.untrusted.as_deref(),
        Some(&["m.Est".to_owned(), "m.Est.f".to_owned()][..])
    );
    // Every node of a long chain refers back to the root.
    let mut node = json!({"__id__": 1});
    for i in 0..150 {
        node = json!({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "__id__": i + 2,
            "content": [node, {"__id__": 1}, {"__id__": i + 2}]});
    }
    let mut root = json!({"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "__id__": 1,
        "protocol": 2, "key_types": {"__id__": 1}, "content": {"a": node}});
    root["content"]["b"] = json!({"__id__": 1});
    let j = judge(root.to_string().as_bytes()).unwrap();
    assert!(j.is_data(), "{:?}", j.lead());
}

#[test]
fn strange_strings_stay_apart() {
    // Lone surrogates and U+10FFFF keep distinct names distinct.
    let text = "{\"__class__\": \"list\", \"__module__\": \"builtins\", \"__loader__\": \"ListNode\", \"protocol\": 2, \"content\": [
        {\"__class__\": \"A\\ud800\", \"__module__\": \"m\", \"__loader__\": \"ObjectNode\"},
        {\"__class__\": \"A\\ud801\", \"__module__\": \"m\", \"__loader__\": \"ObjectNode\"},
        {\"__class__\": \"A\u{10FFFF}\", \"__module__\": \"m\", \"__loader__\": \"ObjectNode\"},
        {\"__class__\": \"A\u{F0000}\", \"__module__\": \"m\", \"__loader__\": \"ObjectNode\"}]}";
    let j = judge(text.as_bytes()).unwrap();
    assert_eq!(j.untrusted.as_ref().map(Vec::len), Some(4), "{j:#?}");
    // Invalid UTF-8 is refused as Python's decoder refuses it.
    assert!(json::loads(b"\"\xff\"").is_err());
    assert!(json::loads(b"\"\xed\xa0\x80\"").is_ok());
}

/// The `skops_schema` fuzz corpus (the schemas of fixtures/skops/ and cases.json, and what
/// the fuzzer grew from them) and cuts of each: the property holds.
#[test]
fn the_fuzz_corpus_keeps_the_property() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fuzz/corpus/skops_schema");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for cut in [bytes.len(), bytes.len() / 2, bytes.len().saturating_sub(1)] {
            crate::fuzzing::check_schema(&bytes[..cut]);
        }
        n += 1;
    }
    assert!(n >= 100, "{n} corpus files");
}
