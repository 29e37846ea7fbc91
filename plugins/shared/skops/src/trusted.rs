//! The types skops 0.16 trusts by default, per node type: what each node class passes as the
//! `default` of `Node._get_trusted` (skops 0.16 `_audit.py`), read from `trusted.txt`, which
//! `make_trusted.py` writes from the installed skops (its lists come from the installed
//! scikit-learn, NumPy and SciPy, so they are pinned with them).
//!
//! `check_type` (skops 0.16 `_audit.py`) tests `module_name + "." + type_name in trusted`,
//! where `trusted` is the node's list: the names passed to `load(trusted=…)` (none, for what
//! this module computes) plus the node's defaults. One exception widens a subtree's lists:
//! `LossNode` builds its children with `trusted=` its allowed losses (skops 0.16 `_sklearn.py`
//! `LossNode.__init__` passes `trusted=self.trusted` to `ReduceNode.__init__`, which builds
//! `attrs`, `args` and the constructor's `TypeNode` with it), so every node under a loss also
//! trusts the losses ([`Trust::losses`]).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// The lists, section by section (`[NAME]` then one type a line).
const TRUSTED_TXT: &str = include_str!("trusted.txt");

/// A list of `trusted.txt` (one section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    PrimitiveTypeNames,
    ContainerTypeNames,
    SklearnEstimatorTypeNames,
    SklearnInternalTypeNames,
    ScipyUfuncTypeNames,
    NumpyUfuncTypeNames,
    NumpyRandomBitGeneratorTypeNames,
    NumpyDtypeTypeNames,
    AllowedLosses,
    DictNode,
    DefaultDictNode,
    ListNode,
    SetNode,
    TupleNode,
    BytesNode,
    BytearrayNode,
    SliceNode,
    NdArrayNode,
    MaskedArrayNode,
    RandomStateNode,
    RandomGeneratorNode,
    SparseMatrixNode,
}

impl Section {
    /// The section's name in `trusted.txt`.
    fn section(self) -> &'static str {
        match self {
            Section::PrimitiveTypeNames => "PRIMITIVE_TYPE_NAMES",
            Section::ContainerTypeNames => "CONTAINER_TYPE_NAMES",
            Section::SklearnEstimatorTypeNames => "SKLEARN_ESTIMATOR_TYPE_NAMES",
            Section::SklearnInternalTypeNames => "SKLEARN_INTERNAL_TYPE_NAMES",
            Section::ScipyUfuncTypeNames => "SCIPY_UFUNC_TYPE_NAMES",
            Section::NumpyUfuncTypeNames => "NUMPY_UFUNC_TYPE_NAMES",
            Section::NumpyRandomBitGeneratorTypeNames => "NUMPY_RANDOM_BIT_GENERATOR_TYPE_NAMES",
            Section::NumpyDtypeTypeNames => "NUMPY_DTYPE_TYPE_NAMES",
            Section::AllowedLosses => "ALLOWED_LOSSES",
            Section::DictNode => "NODE_DictNode",
            Section::DefaultDictNode => "NODE_DefaultDictNode",
            Section::ListNode => "NODE_ListNode",
            Section::SetNode => "NODE_SetNode",
            Section::TupleNode => "NODE_TupleNode",
            Section::BytesNode => "NODE_BytesNode",
            Section::BytearrayNode => "NODE_BytearrayNode",
            Section::SliceNode => "NODE_SliceNode",
            Section::NdArrayNode => "NODE_NdArrayNode",
            Section::MaskedArrayNode => "NODE_MaskedArrayNode",
            Section::RandomStateNode => "NODE_RandomStateNode",
            Section::RandomGeneratorNode => "NODE_RandomGeneratorNode",
            Section::SparseMatrixNode => "NODE_SparseMatrixNode",
        }
    }

    /// Whether `name` is on the list.
    pub fn contains(self, name: &str) -> bool {
        sections()
            .get(self.section())
            .is_some_and(|set| set.contains(name))
    }

    /// The list's entries.
    #[cfg(test)]
    pub fn entries(self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = sections()
            .get(self.section())
            .map(|set| set.iter().copied().collect())
            .unwrap_or_default();
        v.sort_unstable();
        v
    }
}

