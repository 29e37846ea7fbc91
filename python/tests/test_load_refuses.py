"""socair.load refuses what does not scan clean, before any tensor exists and without running
anything from the file; and every array it returns holds the bytes the manifest hashed."""

import hashlib
import mmap
from pathlib import Path

import numpy as np
import pytest

import socair
from conftest import FIXTURES, fixture_files, ids, split_by_verdict

MALICIOUS = fixture_files(
    "torch/malicious/*",
    "torch/hostile/*",
    "polyglot/*",
    "npy/plugin/valid/*object*",
    "npy/valid/object.npy",
    "npy/valid/savez-object.npz",
    "joblib/**/*malicious*",
    "gguf/templates/*",
)
# Everything under these is hostile or malformed: a scan of each FAILs or is a LEAD, or the
# file cannot be read at all (exit 2).
MALFORMED = fixture_files(
    "safetensors/malformed/*",
    "gguf/malformed/*",
    "onnx/malformed/*",
    "npy/malformed/*",
    "torch/legacy-malformed/*",
)
CLEAN, REFUSED = split_by_verdict(MALICIOUS + MALFORMED)
EVERY_CLEAN, _ = split_by_verdict(
    fixture_files(
        "torch/legit/*", "torch/weights-only/*.pt", "torch/training/*.pt", "torch/legacy/*",
        "torch/py2/*.pt", "safetensors/*.safetensors", "safetensors/tiny-bert", "gguf/valid/*",
        "onnx/valid/*.onnx", "onnx/external/model-dir", "npy/valid/*", "npy/plugin/valid/*",
        "hf/*", "diff/**/*.safetensors", "diff/**/*.gguf", "diff/**/*.bin",
    )
)


def test_the_hostile_fixtures_are_refused_by_their_scan():
    # Each hostile fixture is refused (or unreadable); none scans clean. Those that do scan
    # clean are named here and must be data only (no payload in the pickle).
    assert len(REFUSED) >= 60
    hostile_clean = [p for p in CLEAN if "malicious" in str(p) or "os-system" in p.name or "eval" in p.name]
    assert hostile_clean == []


@pytest.mark.parametrize("path", REFUSED, ids=ids(REFUSED))
def test_load_refuses_with_the_report(path, audit):
    with pytest.raises(socair.RefusedError) as refused:
        socair.load(path)
    report = refused.value.report
    assert report.verdict in ("FAIL", "LEAD")
    assert not report.clean
    # The scan's report, but for the file's sha256, which a load does not compute.
    scanned = socair.scan(path)
    assert [(r.check, r.status, r.summary) for r in report.rows] == [(r.check, r.status, r.summary) for r in scanned.rows]
    assert (report.scope.digest or "").startswith("not computed")
    assert report.verdict in str(refused.value)
    # Nothing from the file ran: no unpickler looked up a global, nothing was executed,
    # compiled, spawned or opened from Python.
    assert audit.events == []


@pytest.mark.parametrize("path", REFUSED[:10], ids=ids(REFUSED[:10]))
def test_socair_torch_load_refuses_too(path, audit):
    pytest.importorskip("torch")
    import socair.torch

    audit.events.clear()  # importing torch the first time compiles its own code
    with pytest.raises(socair.RefusedError):
        socair.torch.load(path)
    assert audit.events == []


def test_a_clean_load_runs_nothing_either(audit):
    tensors = socair.load(FIXTURES / "torch/legit/state-dict.pt")
    assert len(tensors) == 6
    assert audit.events == []


def _row_major(a):
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("path", EVERY_CLEAN, ids=ids(EVERY_CLEAN))
def test_every_array_holds_the_bytes_the_manifest_hashed(path):
    """NumPy alone: the array's elements in row-major order, in their stored byte order, hash
    to the manifest's sha256; shapes and names are the manifest's."""
    manifest = socair.tensors(path)
    if manifest.unread:
        with pytest.raises(socair.LoadError):
            socair.load(path, raw=True)
        return
    ours = socair.load(path, raw=True)
    entries = {t.name: t for t in manifest.tensors}
    assert set(ours) == set(entries)
    for name, a in ours.items():
        t = entries[name]
        raw = t.dtype not in ("F4", "F6_E2M3", "F6_E3M2") and a.dtype != np.uint8 or ours.dtypes[name] in ("U8", "BOOL")
        if raw:
            assert list(a.shape) == t.shape, name
        assert hashlib.sha256(_row_major(a)).hexdigest() == t.sha256, name
        assert a.nbytes == t.bytes, name
        assert not a.flags.writeable, name


