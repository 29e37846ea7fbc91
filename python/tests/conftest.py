"""Shared helpers of the socair Python tests: where the repository's fixtures are, which of
them scan clean, and the NumPy view that compares two arrays bit for bit."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import socair

FIXTURES = Path(os.environ.get("SOCAIR_FIXTURES", Path(__file__).resolve().parents[2] / "fixtures"))

if not FIXTURES.is_dir():
    pytest.exit(f"no fixtures at {FIXTURES}: set SOCAIR_FIXTURES to the repository's fixtures/", 2)


def fixture_files(*patterns):
    """Fixture files matching the globs, relative to fixtures/, sorted."""
    out: set[Path] = set()
    for pattern in patterns:
        out.update(p for p in FIXTURES.glob(pattern) if p.is_file() or p.is_dir())
    return sorted(out)


def split_by_verdict(paths):
    """(clean, refused) lists of the paths, by socair.scan; paths socair cannot read at all
    (exit 2) are in neither."""
    clean: list[Path] = []
    refused: list[Path] = []
    for p in paths:
        try:
            report = socair.scan(p)
        except socair.SocairError:
            continue
        (clean if report.clean else refused).append(p)
    return clean, refused


def ids(paths):
    return [str(p.relative_to(FIXTURES)) for p in paths]


def bits(a):
    """The array's elements as unsigned integers of their width (NaN payloads, -0.0 and the
    bfloat16/float8 types compared exactly), in native byte order."""
    a = np.asarray(a)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c" and a.dtype.itemsize // 2 in (1, 2, 4, 8):
        return a.view(np.dtype(f"u{a.dtype.itemsize // 2}"))
    if a.dtype.itemsize in (1, 2, 4, 8) and a.dtype.kind not in "US" and a.dtype.fields is None:
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    # Extended precision, strings, records: their bytes.
    return a.reshape(-1).view(np.uint8)


def assert_same_array(ours, theirs, name):
    """Same shape, and the same bits element by element in logical (row-major) order."""
    assert ours.shape == theirs.shape, f"{name}: shape {ours.shape} != {theirs.shape}"
    a = bits(np.ascontiguousarray(ours)).reshape(-1)
    b = bits(np.ascontiguousarray(theirs)).reshape(-1)
    assert np.array_equal(a, b), f"{name}: values differ"


class Audit:
    """Records the audit events that running a pickle's payload, or unpickling at all, would
    raise (PEP 578): a load that raised none of them ran nothing from the file."""

    WATCHED = (
        "pickle.find_class",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "subprocess.Popen",
        "exec",
        "compile",
        "marshal.loads",
        "webbrowser.open",
        "runpy",
        "open",
    )
    events: list[tuple[str, str]] = []
    armed = False

    @classmethod
    def hook(cls, event, args):
        if cls.armed and event.startswith(cls.WATCHED):
            if event == "open" and args and str(args[0]).startswith(("/proc/", "/sys/")):
                return
            cls.events.append((event, repr(args)[:200]))


sys.addaudithook(Audit.hook)


@pytest.fixture
def audit():
    Audit.events = []
    Audit.armed = True
    try:
        yield Audit
    finally:
        Audit.armed = False
