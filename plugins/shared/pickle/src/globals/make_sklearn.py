"""Writes sklearn_table.rs: the classes socair-sklearn/1 lists, read from the installed
packages (pinned: scikit-learn 1.9.1, xgboost 3.2.0, lightgbm 4.7.0, scipy 1.17.1, numpy 2.4.6),
each with where its pickling methods come from.

A class is listed when it is a subclass of sklearn.base.BaseEstimator and every one of
`__reduce__`, `__reduce_ex__`, `__getstate__`, `__setstate__` it has is the one of
`object` or of `sklearn.base.BaseEstimator` (sklearn/base.py `BaseEstimator.__getstate__`
returns `dict(self.__dict__)` plus `_sklearn_version`; `__setstate__` warns on a version
mismatch and calls `super().__setstate__(state)`, object's, which updates `__dict__`); no class
anywhere in the MRO but those two defines one of them: pickle then writes NEWOBJ of the class with no
arguments and BUILD of a dict of str keys, and loading it runs no method of the class. A
class with a method of its own is left out (a LEAD), its definer printed in the comment.

SciPy's sparse containers (the public `*_array` and `*_matrix` classes of scipy.sparse, every
subclass of `scipy.sparse._base._spbase`) by the same rule, with `object` alone allowed: pickle
writes them as NEWOBJ and BUILD of their `__dict__` (`_shape`, `data`, `indices`, `indptr`,
`maxprint`; `coords` for COO; LIL's object arrays of lists). One method of their own is read
and listed by name in READ: `coo_matrix.__setstate__` (scipy/sparse/_coo.py at 1.17.1) renames
an old pickle's `row`/`col` into `coords` and updates `__dict__`, nothing else. DOK
(`_dok_base.__reduce__`, a dict subclass) is left out.
scikit-learn's loss objects and NumPy's scalar types: see below.
Run: /work/venv-30p/bin/python make_sklearn.py > sklearn_table.rs (the same pins in
/tmp/venv-pickle19 reproduce it byte for byte).
"""

import contextlib
import importlib
import io
import inspect
import pkgutil
import warnings

import sklearn
from sklearn.base import BaseEstimator

warnings.filterwarnings("ignore")
# Some modules print when imported: keep the table clean.
_quiet = contextlib.redirect_stdout(io.StringIO())
_quiet.__enter__()
for pkg in ("sklearn", "xgboost", "lightgbm"):
    try:
        root = importlib.import_module(pkg)
    except Exception:
        continue
    for m in pkgutil.walk_packages(root.__path__, pkg + "."):
        if ".tests" in m.name or "._test" in m.name or ".externals" in m.name:
            continue
        try:
            importlib.import_module(m.name)
        except Exception:
            pass


_quiet.__exit__(None, None, None)


def subclasses(c):
    for s in c.__subclasses__():
        yield s
        yield from subclasses(s)


METHODS = ("__reduce__", "__reduce_ex__", "__getstate__", "__setstate__")
ok, left = [], []
for c in sorted(set(subclasses(BaseEstimator)), key=lambda c: (c.__module__, c.__qualname__)):
    if not c.__module__.split(".")[0] in ("sklearn", "xgboost", "lightgbm"):
        continue
    if ".tests" in c.__module__ or c.__qualname__.startswith("_") and "Base" in c.__qualname__ and False:
        continue
    # Every definer in the MRO counts, not only the first: BaseEstimator's own methods call
    # `super().__getstate__()` / `super().__setstate__(state)`, which reach a mixin after it.
    own = []
    for name in METHODS:
        for k in c.__mro__:
            if name in vars(k) and k not in (object, BaseEstimator):
                own.append(f"{name} from {k.__module__}.{k.__qualname__}")
    dotted = f"{c.__module__}.{c.__qualname__}"
    (left if own else ok).append((dotted, own))

# Methods read in the library's source and found to do nothing but set state (see above).
READ = {"scipy.sparse._coo.coo_matrix": ("__setstate__ from scipy.sparse._coo.coo_matrix",)}
try:
    import scipy
    from scipy.sparse._base import _spbase
except Exception:
    _spbase = None
if _spbase is not None:
    for c in sorted(set(subclasses(_spbase)), key=lambda c: (c.__module__, c.__qualname__)):
        if not c.__module__.startswith("scipy.sparse.") or c.__qualname__.startswith("_"):
            continue
        dotted = f"{c.__module__}.{c.__qualname__}"
        own = [
            f"{name} from {k.__module__}.{k.__qualname__}"
            for name in METHODS
            for k in c.__mro__
            if name in vars(k) and k is not object
        ]
        own = [o for o in own if o not in READ.get(dotted, ())]
        (left if own else ok).append((dotted, own))

