"""socair.load and socair.torch.load against torch.load(weights_only=True), tensor by tensor:
the same names (a state dict's keys, nested containers joined with dots), dtypes, shapes,
strides and bits, over every committed torch fixture that scans clean."""

import warnings

import numpy as np
import pytest

import socair
from conftest import bits, fixture_files, ids, split_by_verdict

torch = pytest.importorskip("torch")
import socair.torch  # noqa: E402  (needs torch)

CANDIDATES = fixture_files(
    "torch/legit/*.pt",
    "torch/weights-only/*.pt",
    "torch/training/*.pt",
    "torch/training/*.ckpt",
    "torch/containers/*.pt",
    "torch/legacy/*.pt",
    "torch/py2/*.pt",
    "hf/*/*.bin",
    "diff/**/*.bin",
    "diff/**/*.pt",
)
CLEAN, _ = split_by_verdict(CANDIDATES)

TORCH_DTYPE = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16",
    "BF16": "bfloat16", "F32": "float32", "F64": "float64", "C64": "complex64",
    "C128": "complex128", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
    "F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2FNUZ": "float8_e5m2fnuz",
    "F8_E8M0": "float8_e8m0fnu",
}


def flatten(obj, prefix, out):
    """torch.load's result as `socair tensors` names it: dict keys and sequence indices
    joined with dots (a bare list is a model named 0, 1, ...)."""
    if isinstance(obj, torch.Tensor):
        out[prefix] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    return out


def torch_bits(t):
    """A tensor's elements as a NumPy array of unsigned integers of their width (a complex
    tensor's as its real and imaginary parts, a last dimension of 2)."""
    t = t.detach().contiguous()
    width = t.element_size()
    if t.is_complex():
        t = torch.view_as_real(t)
        width //= 2
    u = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[width]
    return t.view(u).numpy().view(np.dtype(f"u{width}"))


def same_bits(array, t):
    """The array holds the tensor's elements, bit for bit, in logical order."""
    return np.array_equal(bits(np.ascontiguousarray(array)).reshape(-1), torch_bits(t).reshape(-1))


def reference(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return torch.load(path, weights_only=True, map_location="cpu")
        except Exception as e:  # torch's own refusal: nothing to compare with
            pytest.skip(f"torch.load(weights_only=True) refuses it: {type(e).__name__}: {str(e)[:80]}")


def expected(path, ours):
    """name -> tensor as socair names them: quantized tensors by the parts socair names them
    by; a training checkpoint's model state dict by its own keys (socair names the model's
    tensors without the key that holds it, `state_dict.` or `model.`); a bare tensor
    `tensor`."""
    out = {}
    for name, t in flatten(reference(path), "", {}).items():
        if t.is_quantized:
            name, t = f"{name}.int_repr", t.int_repr()
        parts = name.split(".") if name else ["tensor"]
        # The longest name socair has that is a suffix after whole components.
        found = next((".".join(parts[i:]) for i in range(len(parts)) if ".".join(parts[i:]) in ours), None)
        out[found if found is not None else name] = t
    return out


@pytest.mark.parametrize("path", CLEAN, ids=ids(CLEAN))
def test_load_matches_torch_load(path):
    if any(t.device.type == "meta" for t in flatten(reference(path), "", {}).values()):
        # A meta tensor has no values to return: socair.load says which.
        with pytest.raises(socair.LoadError, match="meta"):
            socair.load(path)
        return
    ours = socair.load(path)
    theirs = expected(path, ours)
    # A quantized tensor's scales and zero points: compared through its int_repr only.
    quantized_parts = {n for n in ours if f"{n.rsplit('.', 1)[0]}.int_repr" in theirs and not n.endswith(".int_repr")}
    assert set(ours) - quantized_parts == set(theirs)
    for name, t in theirs.items():
        a = ours[name]
        if not name.endswith(".int_repr"):
            assert TORCH_DTYPE[ours.dtypes[name]] == str(t.dtype).removeprefix("torch."), name
        assert a.shape == tuple(t.shape), name
        if t.numel() > 1:
            assert a.strides == tuple(s * a.itemsize for s in t.stride()), name
        assert not a.flags.writeable
        assert same_bits(a, t), name


@pytest.mark.parametrize("path", CLEAN, ids=ids(CLEAN))
def test_socair_torch_load_matches_torch_load(path):
    if any(t.device.type == "meta" for t in flatten(reference(path), "", {}).values()):
        pytest.skip("a meta tensor: socair.load refuses it by name (test above)")
    ours = socair.torch.load(path)
    theirs = {n: t for n, t in expected(path, ours).items() if not n.endswith(".int_repr")}
    for name, t in theirs.items():
        o = ours[name]
        assert isinstance(o, torch.Tensor)
        assert type(o) is type(t), name  # nn.Parameter where torch gives one
        assert o.requires_grad == t.requires_grad, name
        assert o.dtype == t.dtype, name
        assert o.shape == t.shape, name
        if t.numel() > 1:
            assert o.stride() == t.stride(), name
        assert np.array_equal(torch_bits(o), torch_bits(t)), name
    # Writable, as torch.load's tensors are; a write stays in this process.
    for o in ours.values():
        if o.numel() and o.dtype.is_floating_point and o.is_contiguous():
            with torch.no_grad():
                o.view(-1)[0] = 12345
            break
    again = socair.torch.load(path)
    for name, t in theirs.items():
        assert np.array_equal(torch_bits(again[name]), torch_bits(t)), f"{name}: the file changed"


def test_some_fixtures_were_compared():
    assert len(CLEAN) >= 20
