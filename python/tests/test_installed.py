"""Where the wheel installed the command and the plugins, as the package finds them
(``socair/_installed.py``): the same directory the command itself loads its plugins from."""

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import socair
from socair import _installed

INSTALLED = _installed.command() is not None
pytestmark = pytest.mark.skipif(not INSTALLED, reason="socair was not installed from a wheel")


def test_the_package_and_the_command_load_the_same_plugin_files():
    listing = json.loads(
        subprocess.run([str(_installed.command()), "plugins", "--json"], capture_output=True, check=True).stdout
    )
    by_command = {p["name"]: Path(p["file"]).resolve() for p in listing["plugins"]}
    by_package = {p.name: p.path.resolve() for p in socair.plugins().loaded}
    assert by_package == by_command
    assert {p.parent for p in by_package.values()} == {_installed.plugin_dir()}


def test_the_command_is_in_the_installation_prefix_beside_its_plugins():
    command = _installed.command()
    assert command is not None
    assert command.parent.name in ("bin", "Scripts")
    assert _installed.plugin_dir() == command.parent.parent / "lib" / "socair" / "plugins"


def test_python_m_socair_runs_the_command():
    out = subprocess.run([sys.executable, "-m", "socair", "--version"], capture_output=True, check=True)
    assert out.stdout.decode().startswith(f"socair {socair.__version__} ")


def test_a_record_that_does_not_list_this_package_is_not_ours(monkeypatch):
    # Another socair distribution earlier on sys.path (its record lists other files): neither
    # its command nor its plugins are taken for this package's.
    class Elsewhere:
        files = [type("P", (), {"locate": lambda self: "/elsewhere/lib/socair/plugins/libsocair_x.so"})()]

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Elsewhere())
    assert _installed.plugin_dir() is None
    assert _installed.command() is None
