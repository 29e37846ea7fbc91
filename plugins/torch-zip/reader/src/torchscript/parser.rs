//! TorchScript source parsed as torch's parser parses it: torch/csrc/jit/frontend/parser.cpp
//! (`ParserImpl`: `parseStmt`, `parseExp` with the precedences of lexer.cpp's `binary_prec` and
//! `unary_prec`, `parseBaseExp`, `parseAssign`, `parseFunction`, `parseClass`, ...) and the file
//! level of torch/csrc/jit/serialization/import_source.cpp (`parseSourceIfNeeded`:
//! `parsePossibleVersionNumber`, `parseImports`, then only `class` and `def`). Both read at the
//! pytorch/pytorch sources the search index holds; the grammar has not changed across the 2.x
//! releases (torch 2.15.0's headers, `lexer.h` and `tree_views.h`, agree with it).
//!
//! The tree keeps what the rules need: names with their byte offsets, calls, attribute
//! selections, literals, and the statements that bind names. Nesting is bounded
//! ([`MAX_DEPTH`]); torch has no bound but its stack.

use super::lexer::{string_value, Kind, LexError, Lexer, Token};

/// How deeply expressions and statements may nest.
pub const MAX_DEPTH: usize = 200;

/// A name and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The identifier.
    pub text: String,
    /// Its byte offset.
    pub at: usize,
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A name.
    Var(Name),
    /// A string literal's value (adjacent literals joined).
    Str(Vec<u8>, usize),
    /// A number, `True`, `False`, `None`, `NoneType`, `...`.
    Atom(usize),
    /// `base.name`.
    Select(Box<Expr>, Name),
    /// `callee(args, name=value)`.
    Apply {
        /// What is called.
        callee: Box<Expr>,
        /// Positional arguments.
        args: Vec<Expr>,
        /// Keyword arguments.
        kwargs: Vec<(Name, Expr)>,
        /// Where the arguments open.
        at: usize,
    },
    /// A comprehension: `elt for target in iter` (`parts` = elt, iter; or key, value, iter).
    Comp {
        /// The bound target.
        target: Box<Expr>,
        /// The other expressions.
        parts: Vec<Expr>,
    },
    /// A tuple: `a, b` or `(a, b)` or `()`.
    Tuple(Vec<Expr>, usize),
    /// Every other compound (list, dict, subscript, slice, operators, `x if c else y`, `*x`):
    /// its sub-expressions.
    Node(Vec<Expr>, usize),
}

impl Expr {
    /// A byte offset for findings.
    pub fn at(&self) -> usize {
        match self {
            Expr::Var(n) | Expr::Select(_, n) => n.at,
            Expr::Str(_, at)
            | Expr::Atom(at)
            | Expr::Tuple(_, at)
            | Expr::Node(_, at)
            | Expr::Apply { at, .. } => *at,
            Expr::Comp { target, .. } => target.at(),
        }
    }
}

/// A parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: Name,
    /// Its annotation.
    pub ty: Option<Expr>,
    /// Its default value.
    pub default: Option<Expr>,
}

/// A `def`.
#[derive(Debug, Clone, PartialEq)]
pub struct Def {
    /// Its name.
    pub name: Name,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Its return annotation, and a type comment's types.
    pub types: Vec<Expr>,
    /// Its body.
    pub body: Vec<Stmt>,
}

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `if`/`elif`/`else`.
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `while`.
    While(Expr, Vec<Stmt>),
    /// `for targets in iters:`.
    For(Vec<Expr>, Vec<Expr>, Vec<Stmt>),
    /// `with item [as name], ...:`.
    With(Vec<(Expr, Option<Name>)>, Vec<Stmt>),
    /// A nested `def`.
    Def(Def),
    /// `lhs = ... = rhs`, `lhs : type [= rhs]`, `lhs op= rhs`.
    Assign {
        /// Every target.
        lhs: Vec<Expr>,
        /// The value.
        rhs: Option<Expr>,
        /// The annotation.
        ty: Option<Expr>,
    },
    /// `global`, `del`, `return`, `raise`, `assert`, an expression: the expressions in it.
    Exprs(Vec<Expr>),
    /// `break`, `continue`, `pass`.
    Empty,
}

