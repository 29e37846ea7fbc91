use super::*;
use std::rc::Rc;

fn findings(data: &[u8]) -> Vec<(Severity, String)> {
    run(data, &Options::default())
        .findings
        .into_iter()
        .map(|f| {
            (
                f.severity,
                format!("{} @{}: {}", f.opcode, f.offset, f.reason),
            )
        })
        .collect()
}

fn worst(data: &[u8]) -> Option<Severity> {
    run(data, &Options::default()).worst()
}

/// Whether some finding of `severity` names `text`.
fn names(data: &[u8], severity: Severity, text: &str) -> bool {
    findings(data)
        .iter()
        .any(|(s, r)| *s == severity && r.contains(text))
}

#[test]
fn a_plain_dict_is_clean() {
    // {'a': 1} under protocol 2.
    let p = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01K\x01s.";
    let out = run(p, &Options::default());
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    assert!(matches!(out.result, Some(Value::Obj(_))));
    assert_eq!(out.end, Some(p.len()));
}

#[test]
fn deep_tuples_leave_the_grammar_and_the_scan_goes_on() {
    let mut p = b"\x80\x02N".to_vec();
    p.extend(std::iter::repeat_n(0x85u8, 100_000));
    p.extend_from_slice(b"0cos\nsystem\n.");
    let f = findings(&p);
    assert!(
        f.iter()
            .any(|(s, r)| *s == Severity::Lead && r.contains("nested deeper than")),
        "{f:?}"
    );
    assert!(names(&p, Severity::Fail, "global os.system"), "{f:?}");
}

#[test]
fn structural_abuse_is_fail() {
    // BINGET of an index never stored: Python raises.
    assert_eq!(worst(b"\x80\x02h\x07."), Some(Severity::Fail));
    // SETITEM on a tuple.
    let f = findings(b"\x80\x02)K\x01K\x02s.");
    assert!(f[0].1.contains("instead of a dict"), "{f:?}");
    // STACK_GLOBAL on ints: Python raises.
    let f = findings(b"\x80\x04K\x01K\x02\x93.");
    assert!(f[0].1.contains("type confusion"), "{f:?}");
    // A frame that ends inside an opcode's argument.
    let f = findings(b"\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00J\x01\x00\x00\x00.");
    assert!(f.iter().any(|(_, r)| r.contains("frame")), "{f:?}");
    // Truncated.
    assert_eq!(worst(b"\x80\x02}"), Some(Severity::Fail));
    // Protocols Python does not read are FAIL; 0 and 1 are only outside the grammar.
    assert_eq!(worst(b"\x80\x06N."), Some(Severity::Fail));
    assert_eq!(worst(b"\x80\x01N."), Some(Severity::Lead));
}

/// BUILD on a global itself (a class, module or function, not an instance): CPython's
/// `load_build` puts a state dict into its `__dict__` and slot state through `setattr`, so
/// the load patches what later code runs (checked with CPython 3.11: `(None, {'sep': '!'})`
/// BUILT on `os.path` leaves `os.path.sep == '!'` after `pickle.loads`, in both unpicklers;
/// torch's legacy `persistent_load` writes `.patch` files once `Module.dump_patches` is set
/// this way). A global that is only a LEAD becomes a FAIL when it is built on.
#[test]
fn build_on_a_global_itself_is_a_fail() {
    let global = b"\x80\x02ctorch.nn.functional\nrelu\n.";
    assert_eq!(worst(global), Some(Severity::Lead));
    let patched = b"\x80\x02ctorch.nn.functional\nrelu\nN}X\x05\x00\x00\x00patchK\x01s\x86b.";
    assert!(
        names(
            patched,
            Severity::Fail,
            "BUILD sets state on the global torch.nn.functional.relu itself"
        ),
        "{:?}",
        findings(patched)
    );
    // Its __dict__, by a plain state dict, too.
    let by_dict = b"\x80\x02ctorch.nn.functional\nrelu\n}X\x05\x00\x00\x00patchK\x01sb.";
    assert_eq!(
        worst(by_dict),
        Some(Severity::Fail),
        "{:?}",
        findings(by_dict)
    );
}

