"""The PEP 517 backend of the socair Python package: maturin's, after one step of its own.

maturin builds one Rust crate, the extension module. socair reads every format through
plugins, cdylibs of the same Cargo workspace, which the host loads at run time; so before
maturin builds the wheel, this builds each plugin with cargo and copies the libraries into
``socair/plugins/``, which the package searches without configuration and which maturin puts
in the wheel (``[tool.maturin] include``).

``SOCAIR_WHEEL_PROFILE`` chooses the Cargo profile of both the plugins and the extension
(``release`` by default, built without debug information; CI passes ``dev`` to reuse what
``cargo build --workspace`` already compiled). Everything else is maturin's.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (re-exported: the backend's other hooks are maturin's)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

PACKAGE_DIR = Path(__file__).resolve().parent.parent
PLUGINS_DIR = PACKAGE_DIR / "socair" / "plugins"
PLUGIN_PREFIX = "socair_"


def _profile():
    return os.environ.get("SOCAIR_WHEEL_PROFILE", "release")


def _release_without_debug_info():
    # The workspace's release profile keeps line tables (debug = 1) for the command line's
    # backtraces: in a wheel they are most of its 350 MB. Both builds below (plugins, then the
    # extension) see the same settings, so the second reuses the first's units.
    if _profile() == "release":
        os.environ.setdefault("CARGO_PROFILE_RELEASE_DEBUG", "false")
        os.environ.setdefault("CARGO_PROFILE_RELEASE_STRIP", "debuginfo")


def _plugins(metadata):
    """The workspace's plugin packages: those with a cdylib target named ``socair_*``."""
    members = set(metadata["workspace_members"])
    out = []
    for package in metadata["packages"]:
        if package["id"] not in members:
            continue
        for target in package["targets"]:
            if "cdylib" in target["crate_types"] and target["name"].startswith(PLUGIN_PREFIX):
                out.append((package["name"], target["name"]))
    return out


def bundle_plugins():
    """Builds the plugins and copies them into ``socair/plugins/``; returns their names."""
    cargo = os.environ.get("CARGO", "cargo")
    manifest = PACKAGE_DIR / "Cargo.toml"
    metadata = json.loads(
        subprocess.run(
            [cargo, "metadata", "--format-version", "1", "--no-deps", "--manifest-path", str(manifest)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    plugins = _plugins(metadata)
    if not plugins:
        sys.exit("socair: no plugin packages (cdylib targets named socair_*) in the workspace")
    profile = _profile()
    # Every library of the workspace, the plugins and this extension among them: resolved as
    # `cargo build --workspace` resolves features, so maturin's build of the extension next
    # reuses this one (building the plugins alone would resolve other features for the crates
    # they share with the host, and maturin would compile the host and its dependencies again).
    command = [cargo, "build", "--workspace", "--lib", "--profile", profile, "--manifest-path", str(manifest)]
    print("socair: building the plugins:", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    out_dir = Path(metadata["target_directory"]) / ("debug" if profile == "dev" else profile)
    if PLUGINS_DIR.exists():
        shutil.rmtree(PLUGINS_DIR)
    PLUGINS_DIR.mkdir(parents=True)
    names = []
    for _, target in plugins:
        name = f"lib{target}.so"
        shutil.copy2(out_dir / name, PLUGINS_DIR / name)
        names.append(name)
    print(f"socair: bundled {len(names)} plugins into {PLUGINS_DIR}", file=sys.stderr)
    return names


def _maturin_profile():
    # maturin reads extra `maturin build` arguments from MATURIN_PEP517_ARGS.
    if "SOCAIR_WHEEL_PROFILE" in os.environ and "MATURIN_PEP517_ARGS" not in os.environ:
        os.environ["MATURIN_PEP517_ARGS"] = f"--profile {_profile()}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _release_without_debug_info()
    bundle_plugins()
    _maturin_profile()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _release_without_debug_info()
    bundle_plugins()
    _maturin_profile()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


if __name__ == "__main__":
    bundle_plugins()