/// A `class`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDef {
    /// Its name.
    pub name: Name,
    /// `Module`, `NamedTuple`, `Enum`, `Interface`, `ModuleInterface`, or none.
    pub superclass: Option<Expr>,
    /// Its body.
    pub body: Vec<Stmt>,
}

/// What a code file defines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    /// Its classes.
    pub classes: Vec<ClassDef>,
    /// Its free functions.
    pub functions: Vec<Def>,
}

/// Why a file was not parsed, and where.
pub type ParseError = LexError;

/// Parses a code file as `parseSourceIfNeeded` does.
pub fn parse_module(src: &[u8]) -> Result<Module, ParseError> {
    let mut p = Parser {
        lexer: Lexer::new(src)?,
        depth: 0,
    };
    p.module()
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    depth: usize,
}

/// Binary operators and their precedences (lexer.cpp `binary_prec`).
fn binary_prec(t: &Token) -> Option<u8> {
    let Kind::Op(s) = t.kind else { return None };
    Some(match s {
        "if" | "for" => 1,
        "and" | "or" => 2,
        "in" | "not in" | "<" | ">" | "is" | "is not" | "==" | "<=" | ">=" | "!=" => 4,
        "|" => 5,
        "^" => 6,
        "&" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "//" | "%" | "@" => 10,
        "**" => 11,
        _ => return None,
    })
}

/// Unary operators (lexer.cpp `unary_prec`).
fn unary_prec(t: &Token) -> Option<u8> {
    let Kind::Op(s) = t.kind else { return None };
    Some(match s {
        "not" | "~" => 3,
        "-" | "*" => 10,
        _ => return None,
    })
}

/// The assignment operators (`maybeParseAssignmentOp`).
const ASSIGN_OPS: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", "%=", "<<=", ">>=", "**=",
];

