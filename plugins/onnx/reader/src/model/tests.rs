use super::{check_location, parse, Severity};
use crate::proto::onnx::{
    AttributeProto, GraphProto, ModelProto, NodeProto, SparseTensorProto, TensorProto,
};
use prost::Message;

fn attribute(name: &str, set: impl FnOnce(&mut AttributeProto)) -> AttributeProto {
    let mut a = AttributeProto {
        name: Some(name.into()),
        ..AttributeProto::default()
    };
    set(&mut a);
    a
}

fn node(op: &str, domain: &str, output: &str, attributes: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        domain: Some(domain.into()),
        output: vec![output.into()],
        attribute: attributes,
        ..NodeProto::default()
    }
}

fn model(nodes: Vec<NodeProto>) -> (Vec<u8>, super::Model) {
    let bytes = ModelProto {
        ir_version: Some(9),
        graph: Some(GraphProto {
            node: nodes,
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
    .encode_to_vec();
    let m = parse(bytes::Bytes::from(bytes.clone())).unwrap();
    (bytes, m)
}

#[test]
fn constant_forms() {
    let (data, m) = model(vec![
        node(
            "Constant",
            "",
            "f",
            vec![attribute("value_float", |a| a.f = Some(0.125))],
        ),
        node(
            "Constant",
            "ai.onnx",
            "i",
            vec![attribute("value_int", |a| a.i = Some(-2))],
        ),
        node(
            "Constant",
            "",
            "s",
            vec![attribute("value_string", |a| {
                a.s = Some(b"x".to_vec().into())
            })],
        ),
        node(
            "Constant",
            "",
            "sparse",
            vec![attribute("sparse_value", |a| {
                a.sparse_tensor = Some(SparseTensorProto::default())
            })],
        ),
        // Two values: which one a runtime takes is up to it.
        node(
            "Constant",
            "",
            "two",
            vec![
                attribute("value_float", |a| a.f = Some(1.0)),
                attribute("value_int", |a| a.i = Some(1)),
            ],
        ),
        // A Constant of another domain is some other operator: its tensor is an attribute
        // tensor, named `<output>.<attribute>` (model/attribute.rs), not a Constant's value.
        node(
            "Constant",
            "com.example",
            "custom",
            vec![attribute("value", |a| {
                a.t = Some(TensorProto {
                    data_type: Some(1),
                    raw_data: Some(vec![0; 4].into()),
                    ..TensorProto::default()
                })
            })],
        ),
    ]);
    assert_eq!(m.constants, 5);
    let names: Vec<&str> = m.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["f", "i", "custom.value"]);
    let (o, l) = m.tensors[0].ranges[0];
    assert_eq!(&data[o as usize..(o + l) as usize], 0.125f32.to_le_bytes());
    assert!(m.tensors[0].shape.is_empty() && m.tensors[0].dtype == "F32");
    assert_eq!(
        m.tensors[1].inline.as_deref(),
        Some(&(-2i64).to_le_bytes()[..])
    );
    let unread = |n: &str| {
        m.unread
            .iter()
            .find(|u| u.name.as_deref() == Some(n))
            .unwrap()
    };
    assert!(unread("s").reason.contains("STRING") && !unread("s").outside_model);
    assert!(unread("sparse").outside_model);
    assert!(unread("two").reason.contains("exactly one"));
    assert!(!m.unread.iter().any(|u| u.name.as_deref() == Some("custom")));
    assert_eq!(m.attribute_tensors, 1);
    let fails: Vec<&str> = m
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Fail)
        .map(|f| f.place.as_str())
        .collect();
    assert_eq!(fails.len(), 1, "{:?}", m.findings);
    assert!(fails[0].contains("graph.node[4] Constant"), "{fails:?}");
}

#[test]
fn external_locations_stay_plain_relative_paths() {
    assert!(check_location("weights.bin").is_ok());
    assert!(check_location("data/weights.bin").is_ok());
    for bad in [
        "",
        "/etc/passwd",
        "..\\x",
        "a/../../x",
        "./x",
        "a//b",
        "C:x",
        "*/_ORT_MEM_ADDR_/*",
        "a*b",
        "x\0y",
    ] {
        assert!(check_location(bad).is_err(), "{bad:?}");
    }
}
