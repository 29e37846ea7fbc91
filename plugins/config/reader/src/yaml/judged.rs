//! What the judgement of one YAML file found ([`Judged`]): a leaf the walk over the events
//! fills and the file's row is made from.

use socair_plugin_kit::model::Findings;

/// Notes (data-only Python tags) listed in a row; the rest are counted.
const NOTES_LISTED: usize = 32;

/// What the judgement of one YAML file found.
#[derive(Debug, Default)]
pub struct Judged {
    /// FAILs and LEADs, bounded.
    pub findings: Findings,
    /// Facts worth a note (a data-only Python tag), each `(place, reason)`, bounded.
    pub notes: Vec<(String, String)>,
    /// Notes past the listed ones.
    pub notes_more: u64,
    /// Documents in the stream.
    pub documents: u64,
    /// Nodes (scalars, sequences, mappings) parsed.
    pub nodes: u64,
    /// Aliases parsed.
    pub aliases: u64,
    /// The largest expanded size of a document (every alias followed), saturating.
    pub expanded: u64,
    /// The encoding the bytes were decoded with.
    pub encoding: &'static str,
    /// Why the file was not read at all, when it was not.
    pub unread: Option<String>,
}

impl Judged {
    /// Whether another note is listed.
    pub(super) fn notes_listed(&self) -> bool {
        self.notes.len() < NOTES_LISTED
    }

    pub(super) fn note(&mut self, place: String, reason: String) {
        if self.notes.len() < NOTES_LISTED {
            self.notes.push((place, reason));
        } else {
            self.notes_more += 1;
        }
    }
}
