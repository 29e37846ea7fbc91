//! The globals the library profiles add (`plugins/shared/pickle/PROFILES.md`), each an exact pair
//! judged before the dangerous tables, and only under the profile that lists it:
//!
//! * `socair-data/1` ([`Profile::Data`]): the pure data constructors of CPython 3.12's
//!   standard library, each with the reducer that writes it: `collections.OrderedDict`
//!   (`OrderedDict.__reduce__`, Lib/collections/__init__.py), `collections.deque`
//!   (`deque_reduce`, Modules/_collectionsmodule.c), `decimal.Decimal` (`Decimal.__reduce__`,
//!   Lib/_pydecimal.py: `(self.__class__, (str(self),))`), `datetime.date`/`time`/`datetime`/
//!   `timedelta`/`timezone` (`date_reduce`, `time_reduce_ex`, `datetime_reduce_ex`,
//!   `delta_reduce`, `timezone_getinitargs`, Modules/_datetimemodule.c),
//!   `collections.defaultdict` (`defdict_reduce`, Modules/_collectionsmodule.c: `(type,
//!   (default_factory,) or (), None, None, iter(items))`; the factory is only called on a
//!   missing key, after loading, and only a data constructor of this list is accepted as
//!   one), `builtins.set`/
//!   `frozenset` (`set_reduce`, Objects/setobject.c), `bytearray` (`bytearray_reduce_ex`,
//!   Objects/bytearrayobject.c), `complex` (`complex___getnewargs__`), `_codecs.encode` and
//!   `bytes()` (Lib/pickle.py `save_bytes` below protocol 3); and NumPy 2.4's numeric arrays and
//!   dtypes: `numpy._core.multiarray._reconstruct` with `numpy.ndarray` (`array_reduce`,
//!   numpy/_core/src/multiarray/methods.c), `numpy.dtype` (`arraydescr_reduce`,
//!   numpy/_core/src/multiarray/descriptor.c), `numpy._core.multiarray.scalar`
//!   (`gentype_reduce`, scalartypes.c.src) and `numpy._core.numeric._frombuffer`
//!   (`array_reduce_ex_picklebuffer`, methods.c, protocol 5), under their numpy 1.x module
//!   names (`numpy.core.…`) too.
//! * joblib mode (not a profile: how `joblib.load` reads a `joblib.dump` file): joblib 1.6.0's
//!   `joblib.numpy_pickle.NumpyArrayWrapper` and the pre-0.10 `NDArrayWrapper`/
//!   `ZNDArrayWrapper` (numpy_pickle.py `NumpyUnpickler.load_build`), under joblib's module
//!   names and those of the copy scikit-learn <= 0.20 bundled (`sklearn.externals.joblib`).
//! * `socair-sklearn/1` ([`Profile::Sklearn`]): the classes of [`super::sklearn`]'s table,
//!   `sklearn.tree._tree.Tree`, and XGBoost's and LightGBM's `Booster`s, whose state is
//!   their model as data (`crate::pickle::typed`'s `boosters`); scikit-learn's Cython loss
//!   classes called with their floats, and NumPy's scalar types as values (the same table).

use crate::profile::Profile;

