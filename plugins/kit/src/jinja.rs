//! Chat templates, judged as Jinja wherever they are: a GGUF file's `tokenizer.chat_template`
//! (and `tokenizer.chat_template.<name>`) metadata, the `chat_template` of
//! `tokenizer_config.json` / `processor_config.json` / `chat_template.json`, and the
//! `chat_template.jinja` and `additional_chat_templates/*.jinja` files that transformers 5.x
//! reads (`tokenization_utils_base.py` `PreTrainedTokenizerBase.from_pretrained`,
//! `processing_utils.py` `ProcessorMixin.get_processor_dict`). One rule, used by the gguf
//! plugin and by the companion rules ([`crate::companion`]), so a template gets one verdict
//! wherever it travels.
//!
//! A template is code for the program that renders it. transformers renders with jinja2's
//! `ImmutableSandboxedEnvironment`; llama-cpp-python rendered with a plain
//! `jinja2.Environment` until 0.2.72, and CVE-2024-34359 (GHSA-56xg-wfcc-g829) ran a GGUF's
//! template there: `{{ ''.__class__.__mro__[1].__subclasses__() ... }}` reaches every class
//! of the Python process. The rule therefore says what an unsandboxed jinja2 3.1.6 would let
//! the template reach, and mirrors what jinja2's own sandbox refuses (`jinja2/sandbox.py` at
//! 3.1.6: `SandboxedEnvironment.is_safe_attribute` refuses every attribute starting with `_`,
//! `is_internal_attribute` refuses `mro`, the frame and code attributes of generators,
//! coroutines and async generators, and every attribute of code, frame and traceback
//! objects; `getitem` falls back to `getattr` for a string key, so `x['__class__']` is the
//! same lookup; `format`/`format_map` on strings go through a sandboxed formatter).
//!
//! The template is parsed, not searched: minijinja's parser (`minijinja::machinery::parse`,
//! pinned at 3.1.0) builds the AST, and the walk below reads every attribute name, every
//! subscript whose key is a constant (string literals decoded as jinja2's lexer decodes them,
//! Python's `unicode-escape`, and joined with `~`, `+` and `*` where every operand is
//! constant), the attribute arguments of the filters that look attributes up (`attr`, `map`,
//! `selectattr`, `rejectattr`, `sort`, `groupby`, `sum`, `unique`, `min`, `max`, `join`:
//! jinja2's `make_attrgetter` splits a dotted path and looks each part up), and the fields of
//! a constant string's `.format(...)`. Then:
//!
//! * **FAIL**: a lookup of a dunder name (`__globals__`, `__class__`, `__builtins__`,
//!   `__init__`, `__mro__`, `__subclasses__` ...), of a name-mangled private attribute
//!   (`self._TemplateReference__context`), of a private attribute of jinja2's own runtime
//!   objects (`_environment`, `_func`, `_context` ... of macros, loops, cyclers, joiners,
//!   namespaces, block references), or of `mro` and the generator/frame/code/traceback
//!   attributes (`gi_frame`, `f_globals`, `tb_frame` ...: `(x|map('lower')).gi_frame.f_globals`
//!   reaches a module's globals with no underscore at all);
//! * **LEAD**: a lookup socair cannot name: a subscript whose key is computed
//!   (`x['_' ~ y]`, `x[k]` where `k` was set from a computed string, a loop variable over
//!   computed values, a macro argument), `attr` and the attribute filters with a computed
//!   name, `.format(...)` on a string not written in the template, any other attribute
//!   starting with `_` (the sandbox refuses it on an object; on a dict it reads a key), a
//!   string literal with a `\N{...}` escape; a template minijinja cannot parse (jinja2 may:
//!   nothing in it was checked); a template beyond the bounds below;
//! * otherwise the template is data: ordinary Jinja that reads messages and writes text.
//!
//! Calls of jinja2's globals (`lipsum`, `cycler`, `joiner`, `namespace`, `range`, `dict`)
//! are not findings by themselves: every published escape through them goes on to a dunder
//! (`lipsum.__globals__`, `cycler.__init__.__globals__`), which is. transformers'
//! `{% generation %}` block (its `AssistantTracker` extension) is read as a plain block.
//!
//! Bounds: at most [`MAX_TEMPLATE`] bytes, [`MAX_TOKENS`] tokens, [`MAX_BLOCK_TOKENS`]
//! tokens inside one `{{ }}` or `{% %}` (which bounds how deep one expression nests: the
//! parser builds attribute, filter and operator chains without recursing, and the walk and
//! the AST's drop do recurse), statement nesting as deep as minijinja's parser allows (150),
//! and [`MAX_NODES`] nodes walked. A template past one is a LEAD that says which.

