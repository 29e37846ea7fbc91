//! The `Range` header (RFC 9110 section 14): one byte range, which is what `huggingface_hub`
//! 2.5.0 sends to resume a download (`http_get` in `file_download.py`: `bytes={resume_size}-`,
//! through `_adjust_range_header`). Several ranges, or a header socair does not read, are
//! ignored and the whole file is sent (the RFC lets a server ignore `Range`); a range that
//! starts past the end is answered 416.

/// What a `Range` header asks of a file of `size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// The whole file (no header, or one that is ignored).
    All,
    /// Bytes `start..=end` (206).
    Part {
        /// First byte.
        start: u64,
        /// Last byte, inclusive.
        end: u64,
    },
    /// Nothing of the file can satisfy it (416).
    Unsatisfiable,
}

/// Reads a `Range` header for a file of `size` bytes.
pub fn wanted(header: Option<&str>, size: u64) -> Wanted {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return Wanted::All;
    };
    if spec.contains(',') {
        return Wanted::All;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Wanted::All;
    };
    let number = |s: &str| -> Option<u64> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    match (first.trim().is_empty(), number(first), number(last)) {
        // `bytes=-N`: the last N bytes.
        (true, _, Some(n)) => {
            if n == 0 || size == 0 {
                Wanted::Unsatisfiable
            } else {
                Wanted::Part {
                    start: size.saturating_sub(n),
                    end: size - 1,
                }
            }
        }
        (false, Some(start), None) if last.trim().is_empty() => {
            if start >= size {
                Wanted::Unsatisfiable
            } else {
                Wanted::Part {
                    start,
                    end: size - 1,
                }
            }
        }
        (false, Some(start), Some(end)) if start <= end => {
            if start >= size {
                Wanted::Unsatisfiable
            } else {
                Wanted::Part {
                    start,
                    end: end.min(size - 1),
                }
            }
        }
        _ => Wanted::All,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_ranges() {
        assert_eq!(wanted(None, 10), Wanted::All);
        assert_eq!(
            wanted(Some("bytes=0-"), 10),
            Wanted::Part { start: 0, end: 9 }
        );
        assert_eq!(
            wanted(Some("bytes=4-"), 10),
            Wanted::Part { start: 4, end: 9 }
        );
        assert_eq!(
            wanted(Some("bytes=2-5"), 10),
            Wanted::Part { start: 2, end: 5 }
        );
        assert_eq!(
            wanted(Some("bytes=2-500"), 10),
            Wanted::Part { start: 2, end: 9 }
        );
        assert_eq!(
            wanted(Some("bytes=-3"), 10),
            Wanted::Part { start: 7, end: 9 }
        );
        assert_eq!(
            wanted(Some("bytes=-30"), 10),
            Wanted::Part { start: 0, end: 9 }
        );
    }

    #[test]
    fn past_the_end_is_unsatisfiable() {
        assert_eq!(wanted(Some("bytes=10-"), 10), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=10-20"), 10), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=0-"), 0), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=-0"), 10), Wanted::Unsatisfiable);
    }

    #[test]
    fn what_is_not_read_is_ignored() {
        for h in [
            "bytes=5-2",
            "bytes=0-1,4-5",
            "items=0-1",
            "bytes=a-b",
            "bytes=-",
            "bytes=+1-2",
            "bytes=99999999999999999999999-",
            "bytes=1",
        ] {
            assert_eq!(wanted(Some(h), 10), Wanted::All, "{h}");
        }
    }
}