fn sections() -> &'static HashMap<&'static str, HashSet<&'static str>> {
    static SECTIONS: OnceLock<HashMap<&'static str, HashSet<&'static str>>> = OnceLock::new();
    SECTIONS.get_or_init(|| {
        let mut map: HashMap<&'static str, HashSet<&'static str>> = HashMap::new();
        let mut current: Option<&'static str> = None;
        for line in TRUSTED_TXT.lines() {
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                current = Some(name);
                map.entry(name).or_default();
            } else if let Some(name) = current {
                map.entry(name).or_default().insert(line);
            }
        }
        map
    })
}

/// A node's trusted list: its defaults, plus the allowed losses under a `LossNode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trust {
    pub defaults: &'static [Section],
    /// Built with `trusted=` the allowed losses (a `LossNode` or a node under one).
    pub losses: bool,
}

impl Trust {
    pub const fn new(defaults: &'static [Section], losses: bool) -> Trust {
        Trust { defaults, losses }
    }

    /// `check_type`: whether `name` (`module + "." + class`) is on the list.
    pub fn trusts(&self, name: &str) -> bool {
        self.defaults.iter().any(|l| l.contains(name))
            || (self.losses && Section::AllowedLosses.contains(name))
    }
}

/// The defaults of each node class (skops 0.16, the `_get_trusted(trusted, default)` call of
/// each `__init__`; `[]` where the class keeps `Node.__init__`'s empty default).
pub mod defaults {
    use super::Section::{self, *};

