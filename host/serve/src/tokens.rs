//! Bearer tokens (`--tokens FILE`): one token a line, `#` starts a comment line, blank lines
//! skipped. A request's `Authorization: Bearer <token>` (what `huggingface_hub` sends for
//! `HF_TOKEN`, `build_hf_headers` in `utils/_headers.py` 2.5.0) is hashed and compared with
//! every token's hash in full, without stopping at the first difference or the first match:
//! the time taken says nothing of how much of a token was right, nor of its length.

use sha2::{Digest, Sha256};
use std::path::Path;

/// The tokens a server accepts, as their sha256s.
#[derive(Debug, Clone)]
pub struct Tokens {
    hashes: Vec<[u8; 32]>,
}

/// What a request's credentials are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credentials {
    /// A token the file lists.
    Valid,
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token the file does not list.
    Invalid,
}

impl Tokens {
    /// Reads a tokens file; refuses one with no token (it would lock every client out).
    pub fn load(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let tokens = Tokens::parse(&text);
        if tokens.hashes.is_empty() {
            return Err(format!("{}: holds no token", path.display()));
        }
        Ok(tokens)
    }

    /// The tokens of a file's text.
    pub fn parse(text: &str) -> Tokens {
        let hashes = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|t| Sha256::digest(t.as_bytes()).into())
            .collect();
        Tokens { hashes }
    }

    /// Checks an `Authorization` header's value.
    pub fn check(&self, authorization: Option<&[u8]>) -> Credentials {
        let Some(token) = authorization.and_then(bearer) else {
            return Credentials::Missing;
        };
        let given: [u8; 32] = Sha256::digest(token).into();
        let mut matched = 0u8;
        for h in &self.hashes {
            let mut diff = 0u8;
            for (a, b) in h.iter().zip(given.iter()) {
                diff |= a ^ b;
            }
            matched |= u8::from(diff == 0);
        }
        if matched == 1 {
            Credentials::Valid
        } else {
            Credentials::Invalid
        }
    }
}

/// The token of `Bearer <token>` (the scheme's case ignored).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked() {
        let t = Tokens::parse("# team tokens\nhf_first\n\n  hf_second  \n");
        assert_eq!(t.check(Some(b"Bearer hf_first")), Credentials::Valid);
        assert_eq!(t.check(Some(b"bearer hf_second")), Credentials::Valid);
        assert_eq!(t.check(Some(b"Bearer hf_firs")), Credentials::Invalid);
        assert_eq!(t.check(Some(b"Bearer hf_first2")), Credentials::Invalid);
        assert_eq!(t.check(Some(b"Bearer # team tokens")), Credentials::Invalid);
        assert_eq!(t.check(Some(b"Basic aGY6eA==")), Credentials::Missing);
        assert_eq!(t.check(Some(b"Bearer ")), Credentials::Missing);
        assert_eq!(t.check(None), Credentials::Missing);
    }
}
