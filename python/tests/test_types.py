"""The extension's classes against what they stand for: every class and field the stub
(``socair/_native.pyi``) states is the extension's, no more and no fewer; every document's
classes hold the same values as the JSON the host wrote (``json()``, which is what the command
line prints); the values have the stated types; the classes are frozen and compare by value;
and a load's layout describes each tensor with the classes the stub names."""

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest

import socair
from socair import _native
from conftest import FIXTURES

CLI = os.environ.get("SOCAIR_CLI", "")
STUB = Path(_native.__file__).with_name("_native.pyi")

# What the report computes from its rows or gives in another form: not fields of its JSON.
DERIVED = {"verdict", "clean", "gaps", "document"}


def stub_classes():
    """Each class the stub declares: its properties, and its other methods."""
    tree = ast.parse(STUB.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name != "SocairError":
            properties: list[str] = []
            methods: list[str] = []
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    is_property = any(isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list)
                    (properties if is_property else methods).append(item.name)
            out[node.name] = (properties, methods)
    return out


STUBBED = stub_classes()


def test_the_stub_states_every_class_and_field_of_the_extension():
    runtime = {name for name, v in vars(_native).items() if isinstance(v, type) and name != "SocairError"}
    assert runtime == set(STUBBED)
    for name, (properties, methods) in STUBBED.items():
        cls = getattr(_native, name)
        # PyO3 gives each field and getter a data descriptor on the class.
        fields = {k for k, v in vars(cls).items() if not k.startswith("_") and hasattr(v, "__set__")}
        assert fields == set(properties), name
        callables = {k for k, v in vars(cls).items() if not k.startswith("_") and not hasattr(v, "__set__")}
        assert callables == {m for m in methods if not m.startswith("_")}, name


def json_form(value, skip=()):
    """A class's value as its JSON holds it: fields by the stub's names, a field that is
    None left out (the host omits them), lists and plain values as they are."""
    name = type(value).__name__
    if name in STUBBED and getattr(_native, name, None) is type(value):
        out = {}
        for field in STUBBED[name][0]:
            if field in skip:
                continue
            v = getattr(value, field)
            if v is not None:
                out[field] = json_form(v, skip)
        return out
    if isinstance(value, list):
        return [json_form(v, skip) for v in value]
    if isinstance(value, dict):
        return {k: json_form(v, skip) for k, v in value.items()}
    return value


SCANNED = [
    "safetensors/tiny-bert",
    "torch/legit/state-dict.pt",
    "torch/malicious/pickle-os-system.pt",
    "torch/malicious/argparse-namespace.pt",
    "npy/valid/savez-compressed.npz",
    "gguf/valid",
]


@pytest.mark.parametrize("rel", SCANNED)
def test_the_report_classes_hold_the_reports_json(rel):
    report = socair.scan(FIXTURES / rel, reviewed_classes=["argparse.Namespace"])
    assert json_form(report, DERIVED) == json.loads(report.json())
    assert report.to_dict() == json.loads(report.json()) == report.document


def test_a_header_only_report_names_its_scope():
    report = socair.scan(FIXTURES / "torch/legit/state-dict.pt", header_only=True)
    assert json_form(report, DERIVED) == json.loads(report.json())
    assert report.scope.mode == "header-only"
    assert report.scope.reviewed_classes is None and report.scope.reference_data is None


def test_report_fields_have_their_types():
    report = socair.scan(FIXTURES / "torch/malicious/pickle-os-system.pt")
    assert isinstance(report, socair.Report)
    assert isinstance(report.artifact, socair.ReportArtifact)
    assert isinstance(report.artifact.size_bytes, int) and report.artifact.size_bytes > 0
    assert isinstance(report.tool, socair.Tool) and report.tool.name == "socair"
    assert all(isinstance(p, socair.PluginUse) and len(p.sha256) == 64 for p in report.tool.plugins)
    assert isinstance(report.scope, socair.Scope) and report.scope.mode == "full"
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in report.rules.items())
    assert all(isinstance(r, socair.Row) for r in report.rows)
    fail = [r for r in report.rows if r.status == "FAIL"]
    assert fail and all(isinstance(f, socair.Finding) for r in fail for f in r.findings)
    assert report.verdict == "FAIL" and report.gaps == [r.check for r in report.rows if r.status == "NOT_TESTED"]


def test_documents_are_frozen_and_compare_by_value():
    path = FIXTURES / "torch/legit/state-dict.pt"
    a, b = socair.scan(path), socair.scan(path)
    assert a == b and a.rows == b.rows and a.rows[0] == b.rows[0]
    assert a != socair.scan(FIXTURES / "torch/malicious/pickle-os-system.pt")
    with pytest.raises(AttributeError):
        a.rows = []  # type: ignore[misc]
    with pytest.raises(AttributeError):
        a.artifact.name = "other"  # type: ignore[misc]
    # A row read again is a new object with the same values: changing the list a getter
    # returned changes nothing in the report.
    a.rows.clear()
    assert a.rows == b.rows and a.rows
    assert socair.tensors(path) == socair.tensors(path)
    assert repr(a.rows[0]).startswith("Row(check=")


