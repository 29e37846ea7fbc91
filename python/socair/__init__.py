"""socair for Python: scan model files without executing anything in them, and load the
tensors of what scans clean, straight from the file, without unpickling.

* :func:`scan` -- the ``socair.report/v1`` report (:class:`Report`), every field typed, and
  its ``json()`` as ``socair scan --json`` prints it.
* :func:`tensors` -- the ``socair.tensors/v1`` manifest (:class:`TensorManifest`);
  :func:`diff` -- two models compared (:class:`Comparison`).
* :func:`load` -- every tensor as a NumPy array mapped read-only from the file; refused with
  :class:`RefusedError` (carrying the report) when any row FAILs or is a LEAD.
* :func:`socair.torch.load <socair.torch.load>` -- the same as ``torch.Tensor`` objects.

The plugins that read each format come with the wheel, installed beside the ``socair`` command
(``<prefix>/lib/socair/plugins/``), and are found without configuration; directories named in
``SOCAIR_PLUGIN_PATH`` are searched first.
"""

from __future__ import annotations

import mmap
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _installed, _native

# The documents' classes are the extension's own (socair/_native.pyi states each field).
from ._native import (
    Accounting,
    AliasEntry,
    ComparedModel,
    Comparison,
    Finding,
    LineBeyond,
    LoadedPlugin,
    ManifestArtifact,
    NamedDigest,
    Numbers,
    Pair,
    PluginUse,
    Plugins,
    QuantizedNumbers,
    RefusedPlugin,
    Report,
    ReportArtifact,
    Row,
    Scope,
    Side,
    Summary,
    TensorEntry,
    TensorManifest,
    Tool,
    UnreadEntry,
)

__all__ = [
    "Accounting",
    "AliasEntry",
    "ComparedModel",
    "Comparison",
    "Finding",
    "LineBeyond",
    "LoadError",
    "LoadedPlugin",
    "ManifestArtifact",
    "NamedDigest",
    "Numbers",
    "Pair",
    "PluginUse",
    "Plugins",
    "QuantizedNumbers",
    "RefusedError",
    "RefusedPlugin",
    "Report",
    "ReportArtifact",
    "Row",
    "Scope",
    "Side",
    "SocairError",
    "Summary",
    "TensorEntry",
    "TensorManifest",
    "Tensors",
    "Tool",
    "UnreadEntry",
    "diff",
    "load",
    "plugins",
    "scan",
    "tensors",
    "__version__",
]

__version__: str = _native.VERSION

PathLike = Union[str, "os.PathLike[str]"]
Reviewed = Union[PathLike, Iterable[str], None]

SocairError = _native.SocairError
"""An input socair cannot read at all (a missing file, a directory it cannot take as a model):
what the command line reports with exit code 2."""

_session: Optional[_native.Session] = None


def _search_path() -> List[Path]:
    bundled = _installed.plugin_dir()
    return _native.search_path(None if bundled is None else str(bundled))


def _plugins_session() -> _native.Session:
    # Loaded once per process, as the command line loads them once per run.
    global _session
    if _session is None:
        _session = _native.Session(_search_path())
    return _session


class RefusedError(Exception):
    """``socair.load`` refused the file: a row FAILs or is a LEAD. ``report`` says which."""

    def __init__(self, path: PathLike, report: Report) -> None:
        self.path = os.fspath(path)
        self.report = report
        worst = [r for r in report.rows if r.status == report.verdict]
        first = worst[0] if worst else None
        where = ""
        if first is not None:
            where = f": {first.check}: {first.summary}"
            if first.findings:
                where = f": {first.check}: {first.findings[0].place}: {first.findings[0].reason}"
        super().__init__(f"{self.path}: refused, the scan found a {report.verdict}{where}")


class LoadError(SocairError):
    """The file scanned clean but a tensor cannot be returned as asked: one its reader could
    not locate, a block-quantized tensor without ``raw=True``, a name two files both hold."""


def _reviewed_args(reviewed: Reviewed) -> Tuple[Optional[List[str]], Optional[str]]:
    if reviewed is None:
        return None, None
    if isinstance(reviewed, (str, os.PathLike)):
        return None, os.fspath(reviewed)
    return [str(c) for c in reviewed], None


def scan(path: PathLike, *, header_only: bool = False, reviewed_classes: Reviewed = None) -> Report:
    """Scans a model file or directory (or an ``s3://`` / ``https://`` object) and returns its
    report. ``reviewed_classes`` is a list of ``module.name`` globals an operator reviewed, or
    the path of a file listing them (``--reviewed-classes``)."""
    listed, file = _reviewed_args(reviewed_classes)
    return _plugins_session().scan(os.fspath(path), header_only, listed, file)


def tensors(path: PathLike) -> TensorManifest:
    """The ``socair.tensors/v1`` manifest: every tensor's dtype, shape, size and hashes
    (``json()`` is what ``socair tensors --json`` prints, ``to_dict()`` its ``json.loads``)."""
    return _plugins_session().tensors(os.fspath(path))