#[test]
fn globals_are_judged_exactly_and_memo_sources_resolve() {
    // STACK_GLOBAL with both names from the memo, as protocol 4 legitimately writes.
    let p = b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94h\x00h\x01\x93.";
    assert!(names(p, Severity::Fail, "global os.system"));
    let p = b"\x80\x02cargparse\nNamespace\n)R.";
    assert_eq!(worst(p), Some(Severity::Lead));
    let reviewed = Options {
        reviewed: vec!["argparse.Namespace".into()],
        ..Options::default()
    };
    let out = run(p, &reviewed);
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    assert_eq!(out.reviewed_used, ["argparse.Namespace"]);
}

#[test]
fn globals_after_leaving_the_grammar_are_still_found() {
    // INST is outside the grammar; the GLOBAL after it is still named.
    let p = b"\x80\x02(iargparse\nNamespace\n0cbuiltins\neval\n.";
    let f = findings(p);
    assert!(f.iter().any(|(s, _)| *s == Severity::Lead));
    assert!(names(p, Severity::Fail, "builtins.eval"), "{f:?}");
    // Trailing bytes after STOP hide a second pickle: it is run too.
    let p = b"\x80\x02N.\x80\x02cos\nsystem\n.";
    let f = findings(p);
    assert!(f.iter().any(|(_, r)| r.contains("trailing")), "{f:?}");
    assert!(names(p, Severity::Fail, "os.system"), "{f:?}");
    // Offsets of an appended pickle are offsets in the data.
    let out = run(p, &Options::default());
    let at = out
        .findings
        .iter()
        .find(|f| f.reason.contains("os.system"))
        .unwrap();
    assert_eq!((at.offset, at.opcode), (6, "GLOBAL"));
}

#[test]
fn names_moved_through_the_stack_and_memo_are_followed_exactly() {
    // After leaving the grammar (DUP), "os" is memoized by MEMOIZE, "system" by text PUT
    // 1_0, a decoy pair sits in the memo, and POP, POP_MARK and DUP move things around.
    let p = b"\x80\x04\x8c\x02os2\x94\x8c\x0ctorch._utils\x94(\x8c\x05decoy1\x8c\x06systemp1_0\n0\x8c\x03pad0h\x00g10\n\x93.";
    let f = findings(p);
    assert!(names(p, Severity::Fail, "global os.system"), "{f:?}");
    assert!(
        !f.iter().any(|(_, r)| r.contains("torch._utils.system")),
        "{f:?}"
    );
    // MEMOIZE writes at the count of distinct indices: after a BINPUT at 1 that is 1 again,
    // so "system" replaces "junk" there (a tracker that counted MEMOIZE opcodes would put it
    // at 0), and a fetch of 0 makes Python raise.
    let p = b"\x80\x04\x8c\x04junkq\x01\x8c\x06system\x94\x8c\x02osh\x01\x93.";
    assert!(
        names(p, Severity::Fail, "global os.system"),
        "{:?}",
        findings(p)
    );
    let p = b"\x80\x04\x8c\x04junkq\x01\x8c\x06system\x94\x8c\x02osh\x00\x93.";
    let f = findings(p);
    assert!(
        names(p, Severity::Fail, "memo entry 0 was never stored"),
        "{f:?}"
    );
    assert!(!f.iter().any(|(_, r)| r.contains("os.")), "{f:?}");
    // A name that is the result of a call cannot be determined: said so, never guessed.
    let p = b"\x80\x04cbuiltins\nstr\n)R\x8c\x06system\x93.";
    let f = findings(p);
    assert!(
        f.iter()
            .any(|(s, r)| *s == Severity::Fail && r.contains("cannot be determined")),
        "{f:?}"
    );
}

#[test]
fn protocol_0_and_1_pickles_are_run() {
    // The classic protocol 0 payload: GLOBAL, a STRING argument, TUPLE, REDUCE.
    let p = b"cos\nsystem\n(S'echo pwned'\ntR.";
    let out = run(p, &Options::default());
    let f = out
        .findings
        .iter()
        .find(|f| f.reason.contains("global os.system"))
        .expect("named");
    assert_eq!(
        (f.severity, f.offset, f.opcode),
        (Severity::Fail, 0, "GLOBAL")
    );
    // INST and OBJ, the protocol 0 and 1 call opcodes.
    assert!(names(
        b"(S'ls'\nisubprocess\ncall\n.",
        Severity::Fail,
        "subprocess.call"
    ));
    assert!(names(
        b"(cposix\nsystem\nS'ls'\no.",
        Severity::Fail,
        "posix.system"
    ));
    // A harmless protocol 0 pickle is only outside the grammar.
    assert_eq!(worst(b"(dp0\nS'a'\np1\nI1\ns."), Some(Severity::Lead));
}

