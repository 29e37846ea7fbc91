//! tiktoken BPE vocabularies: Llama 3's `original/tokenizer.model`, OpenAI's `*.tiktoken`
//! files. Text, one `<base64 token> <rank>` pair a line, which tiktoken reads as data
//! (`tiktoken/load.py` at 0.14.0: `load_tiktoken_bpe` takes each non-empty line of
//! `contents.splitlines()`, `token, rank = line.split()`, and keeps
//! `base64.b64decode(token): int(rank)`; `dump_tiktoken_bpe` writes `b64encode(token) + b" " +
//! str(rank) + b"\n"`; transformers' `TikTokenConverter` loads Llama 3's file so).
//!
//! Read more strictly than that comprehension: every non-empty line must be exactly two
//! fields, the token in the standard base64 alphabet with its padding (`b64decode` would
//! silently drop other characters) and the rank ASCII digits (`int` would take a sign or
//! underscores); the ranks need not be in order.

/// Why a text is not a tiktoken vocabulary: the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAVocabulary {
    /// The line.
    pub line: usize,
    /// What.
    pub what: &'static str,
}

impl std::fmt::Display for NotAVocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

/// Whether `s` is standard base64 with its padding, as `b64decode` decodes it.
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return false;
    }
    let pad = b.iter().rev().take_while(|&&c| c == b'=').count();
    pad <= 2
        && b[..b.len() - pad]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}

/// The number of tokens of `text`, read as a tiktoken vocabulary.
pub fn read(text: &str) -> Result<u64, NotAVocabulary> {
    let mut tokens = 0u64;
    // `bytes.splitlines` also splits at a lone \r, which dump_tiktoken_bpe never writes: such
    // a line fails the two fields below, a LEAD rather than a guess.
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let err = |what| NotAVocabulary { line: i + 1, what };
        let mut fields = line.split(' ');
        let (Some(token), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(err(
                "not two fields, a token and its rank, split by one space",
            ));
        };
        if !is_base64(token) {
            return Err(err("a token that is not standard base64"));
        }
        if rank.is_empty() || !rank.bytes().all(|c| c.is_ascii_digit()) {
            return Err(err("a rank that is not a decimal number"));
        }
        tokens += 1;
    }
    if tokens == 0 {
        return Err(NotAVocabulary {
            line: 1,
            what: "no tokens",
        });
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabularies_and_other_text() {
        // The first lines of Llama 3's original/tokenizer.model and of cl100k_base.tiktoken.
        assert_eq!(read("IQ== 0\nIg== 1\nIw== 2\n"), Ok(3));
        assert_eq!(read("IQ== 0\r\nIg== 1\r\n"), Ok(2));
        for (text, line) in [
            ("IQ== 0\nhello world\n", 2),
            ("IQ== 0\nIQ 1\n", 2),
            ("IQ== -1\n", 1),
            ("IQ==  1\n", 1),
            ("IQ== 1 2\n", 1),
            ("I!== 1\n", 1),
            ("", 1),
        ] {
            assert_eq!(read(text).map_err(|e| e.line), Err(line), "{text:?}");
        }
    }
}
