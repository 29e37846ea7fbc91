"""Type stubs for ``socair._native``, the PyO3 extension over the socair host library."""

from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

VERSION: str

class SocairError(Exception):
    """An input socair cannot read at all: the command line's exit code 2."""

_Place = Union[
    Tuple[str, int, List[Tuple[int, int]]],
    Tuple[str, int, int, List[int], int],
    Tuple[str, bytes],
]
_TensorPlace = Tuple[str, str, str, Optional[str], List[int], bool, _Place, Optional[str]]
_Layout = Tuple[
    List[Tuple[Path, int, int]],
    List[_TensorPlace],
    List[Tuple[str, Optional[str], str]],
]

def search_path(bundled: Optional[str]) -> List[Path]: ...

class Session:
    def __init__(self, dirs: Sequence[str]) -> None: ...
    def plugins(self) -> Tuple[List[Tuple[str, str, Path]], List[Tuple[Path, str]]]: ...
    def scan(
        self,
        path: str,
        header_only: bool,
        reviewed_list: Optional[List[str]] = None,
        reviewed_file: Optional[str] = None,
    ) -> str: ...
    def tensors(self, path: str) -> str: ...
    def diff(self, a: str, b: str) -> str: ...
    def load(
        self,
        path: str,
        reviewed_list: Optional[List[str]] = None,
        reviewed_file: Optional[str] = None,
        verify: bool = True,
    ) -> Tuple[str, Optional[_Layout]]: ...
