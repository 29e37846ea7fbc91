"""The PEP 517 backend of the socair Python package: maturin's, with two steps of its own.

maturin builds one Rust crate, the extension module. socair reads every format through
plugins, cdylibs of the same Cargo workspace, which the host loads at run time, and ships a
command, the host's ``socair`` binary; so before maturin builds the wheel, this builds the
workspace's libraries and binaries with cargo and stages the command and the plugins in the
wheel's data directory (``socair.data/``), laid out as the command-line tarball lays them out:

* ``socair.data/scripts/socair``: installed as ``<prefix>/bin/socair``, on ``PATH`` in a
  virtual environment;
* ``socair.data/data/lib/socair/plugins/``: installed as ``<prefix>/lib/socair/plugins/``, where
  the command finds them beside itself and the package finds them through the installer's
  record (``socair/_installed.py``).

Settings, from the environment:

* ``SOCAIR_WHEEL_PROFILE``: the Cargo profile of everything built (``release`` by default,
  without debug information or symbols; CI's quick wheel passes ``dev`` to reuse what
  ``cargo build --workspace`` already compiled).
* ``SOCAIR_WHEEL_ZIG``: a cargo-zigbuild target such as ``x86_64-unknown-linux-gnu.2.17``: link
  everything with zig against that glibc, and have maturin tag and audit the wheel for it
  (``scripts/dist.sh`` sets it). cargo and maturin are then run in the environment
  cargo-zigbuild gives cargo, so that maturin's build of the extension reuses every unit the
  first build compiled.

The source distribution is this backend's own too (:func:`build_sdist`): the package is one
member of a Cargo workspace whose plugins it bundles, so the sdist holds the workspace's
crates, not only the extension's dependencies, and a ``pyproject.toml`` at its root.
"""

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (re-exported: the backend's other hooks are maturin's)
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

# python/ in the repository and in the sdist alike: the crate of the extension and the package.
PACKAGE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = PACKAGE_DIR / "socair.data"
PLUGIN_PREFIX = "socair_"
COMMAND = "socair"

if sys.platform == "win32":
    DLL_PREFIX, DLL_SUFFIX, EXE_SUFFIX = "", ".dll", ".exe"
elif sys.platform == "darwin":
    DLL_PREFIX, DLL_SUFFIX, EXE_SUFFIX = "lib", ".dylib", ""
else:
    DLL_PREFIX, DLL_SUFFIX, EXE_SUFFIX = "lib", ".so", ""


def _profile():
    return os.environ.get("SOCAIR_WHEEL_PROFILE", "release")


def _cargo():
    return os.environ.get("CARGO", "cargo")


def _release_without_debug_info():
    # The workspace's release profile keeps symbols (perf names functions with them); a wheel
    # needs neither those nor debug information. Both builds below (the workspace, then the
    # extension) see the same settings, so the second reuses the first's units.
    if _profile() == "release":
        os.environ.setdefault("CARGO_PROFILE_RELEASE_DEBUG", "false")
        os.environ.setdefault("CARGO_PROFILE_RELEASE_STRIP", "symbols")


def _zig_target():
    """``(cargo-zigbuild target, Rust target)``, or None when not linking with zig."""
    target = os.environ.get("SOCAIR_WHEEL_ZIG", "")
    if not target:
        return None
    # x86_64-unknown-linux-gnu.2.17: the Rust target, then the glibc version to link against.
    rust_target = re.sub(r"\.\d+\.\d+$", "", target)
    return target, rust_target


def _manylinux_tag(zig_target):
    # manylinux_2_17 is manylinux2014: the glibc the target links against names the tag.
    m = re.search(r"\.(\d+)\.(\d+)$", zig_target)
    return f"manylinux_{m.group(1)}_{m.group(2)}" if m else None


_SHIM = """import json, os, sys
with open(os.environ["SOCAIR_ZIG_ENV_OUT"], "w") as f:
    json.dump(dict(os.environ), f)
"""


