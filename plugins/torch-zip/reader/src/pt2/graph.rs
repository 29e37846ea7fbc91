//! What an exported program's graph (`models/<name>.json`) makes torch do: the two places
//! where its strings become Python objects (torch 2.15 `torch/_export/serde/serialize.py`,
//! `GraphModuleDeserializer`):
//!
//! * **`expr_str`** (a symbolic size, float or bool, `as_expr`): `_parse_sym_expr` hands it to
//!   `sympy.sympify(expr_str, locals=…)` while `torch.export.load` deserializes the program,
//!   and `sympify` of a string is `parse_expr`, which `eval`s it as Python with the sympy
//!   namespace in scope. What torch's serializer writes is a sympy expression: symbols
//!   (`s0`, `u1`), integers and floats, arithmetic and comparison operators and calls of
//!   sympy's and torch's sympy functions (`FloorDiv(s0, 2)`, `Max(1, s0)`). Anything Python
//!   can do beyond that — an attribute (`().__class__`), a subscript, a string, a lambda, a
//!   keyword, a dunder name — is code that runs at load time: a FAIL. A call of a function
//!   outside the names listed here is a LEAD (sympy's namespace holds functions such as
//!   `preview`, which runs LaTeX).
//! * **`target`** of a node (`deserialize_operator`): `_operator.…`, `math.…` and `torch.…`
//!   are resolved by `getattr` through those modules, and the program calls them when it
//!   runs. The operator namespaces torch exports (`torch.ops.aten`, `prims`, `higher_order`,
//!   the symbolic-size helpers, Python's `operator` and `math`) are data-flow; any other
//!   target goes through the pickle grammar's classification of globals (a function that runs
//!   code or does I/O is a FAIL, whatever reaches it) and is otherwise a LEAD.

use crate::pickle::Severity;

/// The functions torch's deserializer puts in `sympify`'s locals (torch 2.15
/// `ExportedProgramDeserializer`'s `sympy_functions`), and the sympy functions torch's
/// printer writes for symbolic sizes and guards.
const SYMPY_CALLS: &[&str] = &[
    // torch.utils._sympy.functions, as the deserializer lists them.
    "FloorDiv",
    "ModularIndexing",
    "Where",
    "PythonMod",
    "Mod",
    "CleanDiv",
    "CeilToInt",
    "FloorToInt",
    "CeilDiv",
    "LShift",
    "RShift",
    "PowByNatural",
    "FloatPow",
    "FloatTrueDiv",
    "IntTrueDiv",
    "IsNonOverlappingAndDenseIndicator",
    "TruncToFloat",
    "TruncToInt",
    "RoundToInt",
    "RoundDecimal",
    "ToFloat",
    "Identity",
    "BitwiseFn_bitwise_and",
    "BitwiseFn_bitwise_or",
    "OpaqueUnaryFn_sqrt",
    "OpaqueUnaryFn_exp",
    "OpaqueUnaryFn_log",
    "Min",
    "Max",
    // sympy's own, as srepr and str() write them.
    "Integer",
    "Rational",
    "Add",
    "Mul",
    "Pow",
    "Equality",
    "Unequality",
    "StrictLessThan",
    "LessThan",
    "StrictGreaterThan",
    "GreaterThan",
    "ExprCondPair",
    "Tuple",
    "Eq",
    "Ne",
    "Lt",
    "Le",
    "Gt",
    "Ge",
    "And",
    "Or",
    "Not",
    "Abs",
    "floor",
    "ceiling",
    "Piecewise",
    "sqrt",
];

/// Python's keywords: none is part of a sympy expression torch writes (`True`, `False` and
/// `None` are values, not code).
const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The keyword arguments `sympy.srepr` writes (a symbol's assumptions, a float's precision,
/// a dummy's index).
const KWARGS: &[&str] = &[
    "positive",
    "negative",
    "nonnegative",
    "nonpositive",
    "nonzero",
    "zero",
    "integer",
    "real",
    "extended_real",
    "finite",
    "infinite",
    "rational",
    "irrational",
    "complex",
    "imaginary",
    "commutative",
    "even",
    "odd",
    "prime",
    "composite",
    "precision",
    "dummy_index",
];

/// The calls whose first argument `sympy.srepr` writes as a string: a symbol's name, a float's
/// digits.
const STRING_ARG_CALLS: &[&str] = &["Symbol", "Dummy", "Float"];

/// What an `expr_str` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// What `sympy.srepr` (or `str`) writes of a sympy expression: symbols, numbers,
    /// operators, calls of the functions listed with the keyword arguments `srepr` writes, a
    /// symbol's name or a float's digits as a string.
    Sympy,
    /// A call of another function (named).
    UnknownCall(String),
    /// Python beyond a sympy expression: what and where.
    Code(String),
}