#[test]
fn python_2_names_resolve_as_python_3_imports_them() {
    // copy_reg, __builtin__ and commands under protocol 2 are what Python 3 imports.
    let p = b"\x80\x02c__builtin__\neval\n.";
    let f = findings(p);
    assert!(
        f.iter().any(|(s, r)| *s == Severity::Fail
            && r.contains("__builtin__.eval")
            && r.contains("builtins.eval")),
        "{f:?}"
    );
    assert!(names(
        b"\x80\x02ccommands\ngetoutput\n.",
        Severity::Fail,
        "subprocess.getoutput"
    ));
    // The renaming follows the protocol of the last PROTO: __builtin__.reduce is
    // functools.reduce under protocol 2, and an unknown name under protocol 3.
    assert!(names(
        b"\x80\x02c__builtin__\nreduce\n.",
        Severity::Fail,
        "functools.reduce"
    ));
    assert_eq!(
        worst(b"\x80\x03c__builtin__\nreduce\n."),
        Some(Severity::Lead)
    );
    assert!(names(
        b"\x80\x03N0\x80\x02c__builtin__\nreduce\n.",
        Severity::Fail,
        "functools.reduce"
    ));
    assert_eq!(
        worst(b"\x80\x02N0\x80\x03c__builtin__\nreduce\n."),
        Some(Severity::Lead)
    );
}

#[test]
fn dotted_names_are_judged_by_what_they_reach() {
    // Protocol 4 resolves "os.system" on collections attribute by attribute: through the
    // module's own "os", if it has one.
    let p = b"\x80\x04\x8c\x0bcollections\x8c\x09os.system\x93.";
    assert!(names(p, Severity::Fail, "collections.os.system"));
    let p = b"\x80\x04\x8c\x0bcollections\x8c\x16OrderedDict.__reduce__\x93.";
    assert_eq!(worst(p), Some(Severity::Fail));
    // A dotted name the grammar does not list is never part of it.
    let p = b"\x80\x04\x8c\x05torch\x8c\x0eFloatStorage.x\x93.";
    assert_eq!(worst(p), Some(Severity::Lead));
}

#[test]
fn an_opcode_straddling_a_frame_cannot_hide_a_call() {
    // A frame of 3 bytes holds "X\x05\x00" (BINUNICODE's opcode and half its length). Read
    // contiguously, the string is 5 bytes long and swallows the next GLOBAL's start; read as
    // torch.load reads data.pkl (the frame whole from an io.BytesIO), the length comes from
    // after the frame, and so does a GLOBAL of os.system.
    let mut p = b"\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00X\x05\x00".to_vec();
    p.extend_from_slice(b"\x00\x00\x00\x00cos\nsystem\n0N.");
    let f = findings(&p);
    assert!(
        f.iter()
            .any(|(s, r)| *s == Severity::Fail && r.contains("straddles")),
        "{f:?}"
    );
    // The contiguous reading takes "\x00\x00cos" as the string; the exact one finds the call.
    assert!(names(&p, Severity::Fail, "global os.system"), "{f:?}");
}

#[test]
fn one_pickle_of_a_stream_ends_at_its_stop() {
    let stream = b"\x80\x02N.\x80\x02K\x05.";
    let (first, end) = run_one(stream, &Options::default());
    assert_eq!(end, Some(4));
    assert!(first.findings.is_empty(), "{:?}", first.findings);
    let (second, end) = run_one(&stream[4..], &Options::default());
    assert_eq!(end, Some(5));
    assert!(matches!(second.result, Some(Value::Int(5))));
    // Outside the grammar, the run still stops at this pickle's STOP.
    let stream = b"\x80\x02(iargparse\nNamespace\n.cos\nsystem\n.";
    let (out, end) = run_one(stream, &Options::default());
    // PROTO 2, MARK, INST "argparse\nNamespace\n", then STOP at byte 23.
    assert_eq!(end, Some(24));
    assert!(out.findings.iter().all(|f| !f.reason.contains("os.system")));
    // A pickle without STOP has no end.
    assert_eq!(run_one(b"\x80\x02N", &Options::default()).1, None);
}