def _adopt_zig_environment(zig_target, rust_target):
    """Sets, in this process, the environment cargo-zigbuild gives cargo for ``zig_target``
    (its linker and C compiler wrappers for the target, and what they need), read by running
    cargo-zigbuild with a stand-in for cargo that records its environment and builds nothing.
    The cargo builds that follow, this backend's and maturin's, then link with zig alike."""
    if os.environ.get("SOCAIR_ZIG_ADOPTED") == zig_target:
        return
    zigbuild = shutil.which("cargo-zigbuild")
    if zigbuild is None:
        sys.exit("socair: SOCAIR_WHEEL_ZIG needs cargo-zigbuild and ziglang (pip install cargo-zigbuild ziglang)")
    with tempfile.TemporaryDirectory() as tmp:
        shim = Path(tmp) / "cargo"
        shim.write_text(f"#!{sys.executable}\n{_SHIM}")
        shim.chmod(0o755)
        out = Path(tmp) / "env.json"
        env = dict(os.environ, CARGO=str(shim), SOCAIR_ZIG_ENV_OUT=str(out))
        subprocess.run(
            [zigbuild, "zigbuild", "--target", zig_target, "--manifest-path", str(PACKAGE_DIR / "Cargo.toml")],
            check=True,
            env=env,
            cwd=tmp,
        )
        seen = json.loads(out.read_text())
    adopted = {
        k: v
        for k, v in seen.items()
        if k not in ("CARGO", "SOCAIR_ZIG_ENV_OUT") and os.environ.get(k) != v
    }
    wanted = "CARGO_TARGET_" + rust_target.upper().replace("-", "_") + "_LINKER"
    if wanted not in adopted:
        sys.exit(f"socair: cargo-zigbuild set no linker for {rust_target} ({wanted})")
    os.environ.update(adopted)
    os.environ["SOCAIR_ZIG_ADOPTED"] = zig_target
    print(f"socair: linking with zig for {zig_target} ({len(adopted)} variables from cargo-zigbuild)", file=sys.stderr)


