//! The versions of the `socair-wo` grammar: which a run models, and how reports name it.
//! Apart from everything that depends on the version.

/// The version of the `socair-wo` grammar a run models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum Grammar {
    /// `socair-wo/1`: what torch.save writes under Python 3. The default, so that a caller
    /// that does not choose keeps the verdicts it had before `/2` existed.
    #[default]
    V1,
    /// `socair-wo/2`: `/1` plus what Python 2's pickler wrote for torch 0.1 to 1.4 (`str` as
    /// SHORT_BINSTRING, BINSTRING or STRING, numbers as INT, LONG or LONG4, OrderedDicts as
    /// Python 2.7's `__reduce__` writes them), decoded as torch.load decodes them
    /// (`encoding="utf-8"`, `errors="strict"`).
    V2,
    /// `socair-wo/3`: `/2` plus the rest of what torch 2.15's weights-only unpickler loads
    /// (`torch/_weights_only_unpickler.py` `_get_allowed_globals`: sparse, quantized and meta
    /// tensors, `torch.Size`, `torch.device`, dtypes, layouts, qschemes, `Counter`, `set`,
    /// `complex`, `bytearray`, the pre-0.4 `_rebuild_tensor` and `backward_hooks` of `None`,
    /// tensors with Python attributes), `pathlib` paths and the
    /// `torch.distributed.checkpoint` metadata dataclasses, Python 2 `str`s of plain pickles
    /// read as their loaders read them, and torch zips that torch's own writer options produce
    /// (no CRC-32, deflated records, a comment) judged as torch reads them.
    V3,
}

impl Grammar {
    /// Every version, oldest first.
    pub const ALL: [Grammar; 3] = [Grammar::V1, Grammar::V2, Grammar::V3];
    /// The newest version.
    pub const NEWEST: Grammar = Grammar::V3;
    /// The rule set's name.
    pub const RULE_SET: &'static str = "socair-wo";

    /// The version as a rule-set version string (`"1"`).
    pub fn version(self) -> &'static str {
        match self {
            Grammar::V1 => "1",
            Grammar::V2 => "2",
            Grammar::V3 => "3",
        }
    }

    /// `socair-wo/N`, as findings name it.
    pub fn name(self) -> &'static str {
        match self {
            Grammar::V1 => "socair-wo/1",
            Grammar::V2 => "socair-wo/2",
            Grammar::V3 => "socair-wo/3",
        }
    }

    /// The version a rule-set version string names.
    pub fn from_version(v: &str) -> Option<Grammar> {
        Grammar::ALL.into_iter().find(|g| g.version() == v)
    }
}