#[test]
fn a_stop_inside_a_frame_that_runs_on_is_a_fail() {
    // PROTO 4, FRAME of 16 bytes, NONE, STOP, then 14 more bytes still inside the frame:
    // Python reads them with the frame, so the next pickle of a stream starts after them.
    let mut p = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00N.".to_vec();
    p.extend_from_slice(&[b'N'; 14]);
    let (out, end) = run_one(&p, &Options::default());
    assert_eq!(end, None);
    assert!(
        out.findings
            .iter()
            .any(|f| f.severity == Severity::Fail && f.reason.contains("inside a frame")),
        "{:?}",
        out.findings
    );
    // A frame that ends right after STOP, as Python writes it, is fine.
    let p = b"\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00N.";
    let (out, end) = run_one(p, &Options::default());
    assert_eq!(end, Some(p.len()));
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    // What a reader that reads the frame whole would take as the next pickle is run too.
    let mut p = b"\x80\x04\x95\x0e\x00\x00\x00\x00\x00\x00\x00N.".to_vec();
    p.extend_from_slice(b"(cos\nsystem\n");
    p.extend_from_slice(b"\x80\x02cposix\nsystem\n.");
    assert!(names(&p, Severity::Fail, "posix.system"));
}

#[test]
fn legacy_persistent_ids_have_six_fields_and_zip_ones_five() {
    // ('storage', torch.FloatStorage, '1', 'cpu', 4[, None]) as the persistent id of a
    // bare storage.
    let zip = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04tQ.";
    let legacy = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04NtQ.";
    let as_legacy = Options {
        legacy: true,
        ..Options::default()
    };
    assert!(run(zip, &Options::default()).findings.is_empty());
    assert_eq!(run(zip, &as_legacy).worst(), Some(Severity::Fail));
    assert!(run(legacy, &as_legacy).findings.is_empty());
    assert_eq!(
        run(legacy, &Options::default()).worst(),
        Some(Severity::Fail)
    );
    // A view: elements 1..3 of the storage, under key '2'.
    let view = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04X\x01\x00\x00\x002K\x01K\x02\x87tQ.";
    let out = run(view, &as_legacy);
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    match out.result {
        Some(Value::Storage(s)) => {
            assert_eq!((s.key.as_str(), s.numel), ("2", 2));
            assert_eq!(s.view_of, Some(("1".to_owned(), 1)));
        }
        other => panic!("{other:?}"),
    }
    // A view past the end of its storage.
    let past = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04X\x01\x00\x00\x002K\x03K\x02\x87tQ.";
    let out = run(past, &as_legacy);
    assert!(
        out.findings
            .iter()
            .any(|f| f.reason.contains("covers elements")),
        "{:?}",
        out.findings
    );
}

