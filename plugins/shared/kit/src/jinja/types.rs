//! What the rule answers (a [`Judgement`] of [`Flag`]s), and its bounds: shared by the
//! tokenizer pass, the walk and the root, and importing none of them.

/// Templates larger than this (bytes) are not parsed.
pub const MAX_TEMPLATE: usize = 256 << 10;
/// Tokens in one template.
pub const MAX_TOKENS: usize = 65_536;
/// Tokens inside one `{{ ... }}` or `{% ... %}`.
pub const MAX_BLOCK_TOKENS: usize = 1_024;
/// AST nodes walked.
pub const MAX_NODES: usize = 131_072;
/// How deep the walk follows the AST (bounded already by the tokens above; a backstop).
pub(super) const MAX_DEPTH: usize = 1_500;
/// Findings listed per template; the rest are counted.
pub const MAX_FLAGS: usize = 32;
/// Findings kept before sorting; the rest are counted.
pub(super) const MAX_RAW_FLAGS: usize = 4_096;
/// Passes over the bindings before the judging pass.
pub(super) const MAX_BINDING_PASSES: usize = 16;

pub use crate::Severity;

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

    pub(super) fn whole(severity: Severity, reason: String) -> Self {
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

pub(super) fn push(j: &mut Judgement, severity: Severity, place: String, reason: String) {
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
