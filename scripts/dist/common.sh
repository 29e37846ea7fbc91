# Shell functions the distribution scripts share (sourced, not run): scripts/dist.sh,
# scripts/check-dist.sh, scripts/github-action.sh and scripts/pre-commit-socair.sh.

# The version of the Python package (python/pyproject.toml), the distributables' version.
socair_version() {
  sed -n 's/^version = "\(.*\)"/\1/p' "$1/python/pyproject.toml" | head -n 1
}

# The directory of a virtual environment's commands: bin/, or Scripts/ on Windows.
venv_bin() {
  if [ -d "$1/Scripts" ]; then printf '%s\n' "$1/Scripts"; else printf '%s\n' "$1/bin"; fi
}

# A new virtual environment at $1 with socair installed from the rest of the arguments (a wheel
# file, or `socair==VERSION` with pip's options), without its dependencies: the command needs
# none of the Python package's (NumPy). Fails as pip fails.
install_command_into() {
  local venv=$1
  shift
  python3 -m venv "$venv"
  "$(venv_bin "$venv")/python" -m pip install --quiet --disable-pip-version-check --no-deps "$@" >&2
}

# Builds the wheel from the checkout at $1 with scripts/dist.sh (no sdist, no tarball) and
# prints its path.
build_wheel() {
  "$1/scripts/dist.sh" --no-sdist --no-tarball >&2
  ls "$1/dist/socair-$(socair_version "$1")"-*.whl | head -n 1
}
