//! The template's text: line and column of a byte offset, and one pass of minijinja's
//! tokenizer within the token bounds that decodes every string literal as jinja2 does and
//! finds transformers' `{% generation %}` tags.

use super::types::{Judgement, Severity, MAX_BLOCK_TOKENS, MAX_TOKENS};
use minijinja::machinery::{tokenize, Token};
use minijinja::syntax::SyntaxConfig;

/// Byte offsets to `line L column C`.
pub(super) struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { text, starts }
    }

    pub(super) fn place(&self, offset: usize) -> String {
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
pub(super) struct StrTok {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) value: String,
}

pub(super) struct Scanned {
    pub(super) strings: Vec<StrTok>,
    /// The source with transformers' `{% generation %}` tags read as `{% if true %}`, byte
    /// for byte the same length.
    pub(super) rewritten: Option<String>,
    /// The offset of a string literal with a `\N{...}` escape.
    pub(super) named_escape: Option<usize>,
}

/// Tokenizes `src` once, within the token bounds: the string literals decoded, the
/// `generation` tags found.
pub(super) fn scan_tokens(src: &str) -> Result<Scanned, Judgement> {
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
pub(super) fn decode_python_string(raw: &str) -> Option<String> {
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
