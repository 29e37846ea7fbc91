//! Record names as every zip reader here decodes and compares them.

/// Why a name's bytes do not decode one way for every reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// Not ASCII, and flag bit 11 (UTF-8) is not set: readers decode it as CP437 or as UTF-8.
    NotAsciiWithoutUtf8Flag,
    /// Flagged UTF-8 (or ASCII) but not valid UTF-8.
    NotUtf8,
}

/// The name `raw` under general-purpose `flags`: ASCII, or UTF-8 with flag bit 11 set.
pub fn decode(raw: &[u8], flags: u16) -> Result<&str, NameError> {
    if flags & super::FLAG_UTF8 == 0 && !raw.is_ascii() {
        return Err(NameError::NotAsciiWithoutUtf8Flag);
    }
    std::str::from_utf8(raw).map_err(|_| NameError::NotUtf8)
}

/// A name as miniz compares it (torch's and NumPy's C readers): `MZ_TOLOWER` lowers ASCII
/// `A`-`Z` and leaves every other byte.
pub fn fold(name: &str) -> String {
    name.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decode_one_way_or_are_refused() {
        assert_eq!(decode(b"a/b.pkl", 0), Ok("a/b.pkl"));
        assert_eq!(
            decode("é".as_bytes(), 0),
            Err(NameError::NotAsciiWithoutUtf8Flag)
        );
        assert_eq!(decode("é".as_bytes(), 1 << 11), Ok("é"));
        assert_eq!(decode(b"\xff", 1 << 11), Err(NameError::NotUtf8));
        assert_eq!(fold("Archive/DATA.pkl"), "archive/data.pkl");
        assert_eq!(fold("É"), "É", "only ASCII letters fold");
    }
}
