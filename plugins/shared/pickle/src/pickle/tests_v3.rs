//! `socair-wo/3`: what torch 2.15's weights-only unpickler loads, modeled as torch applies it
//! (and refused where torch raises), with danger judged as before around every name it adds;
//! and `/2` unchanged on the same bytes. Pickles are built opcode by opcode as torch.save
//! writes them (protocol 2, `GLOBAL`, `BINUNICODE`); fixtures/torch/weights-only/ holds the
//! files torch itself wrote.

use super::tests_python2::{reasons, v};
use super::*;
use crate::globals::weights_only::{DCP_DATACLASSES, DCP_ENUMS, TORCH_ALLOWED};
use crate::globals::{classify_in, Class};

fn has(out: &Unpickled, severity: Severity, text: &str) -> bool {
    out.findings
        .iter()
        .any(|f| f.severity == severity && f.reason.contains(text))
}

fn g(module: &str, name: &str) -> Vec<u8> {
    format!("c{module}\n{name}\n").into_bytes()
}

fn s(text: &str) -> Vec<u8> {
    let mut out = vec![b'X'];
    out.extend((text.len() as u32).to_le_bytes());
    out.extend(text.as_bytes());
    out
}

fn int(i: u8) -> Vec<u8> {
    vec![b'K', i]
}

fn tup(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![b'('];
    for i in items {
        out.extend(i);
    }
    out.push(b't');
    out
}

fn call(f: Vec<u8>, args: &[Vec<u8>]) -> Vec<u8> {
    [f, tup(args), b"R".to_vec()].concat()
}

fn newobj(f: Vec<u8>, args: &[Vec<u8>]) -> Vec<u8> {
    [f, tup(args), vec![0x81]].concat()
}

fn hooks() -> Vec<u8> {
    call(g("collections", "OrderedDict"), &[])
}

fn storage(class: &str, key: &str, numel: u8) -> Vec<u8> {
    [
        tup(&[
            s("storage"),
            g("torch", class),
            s(key),
            s("cpu"),
            int(numel),
        ]),
        b"Q".to_vec(),
    ]
    .concat()
}

/// `_rebuild_tensor_v2(storage, 0, shape, stride, False, hooks)` over a float storage.
fn tensor(key: &str, shape: &[u8], hooks: Vec<u8>) -> Vec<u8> {
    let numel: u8 = shape.iter().product();
    let mut stride = Vec::new();
    let mut acc = 1u8;
    for &d in shape.iter().rev() {
        stride.insert(0, int(acc));
        acc *= d;
    }
    call(
        g("torch._utils", "_rebuild_tensor_v2"),
        &[
            storage("FloatStorage", key, numel),
            int(0),
            tup(&shape.iter().map(|&d| int(d)).collect::<Vec<_>>()),
            tup(&stride),
            vec![0x89],
            hooks,
        ],
    )
}

fn long_tensor(key: &str, shape: &[u8]) -> Vec<u8> {
    let numel: u8 = shape.iter().product();
    call(
        g("torch._utils", "_rebuild_tensor_v2"),
        &[
            storage("LongStorage", key, numel),
            int(0),
            tup(&shape.iter().map(|&d| int(d)).collect::<Vec<_>>()),
            tup(&[int(shape[1]), int(1)]),
            vec![0x89],
            hooks(),
        ],
    )
}

/// `{'w': value}`.
fn state(value: Vec<u8>) -> Vec<u8> {
    [b"\x80\x02}".to_vec(), s("w"), value, b"s.".to_vec()].concat()
}

fn dict(items: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut out = b"}(".to_vec();
    for (k, val) in items {
        out.extend(s(k));
        out.extend(val);
    }
    out.push(b'u');
    out
}

/// The value under the first key of the dict at STOP.
fn first_value(out: &Unpickled) -> Value {
    let Some(Value::Obj(id)) = out.result else {
        panic!("{:?}", reasons(out));
    };
    let Object::Dict(d) = &out.objects[id] else {
        panic!()
    };
    d.items[0].1.clone()
}

fn result_composite(out: &Unpickled) -> Rc<Composite> {
    match first_value(out) {
        Value::Composite(c) => c,
        other => panic!("{other:?} {:?}", reasons(out)),
    }
}

fn result_tensor(out: &Unpickled) -> Rc<TensorModel> {
    match first_value(out) {
        Value::Tensor(t) => t,
        other => panic!("{other:?} {:?}", reasons(out)),
    }
}

