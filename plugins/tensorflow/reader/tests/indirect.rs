//! I/O through an indirection: an attribute that names a file, given as a
//! function-attribute placeholder bound at a call site, and ops whose OpDef is stateless but
//! whose kernel opens a file. The fixtures (fixtures/tensorflow/make_indirect.py) were loaded
//! with TensorFlow 2.21.0's TF1 loader, which wrote (PrintV2) or read (DecodeProtoV2) the file
//! for each hostile one and touched nothing for each benign one (fixtures/tensorflow/
//! indirect.json); the variants below change one thing of those files.

use crate::common::{fixture, open};
use prost::Message;
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_tensorflow::proto::tensorflow::{attr_value, AttrValue, NodeDef, SavedModel};

fn findings(o: &OpenedFile) -> String {
    o.rows[0]
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.place, f.reason))
        .collect::<Vec<_>>()
        .join("\n")
}

fn truth() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(fixture("tensorflow/indirect.json")).unwrap()).unwrap()
}

fn saved_model(rel: &str) -> SavedModel {
    SavedModel::decode(std::fs::read(fixture(rel)).unwrap().as_slice()).unwrap()
}

fn reread(sm: &SavedModel) -> OpenedFile {
    socair_tensorflow::savedmodel::read(sm.encode_to_vec().into())
}

fn s(v: &str) -> AttrValue {
    AttrValue {
        value: Some(attr_value::Value::S(v.as_bytes().to_vec().into())),
    }
}

fn ph(p: &str) -> AttrValue {
    AttrValue {
        value: Some(attr_value::Value::Placeholder(p.into())),
    }
}

/// The main graph's call node `lib/call`'s `f`.
fn call_f(sm: &mut SavedModel) -> &mut socair_tensorflow::proto::tensorflow::NameAttrList {
    let g = sm.meta_graphs[0].graph_def.as_mut().unwrap();
    let call = g.node.iter_mut().find(|n| n.name == "lib/call").unwrap();
    match call.attr.get_mut("f").and_then(|a| a.value.as_mut()) {
        Some(attr_value::Value::Func(f)) => f,
        other => panic!("{other:?}"),
    }
}

#[test]
fn socair_agrees_with_the_loader_on_every_indirect_fixture() {
    let t = truth();
    assert_eq!(t["tensorflow"], "2.21.0");
    let all = t["fixtures"].as_object().unwrap();
    assert_eq!(all.len(), 6);
    for (rel, what) in all {
        let o = open(&fixture(&format!("tensorflow/{rel}/saved_model.pb")));
        let f = findings(&o);
        // What the real loader did: wrote the file, or needed the descriptor file.
        let touched = what["tf1_loader_wrote"].is_string()
            || what["tf1_loader_without_the_file"]
                .as_str()
                .is_some_and(|s| s.starts_with("error"));
        assert_eq!(rel.starts_with("hostile/"), touched, "{rel}: {what}");
        if touched {
            assert_eq!(o.rows[0].status, RowStatus::Fail, "{rel}:\n{f}");
            // Runs at load time: the main_op calls it.
            assert!(
                f.contains("it runs at load time (the init op"),
                "{rel}:\n{f}"
            );
        } else {
            assert_eq!(o.rows[0].status, RowStatus::Pass, "{rel}:\n{f}");
        }
    }
}

#[test]
fn a_placeholder_bound_to_a_file_fails_naming_the_op_the_attribute_and_the_call_path() {
    let o = open(&fixture(
        "tensorflow/hostile/indirect-printv2/saved_model.pb",
    ));
    let f = findings(&o);
    assert!(
        f.contains("function \"socair_print_to\" node \"print\" (PrintV2)")
            && f.contains("appends to the file \"file:///tmp/socair-fixture-indirect-1\"")
            && f.contains("its output_stream attr, placeholder \"stream\" bound by the call path graph node \"lib/call\" (StatefulPartitionedCall)"),
        "{f}"
    );
    let o = open(&fixture(
        "tensorflow/hostile/indirect-printv2-nested/saved_model.pb",
    ));
    let f = findings(&o);
    assert!(
        f.contains("(PrintV2)")
            && f.contains("file:///tmp/socair-fixture-indirect-2")
            && f.contains("graph node \"lib/call\" (StatefulPartitionedCall) → function \"socair_forward\" node \"inner_call\" (StatefulPartitionedCall)"),
        "{f}"
    );
    let o = open(&fixture(
        "tensorflow/hostile/indirect-decodeproto/saved_model.pb",
    ));
    let f = findings(&o);
    assert!(
        f.contains("graph node \"decode\" (DecodeProtoV2)")
            && f.contains("opens the file \"/tmp/socair-fixture-descriptors.binpb\" (its descriptor_source attr"),
        "{f}"
    );
}

