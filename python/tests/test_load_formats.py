"""socair.load against each format's own loader, tensor by tensor: safetensors' safe_open,
numpy.load, gguf-py's GGUFReader and onnx's numpy_helper, over every committed fixture of
these formats that scans clean. Each comparison skips where its library is not installed."""

import mmap
from pathlib import Path

import numpy as np
import pytest

import socair
from conftest import FIXTURES, assert_same_array, fixture_files, split_by_verdict


def ids(paths):
    return [str(p.relative_to(FIXTURES)) if FIXTURES in p.parents else p.name for p in paths]

SAFETENSORS, _ = split_by_verdict(
    fixture_files("safetensors/*.safetensors", "safetensors/read-the-same/*.safetensors", "safetensors/tiny-bert", "hf/*/*.safetensors", "diff/**/*.safetensors")
)
NPY, _ = split_by_verdict(fixture_files("npy/valid/*.np[yz]", "npy/plugin/valid/*.np[yz]"))
GGUF, _ = split_by_verdict(fixture_files("gguf/valid/*.gguf", "gguf/split/*.gguf", "diff/**/*.gguf"))
GGUF.append(Path(__file__).resolve().parent / "data" / "quantized.gguf")
ONNX, _ = split_by_verdict(fixture_files("onnx/valid/*.onnx", "onnx/attributes/*.onnx", "onnx/external/model-dir"))


def load(path):
    """socair.load, raw bytes for the tensors NumPy has no type for (F4, quantized GGUF)."""
    return socair.load(path, raw=True)


def unsigned(a):
    # bfloat16/float8 without ml_dtypes come back as uint16/uint8 bits: compare as such.
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind not in "c" else a


@pytest.mark.parametrize("path", SAFETENSORS, ids=ids(SAFETENSORS))
def test_safetensors(path):
    st = pytest.importorskip("safetensors")
    ours = load(path)
    files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
    seen = set()
    for f in files:
        with st.safe_open(f, framework="numpy") as handle:
            for name in handle.keys():
                seen.add(name)
                a = ours[name]
                try:
                    theirs = handle.get_tensor(name)
                except Exception:
                    # A dtype safetensors' NumPy framework has no type for (BF16, F8, F4):
                    # its bytes as torch reads them, when torch is installed.
                    torch = pytest.importorskip("torch")
                    with st.safe_open(f, framework="pt") as pt:
                        t = pt.get_tensor(name)
                    raw = t.contiguous().view(-1).view(torch.uint8).numpy() if t.numel() else np.zeros(0, np.uint8)
                    assert np.ascontiguousarray(a).view(np.uint8).reshape(-1).tobytes() == raw.tobytes(), name
                    continue
                assert str(theirs.dtype) == str(a.dtype) or ours.dtypes[name] in ("BF16",) or a.dtype.kind == theirs.dtype.kind, name
                assert_same_array(a, theirs, name)
    assert set(ours) == seen


@pytest.mark.parametrize("path", NPY, ids=ids(NPY))
def test_numpy(path):
    ours = load(path)
    if path.suffix == ".npy":
        theirs = {"array": np.load(path, allow_pickle=False)}
    else:
        with np.load(path, allow_pickle=False) as z:
            theirs = {name: z[name] for name in z.files}
    # socair names an .npz member by its name in the zip, with `.npy`.
    mapped = {}
    for name, a in ours.items():
        key = name[: -len(".npy")] if name.endswith(".npy") and name[: -len(".npy")] in theirs else name
        mapped[key] = a
    assert set(mapped) == set(theirs)
    for name, t in theirs.items():
        a = mapped[name]
        assert a.dtype == t.dtype, name
        assert a.shape == t.shape, name
        if isinstance(a.base, mmap.mmap) and t.size > 1:
            # Mapped from the file: NumPy's strides (a Fortran-order array's too). A member
            # the reader decoded (deflated, bzip2, LZMA) comes back as a C-order copy.
            assert a.strides == t.strides, name
        if t.dtype.kind in "USMmV":
            assert np.array_equal(a, t), name
        else:
            assert_same_array(a, t, name)


@pytest.mark.parametrize("path", GGUF, ids=ids(GGUF))
def test_gguf(path):
    gguf = pytest.importorskip("gguf")
    reader = gguf.GGUFReader(path)
    quantized = {t.name for t in reader.tensors if t.tensor_type not in _PLAIN(gguf)}
    if quantized:
        with pytest.raises(socair.LoadError, match="raw=True"):
            socair.load(path)
    ours = load(path)
    assert set(ours) == {t.name for t in reader.tensors}
    for t in reader.tensors:
        a = ours[t.name]
        if t.name in quantized:
            # Raw bytes, as gguf-py's data holds them (uint8 rows of blocks).
            assert a.dtype == np.uint8 and a.tobytes() == np.ascontiguousarray(t.data).tobytes(), t.name
            assert ours.dtypes[t.name] == t.tensor_type.name
            continue
        theirs = np.asarray(t.data)
        if ours.dtypes[t.name] == "BF16":
            # gguf-py has no NumPy type for BF16 either: its data is the rows' bytes.
            assert a.shape[:-1] == theirs.shape[:-1], t.name
            assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(theirs).tobytes(), t.name
            continue
        assert a.shape == theirs.shape, t.name
        assert a.dtype == theirs.dtype, t.name
        assert_same_array(a, theirs, t.name)


def _PLAIN(gguf):
    q = gguf.GGMLQuantizationType
    return {q.F32, q.F16, q.BF16, q.F64, q.I8, q.I16, q.I32, q.I64}


@pytest.mark.parametrize("path", ONNX, ids=ids(ONNX))
def test_onnx(path):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    model_path = next(path.glob("*.onnx")) if path.is_dir() else path
    model = onnx.load(str(model_path), load_external_data=path.is_dir())
    unread = socair.tensors(path).unread
    if unread:
        # Tensors socair's reader does not carry (subgraph initializers, sparse ones): named
        # in the refusal, never left out silently.
        with pytest.raises(socair.LoadError, match="not every tensor could be located") as e:
            load(path)
        assert all(u.tensor in str(e.value) for u in unread[:5] if u.tensor)
        return
    ours = load(path)
    theirs = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    theirs[node.output[0]] = numpy_helper.to_array(attr.t)
    assert set(theirs) <= set(ours)
    for name, t in theirs.items():
        a = ours[name]
        assert a.shape == t.shape, name
        if ours.dtypes[name] in ("BF16",) or ours.dtypes[name].startswith("F8"):
            assert np.array_equal(unsigned(a).reshape(-1), np.ascontiguousarray(t).view(a.dtype if a.dtype.kind == "u" else unsigned(a).dtype).reshape(-1)), name
            continue
        assert a.dtype == t.dtype, name
        assert_same_array(a, t, name)


def test_every_format_had_fixtures():
    assert SAFETENSORS and NPY and GGUF and ONNX