use minijinja::machinery::ast::{self, CallArg, Expr, Stmt};
use minijinja::machinery::{parse, tokenize, Span, Token};
use minijinja::syntax::SyntaxConfig;
use std::collections::HashSet;

/// Templates larger than this (bytes) are not parsed.
pub const MAX_TEMPLATE: usize = 256 << 10;
/// Tokens in one template.
pub const MAX_TOKENS: usize = 65_536;
/// Tokens inside one `{{ ... }}` or `{% ... %}`.
pub const MAX_BLOCK_TOKENS: usize = 1_024;
/// AST nodes walked.
pub const MAX_NODES: usize = 131_072;
/// How deep the walk follows the AST (bounded already by the tokens above; a backstop).
const MAX_DEPTH: usize = 1_500;
/// Findings listed per template; the rest are counted.
pub const MAX_FLAGS: usize = 32;
/// Findings kept before sorting; the rest are counted.
const MAX_RAW_FLAGS: usize = 4_096;
/// Passes over the bindings before the judging pass.
const MAX_BINDING_PASSES: usize = 8;
/// Longest string the constant folding builds.
const MAX_FOLDED: usize = 4_096;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Needs a person.
    Lead,
    /// Evidence of an attack.
    Fail,
}

/// One finding: where in the template (`line L column C`, 1-based, of the template's own
/// text) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// How bad.
    pub severity: Severity,
    /// `line L column C`, or `the template` for the whole.
    pub place: String,
    /// Why.
    pub reason: String,
}

/// What the rule says of one template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judgement {
    /// The findings, at most [`MAX_FLAGS`].
    pub flags: Vec<Flag>,
    /// Findings past [`MAX_FLAGS`], counted.
    pub more: usize,
}

impl Judgement {
    /// The worst finding's severity; `None` for an ordinary template.
    pub fn worst(&self) -> Option<Severity> {
        self.flags.iter().map(|f| f.severity).max()
    }

    fn whole(severity: Severity, reason: String) -> Self {
        Judgement {
            flags: vec![Flag {
                severity,
                place: "the template".into(),
                reason,
            }],
            more: 0,
        }
    }
}

/// What an unsandboxed renderer does with a FAIL's lookup, said once.
const REACHES: &str = "rendered by a plain jinja2 `Environment` (as llama-cpp-python did before 0.2.72, CVE-2024-34359), it reaches Python's internals, from which a template imports modules and runs commands; jinja2's sandbox refuses it";

/// Private attributes of the objects jinja2 3.1.6 hands a template (`jinja2/runtime.py`
/// `Macro`, `LoopContext`, `BlockReference`, `Context`, `Undefined`; `jinja2/utils.py`
/// `Cycler`, `Joiner`, `Namespace`, `LRUCache`): every `self._name` they assign.
/// `_environment` and `_context` lead to the `Environment` (`compile`, `from_string`,
/// `globals`), `_func` and `_recurse` to Python functions.
const JINJA_PRIVATE: &[&str] = &[
    "_after",
    "_append",
    "_argument_count",
    "_before",
    "_context",
    "_current",
    "_default_autoescape",
    "_depth",
    "_environment",
    "_func",
    "_iterable",
    "_iterator",
    "_last_changed_value",
    "_length",
    "_module",
    "_pop",
    "_popleft",
    "_recurse",
    "_remove",
    "_stack",
    "_undefined",
    "_undefined_exception",
    "_undefined_hint",
    "_undefined_name",
    "_undefined_obj",
    "_wlock",
];

/// Attributes without an underscore that reach internals: `mro` (refused on types by
/// `is_internal_attribute`), the sandbox's `UNSAFE_GENERATOR_ATTRIBUTES`,
/// `UNSAFE_COROUTINE_ATTRIBUTES` and `UNSAFE_ASYNC_GENERATOR_ATTRIBUTES` and their awaited
/// and delegated objects, the attributes of frames, code objects and tracebacks (all refused
/// by `is_internal_attribute`), and Python 2's function and method internals.
const INTERNAL: &[&str] = &[
    "mro",
    "gi_frame",
    "gi_code",
    "gi_yieldfrom",
    "cr_frame",
    "cr_code",
    "cr_await",
    "cr_origin",
    "ag_frame",
    "ag_code",
    "ag_await",
    "f_back",
    "f_builtins",
    "f_code",
    "f_globals",
    "f_locals",
    "f_trace",
    "tb_frame",
    "tb_next",
    "co_code",
    "co_consts",
    "co_names",
    "func_globals",
    "func_code",
    "func_closure",
    "im_func",
    "im_self",
    "im_class",
];