def diff(a: PathLike, b: PathLike) -> Comparison:
    """The ``socair.tensors.diff/v1`` comparison of two models (``json()`` is what
    ``socair tensors diff a b`` prints, ``to_dict()`` its ``json.loads``)."""
    return _plugins_session().diff(os.fspath(a), os.fspath(b))


def plugins() -> Plugins:
    """The plugins found: ``loaded`` (name, version, path), ``refused`` (path, reason;
    shadowed ones included), and the directories ``searched``, in order."""
    return _plugins_session().plugins()


class Tensors(Dict[str, Any]):
    """What :func:`load` returns: a ``dict`` of name to array, sorted by file then name as
    ``socair tensors`` lists them, with the report (``report``) and each tensor's element type
    as socair names it (``dtypes``: ``F32``, ``BF16``, ``F8_E4M3``, a GGUF type such as
    ``Q4_K`` for raw bytes)."""

    report: Report
    dtypes: Dict[str, str]
    torch_kinds: Dict[str, str]
    """The tensors torch.load returns as more than a plain tensor: ``parameter`` (an
    ``nn.Parameter``), ``parameter-frozen`` (one with ``requires_grad=False``) or
    ``requires-grad``; :func:`socair.torch.load` returns them so."""


# socair's element types (the safetensors dtype names) as NumPy type codes.
_NUMPY = {
    "BOOL": "?",
    "U8": "u1",
    "I8": "i1",
    "U16": "u2",
    "I16": "i2",
    "F16": "f2",
    "U32": "u4",
    "I32": "i4",
    "F32": "f4",
    "U64": "u8",
    "I64": "i8",
    "F64": "f8",
    "C64": "c8",
    "C128": "c16",
}

# Types NumPy has no dtype for: the ml_dtypes name, and the unsigned integer of their width
# that holds their bits when ml_dtypes is not installed.
_EXTENDED = {
    "BF16": ("bfloat16", "u2"),
    "F8_E4M3": ("float8_e4m3fn", "u1"),
    "F8_E5M2": ("float8_e5m2", "u1"),
    "F8_E4M3FNUZ": ("float8_e4m3fnuz", "u1"),
    "F8_E5M2FNUZ": ("float8_e5m2fnuz", "u1"),
    "F8_E8M0": ("float8_e8m0fnu", "u1"),
}

# A NumPy array-protocol type string a `.npy` header holds for a type socair has no element
# type for (strings, datetimes, extended precision): given to np.dtype as a string. Object
# arrays ("O") never scan clean.
_NUMPY_TYPESTR = re.compile(r"^[<>|=]?[?bBiufcUSVMm]\d*(\[[0-9A-Za-z]+\])?$")


def _numpy() -> Any:
    import numpy

    return numpy


def _ml_dtypes() -> Any:
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes


def _dtype(np: Any, element: Optional[str], dtype: str, big: bool, raw: bool, name: str) -> Tuple[Any, str]:
    """The NumPy dtype for a tensor and the element type to name it by; ``None`` for a tensor
    returned as its raw bytes (``raw=True``)."""
    order = ">" if big else "<"
    if element in _NUMPY:
        code = _NUMPY[element]
        return np.dtype(code if code in ("?",) or code.endswith("1") else order + code), element
    if element in _EXTENDED:
        ml_name, bits = _EXTENDED[element]
        ml = _ml_dtypes()
        if ml is not None and hasattr(ml, ml_name):
            return np.dtype(getattr(ml, ml_name)), element
        return np.dtype(order + bits if bits != "u1" else bits), element
    if element is None and _NUMPY_TYPESTR.match(dtype):
        return np.dtype(dtype), dtype
    if element is None and dtype.startswith("["):
        # A structured dtype's descr, as the `.npy` header holds it: read as np.load reads it
        # (numpy.lib.format: ast.literal_eval, then descr_to_dtype), never evaluated.
        import ast

        from numpy.lib import format as npy_format

        return npy_format.descr_to_dtype(ast.literal_eval(dtype)), dtype
    if raw:
        return None, element or dtype
    raise LoadError(
        f"tensor {name!r} is {dtype}, which has no NumPy element type"
        " (block-quantized or packed): pass raw=True for its bytes as uint8"
    )


def _map(path: "os.PathLike[str]", fd: int, length: int, writable: bool) -> Union[bytes, mmap.mmap]:
    # The descriptor is a handle on the file the scan read: what is mapped is that file,
    # whatever its path names by now.
    size = os.fstat(fd).st_size
    if size < length:
        raise LoadError(f"{path}: the file shrank from {length} to {size} bytes after it was scanned")
    if length == 0:
        return b""
    return mmap.mmap(fd, length, access=mmap.ACCESS_COPY if writable else mmap.ACCESS_READ)


