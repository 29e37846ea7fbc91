#!/usr/bin/env bash
# Type-checks the Python package with mypy, pinned, in a virtual environment of its own
# (target/python-types-venv, made again when the pins change):
#
#   scripts/check-python-types.sh
#
# 1. python/socair/ -- the package and the extension's stub (_native.pyi) -- in strict mode,
#    for the oldest Python the package supports (requires-python, 3.9).
# 2. python/tests/, with the same checks except that a function need not be annotated (pytest
#    passes fixtures and parameters to unannotated tests): every body is checked.
# 3. The stub against the extension itself (mypy's stubtest: every class, field and signature
#    the stub states is the module's, and the module has nothing the stub leaves out), when
#    cargo is on PATH to build the extension (`cargo build -p socair-python`); without cargo it
#    says it skipped.
#
# mypy's settings are python/pyproject.toml's [tool.mypy]. Needs python3 (3.9 or later) with
# venv and pip, and the network to the package index for the pins on first use. Exits non-zero
# on any error.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv="$repo/target/python-types-venv"
# mypy 1.19 is the last to check code for Python 3.9 (2.x starts at 3.10). NumPy is there for
# its own annotations (the package imports numpy.lib.format); pytest for the tests'. Each the
# newest release that installs on the Python running this script.
pins=(
  'mypy==1.19.1'
  'numpy==2.4.6; python_version >= "3.11"'
  'numpy==2.2.6; python_version == "3.10"'
  'numpy==2.0.2; python_version < "3.10"'
  'pytest==8.4.2'
)
want=$(printf '%s\n' "${pins[@]}" "$(python3 --version)")
if [ ! -x "$venv/bin/mypy" ] || [ "$(cat "$venv/pins.txt" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
  printf '%s\n' "$want" >"$venv/pins.txt"
fi
# --no-warn-unused-configs: the libraries the tests compare with are named once in the
# configuration, and each run imports only some of them.
mypy=("$venv/bin/python" -m mypy --config-file "$repo/python/pyproject.toml" --no-incremental --no-warn-unused-configs)

cd "$repo/python"
echo "check-python-types: mypy --strict, python/socair (the package and _native.pyi)" >&2
"${mypy[@]}" --python-version 3.9 socair
echo "check-python-types: mypy, python/tests (unannotated functions allowed, their bodies checked)" >&2
"${mypy[@]}" --allow-untyped-defs --allow-incomplete-defs --allow-untyped-calls --check-untyped-defs tests

if ! command -v cargo >/dev/null 2>&1; then
  echo "check-python-types: no cargo on PATH: stubtest (the stub against the built extension) skipped" >&2
  exit 0
fi
echo "check-python-types: stubtest, python/socair/_native.pyi against the extension" >&2
(cd "$repo" && cargo build --quiet -p socair-python)
# The package beside the extension as maturin installs it (socair/_native.abi3.so), in a
# directory of its own: the source tree stays as it is.
site=$(mktemp -d "${TMPDIR:-/tmp}/socair-stubtest.XXXXXX")
trap 'rm -rf "$site"' EXIT
cp -R "$repo/python/socair" "$site/socair"
cp "$repo/target/debug/libpysocair.so" "$site/socair/_native.abi3.so"
# Run from there: from python/, the source tree's socair (without the extension) comes first.
cd "$site"
PYTHONPATH="$site" "$venv/bin/python" -m mypy.stubtest \
  --mypy-config-file "$repo/python/pyproject.toml" socair._native
