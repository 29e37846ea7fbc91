//! Unit tests of the lexer, the parser and the rules, on code torch.jit.save writes and on
//! hand-made variants.

use super::lexer::{string_value, Kind, Lexer};
use super::parser::{parse_module, Expr, Stmt};
use super::{judge, CodeFile, Judgment};
use crate::pickle::Severity;

fn kinds(src: &str) -> Vec<Kind> {
    let mut l = Lexer::new(src.as_bytes()).unwrap();
    let mut out = Vec::new();
    loop {
        let t = l.next_token().unwrap();
        out.push(t.kind);
        if t.kind == Kind::Eof {
            return out;
        }
    }
}

fn judge_one(src: &str) -> Judgment {
    judge(&[CodeFile {
        name: "code/__torch__/m.py".into(),
        text: src.as_bytes().to_vec(),
    }])
}

fn worst(src: &str) -> Option<Severity> {
    judge_one(src).worst()
}

const LINEAR: &str = "class Linear(Module):
  __parameters__ = [\"weight\", \"bias\", ]
  __buffers__ = []
  weight : Tensor
  bias : Tensor
  training : bool
  _is_full_backward_hook : NoneType
  in_features : Final[int] = 3
  out_features : Final[int] = 2
  def forward(self: __torch__.m.Linear,
    input: Tensor) -> Tensor:
    weight = self.weight
    bias = self.bias
    return torch.linear(input, weight, bias)
";

#[test]
fn lexes_indentation_keywords_and_longest_tokens() {
    use Kind::*;
    assert_eq!(
        kinds("if x is not None:\n  y = 1\n"),
        vec![
            Op("if"),
            Ident,
            Op("is not"),
            Op("None"),
            Op(":"),
            Indent,
            Ident,
            Op("="),
            Number,
            Newline,
            Dedent,
            Eof
        ]
    );
    // torch's trie: `is not` is one token even before more letters.
    assert_eq!(
        kinds("x is nothing\n"),
        vec![Ident, Op("is not"), Ident, Newline, Eof]
    );
    // An identifier longer than a keyword is an identifier.
    assert_eq!(kinds("iffy\n"), vec![Ident, Newline, Eof]);
    // Newlines inside brackets are skipped; comments and blank lines too.
    assert_eq!(
        kinds("f(a,\n  b) # c\n\n# d\n"),
        vec![Ident, Op("("), Ident, Op(","), Ident, Op(")"), Newline, Eof]
    );
    // Numbers as strtod reads them, with a complex suffix; `.5` after a name is a number.
    assert_eq!(
        kinds("1.5e3j 0x1f .5\n"),
        vec![Number, Number, Number, Newline, Eof]
    );
    assert_eq!(kinds("x.5\n"), vec![Ident, Number, Newline, Eof]);
    // Triple-quoted strings span lines.
    assert_eq!(kinds("'''a\nb'''\n"), vec![StringLit, Newline, Eof]);
    // No last NEWLINE without a final newline.
    assert_eq!(kinds("x"), vec![Ident, Eof]);
}

#[test]
fn the_lexer_refuses_what_torch_refuses() {
    let refuse = |src: &str| {
        let mut l = match Lexer::new(src.as_bytes()) {
            Ok(l) => l,
            Err(_) => return true,
        };
        loop {
            match l.next_token() {
                Err(_) => return true,
                Ok(t) if t.kind == Kind::Eof => return false,
                Ok(_) => {}
            }
        }
    };
    assert!(refuse("x = 1; y = 2\n"));
    assert!(refuse("x = $\n"));
    assert!(refuse("x = 'open\n"));
    // A non-ASCII identifier: torch's isalpha of a negative char is false.
    assert!(refuse("caf\u{e9} = 1\n"));
    // A dedent to a level never opened.
    assert!(refuse("if x:\n    y\n  z\n"));
    assert!(!refuse("s = \"caf\u{e9}\"\n"));
}

#[test]
fn string_values_decode_as_parse_string_literal() {
    assert_eq!(string_value(b"\"a\\nb\"").unwrap(), b"a\nb");
    assert_eq!(string_value(b"'\\101x'").unwrap(), b"Ax");
    assert!(string_value(b"'\\x41'").is_err());
    assert!(string_value(b"'\\u0041'").is_err());
    assert!(string_value(b"'\\q'").is_err());
    assert_eq!(string_value(b"'''a'b'''").unwrap(), b"a'b");
}

#[test]
fn parses_what_torch_jit_save_writes() {
    let m = parse_module(LINEAR.as_bytes()).unwrap();
    assert_eq!(m.classes.len(), 1);
    let c = &m.classes[0];
    assert_eq!(c.name.text, "Linear");
    assert!(matches!(&c.superclass, Some(Expr::Var(n)) if n.text == "Module"));
    let defs: Vec<_> = c
        .body
        .iter()
        .filter(|s| matches!(s, Stmt::Def(_)))
        .collect();
    assert_eq!(defs.len(), 1);
    // The version line and imports of older archives, free functions, control flow.
    let old = "op_version_set = 1\nimport torch\ndef f(x: Tensor, n: int) -> Tensor:\n  i = 0\n  while torch.lt(i, n):\n    if bool(x):\n      break\n    else:\n      i = torch.add(i, 1)\n  for a, b in zip([1], [2]):\n    pass\n  return x if i else -x\n";
    let m = parse_module(old.as_bytes()).unwrap();
    assert_eq!(m.functions.len(), 1);
    // Anything but class and def at the top is refused, as the importer refuses it.
    assert!(parse_module(b"x = 1\n").is_err());
    // Unary plus is no operator in TorchScript.
    assert!(parse_module(b"def f(x):\n  return +x\n").is_err());
}

#[test]
fn nesting_is_bounded() {
    let deep = format!(
        "def f(x):\n  return {}x{}\n",
        "(".repeat(500),
        ")".repeat(500)
    );
    let e = parse_module(deep.as_bytes()).unwrap_err();
    assert!(e.reason.contains("nested deeper"), "{e:?}");
}

#[test]
fn a_scripted_linear_passes() {
    let j = judge_one(LINEAR);
    assert_eq!(j.worst(), None, "{:?}", j.findings);
    assert!(j.operators.contains("aten::linear"));
    assert_eq!(j.classes, vec!["__torch__.m.Linear".to_string()]);
}

#[test]
fn file_and_network_operators_fail() {
    let body = |call: &str| format!("def f(x: Tensor) -> Tensor:\n  {call}\n  return x\n");
    for call in [
        "torch.save(x, \"/tmp/f\")",
        "y = torch.from_file(\"/etc/passwd\", False, 4, dtype=0)",
        "ops.aten.save(x, \"/tmp/f\")",
        "fn = torch.save",
        "ops.prim.rpc_async(\"w\", x)",
        "ops.c10d.allreduce_([x], pg, op, None, False, -1)",
        "_ = fork(torch.save, x, \"f\")",
    ] {
        assert_eq!(worst(&body(call)), Some(Severity::Fail), "{call}");
    }
    for call in [
        "print(\"x\")",
        "ops.prim.Print(x)",
        "torch.warn(\"w\")",
        "y = torch.autograd.grad([x], [x])",
    ] {
        assert_eq!(worst(&body(call)), None, "{call}");
    }
}

#[test]
fn unknown_operators_and_names_are_leads() {
    let body = |call: &str| format!("def f(x: Tensor) -> Tensor:\n  {call}\n  return x\n");
    for (call, keyword) in [
        ("y = ops.torchvision.nms(x, x, 0.5)", "torchvision::nms"),
        ("y = ops.aten.definitely_not_an_op(x)", "does not register"),
        ("os.system(\"id\")", "os"),
        ("y = eval(\"1\")", "eval"),
        ("y = __torch__.nowhere.Thing()", "__torch__.nowhere.Thing"),
        ("y = __torch__.torch.classes.mylib.Foo()", "mylib.Foo"),
        ("x.save(\"/tmp/f\")", "aten::save"),
        ("y = x.frobnicate()", "frobnicate"),
        ("y = torch.jit.load(\"m.pt\")", "aten::jit"),
    ] {
        let j = judge_one(&body(call));
        assert_eq!(j.worst(), Some(Severity::Lead), "{call}: {:?}", j.findings);
        assert!(
            j.findings.iter().any(|f| f.reason.contains(keyword)),
            "{call}: {:?}",
            j.findings
        );
    }
}

#[test]
fn variables_shadow_builtins_and_classes_resolve_across_files() {
    // A variable named `torch` is a variable: its `.save` is a method call, not aten::save.
    let src = "def f(x: Tensor) -> Tensor:\n  torch = x\n  y = torch.add(x)\n  return y\n";
    assert_eq!(worst(src), None);
    let files = [
        CodeFile {
            name: "code/__torch__/a.py".into(),
            text: b"class A(Module):\n  b : __torch__.b.B\n  def forward(self: __torch__.a.A, x: Tensor) -> Tensor:\n    b = self.b\n    return (b).forward(__torch__.b.helper(x), )\n".to_vec(),
        },
        CodeFile {
            name: "code/__torch__/b.py".into(),
            text: b"class B(Module):\n  def forward(self: __torch__.b.B, x: Tensor) -> Tensor:\n    return torch.relu(x)\ndef helper(x: Tensor) -> Tensor:\n  return x\n".to_vec(),
        },
    ];
    let j = judge(&files);
    assert_eq!(j.worst(), None, "{:?}", j.findings);
    assert_eq!(j.classes.len(), 2);
    assert_eq!(j.functions, 1);
}

#[test]
fn parse_errors_name_the_line() {
    let j = judge_one("class A(Module):\n  def forward(self, x):\n    return x; x\n");
    assert_eq!(j.worst(), Some(Severity::Lead));
    assert!(j.findings[0].place.contains("line 3"), "{:?}", j.findings);
}

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

#[test]
fn every_fixture_gets_its_expected_verdict_and_older_rules_keep_the_blanket_fail() {
    use crate::checkpoint::AnalyzeOptions;
    use crate::pickle::Grammar;
    let dir = repo().join("fixtures/torchscript");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut n = 0;
    for (file, case) in expected.as_object().unwrap() {
        if file.starts_with('_') {
            continue;
        }
        n += 1;
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let v3 = AnalyzeOptions {
            grammar: Grammar::V3,
            ..AnalyzeOptions::default()
        };
        let a = crate::legacy::analyze_as_zip(bytes.as_slice(), &v3);
        let code = a.torchscript_code.as_ref().expect("judged under /3");
        let want = match case["status"].as_str().unwrap() {
            "PASS" => None,
            "FAIL" => Some(Severity::Fail),
            _ => Some(Severity::Lead),
        };
        assert_eq!(code.worst(), want, "{file}: {:?}", code.findings);
        // The pickles pass for every archive torch wrote whose code parses.
        if want != Some(Severity::Lead) || file.as_str() == "custom-op.pt" {
            assert_eq!(a.worst(), None, "{file}: {:?}", a.findings);
        }
        let v1 = AnalyzeOptions {
            grammar: Grammar::V1,
            ..AnalyzeOptions::default()
        };
        let a = crate::legacy::analyze_as_zip(bytes.as_slice(), &v1);
        assert!(a.torchscript_code.is_none(), "{file}");
        assert_eq!(a.worst(), Some(Severity::Fail), "{file}");
    }
    assert!(n >= 15, "{n}");
}

#[test]
fn every_saved_fuzz_input_keeps_the_property() {
    let mut n = 0;
    for sub in [
        "fuzz/corpus/torchscript_code",
        "fuzz/regressions/torchscript_code",
    ] {
        let Ok(entries) = std::fs::read_dir(repo().join(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            super::check_code(&std::fs::read(e.path()).unwrap());
            n += 1;
        }
    }
    assert!(n >= 10, "corpus missing: {n}");
}