    /// `DictNode`: `[dict, "collections.OrderedDict"]` (`_general.py`).
    pub const DICT: &[Section] = &[DictNode];
    /// `DefaultDictNode`: `self.trusted = ["collections.defaultdict"]`, set outright: it
    /// ignores the `trusted` it is given (`_general.py`).
    pub const DEFAULT_DICT: &[Section] = &[DefaultDictNode];
    /// `ListNode`: `[list]`.
    pub const LIST: &[Section] = &[ListNode];
    /// `SetNode`: `[set]`.
    pub const SET: &[Section] = &[SetNode];
    /// `TupleNode`: `[tuple]`.
    pub const TUPLE: &[Section] = &[TupleNode];
    /// `BytesNode`: `[bytes]`.
    pub const BYTES: &[Section] = &[BytesNode];
    /// `BytearrayNode`: `[bytearray]` (set after `BytesNode.__init__`'s `[bytes]`).
    pub const BYTEARRAY: &[Section] = &[BytearrayNode];
    /// `SliceNode`: `[slice]` (its `get_unsafe_set` returns an empty set anyway).
    pub const SLICE: &[Section] = &[SliceNode];
    /// `FunctionNode` (protocols 1, 2): `SCIPY_UFUNC_TYPE_NAMES + NUMPY_UFUNC_TYPE_NAMES`.
    pub const FUNCTION: &[Section] = &[ScipyUfuncTypeNames, NumpyUfuncTypeNames];
    /// `FunctionNode` of protocol 0 (`old/_general_v0.py`): `SCIPY_UFUNC_TYPE_NAMES` alone.
    pub const FUNCTION_V0: &[Section] = &[ScipyUfuncTypeNames];
    /// `TypeNode`: `PRIMITIVE_TYPE_NAMES + CONTAINER_TYPE_NAMES + NUMPY_DTYPE_TYPE_NAMES`.
    pub const TYPE: &[Section] = &[PrimitiveTypeNames, ContainerTypeNames, NumpyDtypeTypeNames];
    /// `ObjectNode`: `SKLEARN_ESTIMATOR_TYPE_NAMES + SKLEARN_INTERNAL_TYPE_NAMES`.
    pub const OBJECT: &[Section] = &[SklearnEstimatorTypeNames, SklearnInternalTypeNames];
    /// `JsonNode`: `PRIMITIVE_TYPE_NAMES` (unused: it is always safe).
    pub const JSON: &[Section] = &[PrimitiveTypeNames];
    /// `NdArrayNode`: `[np.ndarray] + NUMPY_DTYPE_TYPE_NAMES` (`_numpy.py`).
    pub const NDARRAY: &[Section] = &[NdArrayNode, NumpyDtypeTypeNames];
    /// `MaskedArrayNode`: `[np.ma.MaskedArray]`.
    pub const MASKED_ARRAY: &[Section] = &[MaskedArrayNode];
    /// `RandomStateNode`: `[np.random.RandomState]`.
    pub const RANDOM_STATE: &[Section] = &[RandomStateNode];
    /// `RandomGeneratorNode` (every protocol): `[np.random.Generator]`.
    pub const RANDOM_GENERATOR: &[Section] = &[RandomGeneratorNode];
    /// `SparseMatrixNode`: `[spmatrix, sparray]` (`_scipy.py`): the base classes, which no
    /// file names, so a real sparse matrix (`scipy.sparse._csr.csr_matrix`) is untrusted.
    pub const SPARSE_MATRIX: &[Section] = &[SparseMatrixNode];
    /// `LossNode`: `ALLOWED_LOSSES` (`_sklearn.py`).
    pub const LOSS: &[Section] = &[AllowedLosses];
    /// `PartialNode`, `MethodNode`, `OperatorFuncNode`, `DTypeNode`, `TreeNode`,
    /// `QuantileForestNode`, `ConstructorFromReduceNode`, `CachedNode`: `[]`.
    pub const NONE: &[Section] = &[];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_read_whole() {
        assert_eq!(Section::NumpyRandomBitGeneratorTypeNames.entries().len(), 5);
        assert!(Section::SklearnEstimatorTypeNames.entries().len() > 200);
        assert!(Section::NumpyUfuncTypeNames.contains("numpy.log1p"));
        assert!(Section::NumpyDtypeTypeNames.contains("numpy.float64"));
        assert!(Section::DictNode.contains("collections.OrderedDict"));
        assert!(Section::SklearnEstimatorTypeNames
            .contains("sklearn.linear_model._logistic.LogisticRegression"));
        // What skops 0.16 deliberately leaves out (its `exceptions.py` says why).
        assert!(!Section::SklearnInternalTypeNames.contains("sklearn.tree._tree.Tree"));
        assert!(!Section::SklearnInternalTypeNames
            .contains("sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor"));
        for l in [
            Section::PrimitiveTypeNames,
            Section::ContainerTypeNames,
            Section::SklearnInternalTypeNames,
            Section::ScipyUfuncTypeNames,
            Section::AllowedLosses,
            Section::ListNode,
            Section::SparseMatrixNode,
        ] {
            assert!(!l.entries().is_empty(), "{l:?}");
        }
        let under_loss = Trust::new(defaults::TYPE, true);
        assert!(under_loss.trusts("numpy.float64"));
        assert!(under_loss.trusts("sklearn._loss._loss.CyHalfBinomialLoss"));
        assert!(!Trust::new(defaults::TYPE, false).trusts("sklearn._loss._loss.CyHalfBinomialLoss"));
    }

    #[test]
    fn no_type_skops_trusts_is_one_the_pickle_tables_call_dangerous() {
        // Else a file skops loads by default could never PASS; a table that starts calling
        // one dangerous shows here.
        use socair_pickle::globals::{classify, Class};
        let all = [
            Section::PrimitiveTypeNames,
            Section::ContainerTypeNames,
            Section::SklearnEstimatorTypeNames,
            Section::SklearnInternalTypeNames,
            Section::ScipyUfuncTypeNames,
            Section::NumpyUfuncTypeNames,
            Section::NumpyRandomBitGeneratorTypeNames,
            Section::NumpyDtypeTypeNames,
            Section::AllowedLosses,
            Section::DictNode,
            Section::DefaultDictNode,
            Section::ListNode,
            Section::SetNode,
            Section::TupleNode,
            Section::BytesNode,
            Section::BytearrayNode,
            Section::SliceNode,
            Section::NdArrayNode,
            Section::MaskedArrayNode,
            Section::RandomStateNode,
            Section::RandomGeneratorNode,
            Section::SparseMatrixNode,
        ];
        for section in all {
            for name in section.entries() {
                let (module, class) = name.rsplit_once('.').unwrap_or(("", name));
                assert!(
                    !matches!(
                        classify(module, class),
                        Class::Dangerous(_) | Class::Constructs(..)
                    ),
                    "{section:?}: {name}"
                );
            }
        }
    }
}