/// A global a profile (or joblib mode) adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileGlobal {
    /// `numpy._core.multiarray._reconstruct`.
    NpReconstruct,
    /// `numpy.ndarray` (only as `_reconstruct`'s first argument).
    NpNdarray,
    /// `numpy.dtype`.
    NpDtype,
    /// `numpy._core.multiarray.scalar`.
    NpScalar,
    /// `numpy._core.numeric._frombuffer`.
    NpFromBuffer,
    /// `collections.deque`.
    Deque,
    /// `decimal.Decimal`.
    Decimal,
    /// A `datetime` class.
    DateTime(DateTimeClass),
    /// `builtins.frozenset`.
    FrozenSet,
    /// `builtins.set`, `complex` or `bytearray` (as `socair-wo/3` models them, under every
    /// grammar version).
    Builtin(Builtin),
    /// `collections.Counter`.
    Counter,
    /// `builtins.bytes`, called with no arguments (`b''` below protocol 3).
    EmptyBytes,
    /// `joblib.numpy_pickle.NumpyArrayWrapper` (joblib mode only).
    JoblibWrapper,
    /// `joblib.numpy_pickle_compat.NDArrayWrapper` or `ZNDArrayWrapper` (joblib mode only):
    /// arrays in separate files.
    JoblibCompatWrapper(&'static str),
    /// A class of the `socair-sklearn/1` table, by `module.name`.
    Sklearn(&'static str),
    /// `sklearn.tree._tree.Tree` (`socair-sklearn/1`).
    SklearnTree,
    /// A Cython loss class of scikit-learn (`socair-sklearn/1`), by `module.name`, with the
    /// number of floats its `__reduce__` gives (`sklearn::CALLED_WITH_NUMBERS`): only a REDUCE
    /// of it with that many numbers is modeled.
    SklearnNumbers(&'static str, usize),
    /// One of NumPy's scalar types (`numpy.float64`...: `sklearn::NUMPY_TYPES`) as a value, as
    /// estimators keep them in parameters (`dtype=np.float64`) (`socair-sklearn/1`): a call
    /// of it is not modeled.
    NumpyType,
    /// `copyreg._reconstructor`: what protocols 0 and 1 write for an instance
    /// (`copyreg._reduce_ex`: `(_reconstructor, (cls, object, None))` then BUILD), accepted
    /// only for a class the profile lists.
    Reconstructor,
    /// `builtins.object`, only as `_reconstructor`'s second argument.
    Object,
    /// `collections.defaultdict`, with no factory or a data constructor as its factory.
    DefaultDict,
    /// An XGBoost or LightGBM `Booster` (`socair-sklearn/1`): its state holds the model,
    /// read by `socair-native`.
    Booster(BoosterKind),
}

/// The gradient-boosting libraries whose `Booster` pickles its model as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoosterKind {
    /// `xgboost.core.Booster`: `handle` holds a UBJSON memory snapshot.
    Xgboost,
    /// `lightgbm.basic.Booster`: `_handle` holds the text model.
    Lightgbm,
}

impl BoosterKind {
    /// The class, `module.name`.
    pub fn class(self) -> &'static str {
        match self {
            BoosterKind::Xgboost => "xgboost.core.Booster",
            BoosterKind::Lightgbm => "lightgbm.basic.Booster",
        }
    }

    /// The kind whose class is `class`.
    pub fn of(class: &str) -> Option<BoosterKind> {
        [BoosterKind::Xgboost, BoosterKind::Lightgbm]
            .into_iter()
            .find(|k| k.class() == class)
    }
}

/// The `datetime` classes, with the sizes of their pickled state bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateTimeClass {
    /// `datetime.date`: 4 state bytes.
    Date,
    /// `datetime.time`: 6 state bytes, and a tzinfo.
    Time,
    /// `datetime.datetime`: 10 state bytes, and a tzinfo.
    DateTime,
    /// `datetime.timedelta(days, seconds, microseconds)`.
    TimeDelta,
    /// `datetime.timezone(offset[, name])`.
    TimeZone,
}

/// What `module.name` means to `profile` (and joblib mode); `None` when nothing it adds.
pub fn known(module: &str, name: &str, profile: Profile, joblib: bool) -> Option<ProfileGlobal> {
    if joblib {
        if let Some(g) = joblib_wrapper(module, name) {
            return Some(g);
        }
    }
    if !profile.data() {
        return None;
    }
    let g = match (module, name) {
        ("numpy._core.multiarray" | "numpy.core.multiarray", "_reconstruct") => {
            ProfileGlobal::NpReconstruct
        }
        ("numpy._core.multiarray" | "numpy.core.multiarray", "scalar") => ProfileGlobal::NpScalar,
        ("numpy._core.numeric" | "numpy.core.numeric", "_frombuffer") => {
            ProfileGlobal::NpFromBuffer
        }
        ("numpy", "ndarray") => ProfileGlobal::NpNdarray,
        ("numpy", "dtype") => ProfileGlobal::NpDtype,
        ("collections", "deque") => ProfileGlobal::Deque,
        ("collections", "defaultdict") => ProfileGlobal::DefaultDict,
        ("decimal", "Decimal") => ProfileGlobal::Decimal,
        ("builtins", "frozenset") => ProfileGlobal::FrozenSet,
        ("builtins", "set") => ProfileGlobal::Builtin(Builtin::Set),
        ("builtins", "complex") => ProfileGlobal::Builtin(Builtin::Complex),
        ("builtins", "bytearray") => ProfileGlobal::Builtin(Builtin::Bytearray),
        ("collections", "Counter") => ProfileGlobal::Counter,
        ("builtins", "bytes") => ProfileGlobal::EmptyBytes,
        ("copyreg", "_reconstructor") => ProfileGlobal::Reconstructor,
        ("builtins", "object") => ProfileGlobal::Object,
        ("datetime", "date") => ProfileGlobal::DateTime(DateTimeClass::Date),
        ("datetime", "time") => ProfileGlobal::DateTime(DateTimeClass::Time),
        ("datetime", "datetime") => ProfileGlobal::DateTime(DateTimeClass::DateTime),
        ("datetime", "timedelta") => ProfileGlobal::DateTime(DateTimeClass::TimeDelta),
        ("datetime", "timezone") => ProfileGlobal::DateTime(DateTimeClass::TimeZone),
        ("sklearn.tree._tree", "Tree") if profile >= Profile::Sklearn => ProfileGlobal::SklearnTree,
        ("xgboost.core", "Booster") if profile >= Profile::Sklearn => {
            ProfileGlobal::Booster(BoosterKind::Xgboost)
        }
        ("lightgbm.basic", "Booster") if profile >= Profile::Sklearn => {
            ProfileGlobal::Booster(BoosterKind::Lightgbm)
        }
        ("numpy", _) if profile >= Profile::Sklearn && super::sklearn::numpy_type(name) => {
            ProfileGlobal::NumpyType
        }
        _ if profile >= Profile::Sklearn => {
            if let Some((c, n)) = super::sklearn::called_with_numbers(module, name) {
                return Some(ProfileGlobal::SklearnNumbers(c, n));
            }
            return super::sklearn::class(module, name).map(ProfileGlobal::Sklearn);
        }
        _ => return None,
    };
    Some(g)
}

