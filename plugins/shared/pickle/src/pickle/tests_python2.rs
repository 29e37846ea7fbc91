//! `socair-wo/2`: what Python 2's pickler wrote, decoded as torch.load decodes it; and `/1`
//! unchanged on the same bytes.

use super::*;

pub(super) fn v(grammar: Grammar) -> Options {
    Options {
        grammar,
        ..Options::default()
    }
}

pub(super) fn reasons(out: &Unpickled) -> Vec<String> {
    out.findings
        .iter()
        .map(|f| format!("{:?} {} @{}: {}", f.severity, f.opcode, f.offset, f.reason))
        .collect()
}

/// The items of the dict at STOP, as (key, value) with str keys.
fn dict_items(out: &Unpickled) -> Vec<(String, Value)> {
    let Some(Value::Obj(id)) = out.result else {
        panic!("not a container: {:?}", out.result);
    };
    let Object::Dict(d) = &out.objects[id] else {
        panic!("not a dict");
    };
    d.items
        .iter()
        .map(|(k, v)| match k {
            Value::Str(s) => (s.to_string(), v.clone()),
            other => panic!("key {other:?}"),
        })
        .collect()
}

/// torch's `sys_info` as Python 2.7's cPickle wrote it at protocol 2 on 64-bit Linux, the bytes
/// `fixtures/torch/py2/make_py2_fixtures.py` writes: `EMPTY_DICT BINPUT 1` (cPickle's memo
/// starts at 1), then `MARK`, the items in the dict's slot order (Python 2's string hash),
/// `SETITEMS`; str keys as SHORT_BINSTRING, each memoized with BINPUT; ints as
/// BININT1/BININT2; the bool as NEWTRUE; the inner dict, held only by the outer one, not
/// memoized.
const SYS_INFO: &[u8] = b"\x80\x02}q\x01(U\x10protocol_versionq\x02M\xe9\x03U\ntype_sizesq\x03}(U\x03intq\x04K\x04U\x05shortq\x05K\x02U\x04longq\x06K\x08uU\rlittle_endianq\x07\x88u.";

#[test]
fn python_2_strs_are_strs_under_2_and_outside_1() {
    let out = run(SYS_INFO, &v(Grammar::V2));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    let items = dict_items(&out);
    let keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["protocol_version", "type_sizes", "little_endian"]);
    assert!(matches!(items[0].1, Value::Int(1001)));

    // socair-wo/1 leaves its grammar at the first SHORT_BINSTRING, exactly as before /2.
    let out = run(SYS_INFO, &v(Grammar::V1));
    assert_eq!(out.worst(), Some(Severity::Lead));
    assert!(out.result.is_none());
    let r = reasons(&out);
    assert!(
        r.iter()
            .any(|r| r.contains("SHORT_BINSTRING (byte 0x55) is outside socair-wo/1")),
        "{r:?}"
    );
    assert_eq!(
        format!("{:?}", run(SYS_INFO, &Options::default()).findings),
        format!("{:?}", out.findings),
        "the default is /1"
    );
}

#[test]
fn python_2_strs_that_are_not_utf8_fail_under_2() {
    // 'caf\xe9' (Latin-1) as a key: torch.load's encoding='utf-8' raises.
    let p = b"\x80\x02}q\x01U\x04caf\xe9q\x02K\x01s.";
    let out = run(p, &v(Grammar::V2));
    assert_eq!(out.worst(), Some(Severity::Fail), "{:?}", reasons(&out));
    assert!(reasons(&out)
        .iter()
        .any(|r| r.contains("UnicodeDecodeError") && r.contains("SHORT_BINSTRING @5")));
    // A lone surrogate in a BINSTRING (CESU-8 bytes): strict UTF-8 refuses it too.
    let p = b"\x80\x02T\x03\x00\x00\x00\xed\xa0\x80.";
    assert_eq!(run(p, &v(Grammar::V2)).worst(), Some(Severity::Fail));
    // Valid UTF-8 in all three forms is a str.
    for p in [
        &b"\x80\x02U\x05caf\xc3\xa9."[..],
        b"\x80\x02T\x05\x00\x00\x00caf\xc3\xa9.",
        b"\x80\x02S'caf\\xc3\\xa9'\n.",
        b"\x80\x02S\"caf\\303\\251\"\n.",
    ] {
        let out = run(p, &v(Grammar::V2));
        assert!(out.findings.is_empty(), "{p:?}: {:?}", reasons(&out));
        assert!(
            matches!(&out.result, Some(Value::Str(s)) if &**s == "café"),
            "{p:?}"
        );
    }
    // STRING that Python refuses: unquoted, mismatched quotes, a bad \x escape.
    for p in [
        &b"\x80\x02Scafe\n."[..],
        b"\x80\x02S'cafe\"\n.",
        b"\x80\x02S'\\x6'\n.",
    ] {
        assert_eq!(
            run(p, &v(Grammar::V2)).worst(),
            Some(Severity::Fail),
            "{p:?}"
        );
    }
    // A negative BINSTRING count: the C unpickler raises.
    assert_eq!(
        run(b"\x80\x02T\xff\xff\xff\xffab.", &v(Grammar::V2)).worst(),
        Some(Severity::Fail)
    );
}

