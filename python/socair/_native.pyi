"""Type stubs for ``socair._native``, the PyO3 extension over the socair host library.

Every class here is the extension's own (``python/src/``): frozen (its attributes are read-only)
and, for those read from a document, compared field by field. Each document's class holds
every field of its JSON, typed, and ``json()`` gives its text as the command line prints it.
"""

import os
from pathlib import Path
from typing import Any, Literal, Optional, Sequence, Union, final

__all__ = [
    "Accounting",
    "AliasEntry",
    "ByteRange",
    "ComparedModel",
    "Comparison",
    "Finding",
    "Inline",
    "Layout",
    "LayoutFile",
    "LineBeyond",
    "Loaded",
    "LoadedPlugin",
    "ManifestArtifact",
    "NamedDigest",
    "Numbers",
    "Pair",
    "PluginUse",
    "Plugins",
    "QuantizedNumbers",
    "Ranges",
    "RefusedPlugin",
    "Report",
    "ReportArtifact",
    "Row",
    "Scope",
    "Session",
    "Side",
    "SocairError",
    "Strided",
    "Summary",
    "TensorEntry",
    "TensorLayout",
    "TensorManifest",
    "Tool",
    "UnreadEntry",
    "UnreadTensor",
    "VERSION",
    "search_path",
]

VERSION: str

class SocairError(Exception):
    """An input socair cannot read at all: the command line's exit code 2."""

_Status = Literal["PASS", "FAIL", "LEAD", "NOT_TESTED"]
_Verdict = Literal["PASS", "FAIL", "LEAD"]
_Outcome = Literal[
    "identical",
    "same_values",
    "same_values_after_unpermute",
    "same_values_transposed",
    "lower_precision",
    "differs",
    "not_comparable",
    "same_weights_quantized",
    "differs_beyond_quantization",
]
_MatchedBy = Literal["name", "alias", "content", "values", "role"]
_Transform = Literal["unpermute", "transpose"]

# The `socair.report/v1` report.

@final
class Finding:
    """One finding of a row: where (``place``) and what (``reason``)."""

    @property
    def place(self) -> str: ...
    @property
    def reason(self) -> str: ...

@final
class Row:
    """One check of a report."""

    @property
    def check(self) -> str: ...
    @property
    def status(self) -> _Status: ...
    @property
    def summary(self) -> str: ...
    @property
    def findings(self) -> list[Finding]: ...

