//! Findings, bounded: the first [`MAX_PER_KIND`] of each kind are kept with their offsets, and
//! the rest are counted exactly, so that a flood of one-byte opcodes cannot grow the report
//! past a constant while the report still says how many there were.

pub use super::values::Kind;
use super::values::{Grammar, OpcodeFinding, Severity};
use std::collections::HashSet;

/// Findings kept of each kind; the rest are counted.
pub const MAX_PER_KIND: usize = 16;

/// Longest text of a pickle (a module or global name) quoted in a finding.
pub const MAX_QUOTE: usize = 200;

#[derive(Debug, Default, Clone)]
struct Tally {
    listed: usize,
    /// Not listed: (count, worst severity, first offset and opcode).
    more: u64,
    worst: Option<Severity>,
    first: Option<(u64, &'static str)>,
    /// Listed keys (global names), so that a repeated reference is counted, not listed again.
    keys: HashSet<String>,
    repeats: u64,
}

/// The findings of one scan (every pickle of a stream, every framing replay).
#[derive(Debug, Default)]
pub struct Findings {
    list: Vec<OpcodeFinding>,
    tallies: Vec<Tally>,
    grammar: Grammar,
}

fn index(kind: Kind) -> usize {
    Kind::ALL
        .iter()
        .position(|&k| k == kind)
        .unwrap_or(Kind::ALL.len() - 1)
}

impl Findings {
    /// An empty set.
    pub fn new() -> Self {
        Self::for_grammar(Grammar::V1)
    }

    /// An empty set for a run of `grammar` (its summaries name it).
    pub fn for_grammar(grammar: Grammar) -> Self {
        Findings {
            list: Vec::new(),
            tallies: vec![Tally::default(); Kind::ALL.len()],
            grammar,
        }
    }

    /// Records a finding; `reason` is only formatted when it is listed. `key`, when given,
    /// makes repeats of the same key within the kind counted rather than listed again.
    pub fn add(
        &mut self,
        kind: Kind,
        severity: Severity,
        offset: u64,
        opcode: &'static str,
        key: Option<&str>,
        reason: impl FnOnce() -> String,
    ) {
        let tally = &mut self.tallies[index(kind)];
        if let Some(key) = key {
            if tally.keys.contains(key) {
                tally.repeats += 1;
                return;
            }
        }
        if tally.listed < MAX_PER_KIND {
            tally.listed += 1;
            if let Some(key) = key {
                tally.keys.insert(key.to_owned());
            }
            self.list.push(OpcodeFinding {
                severity,
                offset,
                opcode,
                reason: reason(),
                kind,
            });
        } else {
            tally.more += 1;
            tally.worst = tally.worst.max(Some(severity));
            tally.first.get_or_insert((offset, opcode));
        }
    }

    /// Counts one more reference to a key already listed (without looking it up).
    pub fn repeat(&mut self, kind: Kind) {
        self.tallies[index(kind)].repeats += 1;
    }

    /// The findings in pickle order, each kind's overflow summarised in one finding at the
    /// first offset it left out.
    pub fn finish(mut self) -> Vec<OpcodeFinding> {
        for (kind, tally) in Kind::ALL.iter().zip(&self.tallies) {
            if let (Some(worst), Some((offset, opcode))) = (tally.worst, tally.first) {
                let repeats = if tally.repeats > 0 {
                    format!(
                        " (besides {} repeated references to the ones listed)",
                        group(tally.repeats)
                    )
                } else {
                    String::new()
                };
                self.list.push(OpcodeFinding {
                    severity: worst,
                    offset,
                    opcode,
                    reason: format!(
                        "… and {} more {} from here on, not listed{repeats}",
                        group(tally.more),
                        kind.plural(self.grammar.name())
                    ),
                    kind: *kind,
                });
            }
        }
        self.list.sort_by_key(|f| f.offset);
        self.list
    }
}

/// `9999990` as `9,999,990`: the kit's `thousands`, as every reader writes counts.
pub use socair_plugin_kit::bounded::thousands as group;

/// Text from a pickle, quoted in a finding at most [`MAX_QUOTE`] bytes long.
pub fn quote(text: &str) -> String {
    if text.len() <= MAX_QUOTE {
        return text.to_owned();
    }
    let mut cut = MAX_QUOTE;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &text[..cut], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floods_are_counted_not_listed() {
        let mut f = Findings::new();
        for i in 0..10_000_000u64 {
            f.add(Kind::Call, Severity::Lead, i, "REDUCE", None, || {
                format!("call {i}")
            });
        }
        f.add(
            Kind::DangerousGlobal,
            Severity::Fail,
            7,
            "GLOBAL",
            Some("os.system"),
            || "global os.system".into(),
        );
        f.add(
            Kind::DangerousGlobal,
            Severity::Fail,
            9,
            "GLOBAL",
            Some("os.system"),
            || "global os.system".into(),
        );
        let list = f.finish();
        assert_eq!(list.len(), MAX_PER_KIND + 2);
        let last = list.iter().find(|x| x.reason.starts_with('…')).unwrap();
        assert_eq!(
            last.reason,
            "… and 9,999,984 more calls outside socair-wo/1 from here on, not listed"
        );
        assert_eq!(last.offset, MAX_PER_KIND as u64);
        assert_eq!(
            list.iter()
                .filter(|x| x.reason == "global os.system")
                .count(),
            1
        );
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(999), "999");
    }
}
