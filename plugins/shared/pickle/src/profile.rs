//! The library profiles of the pickle grammar (`plugins/shared/pickle/PROFILES.md`): rule sets a
//! caller opts into for pickles that are not torch checkpoints, each versioned like
//! `socair-wo`, and the NumPy arrays a run finds inside a pickle ([`PickledArray`]).
//!
//! A profile widens only what the machine accepts as data: a global a profile lists is judged
//! before the dangerous tables, exact pair by exact pair, and only with the argument shapes
//! its library's own reducer writes; a code-running or I/O global stays FAIL whatever the
//! profile. A plugin runs a profile only when the host asks for its rule set (`ReadOptions.
//! rules`), except `socair-data/1`, which every plugin that meets a pickle outside a torch
//! checkpoint applies to it.

/// Which library profile judges a pickle that is not a torch checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum Profile {
    /// None: the pickle is judged by `socair-wo` alone (a torch checkpoint's pickles).
    #[default]
    Torch,
    /// `socair-data/1`: pure data (no global, or only the data constructors of
    /// `globals::profiles`' list, NumPy's numeric arrays and dtypes included), in any
    /// protocol. The default for a pickle outside a torch checkpoint.
    Data,
    /// `socair-sklearn/1`: `socair-data/1` plus the classes scikit-learn, SciPy sparse, NumPy,
    /// and XGBoost's and LightGBM's sklearn wrappers pickle, with the state shapes their
    /// reducers write. Opt-in (`socair scan --profile sklearn`, or a pinned rule set).
    Sklearn,
}

impl Profile {
    /// The rule set of `socair-data`.
    pub const DATA_RULE_SET: &'static str = "socair-data";
    /// The rule set of `socair-sklearn`.
    pub const SKLEARN_RULE_SET: &'static str = "socair-sklearn";

    /// `socair-data/1`, `socair-sklearn/1`, as rows name the profile that judged a pickle;
    /// `None` for [`Profile::Torch`].
    pub fn name(self) -> Option<&'static str> {
        match self {
            Profile::Torch => None,
            Profile::Data => Some("socair-data/1"),
            Profile::Sklearn => Some("socair-sklearn/1"),
        }
    }

    /// The profile the host asked for in `rules` (`(name, version)` pairs), for a pickle
    /// outside a torch checkpoint: `socair-sklearn` at version 1 when asked, else
    /// `socair-data/1`. A version the machine does not implement falls back to `socair-data/1`
    /// (the caller says so where it reports the rule set).
    pub fn asked(rules: &[(&str, &str)]) -> Profile {
        if rules
            .iter()
            .any(|(n, v)| *n == Profile::SKLEARN_RULE_SET && *v == "1")
        {
            Profile::Sklearn
        } else {
            Profile::Data
        }
    }

    /// Whether this profile accepts what `socair-data/1` accepts.
    pub fn data(self) -> bool {
        self >= Profile::Data
    }
}

/// A NumPy array the pickle builds, as a run models it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickledArray {
    /// Its path in the pickled object: dict keys, list and tuple indices and attribute names
    /// (an object's BUILD state), joined by dots (`steps.1.coef_`); `""` for the pickle's value
    /// itself.
    pub path: String,
    /// NumPy's `dtype.str` (`<f8`, `|u1`, `<M8[ns]`).
    pub descr: String,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// Whether its bytes are in Fortran order.
    pub fortran_order: bool,
    /// Where its raw bytes lie in the `data` given to [`crate::pickle::run`].
    pub bytes: std::ops::Range<usize>,
}

/// A NumPy array the pickle builds whose bytes do not lie in the data as they are (below
/// protocol 3, `array_reduce`'s data is pickled as `_codecs.encode(text, 'latin1')`, or as a
/// latin-1 `str` by Python 2): the bytes NumPy holds after loading, decoded by the model
/// (`numpy.core.multiarray._reconstruct` then `ndarray.__setstate__` copies exactly them).
/// Their total is bounded by the pickle's size (one byte per character of text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedArray {
    /// Its path, as [`PickledArray::path`].
    pub path: String,
    /// NumPy's `dtype.str`.
    pub descr: String,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// Whether its bytes are in Fortran order.
    pub fortran_order: bool,
    /// Its bytes, in the order `fortran_order` says.
    pub bytes: std::rc::Rc<[u8]>,
    /// Why they are not a range of the data (for a reader that does not take decoded bytes).
    pub why: String,
}