/// Filters that look an attribute up by a name given as an argument, with the positions of
/// that argument (jinja2 3.1.6 `filters.py`: `do_attr(obj, name)`, `make_attrgetter` for
/// `attribute=`). `map`, `select`... also pass their other arguments to a filter they name.
const ATTRIBUTE_FILTERS: &[(&str, &[usize])] = &[
    ("attr", &[0]),
    ("map", &[]),
    ("selectattr", &[0]),
    ("rejectattr", &[0]),
    ("sort", &[2]),
    ("groupby", &[0]),
    ("sum", &[0]),
    ("unique", &[1]),
    ("min", &[1]),
    ("max", &[1]),
    ("join", &[1]),
];

/// Filters whose result is a number or a boolean: a key computed by them names no attribute.
const NUMERIC_FILTERS: &[&str] = &["length", "count", "int", "float", "abs", "round", "sum"];

/// Judges `template`.
pub fn judge(template: &str) -> Judgement {
    if template.len() > MAX_TEMPLATE {
        return Judgement::whole(
            Severity::Lead,
            format!(
                "a template of {} bytes, larger than the {MAX_TEMPLATE} socair parses: nothing in it was checked",
                template.len()
            ),
        );
    }
    let lines = Lines::new(template);
    let scanned = match scan_tokens(template) {
        Ok(s) => s,
        Err(j) => return j,
    };
    if let Some(at) = scanned.named_escape {
        let mut j = Judgement::default();
        push(
            &mut j,
            Severity::Lead,
            lines.place(at),
            "a string with a `\\N{...}` escape, which jinja2 decodes by Unicode character name and socair does not: it cannot tell what the string names".into(),
        );
        return j;
    }
    let source = scanned.rewritten.as_deref().unwrap_or(template);
    let ast = match parse(source, "<template>", SyntaxConfig::default()) {
        Ok(ast) => ast,
        Err(e) => {
            let msg = e.detail().map_or_else(|| e.to_string(), str::to_owned);
            let at = e
                .line()
                .map_or_else(String::new, |l| format!(" (line {l})"));
            let reason = if msg.contains("recursion") {
                format!("nested deeper than the parser's bound{at}: socair does not parse it, and nothing in it was checked")
            } else {
                format!("minijinja 3.1.0 cannot parse it{at}: {msg}; jinja2 may, and nothing in it was checked")
            };
            return Judgement::whole(Severity::Lead, reason);
        }
    };
    let mut walk = Walk {
        strings: &scanned.strings,
        raw: Vec::new(),
        raw_more: 0,
        tainted: HashSet::new(),
        tainted_attrs: HashSet::new(),
        nodes: 0,
        stopped: None,
        binding: true,
    };
    // Bindings first, until no pass adds one (`{% set b = a %}` before `{% set a = ... %}`
    // in a loop needs two), then the judging pass.
    let mut passes = 0;
    loop {
        let before = (walk.tainted.len(), walk.tainted_attrs.len());
        walk.nodes = 0;
        walk.stmt(&ast, 0);
        passes += 1;
        if (walk.tainted.len(), walk.tainted_attrs.len()) == before {
            break;
        }
        if passes >= MAX_BINDING_PASSES {
            walk.stopped.get_or_insert_with(|| format!("variables bound to one another more than {MAX_BINDING_PASSES} deep, deeper than socair follows: lookups by them were not all checked"));
            break;
        }
    }
    walk.binding = false;
    walk.nodes = 0;
    walk.stmt(&ast, 0);
    // FAILs first, each kind in the order of the text.
    let mut raw = std::mem::take(&mut walk.raw);
    raw.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)).then(a.2.cmp(&b.2)));
    raw.dedup();
    let mut j = Judgement::default();
    for (at, severity, reason) in raw {
        push(&mut j, severity, lines.place(at), reason);
    }
    j.more += walk.raw_more;
    if let Some(why) = walk.stopped.take() {
        push(&mut j, Severity::Lead, "the template".into(), why);
    }
    j
}

fn push(j: &mut Judgement, severity: Severity, place: String, reason: String) {
    if j.flags.len() < MAX_FLAGS {
        j.flags.push(Flag {
            severity,
            place,
            reason,
        });
    } else {
        j.more += 1;
    }
}