/// Judges one `expr_str` (torch writes `sympy.srepr` of the expression, `_print_sympy`:
/// `Mul(Integer(2), Symbol('s77', positive=True, integer=True))`) by its tokens in one pass,
/// bounded by the string's length.
pub fn judge_expr(expr: &str) -> Expr {
    let b = expr.as_bytes();
    let mut i = 0;
    let mut unknown = None;
    // The call whose `(` came last, when nothing came after it yet.
    let mut just_opened: Option<&str> = None;
    let skip_spaces = |mut j: usize| {
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        j
    };
    while i < b.len() {
        let c = b[i];
        let opened = just_opened.take();
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &expr[start..i];
            if word.contains("__") {
                return Expr::Code(format!(
                    "the name {word:?} (a dunder reaches Python internals)"
                ));
            }
            if KEYWORDS.contains(&word) {
                return Expr::Code(format!("the Python keyword {word:?}"));
            }
            let j = skip_spaces(i);
            match b.get(j) {
                Some(b'(') => {
                    if !SYMPY_CALLS.contains(&word) && !STRING_ARG_CALLS.contains(&word) {
                        unknown.get_or_insert_with(|| word.to_owned());
                    }
                    i = j + 1;
                    just_opened = Some(word);
                }
                Some(b'=') if b.get(j + 1) != Some(&b'=') => {
                    if !KWARGS.contains(&word) {
                        return Expr::Code(format!("the keyword argument {word}="));
                    }
                    i = j + 1;
                }
                Some(b'.') => return Expr::Code(format!("an attribute of {word:?}")),
                _ => {}
            }
            continue;
        }
        if c == b'\'' || c == b'"' {
            if !opened.is_some_and(|call| STRING_ARG_CALLS.contains(&call)) {
                return Expr::Code(format!("a string at character {i} other than the first argument of Symbol, Dummy or Float"));
            }
            let Some(len) = b[i + 1..].iter().position(|&q| q == c) else {
                return Expr::Code("a string that does not end".into());
            };
            let text = &b[i + 1..i + 1 + len];
            if !text
                .iter()
                .all(|&t| t.is_ascii_alphanumeric() || matches!(t, b'_' | b'.' | b'+' | b'-'))
            {
                return Expr::Code(format!(
                    "the string {:?}, which is no symbol name or number",
                    String::from_utf8_lossy(text)
                ));
            }
            i += len + 2;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'.'
                    || ((b[i] == b'+' || b[i] == b'-') && matches!(b[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
            continue;
        }
        match c {
            b' ' => {
                // Spaces keep a call's `(` the last thing seen.
                just_opened = opened;
                i += 1;
            }
            b'=' => {
                // Only as part of `==`, `<=`, `>=`, `!=` (a keyword's `=` was taken above).
                let paired = b.get(i + 1) == Some(&b'=')
                    || matches!(i.checked_sub(1).and_then(|p| b.get(p)), Some(b'=' | b'<' | b'>' | b'!'));
                if !paired {
                    return Expr::Code("`=` (an assignment)".into());
                }
                i += 1;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'(' | b',' | b'<' | b'>' | b'!' | b'&' | b'|'
            | b'~' | b'^' => i += 1,
            b')' => {
                // `f(x).attr` and `(x).attr`.
                if b.get(skip_spaces(i + 1)) == Some(&b'.') {
                    return Expr::Code("an attribute of a call's result".into());
                }
                i += 1;
            }
            _ => {
                return Expr::Code(format!(
                    "{:?} at character {i} (subscripts, attributes and statements are Python, not a sympy expression)",
                    expr[i..].chars().next().unwrap_or('?')
                ))
            }
        }
    }
    match unknown {
        Some(name) => Expr::UnknownCall(name),
        None => Expr::Sympy,
    }
}

/// Targets the deserializer resolves that are data-flow: torch's operator namespaces, the
/// symbolic-size helpers, and Python's `operator` (as `_operator`) and `math`.
fn data_flow_target(target: &str) -> bool {
    [
        "torch.ops.aten.",
        "torch.ops.prims.",
        "torch.ops.higher_order.",
        "torch.ops.quantized_decomposed.",
        "_operator.",
        "math.",
    ]
    .iter()
    .any(|p| target.starts_with(p))
        || matches!(
            target,
            "torch.sym_float"
                | "torch.sym_int"
                | "torch.sym_max"
                | "torch.sym_min"
                | "torch.sym_not"
                | "torch.sym_ite"
                | "torch.sym_sqrt"
                | "torch._sym_sqrt"
                | "torch.sym_sum"
                | "torch._check"
                | "torch._check_is_size"
                | "torch._assert"
                | "torch._assert_async"
                | "torch._assert_scalar"
        )
}

/// One finding about the graph: how bad, the JSON path, why.
pub type GraphFinding = (Severity, String, String);

/// What a walk found: the first `limit` findings, and how many more.
struct Found {
    out: Vec<GraphFinding>,
    more: u64,
    limit: usize,
}

impl Found {
    fn add(&mut self, f: GraphFinding) {
        if self.out.len() < self.limit {
            self.out.push(f);
        } else {
            self.more += 1;
        }
    }

    fn expr(&mut self, e: &str, at: String) {
        match judge_expr(e) {
            Expr::Sympy => {}
            Expr::UnknownCall(name) => self.add((
                Severity::Lead,
                at,
                format!("the symbolic expression {e:?} calls {name}, a function torch's serializer does not write: torch.export.load evaluates it with sympy.sympify, whose namespace holds functions that do more than arithmetic"),
            )),
            Expr::Code(what) => self.add((
                Severity::Fail,
                at,
                format!("the symbolic expression {e:?} holds {what}: torch.export.load passes it to sympy.sympify, which evaluates it as Python (eval), so it runs when the program is loaded"),
            )),
        }
    }
}

/// A JSON value walked as it is parsed, never built: a string is returned (for the key it is
/// the value of), a map or a list is walked with `path` extended, anything else skipped. The
/// memory is the path's, whatever the document holds; serde_json's recursion limit (128)
/// bounds the depth.
struct Walk<'f> {
    found: &'f mut Found,
    path: &'f mut String,
}

impl<'de> serde::de::DeserializeSeed<'de> for Walk<'_> {
    type Value = Option<String>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Walk<'_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
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

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut i = 0u64;
        loop {
            let len = self.path.len();
            // Into the path itself: no string per element.
            let _ = std::fmt::Write::write_fmt(&mut *self.path, format_args!("[{i}]"));
            let next = seq.next_element_seed(Walk {
                found: &mut *self.found,
                path: &mut *self.path,
            })?;
            self.path.truncate(len);
            if next.is_none() {
                return Ok(None);
            }
            i += 1;
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let len = self.path.len();
            self.path.push('.');
            self.path.push_str(&key);
            let value = map.next_value_seed(Walk {
                found: &mut *self.found,
                path: &mut *self.path,
            })?;
            let at = self.path.clone();
            self.path.truncate(len);
            match (key.as_ref(), value) {
                ("expr_str", Some(e)) => self.found.expr(&e, at),
                // A node's target (and any other `target`: only what deserialize_operator
                // resolves is judged).
                ("target", Some(t)) => {
                    if let Some(f) = judge_target(&t, &at) {
                        self.found.add(f);
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }
}

/// Walks the graph's JSON (`model.json`) as it parses it: every `expr_str` and every node's
/// `target`. At most `limit` findings are returned; the count of the rest is the second
/// value. `Err` when it is not JSON.
pub fn check(json: &[u8], limit: usize) -> Result<(Vec<GraphFinding>, u64), serde_json::Error> {
    let mut found = Found {
        out: Vec::new(),
        more: 0,
        limit,
    };
    let mut path = String::new();
    let mut d = serde_json::Deserializer::from_slice(json);
    serde::de::DeserializeSeed::deserialize(
        Walk {
            found: &mut found,
            path: &mut path,
        },
        &mut d,
    )?;
    d.end()?;
    Ok((found.out, found.more))
}

fn judge_target(target: &str, place: &str) -> Option<GraphFinding> {
    // aten::from_file maps a file named by its argument into memory.
    if target.starts_with("torch.ops.aten.from_file") {
        return Some((
            Severity::Fail,
            place.to_owned(),
            format!("the graph calls {target}, which reads the local file its argument names"),
        ));
    }
    if data_flow_target(target) {
        return None;
    }
    // What deserialize_operator resolves through getattr: `torch.…`, `_operator.…` (the
    // operator module), `math.…`; any other string stays a string.
    let (module, name) = match target.split_once('.') {
        Some(("_operator", rest)) => ("operator", rest),
        Some((m @ ("torch" | "math"), rest)) => (m, rest),
        _ if target.starts_with('#') => {
            return Some((
                Severity::Lead,
                place.to_owned(),
                format!("the graph calls the extension operator {target}, which a deserializer registered in the loading process resolves: not modelled"),
            ))
        }
        _ => return None,
    };
    let place = place.to_owned();
    Some(match crate::globals::classify(module, name) {
        // The graph calls it: a class dangerous to call is dangerous here.
        crate::globals::Class::Dangerous(does) | crate::globals::Class::Constructs(does, _) => (
            Severity::Fail,
            place,
            format!("the graph calls {target} when the program runs: {does}"),
        ),
        _ => (
            Severity::Lead,
            place,
            format!("the graph calls {target}, outside torch's operator namespaces: socair does not model what it does"),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sympy_expressions_and_python() {
        for ok in [
            // What torch 2.15 writes (sympy.srepr).
            "Symbol('s77', positive=True, integer=True)",
            "Mul(Integer(2), Symbol('s77', positive=True, integer=True))",
            "Add(Symbol('s0', integer=True), Integer(-1))",
            "FloorDiv(Symbol('s0', integer=True), Integer(2))",
            "Float('1.5', precision=53)",
            "StrictLessThan(Integer(1), Symbol('u0', integer=True))",
            // What str() writes (older files).
            "s0",
            "s0 + 1",
            "2*s0*s1",
            "Max(1, s0 - 1)",
            "Eq(Mod(s0, 8), 0)",
            "-s0 + s1 <= 4",
            "1.5e-3*s0",
            "(s0 + 1)**2",
            "~(s0 >= 3) & (s1 != 2)",
        ] {
            assert_eq!(judge_expr(ok), Expr::Sympy, "{ok}");
        }
        assert_eq!(
            judge_expr("preview(s0)"),
            Expr::UnknownCall("preview".into())
        );
        for bad in [
            "__import__('os').system('id')",
            "__import__('sys').stdout.write('socair-pt2-sympify\\n')*0 + Symbol('s77', positive=True, integer=True)",
            "().__class__",
            "s0.func",
            "Max(1, 2).args",
            "[x for x in s0]",
            "lambda: 1",
            "s0 if s1 else s2",
            "f(a=1)",
            "Symbol(evaluate=1)",
            "x;y",
            "'a'",
            "sympify('1')",
            "Symbol('a b')",
            "Symbol('s0').name",
            "x = 1",
        ] {
            assert!(matches!(judge_expr(bad), Expr::Code(_)), "{bad}");
        }
    }

    #[test]
    fn targets() {
        let graph = serde_json::json!({"graph_module": {"graph": {"nodes": [
            {"target": "torch.ops.aten.linear.default", "inputs": []},
            {"target": "_operator.getitem", "inputs": []},
            {"target": "torch.load", "inputs": []},
            {"target": "torch.nn.functional.relu", "inputs": []},
            {"target": "torch.ops.aten.from_file.default", "inputs": []},
            {"target": "torch.sym_max", "inputs": [{"arg": {"as_sym_int": {"as_expr": {"expr_str": "__import__('os')"}}}}]},
        ]}}});
        let (found, more) = check(graph.to_string().as_bytes(), 10).unwrap();
        assert!(
            found
                .iter()
                .any(|f| f.1 == ".graph_module.graph.nodes[2].target"),
            "{found:#?}"
        );
        assert!(check(b"{\"a\": [1, 2", 10).is_err());
        assert_eq!(more, 0);
        let fails: Vec<&str> = found
            .iter()
            .filter(|f| f.0 == Severity::Fail)
            .map(|f| f.2.as_str())
            .collect();
        assert_eq!(fails.len(), 3, "{found:#?}");
        assert!(fails.iter().any(|r| r.contains("torch.load")));
        assert!(fails.iter().any(|r| r.contains("sympy.sympify")));
        assert!(found
            .iter()
            .any(|f| f.0 == Severity::Lead && f.2.contains("torch.nn.functional.relu")));
    }
}