/// A protocol 2 pickle of one `_rebuild_tensor_v2` over a 4-element FloatStorage, with
/// `metadata` (pickle bytes of one value) as its seventh argument.
fn tensor_with_metadata(metadata: &[u8], storage: &str) -> Vec<u8> {
    let mut p = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(".to_vec();
    p.extend_from_slice(b"(X\x07\x00\x00\x00storagectorch\n");
    p.extend_from_slice(storage.as_bytes());
    p.extend_from_slice(b"\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQ");
    p.extend_from_slice(b"K\x00K\x04\x85K\x01\x85\x89ccollections\nOrderedDict\n)R");
    p.extend_from_slice(metadata);
    p.extend_from_slice(b"tR.");
    p
}

fn tensor_bits(metadata: &[u8], storage: &str) -> (Option<(bool, bool)>, Option<Severity>) {
    let out = run(
        &tensor_with_metadata(metadata, storage),
        &Options::default(),
    );
    (out.tensors.first().map(|t| (t.conj, t.neg)), out.worst())
}

#[test]
fn metadata_bits_are_read_as_torch_applies_them() {
    // torch.save's own form: {'neg': True}.
    let neg_true = b"}X\x03\x00\x00\x00neg\x88s";
    assert_eq!(
        tensor_bits(neg_true, "FloatStorage"),
        (Some((false, true)), None)
    );
    // {'neg': False}: torch sets the bit for a present key whatever its value.
    let neg_false = b"}X\x03\x00\x00\x00neg\x89s";
    assert_eq!(
        tensor_bits(neg_false, "FloatStorage"),
        (Some((false, true)), Some(Severity::Lead))
    );
    // {'neg': 0} and {'neg': None} too (pybind11 converts them to bool).
    assert_eq!(
        tensor_bits(b"}X\x03\x00\x00\x00negK\x00s", "FloatStorage").0,
        Some((false, true))
    );
    assert_eq!(
        tensor_bits(b"}X\x03\x00\x00\x00negNs", "FloatStorage").0,
        Some((false, true))
    );
    // A str value: pybind11 raises, so torch.load fails.
    assert_eq!(
        tensor_bits(b"}X\x03\x00\x00\x00negX\x01\x00\x00\x00ys", "FloatStorage"),
        (None, Some(Severity::Fail))
    );
    // A key torch ignores on CPU.
    assert_eq!(
        tensor_bits(b"}X\x03\x00\x00\x00foo\x88s", "FloatStorage"),
        (Some((false, false)), Some(Severity::Lead))
    );
    // An empty dict or None: nothing set, as torch.save never writes them either way.
    assert_eq!(
        tensor_bits(b"}", "FloatStorage"),
        (Some((false, false)), None)
    );
    assert_eq!(
        tensor_bits(b"N", "FloatStorage"),
        (Some((false, false)), None)
    );
    // A non-empty list: set_tensor_metadata asserts a dict.
    assert_eq!(
        tensor_bits(b"]K\x01a", "FloatStorage"),
        (None, Some(Severity::Fail))
    );
    // conj on a real dtype: _set_conj asserts a complex dtype.
    let conj = b"}X\x04\x00\x00\x00conj\x88s";
    assert_eq!(
        tensor_bits(conj, "FloatStorage"),
        (None, Some(Severity::Fail))
    );
    assert_eq!(
        tensor_bits(conj, "ComplexFloatStorage"),
        (Some((true, false)), None)
    );
}

#[test]
fn contiguity_follows_c10() {
    let storage = Rc::new(StorageRef {
        class: StorageClass::Untyped,
        key: "0".into(),
        location: "cpu".into(),
        numel: 64,
        view_of: None,
    });
    let t = |shape: Vec<u64>, stride: Vec<u64>| TensorModel {
        storage: storage.clone(),
        dtype: crate::globals::dtype("uint8").unwrap(),
        storage_offset: 0,
        shape,
        stride,
        requires_grad: false,
        parameter: false,
        conj: false,
        neg: false,
        pickle_offset: 0,
        attributes: Vec::new(),
    };
    assert!(t(vec![2, 3], vec![3, 1]).is_contiguous());
    assert!(!t(vec![2, 3], vec![1, 2]).is_contiguous());
    assert!(t(vec![2, 1, 3], vec![3, 99, 1]).is_contiguous());
    assert!(t(vec![0, 3], vec![7, 7]).is_contiguous());
    assert!(t(vec![], vec![]).is_contiguous());
    assert_eq!(check_bounds(&t(vec![8, 8], vec![8, 1])), Ok(()));
    assert!(check_bounds(&t(vec![8, 9], vec![8, 1])).is_err());
}

#[test]
fn pickles_of_every_protocol_are_recognised_and_text_is_not() {
    for p in [
        &b"\x80\x02N."[..],
        b"\x80\x00N.",
        b"(dp0\nS'a'\np1\nI1\ns.",
        b"cos\nsystem\n(S'ls'\ntR.",
        b"}q\x00(X\x01\x00\x00\x00aK\x01u.",
        b"N.",
    ] {
        assert!(looks_like_pickle(p, p.len() as u64), "{p:?}");
    }
    // A head that is cut short inside a pickle, when the file goes on.
    assert!(looks_like_pickle(b"(dp0\nS'abc", 1000));
    for t in [
        &b"{\"architectures\": [\"BertModel\"]}"[..],
        b"[PAD]\n[UNK]\n",
        b"#version: 0.2\n",
        b"import torch\n",
        b"def f():\n",
        b"Index,Name\n1,2\n",
        b"hello world\n",
        b"\x93NUMPY\x01\x00",
        b"GGUF\x03\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00",
        b"\x48\x01\x00\x00\x00\x00\x00\x00{\"a\":{}}",
        b"\x08\x07\x12\x04test",
        b"\x80\x06N.",
        b"",
    ] {
        assert!(!looks_like_pickle(t, t.len() as u64), "{t:?}");
    }
}

/// A first opcode EXT1/EXT2/EXT4 is one `pickle.load` raises on (`unregistered
/// extension code`: copyreg's registry is empty), and the first byte of a msgpack map of 2 to 4
/// entries (a Flax state dict): not a pickle. After PROTO it is still read (and judged).
#[test]
fn a_leading_ext_opcode_is_not_a_pickle_but_one_after_proto_is() {
    for t in [
        &b"\x82\x01."[..],
        b"\x83\x01\x00.",
        b"\x84\x01\x00\x00\x00.",
        b"\x82\xa6params\x81\xa7Dense_0",
    ] {
        assert!(!looks_like_pickle(t, t.len() as u64), "{t:?}");
        assert!(!looks_like_pickle(t, 1 << 20), "{t:?}");
    }
    let p = b"\x80\x02\x82\x01.";
    assert!(looks_like_pickle(p, p.len() as u64));
    let out = super::run(p, &Options::default());
    assert_eq!(out.worst(), Some(Severity::Fail), "{:?}", out.findings);
}

/// CVE-2026-24747 (torch < 2.10's weights-only unpickler corrupted memory when a
/// SETITEM or SETITEMS set items on what a rebuild call returned): items set on the tensor
/// `_rebuild_tensor_v2` built, alone or inside a state dict, are a FAIL naming the pattern;
/// the same tensor as a dict's value is not.
#[test]
fn setitems_on_a_rebuilt_tensor_are_a_fail() {
    let tensor = tensor_with_metadata(b"}X\x03\x00\x00\x00neg\x88s", "FloatStorage");
    let body = &tensor[2..tensor.len() - 1]; // PROTO off, STOP off
    assert_eq!(worst(&tensor), None);
    let mut in_dict = b"\x80\x02}X\x01\x00\x00\x00w".to_vec();
    in_dict.extend_from_slice(body);
    in_dict.extend_from_slice(b"s.");
    assert_eq!(worst(&in_dict), None, "{:?}", findings(&in_dict));
    for tail in [
        &b"X\x01\x00\x00\x00aK\x01s."[..],
        b"(X\x01\x00\x00\x00aK\x01X\x01\x00\x00\x00bK\x02u.",
    ] {
        let mut alone = b"\x80\x02".to_vec();
        alone.extend_from_slice(body);
        alone.extend_from_slice(tail);
        assert!(
            names(&alone, Severity::Fail, "CVE-2026-24747"),
            "{:?}",
            findings(&alone)
        );
        // `{'w': tensor}` with the items set on the tensor still on the stack.
        let mut nested = b"\x80\x02}X\x01\x00\x00\x00w".to_vec();
        nested.extend_from_slice(body);
        nested.extend_from_slice(&tail[..tail.len() - 1]);
        nested.extend_from_slice(b"s.");
        assert!(
            names(&nested, Severity::Fail, "CVE-2026-24747"),
            "{:?}",
            findings(&nested)
        );
    }
}

/// The Flax state dict of `fixtures/pickle-data/flax-2-keys-large.msgpack` (msgpack-python): its
/// first 4096 bytes run under the detecting machine as EXT1 then a PUT whose line runs past
/// them, which a claim by the first bytes took for a pickle cut short; the EXT rule
/// leaves it to the Flax reader.
#[test]
fn a_large_flax_state_dict_ran_as_a_pickle_cut_short_and_is_no_longer_claimed() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/pickle-data/flax-2-keys-large.msgpack");
    let file = std::fs::read(path).unwrap();
    let head = &file[..4096];
    let mut sink = Findings::new();
    let options = Options::default();
    let ended = Run::new(head, 0, &options, &mut sink, &[], false)
        .detecting()
        .go()
        .ended;
    assert!(
        matches!(ended, Ended::Raised(reader::Raise::Truncated(_), ops) if ops >= 2),
        "{ended:?}"
    );
    assert!(!looks_like_pickle(head, file.len() as u64));
}

/// BUILD of an empty dict on an OrderedDict (which has a `__dict__`) is read alike by
/// both unpicklers; on a plain dict (which has none) `_pickle.c` raises and `pickle.py` skips it.
#[test]
fn build_of_an_empty_state_fails_only_where_the_unpicklers_part() {
    let od = b"\x80\x02ccollections\nOrderedDict\n)R}b.";
    assert!(
        !names(od, Severity::Fail, "unpicklers read this differently"),
        "{:?}",
        findings(od)
    );
    let plain = b"\x80\x02}}b.";
    assert!(
        names(plain, Severity::Fail, "unpicklers read this differently"),
        "{:?}",
        findings(plain)
    );
}