/// Byte offsets to `line L column C`.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { text, starts }
    }

    fn place(&self, offset: usize) -> String {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let col = self
            .text
            .get(start..offset.min(self.text.len()))
            .map_or(1, |s| s.chars().count() + 1);
        format!("line {line} column {col}")
    }
}

/// A string literal of the template: its byte range and its value as jinja2 decodes it.
struct StrTok {
    start: usize,
    end: usize,
    value: String,
}

struct Scanned {
    strings: Vec<StrTok>,
    /// The source with transformers' `{% generation %}` tags read as `{% if true %}`, byte
    /// for byte the same length.
    rewritten: Option<String>,
    /// The offset of a string literal with a `\N{...}` escape.
    named_escape: Option<usize>,
}

/// Tokenizes `src` once, within the token bounds: the string literals decoded, the
/// `generation` tags found.
fn scan_tokens(src: &str) -> Result<Scanned, Judgement> {
    let mut strings = Vec::new();
    let mut rewrites: Vec<(usize, &'static str)> = Vec::new();
    let mut named_escape = None;
    let mut total = 0usize;
    let mut in_block = 0usize;
    // The last two tokens' kinds: a block start, then `generation` / `endgeneration`.
    let mut after_block_start = false;
    let mut pending: Option<(usize, &'static str)> = None;
    for item in tokenize(src, false, SyntaxConfig::default()) {
        let (token, span) = match item {
            Ok(t) => t,
            // The parser reports the same error with its line.
            Err(_) => break,
        };
        total += 1;
        if total > MAX_TOKENS {
            return Err(Judgement::whole(
                Severity::Lead,
                format!("more than {MAX_TOKENS} tokens, more than socair parses in one template: nothing in it was checked"),
            ));
        }
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        match &token {
            Token::VariableStart | Token::BlockStart => in_block = 0,
            _ => in_block += 1,
        }
        if in_block > MAX_BLOCK_TOKENS {
            return Err(Judgement::whole(
                Severity::Lead,
                format!(
                    "a `{{{{ }}}}` or `{{% %}}` block of more than {MAX_BLOCK_TOKENS} tokens at {}, more than socair parses in one block: nothing in the template was checked",
                    Lines::new(src).place(start)
                ),
            ));
        }
        let generation = match &token {
            Token::Ident("generation") if after_block_start => Some("if true   "),
            Token::Ident("endgeneration") if after_block_start => Some("endif        "),
            _ => None,
        };
        match &token {
            Token::Str(_) | Token::String(_) => {
                let raw = src.get(start..end).unwrap_or("");
                match decode_python_string(raw) {
                    Some(value) => strings.push(StrTok { start, end, value }),
                    None => {
                        named_escape.get_or_insert(start);
                    }
                }
            }
            Token::BlockEnd => {
                if let Some(p) = pending.take() {
                    rewrites.push(p);
                }
            }
            _ => {}
        }
        pending = generation.map(|with| (start, with));
        after_block_start = matches!(token, Token::BlockStart);
    }
    let rewritten = (!rewrites.is_empty()).then(|| {
        let mut out = src.to_owned();
        for (at, with) in rewrites {
            if out.is_char_boundary(at) && out.is_char_boundary(at + with.len()) {
                out.replace_range(at..at + with.len(), with);
            }
        }
        out
    });
    Ok(Scanned {
        strings,
        rewritten,
        named_escape,
    })
}

/// A string literal (with its quotes) as jinja2 3.1.6's lexer decodes it (`lexer.py`
/// `Lexer.wrap`: newlines normalized, then `.encode("ascii", "backslashreplace")
/// .decode("unicode-escape")`); `None` for a `\N{...}` escape (decoded by Unicode name).
/// Escapes Python rejects are kept as written: jinja2 refuses such a template.
fn decode_python_string(raw: &str) -> Option<String> {
    let inner = raw
        .get(1..raw.len().saturating_sub(1))
        .unwrap_or("")
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| {
            let mut v = 0u32;
            for _ in 0..n {
                let digit = chars.peek().and_then(|c| c.to_digit(16))?;
                chars.next();
                v = v * 16 + digit;
            }
            Some(v)
        };
        match d {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(d),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(v));
            }
            'x' | 'u' | 'U' => {
                let n = match d {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                match hex(&mut chars, n).and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(d);
                    }
                }
            }
            'N' => return None,
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// A constant's value, as far as the walk folds it.
#[derive(Debug, Clone, PartialEq)]
enum Folded {
    Str(String),
    Int(i128),
    /// A float, a boolean, `none`: names no attribute.
    Other,
}

impl Folded {
    fn text(&self) -> Option<String> {
        match self {
            Folded::Str(s) => Some(s.clone()),
            Folded::Int(i) => Some(i.to_string()),
            Folded::Other => None,
        }
    }
}

struct Walk<'w> {
    strings: &'w [StrTok],
    /// Findings as (byte offset, severity, reason), at most [`MAX_RAW_FLAGS`].
    raw: Vec<(usize, Severity, String)>,
    /// Findings past that, counted.
    raw_more: usize,
    /// Variables bound (set, for, with, macro arguments) to values the walk cannot name.
    tainted: HashSet<String>,
    /// Namespace attributes (`{% set ns.k = ... %}`) bound so.
    tainted_attrs: HashSet<String>,
    nodes: usize,
    stopped: Option<String>,
    /// The first pass only collects bindings; the second judges.
    binding: bool,
}