/// The module names joblib's array wrappers were pickled under: joblib's own, and
/// `sklearn.externals.joblib` (the copy scikit-learn <= 0.20 bundled, whose `joblib.dump` named
/// its own module; scikit-learn 0.21/0.22's `sklearn/externals/joblib/__init__.py` kept that name
/// importable as `from joblib import *` so that `joblib.load` resolves those pickles to joblib's
/// own classes and reads them as it reads its own, and scikit-learn's `test_old_pickle`
/// checks it).
const JOBLIB_PACKAGES: [&str; 2] = ["joblib", "sklearn.externals.joblib"];

/// joblib's array wrappers under every name a dump holds them by (joblib mode only):
/// `numpy_pickle.NumpyArrayWrapper` (joblib >= 0.10, `NumpyUnpickler.load_build`, joblib 1.4.2
/// numpy_pickle.py); `NDArrayWrapper`/`ZNDArrayWrapper`, which joblib < 0.10 defined in
/// `numpy_pickle` (and so named there) and joblib >= 0.10 keeps in `numpy_pickle_compat` and
/// imports into `numpy_pickle` (numpy_pickle.py, `from .numpy_pickle_compat import
/// NDArrayWrapper`), so that both names load as the same class.
fn joblib_wrapper(module: &str, name: &str) -> Option<ProfileGlobal> {
    let (package, sub) = module.rsplit_once('.')?;
    if !JOBLIB_PACKAGES.contains(&package) {
        return None;
    }
    match (sub, name) {
        ("numpy_pickle", "NumpyArrayWrapper") => Some(ProfileGlobal::JoblibWrapper),
        ("numpy_pickle" | "numpy_pickle_compat", "NDArrayWrapper") => {
            Some(ProfileGlobal::JoblibCompatWrapper("NDArrayWrapper"))
        }
        ("numpy_pickle" | "numpy_pickle_compat", "ZNDArrayWrapper") => {
            Some(ProfileGlobal::JoblibCompatWrapper("ZNDArrayWrapper"))
        }
        _ => None,
    }
}

/// A builtin the weights-only unpickler lists (`builtins.set`, `complex`, `bytearray`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `builtins.set`.
    Set,
    /// `builtins.complex`.
    Complex,
    /// `builtins.bytearray`.
    Bytearray,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wrappers scikit-learn <= 0.20's bundled joblib named, and joblib < 0.10's
    /// `numpy_pickle.NDArrayWrapper`, are joblib's wrappers in joblib mode and nothing outside it.
    #[test]
    fn joblib_wrappers_under_every_module_name_they_were_pickled_by() {
        for module in [
            "joblib.numpy_pickle",
            "sklearn.externals.joblib.numpy_pickle",
        ] {
            assert_eq!(
                known(module, "NumpyArrayWrapper", Profile::Data, true),
                Some(ProfileGlobal::JoblibWrapper)
            );
            assert_eq!(
                known(module, "NumpyArrayWrapper", Profile::Data, false),
                None
            );
            assert_eq!(
                known(module, "ZNDArrayWrapper", Profile::Sklearn, true),
                Some(ProfileGlobal::JoblibCompatWrapper("ZNDArrayWrapper"))
            );
        }
        assert_eq!(
            known(
                "sklearn.externals.joblib.numpy_pickle_compat",
                "NDArrayWrapper",
                Profile::Data,
                true
            ),
            Some(ProfileGlobal::JoblibCompatWrapper("NDArrayWrapper"))
        );
        for (module, name) in [
            ("evil.joblib.numpy_pickle", "NumpyArrayWrapper"),
            (
                "sklearn.externals.joblib.numpy_pickle_compat",
                "NumpyArrayWrapper",
            ),
            ("sklearn.externals.joblib.numpy_pickle", "load"),
            ("joblib", "NumpyArrayWrapper"),
        ] {
            assert_eq!(
                known(module, name, Profile::Sklearn, true),
                None,
                "{module}.{name}"
            );
        }
    }
}
