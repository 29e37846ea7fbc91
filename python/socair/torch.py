"""``socair.torch.load``: a drop-in for ``torch.load(path, weights_only=True)`` on state dicts
that runs no unpickler at all.

The file is scanned as :func:`socair.load` scans it (any FAIL or LEAD raises
:class:`socair.RefusedError` before a tensor is made), and each tensor is a ``torch.Tensor``
over a copy-on-write memory map of the file, as ``torch.load(..., mmap=True)`` maps it:
writable, its writes private to the process, the file never changed. Dtypes, shapes and strides
are torch's own (a transposed or sliced view saved as such comes back with its strides), and
so are ``nn.Parameter`` types and ``requires_grad``.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Optional, Union

import socair

__all__ = ["load"]

# socair's element types as torch dtype names (those this torch has).
_TORCH = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "U16": "uint16",
    "I16": "int16",
    "F16": "float16",
    "BF16": "bfloat16",
    "U32": "uint32",
    "I32": "int32",
    "F32": "float32",
    "U64": "uint64",
    "I64": "int64",
    "F64": "float64",
    "C64": "complex64",
    "C128": "complex128",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
    "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz",
    "F8_E8M0": "float8_e8m0fnu",
}

# The unsigned integers of each width, which carry the bits of types NumPy lacks.
_BITS = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}


def _tensor(torch: Any, np: Any, array: Any, element: str) -> Any:
    name = _TORCH.get(element)
    dtype = getattr(torch, name, None) if name else None
    if dtype is None:
        raise socair.LoadError(f"torch {torch.__version__} has no dtype for {element}")
    if not array.dtype.isnative:
        # torch holds native byte order only: a big-endian .npy array is converted (a copy).
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype.kind in "biufc" and array.dtype.fields is None and not _extended(np, array):
        with warnings.catch_warnings():
            # A read-only array (a decoded or gathered copy) is shared, as torch.load would
            # have made its own: torch warns that writes to it are undefined.
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(array)
    # bfloat16 and float8: their bits as unsigned integers of the same width, viewed as the
    # torch dtype (strides are in elements, so a strided view stays strided).
    bits = array.view(np.dtype(_BITS[array.dtype.itemsize]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(bits).view(dtype)


def _extended(np: Any, array: Any) -> bool:
    # ml_dtypes' bfloat16 and float8 types report kind "V" or "f" depending on version; torch
    # cannot take them from NumPy either way.
    module: str = array.dtype.type.__module__
    return module.startswith("ml_dtypes")


def load(
    path: socair.PathLike,
    map_location: Optional[Union[str, Any]] = None,
    *,
    reviewed_classes: socair.Reviewed = None,
    verify: bool = True,
) -> Dict[str, Any]:
    """Every tensor of a checkpoint (or any file :func:`socair.load` reads) as ``torch.Tensor``
    objects, by name as ``socair tensors`` names them (a state dict's keys).

    ``map_location`` is ``None`` or ``"cpu"`` for tensors over the mapped file, or a device
    (``"cuda:0"``, ``torch.device(...)``) to move them to. ``verify`` is
    :func:`socair.load`'s.
    """
    import numpy as np

    try:
        import torch
    except ImportError as e:
        raise ImportError("socair.torch.load needs torch (pip install torch); socair.load gives NumPy arrays without it") from e

    arrays = socair._load(path, reviewed_classes, raw=False, writable=True, verify=verify)
    device = None if map_location is None else torch.device(map_location)
    out: Dict[str, Any] = {}
    for name, array in arrays.items():
        t = _tensor(torch, np, array, arrays.dtypes[name])
        if device is not None and device.type != "cpu":
            t = t.to(device)
        kind = arrays.torch_kinds.get(name)
        if kind in ("parameter", "parameter-frozen"):
            # torch._utils._rebuild_parameter: nn.Parameter(data, requires_grad).
            t = torch.nn.Parameter(t, requires_grad=kind == "parameter")
        elif kind == "requires-grad":
            t.requires_grad_(True)
        out[name] = t
    return out