/// What a name read as an attribute reaches.
fn name_verdict(name: &str) -> Option<(Severity, String)> {
    let mangled = name.strip_prefix('_').is_some_and(|rest| {
        rest.split_once("__").is_some_and(|(class, attr)| {
            !class.is_empty()
                && class.chars().all(|c| c.is_ascii_alphanumeric())
                && !attr.is_empty()
        })
    });
    if name.starts_with("__") && name.len() > 2 {
        Some((
            Severity::Fail,
            format!("`{name}`, a Python dunder attribute: {REACHES}"),
        ))
    } else if mangled {
        Some((
            Severity::Fail,
            format!("`{name}`, a name-mangled private attribute (as `self._TemplateReference__context`, which holds the render context): {REACHES}"),
        ))
    } else if JINJA_PRIVATE.contains(&name) {
        Some((
            Severity::Fail,
            format!("`{name}`, a private attribute of jinja2's runtime objects (macros, loops, cyclers, joiners, namespaces), which leads to its Environment or to Python functions: {REACHES}"),
        ))
    } else if INTERNAL.contains(&name) {
        Some((
            Severity::Fail,
            format!("`{name}`, an attribute of Python's types, frames, code or generators (refused by jinja2's `is_internal_attribute`): {REACHES}"),
        ))
    } else if name.starts_with('_') {
        Some((
            Severity::Lead,
            format!("`{name}`, an attribute starting with `_`: jinja2's sandbox refuses it on an object that has it, and on a dict it reads a key; socair cannot tell which this template meets"),
        ))
    } else {
        None
    }
}