@final
class ReportArtifact:
    """What was scanned: its name (never a path), ``model directory`` or the file's format,
    its subject digest (empty, with ``Scope.digest`` saying why, when not computed), its size."""

    @property
    def name(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def sha256(self) -> str: ...
    @property
    def size_bytes(self) -> int: ...

@final
class PluginUse:
    """A plugin that read files of the artifact, and the SHA-256 of its library file."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def sha256(self) -> str: ...

@final
class Tool:
    """The tool that wrote the report (``socair``) and the plugins that read the artifact."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def plugins(self) -> list[PluginUse]: ...

@final
class NamedDigest:
    """A file named by its name and the SHA-256 of its bytes."""

    @property
    def name(self) -> str: ...
    @property
    def sha256(self) -> str: ...

@final
class Scope:
    """How much was scanned."""

    @property
    def mode(self) -> Literal["full", "header-only"]: ...
    @property
    def reference_data(self) -> Optional[NamedDigest]: ...
    @property
    def reviewed_classes(self) -> Optional[list[str]]: ...
    @property
    def digest(self) -> Optional[str]: ...

@final
class Report:
    """A ``socair.report/v1`` report.

    ``verdict`` is ``"FAIL"`` if any row FAILs, else ``"LEAD"`` if any row is a LEAD, else
    ``"PASS"``; ``clean`` is true exactly when ``socair scan`` would exit 0; ``gaps`` names
    the checks that were NOT_TESTED; ``json()`` is the document ``socair scan --json`` prints.
    """

    @property
    def schema(self) -> str: ...
    @property
    def artifact(self) -> ReportArtifact: ...
    @property
    def tool(self) -> Tool: ...
    @property
    def rules(self) -> dict[str, str]: ...
    @property
    def scope(self) -> Scope: ...
    @property
    def rows(self) -> list[Row]: ...
    @property
    def verdict(self) -> _Verdict: ...
    @property
    def clean(self) -> bool: ...
    @property
    def gaps(self) -> list[str]: ...
    @property
    def document(self) -> dict[str, Any]:
        """``to_dict()``: the name of the report's ``json.loads`` before it had classes."""
    def json(self) -> str:
        """The report as ``socair scan --json`` prints it (pretty, trailing newline)."""
    def to_dict(self) -> dict[str, Any]:
        """``json.loads(self.json())``."""

# The `socair.tensors/v1` manifest.

@final
class ManifestArtifact:
    """The model a manifest describes: a file's SHA-256, or a directory's
    ``socair.modeldir/v1`` digest."""

    @property
    def name(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def sha256(self) -> str: ...

@final
class TensorEntry:
    """One tensor's fingerprint; ``values`` is the SHA-256 of its values in
    ``float32-le-bits/v1`` (F32, F16 and BF16 only)."""

    @property
    def file(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def bytes(self) -> int: ...
    @property
    def sha256(self) -> str: ...
    @property
    def values(self) -> Optional[str]: ...

@final
class UnreadEntry:
    """Something not fingerprinted: the file, the tensor when only one is unread, and why."""

    @property
    def file(self) -> str: ...
    @property
    def tensor(self) -> Optional[str]: ...
    @property
    def reason(self) -> str: ...

@final
class AliasEntry:
    """A name a safetensors file records for another of its tensors (``of``)."""

    @property
    def file(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def of(self) -> str: ...

@final
class TensorManifest:
    """A ``socair.tensors/v1`` manifest; ``json()`` is what ``socair tensors --json`` prints."""

    @property
    def schema(self) -> str: ...
    @property
    def artifact(self) -> ManifestArtifact: ...
    @property
    def value_encoding(self) -> str: ...
    @property
    def tensors(self) -> list[TensorEntry]: ...
    @property
    def unread(self) -> list[UnreadEntry]: ...
    @property
    def aliases(self) -> list[AliasEntry]: ...
    def json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...

# The `socair.tensors.diff/v1` comparison.

@final
class ComparedModel:
    """What a side of a comparison is called: its name, format and subject digest."""

    @property
    def name(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def sha256(self) -> str: ...

@final
class Side:
    """One tensor of a pair, or one only a side holds; ``alias_of`` names the tensor its
    name stands for when the name is an alias the file records."""

    @property
    def file(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def alias_of(self) -> Optional[str]: ...

@final
class Numbers:
    """How a pair's values differ, over the elements finite on both sides."""

    @property
    def elements(self) -> int: ...
    @property
    def elements_changed(self) -> int: ...
    @property
    def max_abs_delta(self) -> float: ...
    @property
    def relative_l2(self) -> Optional[float]: ...
    @property
    def cosine(self) -> Optional[float]: ...
    @property
    def nonfinite_changed(self) -> int: ...
    @property
    def narrower_is_rounded_wider(self) -> Optional[bool]: ...

@final
class LineBeyond:
    """A row (or column) of a float tensor holding elements past their blocks' bounds."""

    @property
    def row(self) -> int: ...
    @property
    def elements_beyond_bound(self) -> int: ...
    @property
    def max_abs_error(self) -> float: ...
    @property
    def bound_at_max(self) -> float: ...
    @property
    def rms_error_over_bound(self) -> float: ...

@final
class QuantizedNumbers:
    """A block-quantized tensor against a float one, held to each block's error bound."""

    @property
    def quantized_type(self) -> str: ...
    @property
    def bound(self) -> Literal["reference", "grid_only"]: ...
    @property
    def imatrix(self) -> bool: ...
    @property
    def elements(self) -> int: ...
    @property
    def elements_beyond_bound(self) -> int: ...
    @property
    def nonfinite_changed(self) -> int: ...
    @property
    def max_abs_error(self) -> float: ...
    @property
    def rms_error(self) -> float: ...
    @property
    def rms_bound(self) -> float: ...
    @property
    def max_error_over_bound(self) -> float: ...
    @property
    def rows(self) -> int: ...
    @property
    def rows_beyond_bound(self) -> int: ...
    @property
    def outlier_rows(self) -> int: ...
    @property
    def rows_listed(self) -> list[LineBeyond]: ...
    @property
    def columns(self) -> int: ...
    @property
    def columns_beyond_bound(self) -> int: ...
    @property
    def outlier_columns(self) -> int: ...
    @property
    def columns_listed(self) -> list[LineBeyond]: ...
    @property
    def same_weights(self) -> bool: ...

@final
class Pair:
    """A paired tensor: how the two compare and how they were found."""

    @property
    def outcome(self) -> _Outcome: ...
    @property
    def renamed(self) -> bool: ...
    @property
    def matched_by(self) -> _MatchedBy: ...
    @property
    def transform(self) -> Optional[_Transform]: ...
    @property
    def artifact(self) -> Side: ...
    @property
    def reference(self) -> Side: ...
    @property
    def numbers(self) -> Optional[Numbers]: ...
    @property
    def numbers_missing(self) -> Optional[str]: ...
    @property
    def quantized(self) -> Optional[QuantizedNumbers]: ...

@final
class Summary:
    """Counts per outcome."""

    @property
    def identical(self) -> int: ...
    @property
    def same_values(self) -> int: ...
    @property
    def renamed(self) -> int: ...
    @property
    def same_values_after_unpermute(self) -> int: ...
    @property
    def differs(self) -> int: ...
    @property
    def not_comparable(self) -> int: ...
    @property
    def only_in_artifact(self) -> int: ...
    @property
    def only_in_reference(self) -> int: ...
    @property
    def unread(self) -> int: ...
    @property
    def lower_precision(self) -> int: ...
    @property
    def transposed(self) -> int: ...
    @property
    def aliased(self) -> int: ...
    @property
    def same_weights_quantized(self) -> int: ...
    @property
    def differs_beyond_quantization(self) -> int: ...

@final
class Accounting:
    """Every pair and leftover counted once, by what makes it the same weights or not."""

    @property
    def identical(self) -> int: ...
    @property
    def same_values(self) -> int: ...
    @property
    def lower_precision(self) -> int: ...
    @property
    def unpermuted(self) -> int: ...
    @property
    def transposed(self) -> int: ...
    @property
    def not_comparable(self) -> int: ...
    @property
    def differs(self) -> int: ...
    @property
    def only_in_artifact(self) -> int: ...
    @property
    def only_in_reference(self) -> int: ...
    @property
    def same_weights_quantized(self) -> int: ...
    @property
    def differs_beyond_quantization(self) -> int: ...

@final
class Comparison:
    """A ``socair.tensors.diff/v1`` comparison; ``json()`` is what ``socair tensors diff``
    prints."""

    @property
    def schema(self) -> str: ...
    @property
    def artifact(self) -> ComparedModel: ...
    @property
    def reference(self) -> ComparedModel: ...
    @property
    def value_encoding(self) -> str: ...
    @property
    def matches(self) -> bool: ...
    @property
    def summary(self) -> Summary: ...
    @property
    def accounting(self) -> Accounting: ...
    @property
    def numbers_missing(self) -> Optional[str]: ...
    @property
    def pairs(self) -> list[Pair]: ...
    @property
    def only_in_artifact(self) -> list[Side]: ...
    @property
    def only_in_reference(self) -> list[Side]: ...
    def json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...

# The plugins.

@final
class LoadedPlugin:
    """A plugin loaded: its manifest's name and version, and its file."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def path(self) -> Path: ...

@final
class RefusedPlugin:
    """A plugin file not loaded (refused, or shadowed by an earlier one of its name), and why."""

    @property
    def path(self) -> Path: ...
    @property
    def reason(self) -> str: ...

@final
class Plugins:
    """The plugins a session loaded and refused, and the directories it searched, in order."""

    @property
    def loaded(self) -> list[LoadedPlugin]: ...
    @property
    def refused(self) -> list[RefusedPlugin]: ...
    @property
    def searched(self) -> list[Path]: ...

# What a load hands back.

@final
class LayoutFile:
    """A file holding tensor bytes: ``fd`` a new descriptor (a file handle on Windows) of the
    open file the scan read, which the caller closes; ``length`` its length when scanned."""

    @property
    def path(self) -> Path: ...
    @property
    def fd(self) -> int: ...
    @property
    def length(self) -> int: ...

@final
class ByteRange:
    """``length`` bytes of a file from ``offset``."""

    @property
    def offset(self) -> int: ...
    @property
    def length(self) -> int: ...

@final
class Ranges:
    """A tensor's bytes as ranges of ``files[file]``, in row-major order."""

    @property
    def file(self) -> int: ...
    @property
    def ranges(self) -> list[ByteRange]: ...

@final
class Strided:
    """Element ``(i0, i1, ...)`` starts ``element_size * sum(ik * strides[k])`` bytes after
    ``base`` in ``files[file]``."""

    @property
    def file(self) -> int: ...
    @property
    def base(self) -> int: ...
    @property
    def strides(self) -> list[int]: ...
    @property
    def element_size(self) -> int: ...

@final
class Inline:
    """Bytes the reader decoded (varint-coded ONNX values, an inflated ``.npz`` member)."""

    @property
    def data(self) -> bytes: ...

_Place = Union[Ranges, Strided, Inline]

@final
class TensorLayout:
    """One tensor's place; ``element_type`` is ``None`` for types without a fixed element
    width, ``torch_kind`` one of ``parameter``, ``parameter-frozen``, ``requires-grad``."""

    @property
    def file(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def element_type(self) -> Optional[str]: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def big_endian(self) -> bool: ...
    @property
    def torch_kind(self) -> Optional[Literal["parameter", "parameter-frozen", "requires-grad"]]: ...
    @property
    def place(self) -> _Place: ...

@final
class UnreadTensor:
    """What could not be located: the file, the tensor when one is named, and why."""

    @property
    def file(self) -> str: ...
    @property
    def tensor(self) -> Optional[str]: ...
    @property
    def reason(self) -> str: ...

@final
class Layout:
    """Where every tensor of a clean artifact lies."""

    @property
    def files(self) -> list[LayoutFile]: ...
    @property
    def tensors(self) -> list[TensorLayout]: ...
    @property
    def unread(self) -> list[UnreadTensor]: ...

@final
class Loaded:
    """The scan's report, and the layout when no row FAILs or is a LEAD."""

    @property
    def report(self) -> Report: ...
    @property
    def layout(self) -> Optional[Layout]: ...

def search_path(bundled: Optional[str]) -> list[Path]: ...

@final
class Session:
    """The plugins found on ``dirs``, loaded once (the first plugin of a name wins)."""

    def __new__(cls, dirs: Sequence[Union[str, os.PathLike[str]]]) -> Session: ...
    def plugins(self) -> Plugins: ...
    def scan(
        self,
        path: str,
        header_only: bool,
        reviewed_list: Optional[list[str]] = None,
        reviewed_file: Optional[str] = None,
    ) -> Report: ...
    def tensors(self, path: str) -> TensorManifest: ...
    def diff(self, a: str, b: str) -> Comparison: ...
    def load(
        self,
        path: str,
        reviewed_list: Optional[list[str]] = None,
        reviewed_file: Optional[str] = None,
        verify: bool = True,
    ) -> Loaded: ...
