"""Where the wheel put the ``socair`` command and the plugins it shares with this package.

The wheel installs them as the command-line tarball lays them out, under the installation's
prefix (``<prefix>/bin/socair`` and ``<prefix>/lib/socair/plugins/``), so that the command
finds its plugins beside itself with no configuration and the plugins are installed once.
Where that prefix is depends on how the wheel was installed (a virtual environment, ``--user``,
a system ``site-packages``, ``uv tool``...): the installer's record of the distribution names
every file it wrote, so this module reads the place from there rather than guessing it.

Imports nothing of the package itself (no NumPy, no extension): ``python -m socair`` starts
the command through it.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import List, Optional


def _installed_files() -> List[Path]:
    """The files of the installed ``socair`` distribution this module belongs to, resolved;
    empty when this package was not installed from a wheel (a source tree on ``sys.path``)."""
    try:
        dist = importlib.metadata.distribution("socair")
    except importlib.metadata.PackageNotFoundError:
        return []
    files = [Path(str(f.locate())).resolve() for f in dist.files or []]
    # Another socair distribution earlier on sys.path is not this one: its record does not
    # list this file.
    if Path(__file__).resolve() not in files:
        return []
    return files


def plugin_dir() -> Optional[Path]:
    """The directory holding the installed plugins, or None."""
    for f in _installed_files():
        if f.parent.name == "plugins" and f.parent.parent.name == "socair" and "socair_" in f.name:
            return f.parent
    return None


def command() -> Optional[Path]:
    """The installed ``socair`` command (a native executable), or None."""
    for f in _installed_files():
        if f.stem == "socair" and f.parent.name in ("bin", "Scripts") and f.is_file():
            return f
    return None