impl Walk<'_> {
    fn flag(&mut self, at: usize, severity: Severity, reason: String) {
        if self.binding {
            return;
        }
        if self.raw.len() < MAX_RAW_FLAGS {
            self.raw.push((at, severity, reason));
        } else {
            self.raw_more += 1;
        }
    }

    fn lookup(&mut self, at: usize, name: &str, how: &str) {
        if let Some((severity, why)) = name_verdict(name) {
            self.flag(at, severity, format!("{how} {why}"));
        }
    }

    /// A dotted attribute path (`make_attrgetter`): each part is looked up.
    fn path(&mut self, at: usize, path: &str, how: &str) {
        for part in path.split('.') {
            self.lookup(at, part, how);
        }
    }

    fn enter(&mut self, depth: usize) -> bool {
        self.nodes += 1;
        if self.stopped.is_some() {
            return false;
        }
        if self.nodes > MAX_NODES {
            self.stopped = Some(format!("more than {MAX_NODES} nodes, more than socair walks in one template: the rest was not checked"));
            return false;
        }
        if depth > MAX_DEPTH {
            self.stopped = Some(format!("nested more than {MAX_DEPTH} deep, deeper than socair walks: the rest was not checked"));
            return false;
        }
        true
    }

    fn stmts(&mut self, body: &[Stmt<'_>], depth: usize) {
        for s in body {
            self.stmt(s, depth + 1);
        }
    }

    fn stmt(&mut self, s: &Stmt<'_>, depth: usize) {
        if !self.enter(depth) {
            return;
        }
        match s {
            Stmt::Template(t) => self.stmts(&t.children, depth),
            Stmt::EmitExpr(e) => self.expr(&e.expr, depth),
            Stmt::EmitRaw(_) => {}
            Stmt::ForLoop(f) => {
                if !self.plain(&f.iter, depth) {
                    self.taint(&f.target);
                }
                self.target(&f.target, depth);
                self.expr(&f.iter, depth);
                if let Some(e) = &f.filter_expr {
                    self.expr(e, depth);
                }
                self.stmts(&f.body, depth);
                self.stmts(&f.else_body, depth);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr, depth);
                self.stmts(&i.true_body, depth);
                self.stmts(&i.false_body, depth);
            }
            Stmt::WithBlock(w) => {
                for (target, value) in &w.assignments {
                    if !self.plain(value, depth) {
                        self.taint(target);
                    }
                    self.target(target, depth);
                    self.expr(value, depth);
                }
                self.stmts(&w.body, depth);
            }
            Stmt::Set(set) => {
                if !self.plain(&set.expr, depth) {
                    self.taint(&set.target);
                }
                self.target(&set.target, depth);
                self.expr(&set.expr, depth);
            }
            Stmt::SetBlock(set) => {
                self.taint(&set.target);
                self.target(&set.target, depth);
                if let Some(f) = &set.filter {
                    self.expr(f, depth);
                }
                self.stmts(&set.body, depth);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled, depth);
                self.stmts(&a.body, depth);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter, depth);
                self.stmts(&f.body, depth);
            }
            Stmt::Macro(m) => self.macro_decl(m, depth),
            Stmt::CallBlock(c) => {
                self.call(&c.call, depth);
                self.macro_decl(&c.macro_decl, depth);
            }
            Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::Do(d) => self.call(&d.call, depth),
        }
    }

    fn macro_decl(&mut self, m: &ast::Macro<'_>, depth: usize) {
        // A macro's arguments are whatever its callers pass.
        for a in &m.args {
            self.taint(a);
            self.target(a, depth);
        }
        for d in &m.defaults {
            self.expr(d, depth);
        }
        self.stmts(&m.body, depth);
    }

    /// Marks the names an assignment target binds as unknown.
    fn taint(&mut self, target: &Expr<'_>) {
        match target {
            Expr::Var(v) => {
                self.tainted.insert(v.id.to_owned());
            }
            Expr::GetAttr(a) => {
                self.tainted_attrs.insert(a.name.to_owned());
            }
            Expr::Tuple(t) => {
                for item in &t.items {
                    self.taint(item);
                }
            }
            Expr::List(l) => {
                for item in &l.items {
                    self.taint(item);
                }
            }
            _ => {}
        }
    }

    /// An assignment target: its attribute names are lookups too.
    fn target(&mut self, target: &Expr<'_>, depth: usize) {
        match target {
            Expr::Var(_) => {}
            other => self.expr(other, depth),
        }
    }

    /// The value of a constant expression, where the walk can fold it.
    fn fold(&self, e: &Expr<'_>, depth: usize) -> Option<Folded> {
        if depth > MAX_DEPTH {
            return None;
        }
        match e {
            Expr::Const(c) => {
                if c.value.as_str().is_some() {
                    self.literal(c.span()).map(Folded::Str)
                } else if let Some(i) = c.value.as_i64() {
                    Some(Folded::Int(i128::from(i)))
                } else if c.value.is_number() {
                    // An integer past i64 (minijinja's Int128): never an attribute name.
                    Some(Folded::Other)
                } else {
                    Some(Folded::Other)
                }
            }
            Expr::BinOp(b) => {
                let l = self.fold(&b.left, depth + 1)?;
                let r = self.fold(&b.right, depth + 1)?;
                let bounded = |s: String| (s.len() <= MAX_FOLDED).then_some(Folded::Str(s));
                match (b.op, l, r) {
                    (ast::BinOpKind::Concat, l, r) => bounded(l.text()? + &r.text()?),
                    (ast::BinOpKind::Add, Folded::Str(l), Folded::Str(r)) => bounded(l + &r),
                    (ast::BinOpKind::Add, Folded::Int(l), Folded::Int(r)) => {
                        l.checked_add(r).map(Folded::Int)
                    }
                    (ast::BinOpKind::Mul, Folded::Str(s), Folded::Int(n))
                    | (ast::BinOpKind::Mul, Folded::Int(n), Folded::Str(s)) => {
                        let n = usize::try_from(n.max(0)).ok()?;
                        if s.len().checked_mul(n)? > MAX_FOLDED {
                            return None;
                        }
                        Some(Folded::Str(s.repeat(n)))
                    }
                    _ => None,
                }
            }
            Expr::Filter(f) if f.args.is_empty() => {
                let inner = self.fold(f.expr.as_ref()?, depth + 1)?;
                match (f.name, inner) {
                    ("string", v) => v.text().map(Folded::Str),
                    ("lower", Folded::Str(s)) => Some(Folded::Str(s.to_lowercase())),
                    ("upper", Folded::Str(s)) => Some(Folded::Str(s.to_uppercase())),
                    ("trim", Folded::Str(s)) => Some(Folded::Str(s.trim().to_owned())),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A string literal's value as jinja2 decodes it: the literal tokens within `span`,
    /// joined (adjacent literals concatenate).
    fn literal(&self, span: Span) -> Option<String> {
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        let first = self.strings.partition_point(|s| s.start < start);
        let mut out = String::new();
        let mut any = false;
        for s in self.strings[first..].iter().take_while(|s| s.end <= end) {
            out.push_str(&s.value);
            any = true;
        }
        any.then_some(out)
    }

    /// Whether `e` is a plain value as a lookup key: numbers, variables and attributes the
    /// template did not bind to something computed, arithmetic of those. Strings built in
    /// the template (concatenations, filters, calls) are not: they could spell any name.
    fn plain(&self, e: &Expr<'_>, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let d = depth + 1;
        match e {
            Expr::Const(c) => c.value.as_str().is_none(),
            Expr::Var(v) => !self.tainted.contains(v.id),
            Expr::GetAttr(a) => !self.tainted_attrs.contains(a.name) && self.plain(&a.expr, d),
            Expr::GetItem(i) => self.plain(&i.expr, d) && self.plain(&i.subscript_expr, d),
            Expr::Slice(s) => {
                self.plain(&s.expr, d)
                    && [&s.start, &s.stop, &s.step]
                        .into_iter()
                        .flatten()
                        .all(|x| self.plain(x, d))
            }
            Expr::UnaryOp(u) => self.plain(&u.expr, d),
            Expr::BinOp(b) => {
                !matches!(b.op, ast::BinOpKind::Concat)
                    && self.plain(&b.left, d)
                    && self.plain(&b.right, d)
            }
            Expr::Compare(c) => {
                self.plain(&c.expr, d) && c.ops.iter().all(|o| self.plain(&o.expr, d))
            }
            Expr::IfExpr(i) => {
                self.plain(&i.test_expr, d)
                    && self.plain(&i.true_expr, d)
                    && i.false_expr.as_ref().is_none_or(|x| self.plain(x, d))
            }
            Expr::Test(_) => true,
            Expr::Filter(f) => {
                NUMERIC_FILTERS.contains(&f.name)
                    && f.expr.as_ref().is_none_or(|x| self.plain(x, d))
                    && f.args.iter().all(|a| self.plain(arg_expr(a), d))
            }
            Expr::Call(_) | Expr::List(_) | Expr::Tuple(_) | Expr::Map(_) => false,
        }
    }

    fn expr(&mut self, e: &Expr<'_>, depth: usize) {
        if !self.enter(depth) {
            return;
        }
        let d = depth + 1;
        match e {
            Expr::Var(_) | Expr::Const(_) => {}
            Expr::Slice(s) => {
                self.expr(&s.expr, d);
                for x in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(x, d);
                }
            }
            Expr::UnaryOp(u) => self.expr(&u.expr, d),
            Expr::BinOp(b) => {
                self.expr(&b.left, d);
                self.expr(&b.right, d);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr, d);
                for o in &c.ops {
                    self.expr(&o.expr, d);
                }
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr, d);
                self.expr(&i.true_expr, d);
                if let Some(x) = &i.false_expr {
                    self.expr(x, d);
                }
            }
            Expr::GetAttr(a) => {
                // The name is the span's last bytes (`x.name`).
                let at = (a.span().end_offset as usize).saturating_sub(a.name.len());
                self.lookup(at, a.name, "an attribute lookup of");
                self.expr(&a.expr, d);
            }
            Expr::GetItem(i) => {
                let at = start(&i.subscript_expr);
                match self.fold(&i.subscript_expr, d) {
                    Some(Folded::Str(key)) => {
                        self.lookup(at, &key, "a subscript (which jinja2 also resolves as an attribute) of")
                    }
                    Some(_) => {}
                    None if self.plain(&i.subscript_expr, d) => {}
                    None => self.flag(
                        at,
                        Severity::Lead,
                        "a subscript whose key is computed in the template: jinja2 resolves a string key as an attribute when the item is missing, and socair cannot tell which name this one spells".into(),
                    ),
                }
                self.expr(&i.expr, d);
                self.expr(&i.subscript_expr, d);
            }
            Expr::Filter(f) => {
                self.attribute_filter(f.name, &f.args, d);
                if let Some(x) = &f.expr {
                    self.expr(x, d);
                }
                self.args(&f.args, d);
            }
            Expr::Test(t) => {
                self.expr(&t.expr, d);
                self.args(&t.args, d);
            }
            Expr::Call(c) => self.call(c, depth),
            Expr::List(l) => {
                for x in &l.items {
                    self.expr(x, d);
                }
            }
            Expr::Tuple(t) => {
                for x in &t.items {
                    self.expr(x, d);
                }
            }
            Expr::Map(m) => {
                for x in m.keys.iter().chain(&m.values) {
                    self.expr(x, d);
                }
            }
        }
    }

    fn args(&mut self, args: &[CallArg<'_>], depth: usize) {
        for a in args {
            self.expr(arg_expr(a), depth);
        }
    }

    fn call(&mut self, c: &ast::Call<'_>, depth: usize) {
        let d = depth + 1;
        if let Expr::GetAttr(a) = &c.expr {
            if matches!(a.name, "format" | "format_map") {
                let at = start(&a.expr);
                match self.fold(&a.expr, d) {
                    Some(Folded::Str(fmt)) => {
                        for field in format_attributes(&fmt) {
                            self.lookup(at, &field, "a `str.format` field that looks up");
                        }
                    }
                    _ => self.flag(
                        at,
                        Severity::Lead,
                        format!("`.{}(...)` on a string not written in the template: Python's `str.format` looks up the attributes its fields name (`{{0.__class__}}`), and socair cannot tell which", a.name),
                    ),
                }
            }
        }
        self.expr(&c.expr, d);
        self.args(&c.args, d);
    }

    /// The attribute arguments of `attr`, `map`, `selectattr`...
    fn attribute_filter(&mut self, name: &str, args: &[CallArg<'_>], depth: usize) {
        let Some((_, positions)) = ATTRIBUTE_FILTERS.iter().find(|(f, _)| *f == name) else {
            return;
        };
        // `map('attr', name)`, `select('...')`: a filter named by the first argument gets
        // the rest; when that filter looks attributes up, every argument is a name.
        let names_filter = args.first().and_then(|a| match a {
            CallArg::Pos(x) => self.fold(x, depth),
            _ => None,
        });
        let every = matches!(&names_filter, Some(Folded::Str(f)) if ATTRIBUTE_FILTERS.iter().any(|(n, _)| n == f));
        for (i, a) in args.iter().enumerate() {
            let at = match a {
                CallArg::Pos(_) => positions.contains(&i) || (every && i > 0),
                CallArg::Kwarg(k, _) => *k == "attribute",
                _ => true,
            };
            if !at {
                continue;
            }
            let x = arg_expr(a);
            let at = start(x);
            match self.fold(x, depth) {
                Some(Folded::Str(p)) => {
                    self.path(at, &p, &format!("the `{name}` filter's attribute argument names"))
                }
                Some(_) => {}
                None => self.flag(
                    at,
                    Severity::Lead,
                    format!("the `{name}` filter with an attribute name computed in the template: socair cannot tell which attribute it looks up"),
                ),
            }
        }
    }
}

/// Where an expression starts.
fn start(e: &Expr<'_>) -> usize {
    e.span().start_offset as usize
}

fn arg_expr<'a, 'b>(a: &'b CallArg<'a>) -> &'b Expr<'a> {
    match a {
        CallArg::Pos(x) | CallArg::Kwarg(_, x) | CallArg::PosSplat(x) | CallArg::KwargSplat(x) => x,
    }
}

/// The attribute names in a `str.format` string's replacement fields: every name after a
/// `.` inside braces (`{0.__class__}`, `{x[0].y}`, and fields nested in a format spec; a
/// spec's own `.2f` yields `2f`, which names nothing).
fn format_attributes(fmt: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut chars = fmt.chars().peekable();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        if depth == 0 {
            if c == '{' {
                if chars.peek() == Some(&'{') {
                    chars.next();
                } else {
                    depth = 1;
                }
            }
            continue;
        }
        if let Some(name) = current.as_mut() {
            if c.is_alphanumeric() || c == '_' {
                name.push(c);
                continue;
            }
            out.extend(current.take());
        }
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '.' => current = Some(String::new()),
            _ => {}
        }
    }
    out.extend(current);
    out
}

#[cfg(test)]
#[path = "jinja_tests.rs"]
mod tests;
