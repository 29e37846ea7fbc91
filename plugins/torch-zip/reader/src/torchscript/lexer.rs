//! The tokens of TorchScript source, as torch's own lexer makes them: torch 2.15.0
//! `torch/csrc/jit/frontend/lexer.h` (`TC_FORALL_TOKEN_KINDS`, `SharedParserData::match`,
//! `isNumber`, `isString`, `Lexer::lex`, `Lexer::lexRaw`), `parser_constants.h`
//! (`valid_single_char_tokens`) and `parse_string_literal.h` (`parseStringLiteral`), read in
//! the wheel's `torch/include/`.
//!
//! The rules that matter for what a file *says*: a token is the longest identifier or token
//! spelling at a position, a keyword winning a tie (`is not` and `not in` are one token, so
//! `x is nothing` lexes as `x`, `is not`, `hing` as in torch); newlines inside brackets are
//! skipped; a line's leading blanks become INDENT, NEWLINE or DEDENTs against a stack of
//! levels (a level matching none is an error); a file that does not end with a newline gets no
//! last NEWLINE. Bytes outside string literals that are not ASCII stop the lexer: torch's
//! `isalpha` of a negative `char` is false, so no identifier holds them and no token starts
//! with them. Every error is a refusal with its byte offset: socair judges only what it parsed.

/// Multi-character tokens and keywords, spelled as `TC_FORALL_TOKEN_KINDS` spells them (the
/// kinds with a non-empty third field), and the single-character tokens after them.
const SPELLINGS: &[&str] = &[
    "def", "<=>", "if", "else", "elif", "while", "return", "is", "is not", "!=", "==", "<=", ">=",
    "//", "True", "False", "None", "and", "or", "not", "<<", ">>", "+=", "-=", "*=", "/=", "%=",
    "|=", "&=", "^=", "<<=", ">>=", "**=", "global", "for", "in", "not in", "**", "->", "# type:",
    "raise", "assert", "...", "break", "continue", "del", "pass", "class", "import", "with", "as",
    "Ellipsis", "NoneType", "+", "-", "*", "/", "%", "@", "(", ")", "[", "]", ":", ",", "=", "{",
    "}", ">", "<", ".", "?", "!", "&", "^", "|", "~",
];

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An identifier.
    Ident,
    /// A number (`strtod`'s prefix, an optional `j`).
    Number,
    /// A string literal, quotes included.
    StringLit,
    /// The end of a logical line.
    Newline,
    /// A deeper indentation level.
    Indent,
    /// A shallower one.
    Dedent,
    /// The end of the file.
    Eof,
    /// A keyword or operator, by its spelling.
    Op(&'static str),
}

/// One token: its kind and where its text lies in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Its first byte.
    pub start: usize,
    /// Just past its last byte.
    pub end: usize,
}

impl Token {
    /// Whether it is the keyword or operator `spelling`.
    pub fn is(&self, spelling: &str) -> bool {
        matches!(self.kind, Kind::Op(s) if s == spelling)
    }
}

/// Why a source is refused, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    /// Byte offset in the file.
    pub offset: usize,
    /// What torch's lexer says there.
    pub reason: String,
}

/// The most tokens one file may hold: far more than any serialized module's code.
pub const MAX_TOKENS: usize = 1 << 22;

/// `isspace` in the C locale, but not `\n` (`SharedParserData::isblank`).
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

fn valid_ident(i: usize, b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || (i > 0 && b.is_ascii_digit())
}