def test_arrays_are_views_of_a_read_only_map():
    tensors = socair.load(FIXTURES / "safetensors/tiny-bert")
    for a in tensors.values():
        base = a
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base, mmap.mmap)
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a.reshape(-1)[:1] = 0


def test_bfloat16_without_ml_dtypes_is_its_bits_named(monkeypatch):
    path = FIXTURES / "torch/legit/all-dtypes.pt"
    monkeypatch.setattr(socair, "_ml_dtypes", lambda: None)
    plain = socair.load(path)
    bf16 = [n for n, d in plain.dtypes.items() if d == "BF16"]
    assert bf16
    for n in bf16:
        assert plain[n].dtype == np.uint16
    f8 = [n for n, d in plain.dtypes.items() if d.startswith("F8_")]
    for n in f8:
        assert plain[n].dtype == np.uint8
    monkeypatch.undo()
    ml = pytest.importorskip("ml_dtypes")
    typed = socair.load(path)
    for n in bf16:
        assert typed[n].dtype == np.dtype(ml.bfloat16)
        assert np.array_equal(typed[n].view(np.uint16), plain[n])


QUANTIZED = Path(__file__).resolve().parent / "data" / "quantized.gguf"


def test_quantized_gguf_is_refused_by_name_unless_raw():
    path = QUANTIZED
    assert socair.scan(path).clean
    manifest = socair.tensors(path)
    quantized = [t for t in manifest.tensors if t.dtype.startswith(("Q", "IQ", "TQ"))]
    assert quantized
    with pytest.raises(socair.LoadError, match=quantized[0].name.replace(".", r"\.") + "|raw=True"):
        socair.load(path)
    raw = socair.load(path, raw=True)
    q = quantized[0]
    assert raw[q.name].dtype == np.uint8 and raw.dtypes[q.name] == q.dtype
    assert raw[q.name].nbytes == q.bytes


def test_a_name_two_files_hold_is_refused(tmp_path):
    a = FIXTURES / "npy/valid/f32.npy"
    for name in ("one.npy", "two.npy"):
        (tmp_path / name).write_bytes(a.read_bytes())
    with pytest.raises(socair.LoadError, match="both"):
        socair.load(tmp_path)


def test_load_of_a_missing_file_is_an_error():
    with pytest.raises(socair.SocairError):
        socair.load(FIXTURES / "no-such-file.safetensors")


PICKLE_PAYLOADS = [p for p in REFUSED if p.name.startswith(("pickle-", "proto")) or "os-system" in p.name or "eval" in p.name]


@pytest.mark.parametrize("path", PICKLE_PAYLOADS, ids=ids(PICKLE_PAYLOADS))
def test_an_unverified_load_still_refuses_every_payload(path, audit):
    # verify=False skips only the passes over tensor bytes (CRC-32 of storages, the file's
    # sha256): the pickle grammar and the structure are judged all the same.
    with pytest.raises(socair.RefusedError) as refused:
        socair.load(path, verify=False)
    assert refused.value.report.scope.mode == "header-only"
    assert audit.events == []


def test_an_unverified_load_says_what_it_skipped():
    path = FIXTURES / "torch/legit/state-dict.pt"
    full = socair.load(path)
    quick = socair.load(path, verify=False)
    assert full.report.scope.mode == "full"
    assert "CRC-32 verified for all" in " ".join(r.summary for r in full.report.rows)
    assert quick.report.scope.mode == "header-only"
    assert "verify=False" in (quick.report.scope.digest or "")
    assert "not read for 6 storage records" in " ".join(r.summary for r in quick.report.rows)
    assert set(full) == set(quick)
    for name in full:
        assert np.array_equal(full[name], quick[name])


def test_a_storage_crc_mismatch_is_caught_by_a_verified_load_only(tmp_path):
    # A storage byte changed after torch.save wrote the file, its CRC-32 left alone: the full
    # scan FAILs it; the structure-only scan does not read storages.
    import zipfile

    src = FIXTURES / "torch/legit/state-dict.pt"
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        info = next(i for i in z.infolist() if i.filename.endswith("/data/0"))
    at = info.header_offset  # the local header: its name and extra lengths at bytes 26, 28
    start = at + 30 + int.from_bytes(data[at + 26 : at + 28], "little") + int.from_bytes(data[at + 28 : at + 30], "little")
    data[start] ^= 0x01
    bad = tmp_path / "flipped.pt"
    bad.write_bytes(bytes(data))
    with pytest.raises(socair.RefusedError, match="FAIL"):
        socair.load(bad)
    assert socair.load(bad, verify=False)
