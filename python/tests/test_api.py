"""socair.scan, socair.tensors and socair.diff: the documents the command line prints, and the
Report's verdict, clean, gaps and rows."""

import json
import os
import subprocess

import pytest

import socair
from conftest import FIXTURES

CLI = os.environ.get("SOCAIR_CLI", "")

SAMPLES = [
    "safetensors/tiny-bert",
    "torch/legit/state-dict.pt",
    "torch/malicious/pickle-os-system.pt",
    "torch/containers/generic.zip",
    "npy/valid/f32.npy",
    "gguf/valid",
]


def test_plugins_are_bundled_and_found_without_configuration():
    found = socair.plugins()
    names = {p.name for p in found.loaded}
    assert {"safetensors", "torch-zip", "gguf", "onnx", "numpy"} <= names
    assert found.refused == []
    bundled = found.searched[-1]
    assert bundled.parts[-2:] == ("socair", "plugins")
    assert all(p.path.parent == bundled for p in found.loaded)


def test_a_clean_file_passes():
    report = socair.scan(FIXTURES / "safetensors/tiny-bert")
    assert report.verdict == "PASS" and report.clean
    assert all(r.status in ("PASS", "NOT_TESTED") for r in report.rows)
    assert report.artifact.format == "model directory"


def test_a_malicious_checkpoint_fails_with_its_finding():
    report = socair.scan(FIXTURES / "torch/malicious/pickle-os-system.pt")
    assert report.verdict == "FAIL" and not report.clean
    fail = [r for r in report.rows if r.status == "FAIL"]
    assert any("os.system" in f.reason for r in fail for f in r.findings)


def test_a_lead_is_not_clean():
    # A global outside the grammar that nothing runs code with: a LEAD, not a FAIL.
    report = socair.scan(FIXTURES / "torch/malicious/argparse-namespace.pt")
    assert report.verdict == "LEAD"
    assert not report.clean
    assert "FAIL" not in {r.status for r in report.rows}


def test_header_only_leaves_gaps():
    report = socair.scan(FIXTURES / "torch/legit/state-dict.pt", header_only=True)
    assert report.scope.mode == "header-only"
    full = socair.scan(FIXTURES / "torch/legit/state-dict.pt")
    assert full.scope.mode == "full"
    assert full.gaps == [r.check for r in full.rows if r.status == "NOT_TESTED"]
    assert report.gaps == [r.check for r in report.rows if r.status == "NOT_TESTED"]


def test_reviewed_classes_are_named_in_the_scope(tmp_path):
    listed = socair.scan(FIXTURES / "torch/legit/state-dict.pt", reviewed_classes=["argparse.Namespace"])
    assert listed.scope.reviewed_classes == ["argparse.Namespace"]
    f = tmp_path / "reviewed.txt"
    f.write_text("# reviewed\nargparse.Namespace\n")
    from_file = socair.scan(FIXTURES / "torch/legit/state-dict.pt", reviewed_classes=f)
    assert from_file.scope.reviewed_classes == ["argparse.Namespace"]


def test_reviewed_class_turns_a_lead_into_a_pass():
    path = FIXTURES / "torch/malicious/argparse-namespace.pt"
    assert socair.scan(path).verdict == "LEAD"
    assert socair.scan(path, reviewed_classes=["argparse.Namespace"]).clean


def test_a_missing_file_is_an_error():
    with pytest.raises(socair.SocairError, match="no-such-file"):
        socair.scan(FIXTURES / "no-such-file.pt")


def test_tensors_manifest():
    m = socair.tensors(FIXTURES / "torch/legit/state-dict.pt")
    assert m.schema == "socair.tensors/v1"
    assert m.unread == []
    assert len(m.tensors) > 0
    names = [t.name for t in m.tensors]
    assert names == sorted(names)


def test_diff_of_a_model_and_itself_matches():
    p = FIXTURES / "safetensors/tiny-bert"
    c = socair.diff(p, p)
    assert c.schema == "socair.tensors.diff/v1"
    assert c.matches is True


def test_diff_of_two_models_does_not_match():
    c = socair.diff(FIXTURES / "torch/legit/state-dict.pt", FIXTURES / "safetensors/tiny-bert")
    assert c.matches is False


def test_diff_across_quantization_names_the_edited_rows():
    quantized = FIXTURES / "diff/quantized"
    c = socair.diff(quantized / "llama-q4_0-edited.gguf", quantized / "model.safetensors")
    assert c.accounting.same_weights_quantized == 15
    assert c.accounting.differs_beyond_quantization == 1
    (edited,) = [p for p in c.pairs if p.outcome == "differs_beyond_quantization"]
    assert edited.artifact.name == "blk.1.attn_v.weight"
    q = edited.quantized
    assert q is not None and q.quantized_type == "Q4_0" and not q.same_weights
    assert sorted(r.row for r in q.rows_listed) == [3, 17, 29]
    assert q.outlier_rows == 3
    # The classes hold what the JSON says.
    as_json = next(p for p in c.to_dict()["pairs"] if p["outcome"] == "differs_beyond_quantization")
    assert as_json["quantized"]["elements_beyond_bound"] == q.elements_beyond_bound


@pytest.mark.skipif(not CLI, reason="SOCAIR_CLI (the socair binary to compare with) not set")
@pytest.mark.parametrize("rel", SAMPLES)
def test_report_json_is_what_the_cli_prints(rel):
    path = FIXTURES / rel
    ours = socair.scan(path)
    cli = subprocess.run([CLI, "scan", "--json", str(path)], capture_output=True, check=False)
    assert cli.returncode == (0 if ours.clean else 1)
    theirs = json.loads(cli.stdout)
    mine = json.loads(ours.json())
    # The plugins are the CLI's own build copied into the package: the same bytes, the same
    # sha256; only where they were found differs, and the report does not say where.
    assert mine == theirs
    assert ours.json() == cli.stdout.decode()


@pytest.mark.skipif(not CLI, reason="SOCAIR_CLI (the socair binary to compare with) not set")
@pytest.mark.parametrize("rel", ["torch/legit/state-dict.pt", "safetensors/tiny-bert"])
def test_tensors_is_what_the_cli_prints(rel):
    path = FIXTURES / rel
    cli = subprocess.run([CLI, "tensors", "--json", str(path)], capture_output=True, check=True)
    ours = socair.tensors(path)
    assert ours.to_dict() == json.loads(cli.stdout)
    assert ours.json() == cli.stdout.decode()


def test_socair_plugin_path_is_searched_before_the_bundled_plugins(tmp_path):
    # A plugin in a SOCAIR_PLUGIN_PATH directory is loaded from there; the bundled one of the
    # same name is shadowed (a fresh process: plugins are loaded once per process).
    import shutil
    import sys

    bundled = next(p.path for p in socair.plugins().loaded if p.name == "gguf")
    shutil.copy2(bundled, tmp_path / os.path.basename(bundled))
    code = (
        "import json, socair; p = socair.plugins(); "
        "print(json.dumps([str(p.searched[0]), {q.name: str(q.path) for q in p.loaded}['gguf'], "
        "[r.reason for r in p.refused], socair.scan(%r).verdict]))" % str(FIXTURES / "gguf/valid/llama-like.gguf")
    )
    env = dict(os.environ, SOCAIR_PLUGIN_PATH=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    searched_first, gguf_from, refused, verdict = json.loads(out.stdout)
    assert searched_first == str(tmp_path)
    assert gguf_from == str(tmp_path / os.path.basename(bundled))
    assert any("shadowed" in why and "gguf" in why for why in refused)
    assert verdict == "PASS"