/// The length of the number `strtod` (C locale) reads at the start of `s`, plus a trailing
/// `j` (`isNumber`); 0 when there is none. A first `-`, `+` or letter is never a number, so
/// `inf` and `nan` are identifiers here as in torch.
fn number_len(s: &[u8]) -> usize {
    let Some(&first) = s.first() else { return 0 };
    if first == b'-' || first == b'+' || first.is_ascii_alphabetic() {
        return 0;
    }
    let digits = |from: usize, hex: bool| {
        s.get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| {
                if hex {
                    b.is_ascii_hexdigit()
                } else {
                    b.is_ascii_digit()
                }
            })
            .count()
    };
    // strtod's hexadecimal form: 0x, hex digits with an optional point, an optional p
    // exponent; "0x" with no digit after reads as the number 0.
    let hex = s.len() > 2 && s[0] == b'0' && (s[1] | 0x20) == b'x';
    let (mut at, exp_char) = if hex { (2, b'p') } else { (0, b'e') };
    let int_digits = digits(at, hex);
    at += int_digits;
    let mut frac_digits = 0;
    if s.get(at) == Some(&b'.') {
        frac_digits = digits(at + 1, hex);
        if int_digits + frac_digits > 0 {
            at += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        // "0x" alone is the 0 before the x; a lone "." is no number.
        return if hex { 1 } else { 0 };
    }
    if s.get(at).map(|b| b | 0x20) == Some(exp_char) {
        let mut e = at + 1;
        if matches!(s.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let n = digits(e, false);
        if n > 0 {
            at = e + n;
        }
    }
    if s.get(at) == Some(&b'j') {
        at += 1;
    }
    at
}

/// The length of the string literal at the start of `s` (`isString`): one or three quotes of
/// one kind, a backslash skipping the next byte, no newline inside a single-quoted one; `None`
/// when it does not close.
fn string_len(s: &[u8]) -> Option<usize> {
    let quote = *s.first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let run = |at: usize, n: usize| {
        s.get(at..at + n)
            .is_some_and(|w| w.iter().all(|&b| b == quote))
    };
    let quote_len = if run(0, 3) { 3 } else { 1 };
    let mut end = quote_len;
    while end < s.len() && !run(end, quote_len) {
        if s[end] == b'\n' && quote_len != 3 {
            return None;
        }
        if s[end] == b'\\' {
            end += 1;
        }
        end += 1;
    }
    (end < s.len()).then_some(end + quote_len)
}

/// The longest spelling of [`SPELLINGS`] that starts `s`.
fn spelling_at(s: &[u8]) -> Option<&'static str> {
    SPELLINGS
        .iter()
        .filter(|sp| s.starts_with(sp.as_bytes()))
        .max_by_key(|sp| sp.len())
        .copied()
}

/// One raw match (`SharedParserData::match`): the kind and range of the next token, blank
/// lines and comments skipped; with `whitespace_token`, the blanks that start a line.
#[derive(Debug, Clone, Copy)]
enum Raw {
    /// Leading blanks of a line (`TK_WHITESPACE`), or of the end of the file
    /// (`TK_WHITESPACE_EOF`).
    Whitespace {
        start: usize,
        end: usize,
        at_eof: bool,
    },
    /// Any other token.
    Token(Token),
}