impl Parser<'_> {
    fn err<T>(&self, at: usize, reason: impl Into<String>) -> Result<T, ParseError> {
        Err(LexError {
            offset: at,
            reason: reason.into(),
        })
    }

    fn cur(&mut self) -> Result<Token, ParseError> {
        self.lexer.cur()
    }

    fn next(&mut self) -> Result<Token, ParseError> {
        self.lexer.next_token()
    }

    fn next_if(&mut self, spelling: &str) -> Result<bool, ParseError> {
        if self.cur()?.is(spelling) {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn next_if_kind(&mut self, kind: Kind) -> Result<bool, ParseError> {
        if self.cur()?.kind == kind {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect(&mut self, spelling: &str) -> Result<Token, ParseError> {
        let t = self.cur()?;
        if !t.is(spelling) {
            return self.err(
                t.start,
                format!("expected '{spelling}' but found {}", self.describe(&t)),
            );
        }
        self.next()
    }

    fn expect_kind(&mut self, kind: Kind, what: &str) -> Result<Token, ParseError> {
        let t = self.cur()?;
        if t.kind != kind {
            return self.err(
                t.start,
                format!("expected {what} but found {}", self.describe(&t)),
            );
        }
        self.next()
    }

    fn describe(&self, t: &Token) -> String {
        match t.kind {
            Kind::Newline => "a newline".into(),
            Kind::Indent => "an indent".into(),
            Kind::Dedent => "a dedent".into(),
            Kind::Eof => "the end of the file".into(),
            _ => format!("'{}'", String::from_utf8_lossy(self.lexer.text(t))),
        }
    }

    fn enter(&mut self, at: usize) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(at, format!("nested deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn ident(&mut self) -> Result<Name, ParseError> {
        let t = self.expect_kind(Kind::Ident, "an identifier")?;
        Ok(Name {
            text: String::from_utf8_lossy(self.lexer.text(&t)).into_owned(),
            at: t.start,
        })
    }

    /// `parseSequence`: `begin`, items separated by `sep`, `end` (`None` for TK_NOTHING).
    fn sequence<T>(
        &mut self,
        begin: Option<&str>,
        end: Option<&str>,
        mut item: impl FnMut(&mut Self) -> Result<T, ParseError>,
    ) -> Result<Vec<T>, ParseError> {
        if let Some(b) = begin {
            self.expect(b)?;
        }
        let mut items = Vec::new();
        loop {
            let t = self.cur()?;
            if end.is_some_and(|e| t.is(e)) {
                break;
            }
            items.push(item(self)?);
            if !self.next_if(",")? {
                if let Some(e) = end {
                    self.expect(e)?;
                }
                return Ok(items);
            }
        }
        if let Some(e) = end {
            self.expect(e)?;
        }
        Ok(items)
    }

    fn module(&mut self) -> Result<Module, ParseError> {
        let mut m = Module::default();
        // parsePossibleVersionNumber: `op_version_set = <number>` and a newline.
        let t = self.cur()?;
        if t.kind == Kind::Ident && self.lexer.text(&t) == b"op_version_set" {
            self.next()?;
            self.expect("=")?;
            self.expect_kind(Kind::Number, "a number")?;
            self.expect_kind(Kind::Newline, "a newline")?;
        }
        loop {
            // parseImports: `import` and anything up to the newline, ignored.
            while self.next_if("import")? {
                loop {
                    let t = self.next()?;
                    match t.kind {
                        Kind::Newline => break,
                        Kind::Eof => {
                            return self.err(t.start, "an import line runs to the end of the file")
                        }
                        _ => {}
                    }
                }
            }
            let t = self.cur()?;
            match t.kind {
                Kind::Eof => return Ok(m),
                Kind::Op("class") => m.classes.push(self.class()?),
                Kind::Op("def") => m.functions.push(self.function(false)?),
                _ => {
                    return self.err(
                        t.start,
                        format!("Unexpected token in code import: {}", self.describe(&t)),
                    )
                }
            }
        }
    }

    fn class(&mut self) -> Result<ClassDef, ParseError> {
        self.expect("class")?;
        let name = self.ident()?;
        let mut superclass = None;
        if self.next_if("(")? {
            superclass = Some(self.exp(0)?);
            self.expect(")")?;
        }
        self.expect(":")?;
        let body = self.statements(true, true)?;
        Ok(ClassDef {
            name,
            superclass,
            body,
        })
    }

    fn function(&mut self, is_method: bool) -> Result<Def, ParseError> {
        let at = self.expect("def")?.start;
        self.enter(at)?;
        let name = self.ident()?;
        let mut kwarg_only = false;
        let params = self.sequence(Some("("), Some(")"), |p| {
            if !kwarg_only && p.next_if("*")? {
                kwarg_only = true;
                return Ok(None);
            }
            let name = p.ident()?;
            let ty = if p.next_if(":")? {
                Some(p.exp(0)?)
            } else {
                None
            };
            let default = if p.next_if("=")? {
                Some(p.exp(0)?)
            } else {
                None
            };
            Ok(Some(Param { name, ty, default }))
        })?;
        let params: Vec<Param> = params.into_iter().flatten().collect();
        let mut types = Vec::new();
        if self.next_if("->")? {
            types.push(self.exp(0)?);
        }
        self.expect(":")?;
        let body = if self.next_if_kind(Kind::Indent)? {
            if self.cur()?.is("# type:") {
                self.type_comment(&params, is_method, &mut types)?;
                self.expect_kind(Kind::Newline, "a newline")?;
            }
            self.statements(false, false)?
        } else {
            if self.cur()?.is("# type:") {
                self.type_comment(&params, is_method, &mut types)?;
            }
            vec![self.statement(is_method)?]
        };
        self.depth -= 1;
        Ok(Def {
            name,
            params,
            types,
            body,
        })
    }

    /// `parseTypeComment` and `mergeTypesFromTypeComment`'s count check.
    fn type_comment(
        &mut self,
        params: &[Param],
        is_method: bool,
        types: &mut Vec<Expr>,
    ) -> Result<(), ParseError> {
        let at = self.expect("# type:")?.start;
        let annotated = self.sequence(Some("("), Some(")"), |p| p.exp(0))?;
        let expected = params.len().saturating_sub(usize::from(is_method));
        if annotated.len() != expected {
            return self.err(
                at,
                format!(
                    "Number of type annotations ({}) did not match the number of parameters ({expected})",
                    annotated.len()
                ),
            );
        }
        types.extend(annotated);
        if self.next_if("->")? {
            types.push(self.exp(0)?);
        }
        Ok(())
    }

    fn statements(&mut self, expect_indent: bool, in_class: bool) -> Result<Vec<Stmt>, ParseError> {
        if expect_indent {
            self.expect_kind(Kind::Indent, "an indent")?;
        }
        let mut stmts = Vec::new();
        loop {
            stmts.push(self.statement(in_class)?);
            if self.next_if_kind(Kind::Dedent)? {
                return Ok(stmts);
            }
        }
    }

    fn newline(&mut self) -> Result<(), ParseError> {
        self.expect_kind(Kind::Newline, "a newline").map(|_| ())
    }

    fn statement(&mut self, in_class: bool) -> Result<Stmt, ParseError> {
        let t = self.cur()?;
        self.enter(t.start)?;
        let s = self.statement_inner(in_class, t)?;
        self.depth -= 1;
        Ok(s)
    }

    fn statement_inner(&mut self, in_class: bool, t: Token) -> Result<Stmt, ParseError> {
        let Kind::Op(kw) = t.kind else {
            return self.expression_statement();
        };
        Ok(match kw {
            "if" => self.if_statement(true)?,
            "while" => {
                self.next()?;
                let cond = self.exp(0)?;
                self.expect(":")?;
                Stmt::While(cond, self.statements(true, false)?)
            }
            "for" => {
                self.next()?;
                let targets = self.sequence(None, Some("in"), |p| p.exp(4))?;
                let iters = self.sequence(None, Some(":"), |p| p.exp(0))?;
                Stmt::For(targets, iters, self.statements(true, false)?)
            }
            "global" | "del" => {
                self.next()?;
                let items = if kw == "global" {
                    self.sequence(None, None, |p| p.ident().map(Expr::Var))?
                } else {
                    self.sequence(None, None, |p| p.exp(0))?
                };
                self.newline()?;
                Stmt::Exprs(items)
            }
            "return" => {
                self.next()?;
                let value = if self.cur()?.kind == Kind::Newline {
                    Vec::new()
                } else {
                    vec![self.exp_or_tuple()?]
                };
                self.newline()?;
                Stmt::Exprs(value)
            }
            "raise" => {
                self.next()?;
                let e = self.exp(0)?;
                self.newline()?;
                Stmt::Exprs(vec![e])
            }
            "assert" => {
                self.next()?;
                let mut items = vec![self.exp(0)?];
                if self.next_if(",")? {
                    items.push(self.exp(0)?);
                }
                self.newline()?;
                Stmt::Exprs(items)
            }
            "break" | "continue" | "pass" => {
                self.next()?;
                self.newline()?;
                Stmt::Empty
            }
            "def" => Stmt::Def(self.function(in_class)?),
            "with" => {
                self.next()?;
                let items = self.sequence(None, Some(":"), |p| {
                    let e = p.exp(0)?;
                    let name = if p.next_if("as")? {
                        Some(p.ident()?)
                    } else {
                        None
                    };
                    Ok((e, name))
                })?;
                Stmt::With(items, self.statements(true, false)?)
            }
            _ => self.expression_statement()?,
        })
    }

    fn if_statement(&mut self, expect_if: bool) -> Result<Stmt, ParseError> {
        if expect_if {
            self.expect("if")?;
        }
        let cond = self.exp(0)?;
        self.expect(":")?;
        let then = self.statements(true, false)?;
        let otherwise = if self.next_if("else")? {
            self.expect(":")?;
            self.statements(true, false)?
        } else if self.next_if("elif")? {
            let at = self.cur()?.start;
            self.enter(at)?;
            let nested = self.if_statement(false)?;
            self.depth -= 1;
            vec![nested]
        } else {
            Vec::new()
        };
        Ok(Stmt::If(cond, then, otherwise))
    }

    /// An expression statement or an assignment (`parseStmt`'s default, `parseAssign`).
    fn expression_statement(&mut self) -> Result<Stmt, ParseError> {
        let lhs = self.exp_or_tuple()?;
        if self.cur()?.kind == Kind::Newline {
            self.newline()?;
            return Ok(Stmt::Exprs(vec![lhs]));
        }
        let ty = if self.next_if(":")? {
            Some(self.exp(0)?)
        } else {
            None
        };
        let t = self.cur()?;
        let op = match t.kind {
            Kind::Op(s) if ASSIGN_OPS.contains(&s) => Some(s),
            _ => None,
        };
        match op {
            Some("=") => {
                self.next()?;
                let mut lhs_list = vec![lhs];
                let mut rhs = self.exp_or_tuple()?;
                while self.next_if("=")? {
                    lhs_list.push(rhs);
                    rhs = self.exp_or_tuple()?;
                }
                if ty.is_some() && lhs_list.len() > 1 {
                    return self.err(
                        t.start,
                        "Annotated multiple assignment is not supported in python",
                    );
                }
                self.newline()?;
                Ok(Stmt::Assign {
                    lhs: lhs_list,
                    rhs: Some(rhs),
                    ty,
                })
            }
            Some(_) => {
                self.next()?;
                let rhs = self.exp_or_tuple()?;
                self.newline()?;
                if matches!(&lhs, Expr::Tuple(..)) {
                    return self.err(
                        t.start,
                        "augmented assignment can only have one LHS expression",
                    );
                }
                Ok(Stmt::Assign {
                    lhs: vec![lhs],
                    rhs: Some(rhs),
                    ty,
                })
            }
            None if ty.is_some() => {
                self.newline()?;
                Ok(Stmt::Assign {
                    lhs: vec![lhs],
                    rhs: None,
                    ty,
                })
            }
            None => self.err(
                t.start,
                format!("expected a newline but found {}", self.describe(&t)),
            ),
        }
    }

    /// `parseExpOrExpTuple`.
    fn exp_or_tuple(&mut self) -> Result<Expr, ParseError> {
        let first = self.exp(0)?;
        if !self.cur()?.is(",") {
            return Ok(first);
        }
        let at = first.at();
        let mut items = vec![first];
        while self.next_if(",")? {
            let t = self.cur()?;
            let follows = t.kind == Kind::Newline
                || matches!(t.kind, Kind::Op(s) if s == ")" || ASSIGN_OPS.contains(&s));
            if follows {
                break;
            }
            items.push(self.exp(0)?);
        }
        Ok(Expr::Tuple(items, at))
    }

    /// `parseExp(precedence)`: top-down precedence parsing.
    fn exp(&mut self, precedence: u8) -> Result<Expr, ParseError> {
        let t = self.cur()?;
        self.enter(t.start)?;
        let mut prefix = if let Some(prec) = unary_prec(&t) {
            self.next()?;
            Expr::Node(vec![self.exp(prec)?], t.start)
        } else {
            self.base()?
        };
        loop {
            let op = self.cur()?;
            let Some(mut prec) = binary_prec(&op) else {
                break;
            };
            if prec <= precedence {
                break;
            }
            self.next()?;
            if op.is("if") || op.is("**") {
                prec -= 1;
            }
            prefix = if op.is("if") {
                let cond = self.exp(0)?;
                self.expect("else")?;
                let otherwise = self.exp(prec)?;
                Expr::Node(vec![cond, prefix, otherwise], op.start)
            } else if op.is("for") {
                let target = self.exp(4)?;
                self.expect("in")?;
                let iter = self.exp(0)?;
                Expr::Comp {
                    target: Box::new(target),
                    parts: vec![prefix, iter],
                }
            } else {
                Expr::Node(vec![prefix, self.exp(prec)?], op.start)
            };
        }
        self.depth -= 1;
        Ok(prefix)
    }

    /// `parseBaseExp`: an atom, then `.name`, `(...)` and `[...]` after it.
    fn base(&mut self) -> Result<Expr, ParseError> {
        let t = self.cur()?;
        let mut prefix = match t.kind {
            Kind::Number => {
                self.next()?;
                Expr::Atom(t.start)
            }
            Kind::Op("True" | "False" | "None" | "NoneType" | "Ellipsis" | "...") => {
                self.next()?;
                Expr::Atom(t.start)
            }
            Kind::Op("(") => {
                self.next()?;
                if self.next_if(")")? {
                    Expr::Tuple(Vec::new(), t.start)
                } else {
                    let e = self.exp_or_tuple()?;
                    self.expect(")")?;
                    e
                }
            }
            Kind::Op("[") => {
                let items = self.sequence(Some("["), Some("]"), |p| p.exp(0))?;
                let comps = items
                    .iter()
                    .filter(|e| matches!(e, Expr::Comp { .. }))
                    .count();
                match items.len() {
                    1 if comps == 1 => items.into_iter().next().unwrap_or(Expr::Atom(t.start)),
                    _ if comps > 0 => {
                        return self.err(
                            t.start,
                            "expected a single list comprehension within '[' , ']'",
                        )
                    }
                    _ => Expr::Node(items, t.start),
                }
            }
            Kind::Op("{") => self.dict(t.start)?,
            Kind::StringLit => {
                let mut value = Vec::new();
                while self.cur()?.kind == Kind::StringLit {
                    let s = self.next()?;
                    match string_value(self.lexer.text(&s)) {
                        Ok(v) => value.extend(v),
                        Err(why) => return self.err(s.start, why),
                    }
                }
                Expr::Str(value, t.start)
            }
            _ => Expr::Var(self.ident()?),
        };
        loop {
            let t = self.cur()?;
            if t.is(".") {
                self.next()?;
                let name = self.ident()?;
                prefix = Expr::Select(Box::new(prefix), name);
            } else if t.is("(") {
                let mut args = Vec::new();
                let mut kwargs = Vec::new();
                self.sequence(Some("("), Some(")"), |p| {
                    if p.cur()?.kind == Kind::Ident && p.lexer.lookahead()?.is("=") {
                        let name = p.ident()?;
                        p.expect("=")?;
                        kwargs.push((name, p.exp(0)?));
                    } else {
                        args.push(p.exp(0)?);
                    }
                    Ok(())
                })?;
                prefix = Expr::Apply {
                    callee: Box::new(prefix),
                    args,
                    kwargs,
                    at: t.start,
                };
            } else if t.is("[") {
                let mut items = vec![prefix];
                items.extend(self.sequence(Some("["), Some("]"), Self::subscript)?);
                prefix = Expr::Node(items, t.start);
            } else {
                return Ok(prefix);
            }
        }
    }

    /// `parseSubscriptExp`: `a`, or a slice `[a]:[b][:[c]]`.
    fn subscript(&mut self) -> Result<Expr, ParseError> {
        let at = self.cur()?.start;
        let mut parts = Vec::new();
        if !self.cur()?.is(":") {
            parts.push(self.exp(0)?);
        }
        if !self.next_if(":")? {
            return Ok(parts.pop().unwrap_or(Expr::Atom(at)));
        }
        let stops = |t: &Token, third: bool| t.is(",") || t.is("]") || (!third && t.is(":"));
        if !stops(&self.cur()?, false) {
            parts.push(self.exp(0)?);
        }
        if self.next_if(":")? && !stops(&self.cur()?, true) {
            parts.push(self.exp(0)?);
        }
        Ok(Expr::Node(parts, at))
    }

    /// A dict literal or a dict comprehension (`parseBaseExp`, case '{').
    fn dict(&mut self, at: usize) -> Result<Expr, ParseError> {
        self.expect("{")?;
        let mut pairs = Vec::new();
        if !self.cur()?.is("}") {
            loop {
                let key = self.exp(0)?;
                self.expect(":")?;
                let value = self.exp(0)?;
                pairs.push((key, value));
                if !self.next_if(",")? {
                    break;
                }
            }
        }
        self.expect("}")?;
        if pairs.len() == 1 && matches!(pairs[0].1, Expr::Comp { .. }) {
            if let Some((key, Expr::Comp { target, mut parts })) = pairs.pop() {
                parts.insert(0, key);
                return Ok(Expr::Comp { target, parts });
            }
        }
        Ok(Expr::Node(
            pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
            at,
        ))
    }
}