def _metadata():
    return json.loads(
        subprocess.run(
            [_cargo(), "metadata", "--format-version", "1", "--no-deps", "--manifest-path", str(PACKAGE_DIR / "Cargo.toml")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )


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


def stage_command_and_plugins():
    """Builds the workspace's libraries and binaries and stages the ``socair`` command and every
    plugin in ``socair.data/``; returns the plugins' file names."""
    metadata = _metadata()
    plugins = _plugins(metadata)
    if not plugins:
        sys.exit("socair: no plugin packages (cdylib targets named socair_*) in the workspace")
    profile = _profile()
    zig = _zig_target()
    command = [_cargo(), "build", "--workspace", "--lib", "--bins", "--profile", profile]
    out_dir = Path(metadata["target_directory"])
    if zig:
        command += ["--target", zig[1]]
        out_dir = out_dir / zig[1]
    command += ["--manifest-path", str(PACKAGE_DIR / "Cargo.toml")]
    out_dir = out_dir / ("debug" if profile == "dev" else profile)
    # Every library of the workspace, the plugins and this extension among them: resolved as
    # `cargo build --workspace` resolves features, so maturin's build of the extension next
    # reuses this one (building the plugins alone would resolve other features for the crates
    # they share with the host, and maturin would compile the host and its dependencies again).
    print("socair: building the command and the plugins:", " ".join(command), file=sys.stderr)
    started = time.monotonic()
    subprocess.run(command, check=True)
    print(f"socair: built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    if DATA_DIR.exists():
        shutil.rmtree(DATA_DIR)
    scripts = DATA_DIR / "scripts"
    plugin_dir = DATA_DIR / "data" / "lib" / "socair" / "plugins"
    scripts.mkdir(parents=True)
    plugin_dir.mkdir(parents=True)
    exe = COMMAND + EXE_SUFFIX
    shutil.copy2(out_dir / exe, scripts / exe)
    (scripts / exe).chmod(0o755)
    names = []
    for _, target in plugins:
        name = f"{DLL_PREFIX}{target}{DLL_SUFFIX}"
        shutil.copy2(out_dir / name, plugin_dir / name)
        (plugin_dir / name).chmod(0o644)
        names.append(name)
    print(f"socair: staged the command and {len(names)} plugins in {DATA_DIR}", file=sys.stderr)
    return names


def _maturin_arguments():
    # maturin reads extra `maturin build` arguments from MATURIN_PEP517_ARGS.
    if "MATURIN_PEP517_ARGS" in os.environ:
        return
    args = []
    if "SOCAIR_WHEEL_PROFILE" in os.environ:
        args += ["--profile", _profile()]
    zig = _zig_target()
    if zig:
        tag = _manylinux_tag(zig[0])
        args += ["--target", zig[1]]
        if tag:
            # Audited, not repaired: a library outside the manylinux set fails the build.
            args += ["--compatibility", tag, "--auditwheel", "check"]
    if args:
        os.environ["MATURIN_PEP517_ARGS"] = " ".join(args)


def _prepare():
    _release_without_debug_info()
    zig = _zig_target()
    if zig:
        _adopt_zig_environment(*zig)
    stage_command_and_plugins()
    _maturin_arguments()


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    # maturin checks that the data directory exists before anything is built.
    DATA_DIR.mkdir(exist_ok=True)
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    DATA_DIR.mkdir(exist_ok=True)
    return maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _prepare()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _prepare()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


# The source distribution -------------------------------------------------------------------

# What the sdist holds of the repository: the workspace's manifest and lock, and every crate a
# wheel is built from, and the test-support crate (the plugins' dev-dependency, which cargo
# resolves with the workspace). Not the end-to-end tests, fixtures, fuzz targets or benchmarks.
SDIST_PATHS = ["Cargo.toml", "Cargo.lock", "LICENSE", "host", "plugin-api", "plugins", "python", "tests/support"]

# The package's pyproject.toml, moved from python/ to the sdist's root: each pair must occur
# exactly once (a change to pyproject.toml that this misses fails the sdist, not the install).
PYPROJECT_AT_ROOT = [
    ('backend-path = ["build_backend"]', 'backend-path = ["python/build_backend"]'),
    ('readme = "README.md"', 'readme = "python/README.md"'),
    ('python-source = "."', 'python-source = "python"\nmanifest-path = "python/Cargo.toml"'),
    ('data = "socair.data"', 'data = "python/socair.data"'),
    ('exclude = ["tests/**", "build_backend/**"]', 'exclude = ["python/tests/**", "python/build_backend/**"]'),
]


def _rewrite_once(text, pairs, what):
    for old, new in pairs:
        if text.count(old) != 1:
            sys.exit(f"socair: {what}: expected {old!r} once, found it {text.count(old)} times")
        text = text.replace(old, new)
    return text


def _sdist_workspace_manifest(text):
    # The end-to-end test crate is not in the sdist: the workspace lists the rest.
    return _rewrite_once(text, [('    "tests",\n', "")], "Cargo.toml")


def _repository_files(root):
    # The sdist holds what git tracks: a file not yet added would be missing from it, and the
    # sdist would not build (or would build something else). Refused, naming the files.
    untracked = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "--", *SDIST_PATHS],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    if untracked:
        shown = ", ".join(untracked[:5]) + (f" and {len(untracked) - 5} more" if len(untracked) > 5 else "")
        sys.exit(f"socair: the sdist holds the files git tracks; these are not tracked: {shown} (git add them, or move them away)")
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--", *SDIST_PATHS],
        check=True,
        capture_output=True,
    ).stdout
    return sorted(p for p in listed.decode().split("\0") if p and (root / p).is_file())


def _metadata_text():
    with tempfile.TemporaryDirectory() as tmp:
        dist_info = prepare_metadata_for_build_wheel(tmp)
        return (Path(tmp) / dist_info / "METADATA").read_text()


def build_sdist(sdist_directory, config_settings=None):
    """``socair-<version>.tar.gz``: the workspace's crates, the package, and a pyproject.toml at
    its root naming this backend; ``pip install`` builds the same wheel from it where Rust is
    installed."""
    root = PACKAGE_DIR.parent
    if not (root / ".git").exists():
        sys.exit("socair: the sdist is made from a git checkout of the repository (scripts/dist.sh)")
    pkg_info = _metadata_text()
    version = re.search(r"^Version: (.+)$", pkg_info, re.M).group(1).strip()
    base = f"socair-{version}"
    pyproject = _rewrite_once((PACKAGE_DIR / "pyproject.toml").read_text(), PYPROJECT_AT_ROOT, "pyproject.toml")
    generated = {
        "PKG-INFO": pkg_info,
        "pyproject.toml": pyproject,
        "Cargo.toml": _sdist_workspace_manifest((root / "Cargo.toml").read_text()),
    }
    name = f"{base}.tar.gz"
    path = Path(sdist_directory) / name
    # Stable bytes for the same tree: sorted members, fixed owners and times.
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))

    def info(arcname, size, mode):
        ti = tarfile.TarInfo(f"{base}/{arcname}")
        ti.size, ti.mode, ti.mtime = size, mode, mtime
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        return ti

    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT, compresslevel=9) as tar:
        for arcname, text in sorted(generated.items()):
            data = text.encode()
            tar.addfile(info(arcname, len(data), 0o644), io.BytesIO(data))
        for rel in _repository_files(root):
            if rel in generated:
                continue
            data = (root / rel).read_bytes()
            mode = 0o755 if os.access(root / rel, os.X_OK) else 0o644
            tar.addfile(info(rel, len(data), mode), io.BytesIO(data))
    return name


if __name__ == "__main__":
    stage_command_and_plugins()