/// The lexer: tokens with INDENT, NEWLINE and DEDENT made as `Lexer::lex` makes them.
pub struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    nesting: i64,
    indents: Vec<usize>,
    queue: std::collections::VecDeque<Token>,
    lexed: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer over `src`, positioned at its first token.
    pub fn new(src: &'a [u8]) -> Result<Self, LexError> {
        let mut lexer = Lexer {
            src,
            pos: 0,
            nesting: 0,
            indents: Vec::new(),
            queue: std::collections::VecDeque::new(),
            lexed: 0,
        };
        // `Lexer::Lexer`: the first raw token is the initial indentation.
        let first = match lexer.raw(true)? {
            Raw::Whitespace { start, end, .. } => end - start,
            Raw::Token(_) => 0,
        };
        lexer.indents.push(first);
        Ok(lexer)
    }

    fn error(&self, offset: usize, reason: impl Into<String>) -> LexError {
        LexError {
            offset,
            reason: reason.into(),
        }
    }

    fn raw(&mut self, whitespace_token: bool) -> Result<Raw, LexError> {
        let src = self.src;
        let mut pos = self.pos;
        let mut whitespace_token = whitespace_token;
        let mut start = pos;
        loop {
            start = if whitespace_token { start } else { pos };
            while pos < src.len() && is_blank(src[pos]) {
                pos += 1;
            }
            let Some(&b) = src.get(pos) else { break };
            if b == b'#' && !src[pos..].starts_with(b"# type:") {
                while pos < src.len() && src[pos] != b'\n' {
                    pos += 1;
                }
                continue;
            }
            if b == b'\\' && src.get(pos + 1) == Some(&b'\n') && !whitespace_token {
                pos += 2;
                continue;
            }
            if b == b'\n' {
                pos += 1;
                // Inside brackets a newline is skipped; outside it makes the next line's
                // blanks a token.
                whitespace_token = self.nesting <= 0;
                start = pos;
                continue;
            }
            break;
        }
        if whitespace_token {
            self.pos = pos;
            return Ok(Raw::Whitespace {
                start,
                end: pos,
                at_eof: pos >= src.len(),
            });
        }
        let rest = &src[pos..];
        let token = |kind, len: usize| Token {
            kind,
            start: pos,
            end: pos + len,
        };
        let t = if rest.is_empty() {
            token(Kind::Eof, 0)
        } else if let n @ 1.. = number_len(rest) {
            token(Kind::Number, n)
        } else if let Some(n) = string_len(rest) {
            token(Kind::StringLit, n)
        } else {
            let ident = rest
                .iter()
                .enumerate()
                .take_while(|&(i, &b)| valid_ident(i, b))
                .count();
            match spelling_at(rest) {
                Some(sp) if sp.len() >= ident => token(Kind::Op(sp), sp.len()),
                _ if ident > 0 => token(Kind::Ident, ident),
                _ => {
                    return Err(self.error(
                        pos,
                        format!(
                            "expected a valid token but found {:?}",
                            char::from(rest[0]).escape_default().to_string()
                        ),
                    ))
                }
            }
        };
        self.pos = t.end;
        Ok(Raw::Token(t))
    }

    /// Fills the queue with the next token(s) (`Lexer::lex`).
    fn lex(&mut self) -> Result<(), LexError> {
        self.lexed += 1;
        if self.lexed > MAX_TOKENS {
            return Err(self.error(self.pos, format!("more than {MAX_TOKENS} tokens")));
        }
        match self.raw(false)? {
            Raw::Token(t) => {
                match t.kind {
                    Kind::Op("(" | "[" | "{") => self.nesting += 1,
                    Kind::Op(")" | "]" | "}") => self.nesting -= 1,
                    _ => {}
                }
                self.queue.push_back(t);
            }
            Raw::Whitespace { start, end, at_eof } => {
                let base = self.indents.first().copied().unwrap_or(0);
                let depth = if at_eof { base } else { end - start };
                let top = self.indents.last().copied().unwrap_or(0);
                let token = |kind| Token { kind, start, end };
                if depth > top {
                    self.indents.push(depth);
                    self.queue.push_back(token(Kind::Indent));
                } else if depth == top {
                    self.queue.push_back(token(Kind::Newline));
                } else {
                    self.queue.push_back(token(Kind::Newline));
                    while self.indents.last() != Some(&depth) {
                        self.indents.pop();
                        self.queue.push_back(token(Kind::Dedent));
                        if self.indents.is_empty() {
                            return Err(self.error(start, format!("invalid indent level {depth}")));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The current token.
    pub fn cur(&mut self) -> Result<Token, LexError> {
        if self.queue.is_empty() {
            self.lex()?;
        }
        self.queue
            .front()
            .copied()
            .ok_or_else(|| self.error(self.pos, "empty token queue"))
    }

    /// The token after the current one.
    pub fn lookahead(&mut self) -> Result<Token, LexError> {
        while self.queue.len() < 2 {
            self.lex()?;
        }
        self.queue
            .get(1)
            .copied()
            .ok_or_else(|| self.error(self.pos, "empty token queue"))
    }

    /// Returns the current token and moves past it.
    pub fn next_token(&mut self) -> Result<Token, LexError> {
        let t = self.cur()?;
        self.queue.pop_front();
        Ok(t)
    }

    /// The source text of a token.
    pub fn text(&self, t: &Token) -> &'a [u8] {
        self.src.get(t.start..t.end).unwrap_or_default()
    }
}

/// The value of a string literal token (`parseStringLiteral`): `\\`, `\'`, `\"`, a
/// backslash-newline, `\a \b \f \n \v \t` and three octal digits; `\x`, `\u`, `\U` and any
/// other escape are errors, as in torch.
pub fn string_value(literal: &[u8]) -> Result<Vec<u8>, String> {
    let quote = literal.first().copied().unwrap_or(b'"');
    let quote_len = if literal.len() >= 6 && literal[..3].iter().all(|&b| b == quote) {
        3
    } else {
        1
    };
    let inner = literal
        .get(quote_len..literal.len().saturating_sub(quote_len))
        .unwrap_or_default();
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let Some(&next) = inner.get(i + 1) else {
            return Err("a backslash ends the string".into());
        };
        let (value, used) = match next {
            b'\\' | b'\'' | b'"' | b'\n' => (next, 2),
            b'a' => (0x07, 2),
            b'b' => (0x08, 2),
            b'f' => (0x0c, 2),
            b'n' => (b'\n', 2),
            b'v' => (0x0b, 2),
            b't' => (b'\t', 2),
            b'x' => return Err("unsupported hex specifier".into()),
            b'u' | b'U' => return Err("unsupported unicode specifier".into()),
            _ => {
                // parseOctal: three digits 0-7 after the backslash, and then at least one
                // more byte (`pos + 3 >= str.size()` refuses it), value below 256.
                let digits = inner.get(i + 1..i + 4).filter(|_| i + 3 < inner.len());
                match digits {
                    Some(d) if d.iter().all(|c| (b'0'..=b'7').contains(c)) => {
                        let v = d.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                        match u8::try_from(v) {
                            Ok(v) => (v, 4),
                            Err(_) => return Err("ill formed octal specifier".into()),
                        }
                    }
                    _ => return Err("ill formed octal specifier".into()),
                }
            }
        };
        out.push(value);
        i += used;
    }
    Ok(out)
}
