//! Unit tests of the skops judgement over schemas built here: each node type's trust and
//! children, the memo, the protocol, what is dangerous (trusted or not) and the known
//! vulnerabilities' shapes, the reasons the readers print, and Python's JSON and formatting
//! rules. (What skops itself computes for real and hand-written files is checked in
//! `tests_fixtures`; hostile input in `tests_hostile`.)

use super::json::{self, Json};
use super::pyvalue::{float_repr, py_eq, py_repr, py_str};
use super::{judge, judge_in_zip, Judged};
use serde_json::{json, Value};

/// A node's state.
fn node(loader: &str, module: &str, class: &str, extra: Value) -> Value {
    let mut v = json!({"__class__": class, "__module__": module, "__loader__": loader});
    if let (Some(m), Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    v
}

fn js(v: Value) -> Value {
    node(
        "JsonNode",
        "builtins",
        "str",
        json!({"content": v.to_string(), "is_json": true}),
    )
}

fn list(items: Vec<Value>) -> Value {
    node("ListNode", "builtins", "list", json!({"content": items}))
}

fn tuple(items: Vec<Value>) -> Value {
    node("TupleNode", "builtins", "tuple", json!({"content": items}))
}

fn empty_dict() -> Value {
    node(
        "DictNode",
        "builtins",
        "dict",
        json!({"key_types": list(vec![]), "content": {}}),
    )
}

/// Judges `root` as a protocol-2 schema.
fn judged(root: Value) -> Judged {
    judged_at(root, 2)
}

fn judged_at(mut root: Value, protocol: i64) -> Judged {
    root["protocol"] = json!(protocol);
    judge(root.to_string().as_bytes()).expect("a skops schema")
}

fn untrusted(j: &Judged) -> Vec<&str> {
    j.untrusted
        .as_ref()
        .map(|u| u.iter().map(String::as_str).collect())
        .unwrap_or_default()
}

fn says(j: &Judged, words: &str) -> bool {
    j.dangerous.iter().any(|(_, why)| why.contains(words))
}

#[test]
fn containers_json_and_slices_are_trusted() {
    let root = node(
        "DictNode",
        "builtins",
        "dict",
        json!({
        "key_types": list(vec![node("TypeNode", "builtins", "str", json!({}))]),
        "content": {
            "l": list(vec![js(json!(1)), js(json!("a"))]),
            "t": tuple(vec![js(json!(null))]),
            "s": node("SetNode", "builtins", "set", json!({"content": [js(json!(2))]})),
            "sl": node("SliceNode", "builtins", "slice", json!({"content": {"start": 1, "stop": null, "step": 2}})),
            "dd": node("DefaultDictNode", "collections", "defaultdict", json!({"content": {
                "main": empty_dict(), "default_factory": node("TypeNode", "builtins", "list", json!({}))}})),
            "od": node("DictNode", "collections", "OrderedDict", json!({"key_types": list(vec![]), "content": {}})),
        }}),
    );
    let j = judged(root);
    assert!(j.is_data(), "{j:#?}");
    assert!(j.lead().is_none());
    assert!(j.pass_summary().contains("loads it without trusted="));
    assert!(j.types.contains(&"collections.defaultdict".to_owned()));
}

#[test]
fn objects_functions_and_types_trust_what_skops_lists() {
    let j = judged(list(vec![
        node(
            "ObjectNode",
            "sklearn.linear_model._logistic",
            "LogisticRegression",
            json!({"content": empty_dict()}),
        ),
        node("ObjectNode", "sklearn._loss.link", "LogitLink", json!({})),
        node("FunctionNode", "numpy", "log1p", json!({})),
        node(
            "FunctionNode",
            "scipy.special._special_ufuncs",
            "gammaln",
            json!({}),
        ),
        node("TypeNode", "numpy", "float64", json!({})),
        node(
            "NdArrayNode",
            "numpy",
            "float32",
            json!({"type": "numpy", "file": "0.npy"}),
        ),
        node("ObjectNode", "mymod", "Thing", json!({})),
        node("FunctionNode", "mymod", "helper", json!({})),
        node("TypeNode", "mymod", "Kind", json!({})),
    ]));
    assert_eq!(untrusted(&j), ["mymod.Kind", "mymod.Thing", "mymod.helper"]);
    assert!(j.dangerous.is_empty() && j.problems.is_empty());
    assert_eq!(
        j.reads,
        [(
            "0.npy".to_owned(),
            "numpy array (np.load, allow_pickle=False)".to_owned()
        )]
    );
    let lead = j.lead().unwrap();
    assert!(
        lead.contains(
            "3 type(s) skops 0.16 does not trust by default: mymod.Kind, mymod.Thing, mymod.helper"
        ),
        "{lead}"
    );
}

#[test]
fn what_skops_never_trusts_by_default() {
    let reduce = json!({"args": tuple(vec![])});
    let j = judged(list(vec![
        node(
            "TreeNode",
            "sklearn.tree._tree",
            "Tree",
            json!({"content": empty_dict(), "__reduce__": reduce}),
        ),
        node(
            "DTypeNode",
            "numpy",
            "dtype",
            json!({"content": js(json!(0))}),
        ),
        node(
            "ConstructorFromReduceNode",
            "datetime",
            "timezone",
            json!({"content": tuple(vec![])}),
        ),
        node(
            "PartialNode",
            "functools",
            "partial",
            json!({"content": {
            "func": node("FunctionNode", "numpy", "add", json!({})), "args": tuple(vec![]),
            "kwds": empty_dict(), "namespace": js(json!(null))}}),
        ),
        node(
            "SparseMatrixNode",
            "scipy.sparse._csr",
            "csr_matrix",
            json!({"type": "scipy", "file": "1.npz"}),
        ),
        node(
            "ObjectNode",
            "sklearn.ensemble._hist_gradient_boosting.predictor",
            "TreePredictor",
            json!({}),
        ),
    ]));
    assert_eq!(
        untrusted(&j),
        [
            "datetime.timezone",
            "functools.partial",
            "numpy.dtype",
            "scipy.sparse._csr.csr_matrix",
            "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
            "sklearn.tree._tree.Tree",
        ]
    );
    // A TreeNode adds its claimed type and the Tree it always constructs.
    let renamed = judged(node(
        "TreeNode",
        "builtins",
        "int",
        json!({"content": empty_dict(), "__reduce__": reduce}),
    ));
    assert_eq!(
        untrusted(&renamed),
        ["builtins.int", "sklearn.tree._tree.Tree"]
    );
}

#[test]
fn a_loss_trusts_the_losses_for_its_whole_subtree_but_defaultdict() {
    let reduce = json!({"args": tuple(vec![])});
    let inner = node(
        "ObjectNode",
        "sklearn._loss._loss",
        "CyHuberLoss",
        json!({}),
    );
    let loss = |content: Value| {
        node(
            "LossNode",
            "sklearn._loss._loss",
            "CyHalfBinomialLoss",
            json!({"content": content, "__reduce__": reduce}),
        )
    };
    assert!(judged(loss(inner.clone())).loads_by_default());
    assert_eq!(
        untrusted(&judged(inner)),
        ["sklearn._loss._loss.CyHuberLoss"]
    );
    let dd = node(
        "DefaultDictNode",
        "sklearn._loss._loss",
        "CyHuberLoss",
        json!({"content": {
        "main": empty_dict(), "default_factory": node("TypeNode", "builtins", "list", json!({}))}}),
    );
    assert_eq!(
        untrusted(&judged(loss(dd))),
        ["sklearn._loss._loss.CyHuberLoss"]
    );
}

#[test]
fn methods_add_the_method_and_must_match_their_object() {
    let obj = node("ObjectNode", "mymod", "Est", json!({}));
    let method = |module: &str, func: Value| {
        node(
            "MethodNode",
            module,
            "Est",
            json!({"content": {"func": func, "obj": obj}}),
        )
    };
    assert_eq!(
        untrusted(&judged(method("mymod", json!("predict")))),
        ["mymod.Est", "mymod.Est.predict"]
    );
    // Python formats what is not a string (`f"{…}.{self.func}"`).
    assert_eq!(
        untrusted(&judged(method("mymod", json!(null)))),
        ["mymod.Est", "mymod.Est.None"]
    );
    let mismatch = judged(method("othermod", json!("predict")));
    assert!(mismatch.untrusted.is_none());
    assert!(mismatch
        .lead()
        .unwrap()
        .contains("Expected object of type othermod.Est, got mymod.Est"));
    assert!(
        mismatch.dangerous.is_empty(),
        "skops writes such a file itself: a LEAD, not a FAIL"
    );
    let int_func = judged(method("mymod", json!(5)));
    assert!(int_func.problems[0]
        .1
        .contains("Cannot determine the safety of type <class 'int'>"));
}

#[test]
fn cve_2025_54413_a_method_that_reaches_internals_fails() {
    let obj = node(
        "ObjectNode",
        "sklearn.linear_model._logistic",
        "LogisticRegression",
        json!({}),
    );
    for func in ["__getattribute__", "__reduce_ex__", "a.b", "__globals__"] {
        let j = judged(node(
            "MethodNode",
            "sklearn.linear_model._logistic",
            "LogisticRegression",
            json!({"content": {"func": func, "obj": obj}}),
        ));
        assert!(says(&j, "CVE-2025-54413"), "{func}: {j:#?}");
    }
    let ordinary = judged(node(
        "MethodNode",
        "sklearn.linear_model._logistic",
        "LogisticRegression",
        json!({"content": {"func": "predict_proba", "obj": obj}}),
    ));
    assert!(ordinary.dangerous.is_empty(), "{ordinary:#?}");
}

#[test]
fn cve_2025_54412_operator_funcs() {
    let attrs = tuple(vec![js(json!("upper"))]);
    // What skops writes: operator.methodcaller is dangerous by the pickle tables.
    let written = judged(node(
        "OperatorFuncNode",
        "operator",
        "methodcaller",
        json!({"attrs": attrs}),
    ));
    assert_eq!(untrusted(&written), ["operator.methodcaller"]);
    assert!(says(&written, "operator.methodcaller"), "{written:#?}");
    assert!(!says(&written, "CVE"));
    // A claimed module: 0.16 refuses it, 0.11 built operator.call from it.
    let claimed = judged(node(
        "OperatorFuncNode",
        "sklearn.pipeline",
        "call",
        json!({"attrs": attrs}),
    ));
    assert!(
        claimed.untrusted.is_none() && says(&claimed, "CVE-2025-54412"),
        "{claimed:#?}"
    );
    assert!(claimed
        .dangerous
        .iter()
        .any(|(_, why)| why.contains("claims the type sklearn.pipeline.call")));
    // operator.call itself: constructing it calls its first argument.
    let call = judged(node(
        "OperatorFuncNode",
        "operator",
        "call",
        json!({"attrs": attrs}),
    ));
    assert!(says(&call, "CVE-2025-54412"), "{call:#?}");
}

#[test]
fn dangerous_names_fail_trusted_or_not_and_anywhere() {
    let j = judged(list(vec![
        node("FunctionNode", "posix", "system", json!({})),
        node("TypeNode", "builtins", "eval", json!({})),
        node("TypeNode", "subprocess", "Popen", json!({})),
        // A SliceNode is never audited (its get_unsafe_set returns nothing), but names it.
        node(
            "SliceNode",
            "builtins",
            "exec",
            json!({"content": {"start": 0, "stop": 1, "step": null}}),
        ),
    ]));
    for name in [
        "posix.system",
        "builtins.eval",
        "subprocess.Popen",
        "builtins.exec",
    ] {
        assert!(says(&j, name), "{name}: {j:#?}");
    }
    assert_eq!(
        untrusted(&j),
        ["builtins.eval", "posix.system", "subprocess.Popen"]
    );
    assert_eq!(
        j.dangerous
            .iter()
            .find(|(_, w)| w.contains("posix.system"))
            .unwrap()
            .0,
        "content[0]"
    );
    // Under a key skops ignores: never built, still named.
    let mut root = js(json!(1));
    root["junk"] = node("ObjectNode", "os", "system", json!({}));
    let j = judged(root);
    assert!(
        j.loads_by_default() && says(&j, "os.system") && !j.is_data(),
        "{j:#?}"
    );
    assert_eq!(j.dangerous[0].0, "junk");
}

#[test]
fn a_partial_is_judged_by_what_it_binds() {
    let partial = |func: Value| {
        node(
            "PartialNode",
            "functools",
            "partial",
            json!({"content": {
            "func": func, "args": tuple(vec![js(json!(1))]), "kwds": empty_dict(),
            "namespace": js(json!(null))}}),
        )
    };
    let add = judged(partial(node("FunctionNode", "numpy", "add", json!({}))));
    assert!(add.dangerous.is_empty(), "{add:#?}");
    assert_eq!(untrusted(&add), ["functools.partial"]);
    let system = judged(partial(node("FunctionNode", "posix", "system", json!({}))));
    assert!(says(&system, "posix.system"), "{system:#?}");
    // Named otherwise, a PartialNode's names are judged as any node's.
    let renamed = judged(node(
        "PartialNode",
        "builtins",
        "eval",
        json!({"content": {}}),
    ));
    assert!(says(&renamed, "builtins.eval"), "{renamed:#?}");
}

#[test]
fn protocol_0_functions_are_their_content() {
    let f = node(
        "FunctionNode",
        "numpy",
        "negative",
        json!({"content": {"module_path": "posix", "function": "system"}}),
    );
    let j = judged_at(f.clone(), 0);
    assert_eq!(untrusted(&j), ["posix.system"]);
    assert!(says(&j, "posix.system"));
    // Under protocol 2 the content is ignored by skops; still named, so still a FAIL.
    let j2 = judged_at(f, 2);
    assert_eq!(untrusted(&j2), [] as [&str; 0]);
    assert!(says(&j2, "posix.system"));
}

#[test]
fn bit_generators_and_losses_carry_older_skops_flaws() {
    let generator = |name: &str| {
        node(
            "RandomGeneratorNode",
            "numpy.random._generator",
            "Generator",
            json!({"content": {
        "bit_generator": node("DictNode", "builtins", "dict", json!({"key_types": list(vec![]), "content": {"bit_generator": js(json!(name))}})),
        "seed_seq": empty_dict()}}),
        )
    };
    assert!(judged(generator("PCG64")).is_data());
    let seed = judged(generator("seed"));
    assert_eq!(untrusted(&seed), ["numpy.random.seed"]);
    assert!(says(&seed, "skops 0.14 and older"), "{seed:#?}");
    let reduce = json!({"args": tuple(vec![])});
    let loss = judged(node(
        "LossNode",
        "mymod",
        "Payload",
        json!({"content": empty_dict(), "__reduce__": reduce}),
    ));
    assert_eq!(untrusted(&loss), ["mymod.Payload"]);
    assert!(says(&loss, "PR #506"), "{loss:#?}");
}

#[test]
fn the_memo_follows_python_dict_keys() {
    // The first node with an id is the node: later states with that id are never built.
    let mut first = node("ObjectNode", "sklearn.decomposition._pca", "PCA", json!({}));
    first["__id__"] = json!(5);
    let mut ignored = node("ObjectNode", "mymod", "Ignored", json!({}));
    ignored["__id__"] = json!(5.0);
    let j = judged(list(vec![first, json!({"__id__": 5}), ignored]));
    assert!(j.untrusted.as_ref().is_some_and(Vec::is_empty), "{j:#?}");
    // 5 and 5.0 are one key; true is 1, not 5: not memoized, so built, and it has no loader.
    let mut five = node("ObjectNode", "mymod", "A", json!({}));
    five["__id__"] = json!(5);
    let j = judged(list(vec![
        five.clone(),
        json!({"__id__": 5.0}),
        json!({"__id__": true}),
    ]));
    assert!(
        j.problems[0].1.contains("KeyError: \"__loader__\""),
        "{j:#?}"
    );
    assert_eq!(j.problems[0].0, "content[2]");
    // A falsy id is never memoized.
    let mut zero = five.clone();
    zero["__id__"] = json!(0);
    assert!(judged(list(vec![zero, json!({"__id__": 0})]))
        .untrusted
        .is_none());
    // Cycles: a node that holds itself.
    let mut cyc = node(
        "ObjectNode",
        "mymod",
        "A",
        json!({"content": node("DictNode", "builtins", "dict",
        json!({"key_types": list(vec![]), "content": {"self": {"__id__": 7}}}))}),
    );
    cyc["__id__"] = json!(7);
    assert_eq!(untrusted(&judged(cyc)), ["mymod.A"]);
    // An unhashable id raises.
    assert!(judged(list(vec![json!({"__id__": [1]})])).problems[0]
        .1
        .contains("unhashable"));
}

#[test]
fn malformed_schemas_are_refused_with_a_place() {
    let cases = [
        (
            node("EvilNode", "m", "c", json!({})),
            "Can't find loader 'EvilNode'",
        ),
        (
            node("CachedNode", "m", "c", json!({"__id__": 3})),
            "cached node",
        ),
        (
            node("QuantileForestNode", "m", "c", json!({})),
            "quantile_forest",
        ),
        (
            json!({"__class__": "c", "__module__": "m", "_skops_version": "0.16.0"}),
            "KeyError: \"__loader__\"",
        ),
        (
            list(vec![json!("not a state")]),
            "'str' object has no attribute 'get'",
        ),
        (
            node("ListNode", "builtins", "list", json!({"content": 5})),
            "'int' object is not iterable",
        ),
        (
            node(
                "DictNode",
                "builtins",
                "dict",
                json!({"key_types": list(vec![]), "content": []}),
            ),
            "has no attribute 'items'",
        ),
        (
            node("NdArrayNode", "numpy", "ndarray", json!({"type": "pickle"})),
            "Unknown type pickle",
        ),
        (
            node(
                "SparseMatrixNode",
                "scipy.sparse._csr",
                "csr_matrix",
                json!({"type": "numpy", "file": "x"}),
            ),
            "Cannot load object",
        ),
        (
            node("ObjectNode", "m", "c", json!({"content": 0})),
            "'int' object has no attribute 'get'",
        ),
        (
            node("BytesNode", "builtins", "bytes", json!({"file": ["x"]})),
            "unhashable",
        ),
    ];
    for (root, why) in cases {
        let j = judged(root.clone());
        assert!(
            j.untrusted.is_none() && !j.loads_by_default(),
            "{root}: {j:#?}"
        );
        assert!(
            j.lead().unwrap().contains(why),
            "{root}: {why:?} not in {:?}",
            j.lead()
        );
    }
    // Names of the wrong type raise at the audit, but for a JsonNode, which is never audited.
    let j = judged(node("ObjectNode", "m", "c", json!({"__module__": 5})));
    assert!(j.problems[0].1.contains("get_unsafe_set raises"), "{j:#?}");
    let mut json_node = js(json!(1));
    json_node["__module__"] = json!(5);
    assert!(judged(json_node).is_data());
}

#[test]
fn the_protocol_is_read_as_read_schema_reads_it() {
    let root = list(vec![]);
    for (p, ok) in [
        (json!(0), true),
        (json!(1), true),
        (json!(2), true),
        (json!(3), false),
        (json!(-1), false),
        (json!(true), false),
        (json!(1.0), false),
        (json!("2"), false),
        (json!(null), false),
    ] {
        let mut r = root.clone();
        r["protocol"] = p.clone();
        let j = judge(r.to_string().as_bytes()).unwrap();
        assert_eq!(j.loads_by_default(), ok, "{p}: {j:#?}");
        if !ok {
            assert_eq!(j.problems[0].0, "protocol");
        }
    }
    let mut r = root;
    r.as_object_mut().unwrap().remove("protocol");
    assert!(judge(r.to_string().as_bytes()).unwrap().problems[0]
        .1
        .contains("Invalid skops protocol None"));
}

#[test]
fn members_must_be_in_the_zip_when_the_caller_knows_them() {
    let root = json!({"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode", "type": "numpy", "file": "0.npy", "protocol": 2});
    let bytes = root.to_string();
    assert!(judge(bytes.as_bytes()).unwrap().is_data());
    assert!(judge_in_zip(bytes.as_bytes(), &|n| n == "0.npy")
        .unwrap()
        .is_data());
    let missing = judge_in_zip(bytes.as_bytes(), &|_| false).unwrap();
    assert!(
        missing
            .lead()
            .unwrap()
            .contains("There is no item named \"0.npy\""),
        "{missing:#?}"
    );
}

#[test]
fn construction_errors_keep_it_from_loading() {
    let mut bad = js(json!(1));
    bad["content"] = json!("{not json");
    let j = judged(bad);
    assert_eq!(j.untrusted.as_deref(), Some(&[][..]));
    assert!(!j.loads_by_default() && j.lead().unwrap().contains("JSONDecodeError"));
    let mut not_str = js(json!(1));
    not_str["content"] = json!(5);
    assert!(judged(not_str).lead().unwrap().contains("must be str"));
    let v0 = node(
        "RandomGeneratorNode",
        "numpy.random._generator",
        "Generator",
        json!({"content": {"bit_generator": {}}}),
    );
    assert!(!judged_at(v0, 0).loads_by_default());
}

#[test]
fn not_a_skops_schema() {
    assert!(judge(br#"{"a": 1}"#).is_none());
    assert!(judge(b"[1, 2]").is_none());
    assert!(judge(b"not json").is_none());
    assert!(judge(b"").is_none());
    // Broken JSON that names a loader: a skops schema skops cannot read.
    let j = judge(br#"{"__loader__": "ObjectNode", }"#).unwrap();
    assert!(j.lead().unwrap().contains("json.loads raises"), "{j:#?}");
}

#[test]
fn other_encodings_and_repeated_keys_are_read_as_python_reads_them() {
    let root = json!({"__class__": "system", "__module__": "posix", "__loader__": "FunctionNode", "protocol": 2}).to_string();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(root.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let utf16be: Vec<u8> = root.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let utf32: Vec<u8> = [0xFF, 0xFE, 0, 0]
        .into_iter()
        .chain(root.chars().flat_map(|c| u32::from(c).to_le_bytes()))
        .collect();
    let bom8: Vec<u8> = b"\xef\xbb\xbf"
        .iter()
        .copied()
        .chain(root.bytes())
        .collect();
    for bytes in [utf16, utf16be, utf32, bom8] {
        let j = judge(&bytes).expect("read as Python reads it");
        assert!(says(&j, "posix.system"), "{j:#?}");
    }
    // A repeated key: the last value counts, the first is still judged, and it is not data.
    let j = judge(br#"{"__class__": "system", "__module__": "posix", "__class__": "negative", "__module__": "numpy", "__loader__": "FunctionNode", "protocol": 2}"#).unwrap();
    assert!(j.loads_by_default() && !j.is_data());
    assert!(says(&j, "posix.system"), "{j:#?}");
    assert!(j.lead().unwrap().contains("repeats a key"));
}

#[test]
fn the_lead_lists_twenty_types_and_counts_the_rest() {
    let items = (0..25)
        .map(|i| node("ObjectNode", "m", &format!("C{i:02}"), json!({})))
        .collect();
    let lead = judged(list(items)).lead().unwrap();
    assert!(
        lead.contains("the 25 type(s)")
            && lead.contains("m.C19 (and 5 more)")
            && !lead.contains("m.C20"),
        "{lead}"
    );
}

#[test]
fn json_reads_as_python_reads() {
    let doc = json::loads(br#"{"a": [NaN, Infinity, -Infinity, 1e400, -0, 1.5, 12345678901234567890123], "b": "\ud83d\ude00\ud800x", "a": 2}"#).unwrap();
    assert_eq!(doc.get("a"), Some(&Json::Int("2".into())));
    let Json::Object(pairs) = &doc else { panic!() };
    assert_eq!(pairs[0].0, "a", "a repeated key keeps its first place");
    let b = doc.get("b").and_then(Json::as_str).unwrap();
    assert!(b.starts_with('😀') && b.ends_with('x') && b.contains(json::ESCAPE));
    for bad in [
        &b"{\"a\":1,}"[..],
        b"[1,]",
        b"01",
        b"\"\x01\"",
        b"{'a':1}",
        b"\"\\x\"",
        b"1 2",
        b"\"\\ud800\\uZZZZ\"",
    ] {
        assert!(
            json::loads(bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    assert!(json::loads(&[b'7'; 4301]).is_err());
    assert!(json::loads(&[b'7'; 4300]).is_ok());
    assert!(json::loads_str("\u{FEFF}1").is_err());
    assert!(json::loads(b"\xef\xbb\xbf1").is_ok());
}

#[test]
fn python_formats_and_compares_as_skops_sees_it() {
    for (f, want) in [
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (1e-5, "1e-05"),
        (0.0001, "0.0001"),
        (-0.0, "-0.0"),
        (1.5e300, "1.5e+300"),
        (123.456, "123.456"),
        (f64::NAN, "nan"),
        (f64::NEG_INFINITY, "-inf"),
    ] {
        assert_eq!(float_repr(f), want);
    }
    let v = json::loads(br#"[1.0, "a", null, true, {"k": 2}, "it's"]"#).unwrap();
    assert_eq!(py_str(&v), r#"[1.0, 'a', None, True, {'k': 2}, "it's"]"#);
    assert_eq!(py_repr(&Json::Str("a\nb\\".into())), r"'a\nb\\'");
    assert!(py_eq(&Json::Int("1".into()), &Json::Float(1.0)));
    assert!(py_eq(&Json::Bool(true), &Json::Int("1".into())));
    assert!(!py_eq(&Json::Float(f64::NAN), &Json::Float(f64::NAN)));
    assert!(py_eq(
        &Json::Array(vec![Json::Float(f64::NAN)]),
        &Json::Array(vec![Json::Float(f64::NAN)])
    ));
    assert!(!py_eq(&Json::Str("1".into()), &Json::Int("1".into())));
}