#[test]
fn a_placeholder_no_call_binds_is_the_worst_value() {
    // The call binds nothing, and the signature gives no default: TensorFlow refuses this
    // call, but the reader cannot know no other caller binds it: worst value.
    let mut sm = saved_model("tensorflow/savedmodel/indirect-stderr/saved_model.pb");
    call_f(&mut sm).attr.clear();
    let o = reread(&sm);
    let f = findings(&o);
    assert_eq!(o.rows[0].status, RowStatus::Fail, "{f}");
    assert!(
        f.contains(
            "output_stream attr is placeholder \"stream\", whose value this reader cannot resolve"
        ) && f.contains("judged as the worst value it can take, file://<path>"),
        "{f}"
    );
    // Bound to the outer function's placeholder, which nothing binds, in the nested one.
    let mut sm = saved_model("tensorflow/savedmodel/indirect-log-nested/saved_model.pb");
    call_f(&mut sm).attr.clear();
    assert_eq!(reread(&sm).rows[0].status, RowStatus::Fail);
    // A main-graph call binding a placeholder (no function defines it): unknown.
    let mut sm = saved_model("tensorflow/savedmodel/indirect-stderr/saved_model.pb");
    call_f(&mut sm).attr.insert("stream".into(), ph("x"));
    assert_eq!(reread(&sm).rows[0].status, RowStatus::Fail);
}

#[test]
fn a_benign_binding_passes_and_a_second_call_site_to_a_file_fails() {
    let mut sm = saved_model("tensorflow/savedmodel/indirect-stderr/saved_model.pb");
    for v in ["stdout", "log(warning)"] {
        call_f(&mut sm).attr.insert("stream".into(), s(v));
        let o = reread(&sm);
        assert_eq!(o.rows[0].status, RowStatus::Pass, "{v}: {}", findings(&o));
    }
    // Another call of the same function, by op name, binding a file: every call path counts.
    let g = sm.meta_graphs[0].graph_def.as_mut().unwrap();
    let mut by_name = NodeDef {
        name: "second".into(),
        op: "socair_print_to".into(),
        ..Default::default()
    };
    by_name
        .attr
        .insert("stream".into(), s("file:///tmp/by-name"));
    g.node.push(by_name);
    let o = reread(&sm);
    let f = findings(&o);
    assert_eq!(o.rows[0].status, RowStatus::Fail, "{f}");
    assert!(
        f.contains("file:///tmp/by-name") && f.contains("graph node \"second\" (socair_print_to)"),
        "{f}"
    );
}

#[test]
fn a_function_named_by_an_unresolved_placeholder_makes_every_placeholder_unknown() {
    // The forwarding function calls whatever its `fn` attribute names; nothing binds it.
    let mut sm = saved_model("tensorflow/savedmodel/indirect-log-nested/saved_model.pb");
    let g = sm.meta_graphs[0].graph_def.as_mut().unwrap();
    let lib = g.library.as_mut().unwrap();
    let fwd = lib
        .function
        .iter_mut()
        .find(|f| f.signature.as_ref().unwrap().name == "socair_forward")
        .unwrap();
    fwd.node_def[0].attr.insert("f".into(), ph("fn"));
    let o = reread(&sm);
    let f = findings(&o);
    assert_eq!(o.rows[0].status, RowStatus::Fail, "{f}");
    assert!(
        f.contains("calls the function placeholder \"fn\" names"),
        "{f}"
    );
}

#[test]
fn kernels_that_open_an_attribute_file_are_judged_through_placeholders() {
    // PrintV2 replaced by other ops that read a file an attribute names, the attribute
    // bound at the call site.
    for (op, attr, bad, good) in [
        ("DebugIdentity", "debug_urls", "file:///tmp/dump", None),
        (
            "DecodeProtoV2",
            "descriptor_source",
            "/tmp/d.binpb",
            Some("local://"),
        ),
        (
            "EncodeProto",
            "descriptor_source",
            "gs://bucket/d.binpb",
            Some("bytes://\n"),
        ),
        (
            "FixedUnigramCandidateSampler",
            "vocab_file",
            "/etc/passwd",
            Some(""),
        ),
    ] {
        let mut sm = saved_model("tensorflow/savedmodel/indirect-stderr/saved_model.pb");
        let g = sm.meta_graphs[0].graph_def.as_mut().unwrap();
        let lib = g.library.as_mut().unwrap();
        let node = &mut lib.function[0].node_def[1];
        assert_eq!(node.op, "PrintV2");
        node.op = op.into();
        node.attr.remove("output_stream");
        node.attr.insert(attr.into(), ph("stream"));
        let bad_value = if op == "DebugIdentity" {
            AttrValue {
                value: Some(attr_value::Value::List(Box::new(attr_value::ListValue {
                    s: vec![bad.as_bytes().to_vec().into()],
                    ..Default::default()
                }))),
            }
        } else {
            s(bad)
        };
        call_f(&mut sm).attr.insert("stream".into(), bad_value);
        let o = reread(&sm);
        let f = findings(&o);
        assert_eq!(o.rows[0].status, RowStatus::Fail, "{op}: {f}");
        assert!(
            f.contains(&format!("({op})")) && f.contains(bad) && f.contains(attr),
            "{op}: {f}"
        );
        if let Some(good) = good {
            call_f(&mut sm).attr.insert("stream".into(), s(good));
            let o = reread(&sm);
            assert_eq!(
                o.rows[0].status,
                RowStatus::Pass,
                "{op} {good:?}: {}",
                findings(&o)
            );
        }
    }
}