@pytest.mark.parametrize("rel", ["torch/legit/state-dict.pt", "safetensors/tiny-bert", "npy/valid/savez.npz", "gguf/valid"])
def test_the_manifest_classes_hold_the_manifests_json(rel):
    m = socair.tensors(FIXTURES / rel)
    expected = json.loads(m.json())
    form = json_form(m)
    if not m.aliases:
        # The host leaves out an empty alias list.
        assert "aliases" not in expected
        form.pop("aliases")
    assert form == expected == m.to_dict()
    assert all(isinstance(t, socair.TensorEntry) and isinstance(t.bytes, int) for t in m.tensors)
    assert all(isinstance(d, int) for t in m.tensors for d in t.shape)


@pytest.mark.parametrize(
    "a, b",
    [
        ("safetensors/tiny-bert", "safetensors/tiny-bert"),
        ("torch/legit/state-dict.pt", "safetensors/tiny-bert"),
        ("torch/legit/state-dict.pt", "torch/legit/tied.pt"),
    ],
)
def test_the_comparison_classes_hold_the_comparisons_json(a, b):
    c = socair.diff(FIXTURES / a, FIXTURES / b)
    assert json_form(c) == json.loads(c.json()) == c.to_dict()
    assert isinstance(c.summary, socair.Summary) and isinstance(c.accounting, socair.Accounting)
    assert all(isinstance(p, socair.Pair) and isinstance(p.artifact, socair.Side) for p in c.pairs)


def test_a_comparisons_outcomes_are_the_names_the_json_gives():
    c = socair.diff(FIXTURES / "torch/legit/state-dict.pt", FIXTURES / "torch/legit/state-dict.pt")
    assert {p.outcome for p in c.pairs} == {"identical"}
    assert {p.matched_by for p in c.pairs} == {"name"}
    assert all(p.transform is None and p.numbers is None for p in c.pairs)
    assert c.summary.identical == len(c.pairs) and c.matches


@pytest.mark.skipif(not CLI, reason="SOCAIR_CLI (the socair binary to compare with) not set")
def test_the_classes_json_is_what_the_cli_prints():
    a, b = FIXTURES / "torch/legit/state-dict.pt", FIXTURES / "torch/legit/tied.pt"
    cli = subprocess.run([CLI, "tensors", "diff", str(a), str(b)], capture_output=True, check=False)
    assert socair.diff(a, b).json() == cli.stdout.decode()
    cli = subprocess.run([CLI, "tensors", "--json", str(a)], capture_output=True, check=True)
    assert socair.tensors(a).json() == cli.stdout.decode()


def test_plugins_are_typed():
    found = socair.plugins()
    assert isinstance(found, socair.Plugins)
    assert found.loaded and all(isinstance(p, socair.LoadedPlugin) for p in found.loaded)
    assert all(isinstance(p.path, Path) and p.path.parent in found.searched for p in found.loaded)
    assert all(isinstance(r, socair.RefusedPlugin) and r.reason for r in found.refused)
    assert all(isinstance(d, Path) for d in found.searched)


def layout_of(rel):
    """The extension's layout of a clean fixture; its descriptors closed here."""
    loaded = socair._plugins_session().load(str(FIXTURES / rel))
    assert isinstance(loaded, _native.Loaded) and isinstance(loaded.report, socair.Report)
    layout = loaded.layout
    assert layout is not None, rel
    for f in layout.files:
        os.close(f.fd)
    return layout


@pytest.mark.parametrize(
    "rel, kind",
    [
        ("torch/legit/state-dict.pt", _native.Ranges),
        ("torch/legit/noncontiguous.pt", _native.Strided),
        ("npy/valid/savez-compressed.npz", _native.Inline),
    ],
)
def test_a_layout_places_each_tensor_with_a_stated_class(rel, kind):
    layout = layout_of(rel)
    assert all(isinstance(f, _native.LayoutFile) and isinstance(f.path, Path) and f.length > 0 for f in layout.files)
    assert layout.unread == []
    places = [t.place for t in layout.tensors]
    assert any(isinstance(p, kind) for p in places), [repr(p) for p in places]
    manifest = {(t.file, t.name): t for t in socair.tensors(FIXTURES / rel).tensors}
    for t in layout.tensors:
        assert isinstance(t, _native.TensorLayout)
        assert manifest[(t.file, t.name)].shape == t.shape
        assert manifest[(t.file, t.name)].dtype == t.dtype
        p = t.place
        if isinstance(p, _native.Ranges):
            assert 0 <= p.file < len(layout.files)
            assert all(isinstance(r, _native.ByteRange) for r in p.ranges)
            assert sum(r.length for r in p.ranges) == manifest[(t.file, t.name)].bytes
            assert all(r.offset + r.length <= layout.files[p.file].length for r in p.ranges)
        elif isinstance(p, _native.Strided):
            assert 0 <= p.file < len(layout.files) and len(p.strides) == len(t.shape) and p.element_size > 0
        else:
            assert isinstance(p, _native.Inline) and isinstance(p.data, bytes)
            assert len(p.data) == manifest[(t.file, t.name)].bytes


def test_a_refused_load_has_a_report_and_no_layout():
    loaded = socair._plugins_session().load(str(FIXTURES / "torch/malicious/pickle-os-system.pt"))
    assert loaded.layout is None
    assert loaded.report.verdict == "FAIL"
