//! `socair-wo/2`'s decoding of Python 2's opcodes against CPython's own unpickler, run as
//! torch.load runs it (`pickle.loads(data, encoding="utf-8")`). Each case is one scalar pickle
//! (`PROTO 2`, one SHORT_BINSTRING, BINSTRING, STRING, INT, LONG or LONG4, `STOP`): no global,
//! no call, so unpickling it runs nothing. Wherever the typed model gives a value, Python gives
//! the same; wherever the machine says Python raises (a FAIL), Python raises. Cases the model
//! leaves to the abstract machine (text Python 2 never wrote) are only counted. Skipped when
//! python3 is absent.

use socair_pickle::pickle::{run, Grammar, Options, Severity, Value};
use std::io::Write;
use std::process::{Command, Stdio};

const PY: &str = r#"
import pickle, sys
for line in sys.stdin:
    data = bytes.fromhex(line.strip())
    try:
        v = pickle.loads(data, encoding="utf-8")
    except Exception as e:
        print("raise")
        continue
    if isinstance(v, bool):
        print("bool:%s" % v)
    elif isinstance(v, int):
        print("int:%d" % v if -2**63 <= v < 2**63 else "bigint")
    elif isinstance(v, str):
        print("str:" + v.encode("utf-8").hex())
    else:
        print("other:" + type(v).__name__)
"#;

fn cases() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let wrap = |body: &[u8]| [b"\x80\x02".as_slice(), body, b"."].concat();
    let strs: [&[u8]; 8] = [
        b"",
        b"a",
        b"fc.weight",
        b"caf\xc3\xa9",
        b"caf\xe9",
        b"\xed\xa0\x80",
        b"\xf0\x9f\x98\x80",
        b"\xc3",
    ];
    for s in strs {
        out.push(wrap(&[&[b'U', s.len() as u8][..], s].concat()));
        out.push(wrap(
            &[b"T".as_slice(), &(s.len() as i32).to_le_bytes(), s].concat(),
        ));
    }
    out.push(wrap(
        &[b"T".as_slice(), &300i32.to_le_bytes(), &[b'x'; 300]].concat(),
    ));
    out.push(wrap(b"T\xff\xff\xff\xffab"));
    out.push(wrap(b"T\x05\x00\x00\x00ab"));
    for line in [
        &b"'os'"[..],
        b"\"os\"",
        b"'\\x6fs'",
        b"'\\157s'",
        b"'caf\\xc3\\xa9'",
        b"'caf\\xe9'",
        b"'a\\nb'",
        b"'a\\qb'",
        b"'\\x6'",
        b"os",
        b"'os\"",
        b"'",
        b"''",
    ] {
        out.push(wrap(&[b"S".as_slice(), line, b"\n"].concat()));
    }
    for text in [
        &b"0"[..],
        b"-5",
        b"255",
        b"4294967296",
        b"-5000000000",
        b"9223372036854775807",
        b"-9223372036854775808",
        b"9223372036854775808",
        b"99999999999999999999",
        b"00",
        b"01",
        b"010",
        b"0x10",
        b" 7",
        b"+7",
        b"-0",
        b"1_0",
        b"7 ",
        b"abc",
    ] {
        out.push(wrap(&[b"I".as_slice(), text, b"\n"].concat()));
        out.push(wrap(&[b"L".as_slice(), text, b"\n"].concat()));
        out.push(wrap(&[b"L".as_slice(), text, b"L\n"].concat()));
    }
    for body in [
        &b"\x8b\x00\x00\x00\x00"[..],
        b"\x8b\x01\x00\x00\x00\x05",
        b"\x8b\x02\x00\x00\x00\x00\xff",
        b"\x8b\x08\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\x7f",
        b"\x8b\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01",
        b"\x8b\xff\xff\xff\xff",
        b"\x8b\x04\x00\x00\x00\x01",
    ] {
        out.push(wrap(body));
    }
    out
}

/// What the machine under `/2` says of one pickle, in the script's terms; `None` when it
/// leaves the case to the abstract machine.
fn machine(data: &[u8]) -> Option<String> {
    let out = run(
        data,
        &Options {
            grammar: Grammar::V2,
            ..Options::default()
        },
    );
    // A FAIL for text CPython's two unpicklers read differently says nothing of
    // what the C one does: left out, as a LEAD is.
    if out.findings.iter().any(|f| {
        f.reason
            .contains("C and pure-Python unpicklers read this differently")
    }) {
        return None;
    }
    match out.worst() {
        Some(Severity::Fail) => return Some("raise".into()),
        Some(Severity::Lead) => return None,
        None => {}
    }
    Some(match out.result? {
        Value::Bool(b) => format!("bool:{}", if b { "True" } else { "False" }),
        Value::Int(i) => format!("int:{i}"),
        Value::BigInt => "bigint".into(),
        Value::Str(s) => format!(
            "str:{}",
            s.bytes().map(|b| format!("{b:02x}")).collect::<String>()
        ),
        other => format!("other:{other:?}"),
    })
}

#[test]
fn python_2_opcodes_decode_as_cpython_decodes_them_for_torch() {
    let cases = cases();
    let child = Command::new("python3")
        .args(["-c", PY])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("python3 not found: skipped");
        return;
    };
    let mut stdin = child.stdin.take().unwrap();
    for c in &cases {
        let hex: String = c.iter().map(|b| format!("{b:02x}")).collect();
        writeln!(stdin, "{hex}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let python: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(python.len(), cases.len());
    let (mut agreed, mut outside) = (0, 0);
    for (c, py) in cases.iter().zip(&python) {
        match machine(c) {
            Some(m) => {
                assert_eq!(&m, py, "{:?}", String::from_utf8_lossy(c));
                agreed += 1;
            }
            None => outside += 1,
        }
    }
    eprintln!("{agreed} cases agree with CPython, {outside} left outside the typed model");
    assert!(agreed >= 60, "{agreed}");
}