def _array(
    np: Any,
    maps: Sequence[Union[bytes, mmap.mmap]],
    place: _native._Place,
    dtype: Any,
    shape: Tuple[int, ...],
    raw_bytes: bool,
) -> Any:
    if raw_bytes:
        # Raw bytes of a tensor with no NumPy element type: one dimension of bytes.
        shape = (-1,)
    if isinstance(place, _native.Ranges):
        buf = maps[place.file]
        ranges = place.ranges
        if len(ranges) == 1:
            offset, length = ranges[0].offset, ranges[0].length
            count = length // dtype.itemsize
            if raw_bytes:
                shape = (count,)
            return np.ndarray(shape, dtype=dtype, buffer=buf, offset=offset)
        if not ranges:
            a = np.empty(shape if not raw_bytes else (0,), dtype=dtype)
            a.flags.writeable = False
            return a
        # Bytes in several pieces (HDF5 chunks): gathered into one new array.
        joined = b"".join(buf[r.offset : r.offset + r.length] for r in ranges)
        return np.frombuffer(joined, dtype=dtype).reshape(shape)
    if isinstance(place, _native.Strided):
        strides = tuple(s * place.element_size for s in place.strides)
        return np.ndarray(shape, dtype=dtype, buffer=maps[place.file], offset=place.base, strides=strides)
    if isinstance(place, _native.Inline):
        return np.frombuffer(place.data, dtype=dtype).reshape(shape)
    raise LoadError(f"unknown place {place!r}")


def _load(path: PathLike, reviewed_classes: Reviewed, raw: bool, writable: bool, verify: bool = True) -> Tensors:
    np = _numpy()
    listed, file = _reviewed_args(reviewed_classes)
    loaded = _plugins_session().load(os.fspath(path), listed, file, verify)
    report = loaded.report
    layout = loaded.layout
    if layout is None:
        raise RefusedError(path, report)
    fds = [f.fd for f in layout.files]
    if sys.platform == "win32":
        # The extension hands over Windows file handles: descriptors of them for os and mmap.
        import msvcrt

        fds = [msvcrt.open_osfhandle(handle, os.O_RDONLY) for handle in fds]
    try:
        unread = layout.unread
        if unread:
            shown = "; ".join(f"{u.file}{' tensor ' + repr(u.tensor) if u.tensor else ''}: {u.reason}" for u in unread[:5])
            more = f" (and {len(unread) - 5} more)" if len(unread) > 5 else ""
            raise LoadError(f"{os.fspath(path)}: not every tensor could be located: {shown}{more}")
        # Everything that can refuse is decided before any file is mapped.
        seen: Dict[str, str] = {}
        plan: List[Tuple[str, str, Any, str, Tuple[int, ...], _native._Place, bool]] = []
        kinds: Dict[str, str] = {}
        for t in layout.tensors:
            rel, name = t.file, t.name
            if t.torch_kind is not None:
                kinds[name] = t.torch_kind
            if name in seen:
                raise LoadError(
                    f"tensor {name!r} is in both {seen[name]!r} and {rel!r}: load one of the files"
                )
            seen[name] = rel
            np_dtype, named = _dtype(np, t.element_type, t.dtype, t.big_endian, raw, name)
            raw_bytes = np_dtype is None
            if raw_bytes:
                np_dtype = np.dtype("u1")
            plan.append((rel, name, np_dtype, named, tuple(t.shape), t.place, raw_bytes))
        maps = [_map(f.path, fd, f.length, writable) for f, fd in zip(layout.files, fds)]
    finally:
        for fd in fds:
            os.close(fd)
    out = Tensors()
    out.report = report
    out.dtypes = {}
    out.torch_kinds = kinds
    for rel, name, np_dtype, named, shape, place, raw_bytes in sorted(plan, key=lambda p: (p[0].encode(), p[1].encode())):
        out[name] = _array(np, maps, place, np_dtype, shape, raw_bytes)
        out.dtypes[name] = named
    return out


def load(path: PathLike, *, reviewed_classes: Reviewed = None, raw: bool = False, verify: bool = True) -> Tensors:
    """Every tensor of a model file or directory as NumPy arrays, read straight from the file.

    The file is scanned first, every check ``socair scan`` runs (the file's sha256 aside: the
    report says it was not computed); if any row FAILs or is a LEAD, :class:`RefusedError` is
    raised (its ``report`` says why) before any tensor byte is returned. Nothing is unpickled,
    evaluated or imported from the file. Arrays are read-only views of a memory map of the
    file the scan read, with the dtype, shape and strides the format's own loader gives
    (``torch.load``, safetensors, NumPy, gguf, onnx); tensors whose bytes are not one range
    of the file (decoded ONNX values, a deflated ``.npz`` member, HDF5 chunks) are copies.

    ``bfloat16`` and float8 tensors are ``ml_dtypes`` arrays when ml_dtypes is installed,
    else ``uint16``/``uint8`` arrays of their bits; ``Tensors.dtypes`` names each one's type.
    Block-quantized GGUF tensors are refused by name unless ``raw=True``, which returns their
    bytes as one-dimensional ``uint8`` arrays.

    ``verify=False`` scans the structure only, as ``socair scan --header-only`` does: every
    check except the CRC-32 of tensor data, and no sha256 of the file (a pass over every byte
    each). A FAIL or LEAD still refuses; the report's NOT_TESTED row says what was skipped.
    """
    return _load(path, reviewed_classes, raw, writable=False, verify=verify)
