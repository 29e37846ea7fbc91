//! The globals the library profiles add (`plugins/pickle/PROFILES.md`), each an exact pair
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
//!   `joblib.numpy_pickle.NumpyArrayWrapper` and the pre-0.10 `joblib.numpy_pickle_compat.
//!   NDArrayWrapper`/`ZNDArrayWrapper` (numpy_pickle.py `NumpyUnpickler.load_build`).
//! * `socair-sklearn/1` ([`Profile::Sklearn`]): the classes of [`super::sklearn`]'s table,
//!   `sklearn.tree._tree.Tree`, and XGBoost's and LightGBM's `Booster`s, whose state is
//!   their model as data (`crate::pickle::typed`'s `boosters`).

use crate::pickle::profile::Profile;

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
        match (module, name) {
            ("joblib.numpy_pickle", "NumpyArrayWrapper") => {
                return Some(ProfileGlobal::JoblibWrapper)
            }
            ("joblib.numpy_pickle_compat", "NDArrayWrapper") => {
                return Some(ProfileGlobal::JoblibCompatWrapper("NDArrayWrapper"))
            }
            ("joblib.numpy_pickle_compat", "ZNDArrayWrapper") => {
                return Some(ProfileGlobal::JoblibCompatWrapper("ZNDArrayWrapper"))
            }
            _ => {}
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
        _ if profile >= Profile::Sklearn => {
            return super::sklearn::class(module, name).map(ProfileGlobal::Sklearn)
        }
        _ => return None,
    };
    Some(g)
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