#[test]
fn python_2_numbers_read_as_python_3_reads_them() {
    let int = |p: &[u8]| match run(p, &v(Grammar::V2)) {
        out if out.findings.is_empty() => out.result,
        out => panic!("{p:?}: {:?}", reasons(&out)),
    };
    // INT: Python 2 wrote ints beyond 32 bits as text (`save_int`), True/False at protocol 0.
    assert!(matches!(
        int(b"\x80\x02I4294967296\n."),
        Some(Value::Int(4294967296))
    ));
    assert!(matches!(
        int(b"\x80\x02I-5000000000\n."),
        Some(Value::Int(-5000000000))
    ));
    assert!(matches!(int(b"\x80\x02I01\n."), Some(Value::Bool(true))));
    assert!(matches!(int(b"\x80\x02I00\n."), Some(Value::Bool(false))));
    assert!(matches!(int(b"\x80\x02I0\n."), Some(Value::Int(0))));
    // LONG: repr(long) with its L; LONG1 and LONG4 as little-endian two's complement.
    assert!(matches!(int(b"\x80\x02L12L\n."), Some(Value::Int(12))));
    assert!(matches!(int(b"\x80\x02L-12\n."), Some(Value::Int(-12))));
    assert!(matches!(
        int(b"\x80\x02L99999999999999999999L\n."),
        Some(Value::BigInt)
    ));
    assert!(matches!(int(b"\x80\x02\x8a\x01\x05."), Some(Value::Int(5))));
    assert!(matches!(
        int(b"\x80\x02\x8b\x02\x00\x00\x00\x00\xff."),
        Some(Value::Int(-256))
    ));
    assert!(matches!(
        int(b"\x80\x02\x8b\x00\x00\x00\x00."),
        Some(Value::Int(0))
    ));
    // Text Python 2 never wrote leaves the grammar (strtol's base 0 reads 0x10 and 010); text
    // CPython's C and pure-Python unpicklers read differently (010: 8 or a raise; " 1": True or
    // 1) is a FAIL besides (`typed/differential.rs`).
    for (p, worst) in [
        (&b"\x80\x02I0x10\n."[..], Severity::Lead),
        (b"\x80\x02I010\n.", Severity::Fail),
        (b"\x80\x02I 1\n.", Severity::Fail),
        (b"\x80\x02L1LL\n.", Severity::Lead),
    ] {
        let out = run(p, &v(Grammar::V2));
        assert_eq!(out.worst(), Some(worst), "{p:?}: {:?}", reasons(&out));
        assert!(reasons(&out)
            .iter()
            .any(|r| r.contains("not a decimal as Python 2")));
    }
    // A negative LONG4 count raises; a truncated one too.
    assert_eq!(
        run(b"\x80\x02\x8b\xff\xff\xff\xff.", &v(Grammar::V2)).worst(),
        Some(Severity::Fail)
    );
    assert_eq!(
        run(b"\x80\x02\x8b\x09\x00\x00\x00\x01.", &v(Grammar::V2)).worst(),
        Some(Severity::Fail)
    );
    // /1 leaves its grammar at each of them.
    for p in [
        &b"\x80\x02I4294967296\n."[..],
        b"\x80\x02L12L\n.",
        b"\x80\x02\x8b\x00\x00\x00\x00.",
    ] {
        assert_eq!(
            run(p, &v(Grammar::V1)).worst(),
            Some(Severity::Lead),
            "{p:?}"
        );
    }
}

