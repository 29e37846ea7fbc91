//! Bounds on what one read reports, whatever the file's shape: the first findings of each
//! kind are listed and the rest counted, and only so many tensors are described for a file of
//! a given size.
//!
//! The same bounds for every first-party reader (GGUF, safetensors, ONNX), so a report's
//! "… and N more" reads the same whichever reader wrote it.

/// Findings of one kind listed in a row; the rest are counted in one final finding.
pub const FINDINGS_PER_KIND: usize = 100;

/// Findings listed in a row whose reader does not sort them by kind
/// ([`crate::model::Findings`]); the rest are counted in one final finding.
pub const FINDINGS_PER_ROW: usize = 256;

/// Unread tensors of one kind listed; the rest are counted in one final entry.
pub const UNREAD_PER_KIND: usize = 1_000;

/// Tensors described for a file of `file_len` bytes: 16,384, plus one per 256 bytes.
///
/// A descriptor costs the host about a kilobyte by the time it is hashed and written to a
/// manifest, and every reader's smallest tensor entry (a zero-size tensor) takes a few dozen
/// bytes of the file: without a budget, a file of nothing but empty tensors would cost the
/// host some 30 times its size. Real tensors hold data, so a real file never reaches it.
pub fn described_limit(file_len: u64) -> u64 {
    16_384 + file_len / 256
}

/// Longest name written into a place or a reason: a name is repeated in the place of every
/// finding under it, so a long one is cut (the tensor's own name is never cut).
pub const NAME_IN_PLACE: usize = 128;

/// `name` for a place: itself, or its first [`NAME_IN_PLACE`] bytes (at a character boundary)
/// and how long it was.
pub fn short(name: &str) -> String {
    if name.len() <= NAME_IN_PLACE {
        return name.to_owned();
    }
    let mut end = NAME_IN_PLACE;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes)", &name[..end], name.len())
}

/// `n` with thousands separators: `999,990`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Keeps the first `limit` items of each kind and counts the rest, by kind, in the order the
/// kinds first appeared.
#[derive(Debug)]
pub struct Listing<T> {
    limit: usize,
    items: Vec<T>,
    kinds: Vec<(&'static str, u64)>,
}

impl<T> Listing<T> {
    /// An empty listing keeping `limit` items of each kind.
    pub fn new(limit: usize) -> Self {
        Listing {
            limit,
            items: Vec::new(),
            kinds: Vec::new(),
        }
    }

    /// Adds one item of `kind`; `make` runs only when it is kept, so an item past the limit
    /// costs a count and nothing else.
    pub fn push(&mut self, kind: &'static str, make: impl FnOnce() -> T) {
        if self.count(kind) <= self.limit as u64 {
            self.items.push(make());
        }
    }

    /// Counts one more item of `kind`; returns how many there are now.
    fn count(&mut self, kind: &'static str) -> u64 {
        match self.kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.kinds.push((kind, 1));
                1
            }
        }
    }

    /// Whether the next item of `kind` would be kept.
    pub fn would_keep(&self, kind: &'static str) -> bool {
        self.kinds
            .iter()
            .find(|(k, _)| *k == kind)
            .is_none_or(|(_, n)| *n < self.limit as u64)
    }

    /// Counts one item of `kind` and keeps `item` (built only when [`Listing::would_keep`]
    /// said so) if it is one of the first.
    pub fn add(&mut self, kind: &'static str, item: Option<T>) {
        if self.count(kind) <= self.limit as u64 {
            self.items.extend(item);
        }
    }

    /// How many items were pushed, kept or not.
    pub fn total(&self) -> u64 {
        self.kinds.iter().map(|(_, n)| n).sum()
    }

    /// The kept items, and for each kind with more than the limit, how many were not kept.
    pub fn finish(self) -> (Vec<T>, Vec<(&'static str, u64)>) {
        let limit = self.limit as u64;
        let over = self
            .kinds
            .into_iter()
            .filter(|(_, n)| *n > limit)
            .map(|(k, n)| (k, n - limit))
            .collect();
        (self.items, over)
    }
}

/// The sentence that stands for the items not listed.
pub fn and_more(count: u64, kind: &str, limit: usize) -> String {
    format!(
        "… and {} more {kind} (only the first {} of each kind are listed)",
        thousands(count),
        thousands(limit as u64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_of_each_kind_and_counts_the_rest() {
        let mut l = Listing::new(2);
        let mut made = 0;
        for i in 0..10 {
            l.push("a", || {
                made += 1;
                i
            });
        }
        l.push("b", || 100);
        assert_eq!(l.total(), 11);
        let (items, over) = l.finish();
        assert_eq!(items, vec![0, 1, 100]);
        assert_eq!(made, 2);
        assert_eq!(over, vec![("a", 8)]);
        assert_eq!(thousands(999_990), "999,990");
        assert_eq!(thousands(12), "12");
        assert_eq!(thousands(1_000), "1,000");
        assert!(and_more(999_990, "findings", 100).contains("999,990 more findings"));
    }
}