# scikit-learn's loss objects, as its estimators keep them: `_loss` of
# HistGradientBoosting*, GradientBoosting*, SGD*, ...
# * The Python classes of `sklearn._loss.loss` and `sklearn._loss.link` (BaseLoss, BaseLink, their
#   subclasses, the `Interval` dataclass): by the rule above with `object` alone allowed, they
#   pickle as NEWOBJ and BUILD of their `__dict__` (the Cython loss in `closs`, the link, the
#   intervals).
# * The Cython loss classes of `sklearn._loss._loss` and `sklearn.linear_model._sgd_fast`
#   (CALLED_WITH_NUMBERS): their `__reduce__` (sklearn/_loss/_loss.pyx.tp `CyLossFunction.
#   __reduce__`: `(self.__class__, ())`, and `(self.__class__, (self.<param>,))` for the
#   parametrised ones; sklearn/linear_model/_sgd_fast.pyx.tp `Hinge.__reduce__`: `Hinge,
#   (self.threshold,)`, ...) pickles them as REDUCE of the class with a tuple of floats, and their
#   `__init__(self, double <param>)` only stores each float in a cdef double. A class with any
#   other pickling method (CyHalfMultinomialLoss's Cython auto-pickle `__setstate__`) is left out.
#   The arity is what `__reduce__` gives on an instance.
for modname in ("sklearn._loss.loss", "sklearn._loss.link"):
    mod = importlib.import_module(modname)
    for n, c in sorted(vars(mod).items()):
        if not inspect.isclass(c) or c.__module__ != modname:
            continue
        own = [
            f"{name} from {k.__module__}.{k.__qualname__}"
            for name in METHODS
            for k in c.__mro__
            if name in vars(k) and k is not object
        ]
        (left if own else ok).append((f"{modname}.{c.__qualname__}", own))
numbers = []
for modname in ("sklearn._loss._loss", "sklearn.linear_model._sgd_fast"):
    mod = importlib.import_module(modname)
    for n, c in sorted(vars(mod).items()):
        if not inspect.isclass(c) or c.__module__ != modname:
            continue
        dotted = f"{modname}.{c.__qualname__}"
        own = [
            f"{name} from {k.__module__}.{k.__qualname__}"
            for name in METHODS
            for k in c.__mro__
            if name in vars(k) and k is not object and name != "__reduce__"
        ]
        inst = None
        for args in ((), (1.0,)):
            try:
                inst = c(*args)
                break
            except TypeError:
                pass
        reduced = inst.__reduce__() if inst is not None and not own else None
        if (
            isinstance(reduced, tuple)
            and len(reduced) == 2
            and reduced[0] is c
            and all(type(a) is float for a in reduced[1])
        ):
            numbers.append((dotted, len(reduced[1])))
        else:
            left.append((dotted, own or [f"__reduce__ gives {reduced!r}"]))


print(
    "// @generated by plugins/shared/pickle/src/globals/make_sklearn.py (scikit-learn %s, scipy %s); do not edit."
    % (sklearn.__version__, scipy.__version__ if _spbase is not None else "absent")
)
print("/// Every BaseEstimator subclass whose pickling is BaseEstimator's or object's, and SciPy's sparse")
print("/// containers whose pickling is object's (or read: make_sklearn.py READ).")
print("pub const CLASSES: &[&str] = &[")
for d, _ in ok:
    print(f'    "{d}",')
print("];")
print("/// Cython loss classes pickled as REDUCE of the class with this many floats (make_sklearn.py).")
print("pub const CALLED_WITH_NUMBERS: &[(&str, usize)] = &[")
for d, n in numbers:
    print(f'    ("{d}", {n}),')
print("];")
import numpy as np

types = sorted(
    n for n, v in vars(np).items()
    if isinstance(v, type) and issubclass(v, np.generic) and not n.startswith("_")
)
print("/// NumPy's scalar types, as attributes of `numpy` (what pickle names a type by, aliases included):")
print("/// kept as estimator parameters (`dtype=np.float64`), referenced, never called (make_sklearn.py).")
print("pub const NUMPY_TYPES: &[&str] = &[")
for n in types:
    print(f'    "{n}",')
print("];")
print("/// Classes left out: a pickling method of their own (a LEAD).")
print("pub const LEFT_OUT: &[(&str, &str)] = &[")
for d, own in left:
    print(f'    ("{d}", "{"; ".join(own)}"),')
print("];")