#[test]
fn python_2_ordered_dicts_are_built_from_their_pairs() {
    // OrderedDict([['a', 1], ['b', 2]]) as Python 2.7's __reduce__ writes it, then BUILD with
    // {'_metadata': {}} as a state dict's attributes.
    let p = b"\x80\x02ccollections\nOrderedDict\nq\x01]q\x02(]q\x03(U\x01aK\x01e]q\x04(U\x01bK\x02ee\x85Rq\x05}q\x06U\t_metadataq\x07}sb.";
    let out = run(p, &v(Grammar::V2));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    let items = dict_items(&out);
    assert_eq!(items.len(), 2);
    assert!(matches!(
        (&items[0].1, &items[1].1),
        (Value::Int(1), Value::Int(2))
    ));
    let Some(Value::Obj(id)) = out.result else {
        unreachable!()
    };
    assert!(matches!(&out.objects[id], Object::Dict(d) if d.ordered && d.attrs.is_some()));
    // The empty OrderedDict of a tensor's backward hooks: OrderedDict([]).
    let p = b"\x80\x02ccollections\nOrderedDict\n]\x85R.";
    let out = run(p, &v(Grammar::V2));
    assert!(out.findings.is_empty(), "{:?}", reasons(&out));
    // A pair of three, or a list key: outside the grammar.
    for p in [
        &b"\x80\x02ccollections\nOrderedDict\n](U\x01aK\x01K\x02\x87e\x85R."[..],
        b"\x80\x02ccollections\nOrderedDict\n](]]K\x01\x86e\x85R.",
    ] {
        let out = run(p, &v(Grammar::V2));
        assert_eq!(out.worst(), Some(Severity::Lead), "{:?}", reasons(&out));
        assert!(reasons(&out)
            .iter()
            .any(|r| r.contains("outside socair-wo/2")));
    }
    // Under /1 an OrderedDict with arguments is outside, as before.
    let p = b"\x80\x02ccollections\nOrderedDict\n]\x85R.";
    let out = run(p, &v(Grammar::V1));
    assert!(reasons(&out)
        .iter()
        .any(|r| r.contains("with 1 arguments: outside socair-wo/1")));
}

#[test]
fn hostile_python_2_pickles_fail_under_both() {
    // os.system('ls') with its argument a SHORT_BINSTRING, as Python 2 pickled it.
    let system = b"\x80\x02cos\nsystem\nq\x01U\x02lsq\x02\x85q\x03Rq\x04.";
    // copy_reg._reconstructor(__builtin__.eval ...) — Python 3 imports copyreg and builtins.
    let reconstructor = b"\x80\x02ccopy_reg\n_reconstructor\nq\x01c__builtin__\neval\nq\x02c__builtin__\nobject\nq\x03N\x87Rq\x04.";
    // A sys_info whose value is a call of os.system.
    let in_sys_info = b"\x80\x02}q\x01U\x10protocol_versionq\x02cos\nsystem\nU\x02id\x85Rs.";
    for g in Grammar::ALL {
        for (p, text) in [
            (&system[..], "os.system"),
            (&reconstructor[..], "builtins.eval"),
            (&in_sys_info[..], "calls os.system"),
        ] {
            let out = run(p, &v(g));
            assert_eq!(out.worst(), Some(Severity::Fail), "{g:?} {p:?}");
            assert!(
                reasons(&out).iter().any(|r| r.contains(text)),
                "{g:?}: {:?}",
                reasons(&out)
            );
        }
    }
}

#[test]
fn protocol_0_pickles_stay_outside_2() {
    // Python 2's protocol 0 (PUT and GET as text): torch.save never wrote it.
    let p = b"(dp0\nS'a'\np1\nI1\ns.";
    assert_eq!(run(p, &v(Grammar::V2)).worst(), Some(Severity::Lead));
}