use std::rc::Rc;

#[test]
fn backward_hooks_of_none_are_torch_0_4s_and_pass_only_under_3() {
    let p = state(tensor("0", &[2, 3], b"N".to_vec()));
    let out = run(&p, &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    assert_eq!(result_tensor(&out).shape, vec![2, 3]);
    let out = run(&p, &v(Grammar::V2));
    assert!(
        has(&out, Severity::Fail, "not an OrderedDict"),
        "{:?}",
        reasons(&out)
    );
    // A hooks value that is neither is still refused.
    let out = run(&state(tensor("0", &[2], int(3))), &v(Grammar::V3));
    assert!(has(&out, Severity::Fail, "not an OrderedDict"));
}

#[test]
fn torch_0_3s_rebuild_tensor_and_0_4s_parameter_are_tensors() {
    let t = call(
        g("torch._utils", "_rebuild_tensor"),
        &[
            storage("FloatStorage", "0", 6),
            int(0),
            tup(&[int(2), int(3)]),
            tup(&[int(3), int(1)]),
        ],
    );
    let out = run(&state(t.clone()), &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    assert!(!result_tensor(&out).requires_grad);
    let out = run(&state(t), &v(Grammar::V2));
    assert!(has(&out, Severity::Lead, "_rebuild_tensor"));
    let p = state(call(
        g("torch.nn.parameter", "Parameter"),
        &[tensor("0", &[2], b"N".to_vec()), vec![0x88]],
    ));
    let out = run(&p, &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    let t = result_tensor(&out);
    assert!(t.parameter && t.requires_grad);
}

#[test]
fn builtins_torch_save_writes_under_their_python_2_names_are_the_grammars_under_3() {
    let set = [
        g("__builtin__", "set"),
        b"(]".to_vec(),
        b"(K\x01K\x02e".to_vec(),
        b"tR".to_vec(),
    ]
    .concat();
    let out = run(&state(set.clone()), &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    let out = run(&state(set), &v(Grammar::V2));
    assert!(
        has(&out, Severity::Lead, "builtins.set"),
        "{:?}",
        reasons(&out)
    );
    // Renaming gives no dangerous name a pass: __builtin__.eval is still builtins.eval.
    let out = run(
        &state(call(g("__builtin__", "eval"), &[s("1")])),
        &v(Grammar::V3),
    );
    assert!(has(&out, Severity::Fail, "builtins.eval"));
    // A set of tensors is not a value the model names.
    let set_of_tensors = [
        g("builtins", "set"),
        b"(]".to_vec(),
        b"(".to_vec(),
        tensor("0", &[1], hooks()),
        b"e".to_vec(),
        b"tR".to_vec(),
    ]
    .concat();
    let out = run(&state(set_of_tensors), &v(Grammar::V3));
    assert!(
        has(&out, Severity::Lead, "calls builtins.set"),
        "{:?}",
        reasons(&out)
    );
}

#[test]
fn paths_are_data_but_every_other_reach_into_pathlib_stays_dangerous() {
    for module in ["pathlib", "pathlib._local"] {
        let p = state(call(g(module, "PosixPath"), &[s("/data"), s("train")]));
        let out = run(&p, &v(Grammar::V3));
        assert!(out.findings.is_empty(), "{module}: {:?}", reasons(&out));
        let out = run(&p, &v(Grammar::V2));
        assert!(has(&out, Severity::Fail, "pathlib"), "{:?}", reasons(&out));
    }
    // A method reached by a dotted name (protocol 4) is not a constructor.
    let p = b"\x80\x04\x8c\x07pathlib\x8c\x0fPath.write_text\x93.";
    let out = run(p, &v(Grammar::V3));
    assert!(
        has(&out, Severity::Fail, "pathlib.Path.write_text"),
        "{:?}",
        reasons(&out)
    );
    let out = run(&state(call(g("pathlib", "glob"), &[])), &v(Grammar::V3));
    assert_eq!(out.worst(), Some(Severity::Fail));
    // A path of something other than strings is outside the model.
    let out = run(
        &state(call(g("pathlib", "Path"), &[int(1)])),
        &v(Grammar::V3),
    );
    assert!(has(&out, Severity::Lead, "calls pathlib.Path"));
    // WindowsPath cannot be made on POSIX.
    let out = run(
        &state(call(g("pathlib", "WindowsPath"), &[s("c:/x")])),
        &v(Grammar::V3),
    );
    assert!(has(&out, Severity::Lead, "WindowsPath"));
}

#[test]
fn names_beside_the_new_ones_keep_their_danger() {
    for (m, n) in [
        ("torch.serialization", "load"),
        ("torch.serialization", "os.system"),
        ("torch.distributed.rpc", "rpc_sync"),
        ("torch.distributed.checkpoint.metadata", "os"),
        (
            "torch.distributed.checkpoint.metadata",
            "Metadata.__init__.__globals__",
        ),
        ("torch._utils", "_rebuild_tensor.__globals__"),
    ] {
        let out = run(&state(g(m, n)), &v(Grammar::V3));
        assert_eq!(
            out.worst(),
            Some(Severity::Fail),
            "{m}.{n}: {:?}",
            reasons(&out)
        );
    }
}

#[test]
fn quantized_tensors_are_their_integer_representation_and_torch_s_checks() {
    let qt = |qparams: Vec<u8>| {
        state(call(
            g("torch._utils", "_rebuild_qtensor"),
            &[
                storage("QUInt8Storage", "0", 6),
                int(0),
                tup(&[int(2), int(3)]),
                tup(&[int(3), int(1)]),
                qparams,
                vec![0x89],
                hooks(),
            ],
        ))
    };
    let scale = b"G?\xb9\x99\x99\x99\x99\x99\x9a".to_vec();
    let out = run(
        &qt(tup(&[
            g("torch", "per_tensor_affine"),
            scale.clone(),
            int(3),
        ])),
        &v(Grammar::V3),
    );
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    let c = result_composite(&out);
    assert_eq!(c.parts[0].0, "int_repr");
    let Value::Tensor(t) = &c.parts[0].1 else {
        panic!()
    };
    assert_eq!(t.dtype.safetensors, "U8");
    // Under /2 the quantized storage class itself is refused, as before.
    let out = run(
        &qt(tup(&[
            g("torch", "per_tensor_affine"),
            scale.clone(),
            int(3),
        ])),
        &v(Grammar::V2),
    );
    assert_eq!(out.worst(), Some(Severity::Fail));
    // Schemes torch cannot rebuild, and per-channel parameters torch 2.15 checks, raise.
    let out = run(
        &qt(tup(&[g("torch", "per_tensor_symmetric"), scale, int(3)])),
        &v(Grammar::V3),
    );
    assert!(has(&out, Severity::Fail, "qscheme"), "{:?}", reasons(&out));
    let channel = |axis: u8, n: u8| {
        tup(&[
            g("torch", "per_channel_affine"),
            tensor("1", &[n], hooks()),
            long_tensor("2", &[1, n]),
            int(axis),
        ])
    };
    let out = run(&qt(channel(0, 2)), &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    assert_eq!(result_composite(&out).parts.len(), 3);
    let out = run(&qt(channel(2, 2)), &v(Grammar::V3));
    assert!(has(&out, Severity::Fail, "axis"), "{:?}", reasons(&out));
    let out = run(&qt(channel(0, 3)), &v(Grammar::V3));
    assert!(
        has(&out, Severity::Fail, "size[axis]"),
        "{:?}",
        reasons(&out)
    );
}

#[test]
fn sparse_tensors_are_their_parts_with_torchs_shape_checks_and_a_lead_for_index_values() {
    let layout = call(
        g("torch.serialization", "_get_layout"),
        &[s("torch.sparse_coo")],
    );
    let coo = |indices: Vec<u8>, values: Vec<u8>| {
        state(call(
            g("torch._utils", "_rebuild_sparse_tensor"),
            &[
                layout.clone(),
                tup(&[
                    indices,
                    values,
                    call(g("torch", "Size"), &[tup(&[int(2), int(3)])]),
                    vec![0x88],
                ]),
            ],
        ))
    };
    let out = run(
        &coo(long_tensor("0", &[2, 5]), tensor("1", &[5], hooks())),
        &v(Grammar::V3),
    );
    assert_eq!(out.worst(), Some(Severity::Lead), "{:?}", reasons(&out));
    assert!(has(&out, Severity::Lead, "index invariants"));
    let c = result_composite(&out);
    assert_eq!(
        c.parts.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        ["indices", "values"]
    );
    // Values that do not fit the indices, or float indices: torch validates and raises.
    let out = run(
        &coo(long_tensor("0", &[2, 5]), tensor("1", &[4], hooks())),
        &v(Grammar::V3),
    );
    assert!(
        has(&out, Severity::Fail, "do not fit"),
        "{:?}",
        reasons(&out)
    );
    let out = run(
        &coo(tensor("0", &[2, 5], hooks()), tensor("1", &[5], hooks())),
        &v(Grammar::V3),
    );
    assert!(
        has(&out, Severity::Fail, "do not fit"),
        "{:?}",
        reasons(&out)
    );
    // A layout that is not sparse.
    let strided = call(
        g("torch.serialization", "_get_layout"),
        &[s("torch.strided")],
    );
    let p = state(call(
        g("torch._utils", "_rebuild_sparse_tensor"),
        &[strided, tup(&[])],
    ));
    assert!(has(
        &run(&p, &v(Grammar::V3)),
        Severity::Fail,
        "NotImplementedError"
    ));
}

#[test]
fn python_attributes_are_data_unless_they_change_the_tensor_or_hide_one() {
    let with_state = |st: Vec<u8>| {
        state(call(
            g("torch._tensor", "_rebuild_from_type_v2"),
            &[
                g("torch._utils", "_rebuild_tensor_v2"),
                g("torch", "Tensor"),
                tup(&[
                    storage("FloatStorage", "0", 2),
                    int(0),
                    tup(&[int(2)]),
                    tup(&[int(1)]),
                    vec![0x89],
                    hooks(),
                ]),
                st,
            ],
        ))
    };
    let out = run(&with_state(dict(&[("note", s("x"))])), &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    assert_eq!(&*result_tensor(&out).attributes[0], "note");
    let out = run(&with_state(b"N".to_vec()), &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    for (key, value, why) in [
        ("data", tensor("1", &[2], hooks()), "changes the tensor"),
        ("requires_grad", vec![0x88], "changes the tensor"),
        ("__class__", g("torch", "Tensor"), "changes the tensor"),
        ("other", tensor("1", &[2], hooks()), "holds a tensor"),
    ] {
        let out = run(&with_state(dict(&[(key, value)])), &v(Grammar::V3));
        assert!(has(&out, Severity::Lead, why), "{key}: {:?}", reasons(&out));
    }
    let out = run(&with_state(dict(&[("note", s("x"))])), &v(Grammar::V2));
    assert!(has(&out, Severity::Lead, "_rebuild_from_type_v2"));
}

#[test]
fn dcp_metadata_is_dataclasses_given_their_state_once() {
    let md = |build: &[Vec<u8>]| {
        let mut p = b"\x80\x04".to_vec();
        p.extend(newobj(
            g("torch.distributed.checkpoint.metadata", "Metadata"),
            &[],
        ));
        for b in build {
            p.extend(b);
            p.push(b'b');
        }
        p.push(b'.');
        p
    };
    let ok = md(&[dict(&[
        ("version", s("1.0.0")),
        ("planner_data", b"N".to_vec()),
    ])]);
    let out = run(&ok, &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    assert!(matches!(&out.objects[0], Object::Record(r) if r.state.is_some()));
    let out = run(&ok, &v(Grammar::V2));
    assert_eq!(
        out.worst(),
        Some(Severity::Fail),
        "torch.distributed under /2"
    );
    let twice = md(&[dict(&[]), dict(&[])]);
    assert!(has(
        &run(&twice, &v(Grammar::V3)),
        Severity::Lead,
        "BUILD sets"
    ));
    let mut with_args = b"\x80\x04".to_vec();
    with_args.extend(newobj(
        g("torch.distributed.checkpoint.metadata", "Metadata"),
        &[int(1)],
    ));
    with_args.push(b'.');
    assert!(has(
        &run(&with_args, &v(Grammar::V3)),
        Severity::Lead,
        "calls"
    ));
}

#[test]
fn data_values_are_checked_as_torch_makes_them() {
    let values = [
        b"\x80\x02".to_vec(),
        dict(&[
            ("size", call(g("torch", "Size"), &[tup(&[int(2), int(3)])])),
            ("device", call(g("torch", "device"), &[s("cuda"), int(1)])),
            ("dtype", g("torch", "complex32")),
            ("qscheme", g("torch", "per_channel_symmetric")),
            ("complex", call(g("builtins", "complex"), &[int(1), int(2)])),
            (
                "counter",
                call(g("collections", "Counter"), &[dict(&[("a", int(2))])]),
            ),
            (
                "meta",
                call(
                    g("torch._utils", "_rebuild_meta_tensor_no_storage"),
                    &[
                        g("torch", "float32"),
                        tup(&[int(2)]),
                        tup(&[int(1)]),
                        vec![0x89],
                    ],
                ),
            ),
        ]),
        b".".to_vec(),
    ]
    .concat();
    let out = run(&values, &v(Grammar::V3));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    for (bad, why) in [
        (
            call(g("torch", "device"), &[s("cuda9x")]),
            "not a device type",
        ),
        (
            call(g("torch", "Size"), &[tup(&[s("2")])]),
            "calls torch.Size",
        ),
        (
            call(
                g("torch.serialization", "_get_layout"),
                &[s("torch.nothing")],
            ),
            "KeyError",
        ),
    ] {
        let out = run(&state(bad), &v(Grammar::V3));
        assert!(has(&out, Severity::Lead, why), "{why}: {:?}", reasons(&out));
    }
}

#[test]
fn a_plain_pickle_s_latin_1_strs_are_its_callers_and_a_torch_pickle_s_are_refused() {
    let p = b"\x80\x02}q\x01U\x04nameq\x02U\x04caf\xe9q\x03s.";
    let plain = Options {
        grammar: Grammar::V3,
        python2_str: Python2Str::CallerChooses,
        ..Options::default()
    };
    let out = run(p, &plain);
    assert_eq!(out.worst(), Some(Severity::Lead), "{:?}", reasons(&out));
    assert!(has(&out, Severity::Lead, "latin1"));
    assert!(matches!(first_value(&out), Value::Str(s) if &*s == "caf\u{e9}"));
    // A torch checkpoint's pickle is decoded as torch.load decodes it, under every version.
    for g in [Grammar::V2, Grammar::V3] {
        let out = run(p, &v(g));
        assert!(has(&out, Severity::Fail, "UnicodeDecodeError"), "{g:?}");
    }
    // Under /2 a plain pickle is read as before.
    let out = run(
        p,
        &Options {
            grammar: Grammar::V2,
            python2_str: Python2Str::CallerChooses,
            ..Options::default()
        },
    );
    assert!(has(&out, Severity::Fail, "UnicodeDecodeError"));
}

/// Every global torch 2.15's weights-only unpickler allows is part of `/3` or, at worst,
/// a LEAD; none is dangerous. The names `/3` models are exactly those GRAMMAR.md lists.
#[test]
fn nothing_torch_allows_is_dangerous_under_3() {
    let mut unknown = Vec::new();
    for dotted in TORCH_ALLOWED {
        let (m, n) = dotted.rsplit_once('.').unwrap();
        match classify_in(m, n, Grammar::V3) {
            Class::Known(_) => {}
            Class::Unknown => unknown.push(*dotted),
            Class::Dangerous(why) | Class::Constructs(why, _) => {
                panic!("{dotted} is dangerous under /3: {why}")
            }
        }
    }
    assert!(unknown.is_empty(), "{unknown:?}");
    // /1 leaves most of them outside (and `torch.serialization._get_layout` dangerous).
    assert!(matches!(
        classify_in("torch.serialization", "_get_layout", Grammar::V1),
        Class::Dangerous(_)
    ));
    for (m, n) in [
        ("pathlib", "PosixPath"),
        ("torch.distributed.checkpoint.metadata", "Metadata"),
    ] {
        assert!(matches!(
            classify_in(m, n, Grammar::V2),
            Class::Dangerous(_)
        ));
        assert!(matches!(classify_in(m, n, Grammar::V3), Class::Known(_)));
    }
}

#[test]
fn grammar_md_lists_every_name_3_models() {
    let doc = include_str!("../../GRAMMAR.md");
    for name in DCP_DATACLASSES
        .iter()
        .chain(DCP_ENUMS.iter().map(|(e, _)| e))
    {
        assert!(
            doc.contains(&format!("`{name}`")),
            "GRAMMAR.md lacks {name}"
        );
    }
    for name in [
        "_rebuild_qtensor",
        "_rebuild_sparse_tensor",
        "_rebuild_meta_tensor_no_storage",
        "_rebuild_from_type_v2",
        "PurePosixPath",
        "_get_layout",
    ] {
        assert!(doc.contains(name), "GRAMMAR.md lacks {name}");
    }
}
