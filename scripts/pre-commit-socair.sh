#!/usr/bin/env bash
# The `socair-wheel` pre-commit hook (.pre-commit-hooks.yaml): installs socair's wheel once into
# a virtual environment of the hook's own, then scans the files pre-commit gives:
# `socair scan --format text --each FILE…` (a file no reader claims is skipped).
#
# The wheel, in this order: SOCAIR_WHEEL (a file); one scripts/dist.sh left in the hook's
# checkout's dist/; the release of the checkout's version from the package index
# (`socair==VERSION`, the binary wheel only); else built from the checkout with scripts/dist.sh
# (zig; a few minutes, once). The environment goes under SOCAIR_HOOK_HOME (default: the
# checkout's target/pre-commit), one per version.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/dist/common.sh"
version=$(socair_version "$repo")
venv="${SOCAIR_HOOK_HOME:-$repo/target/pre-commit}/socair-$version"
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  wheel="${SOCAIR_WHEEL:-}"
  if [ -z "$wheel" ]; then
    wheel=$(ls "$repo/dist/socair-$version"-*.whl 2>/dev/null | head -n 1 || true)
  fi
  if [ -n "$wheel" ]; then
    install_command_into "$venv" "$wheel"
  elif ! install_command_into "$venv" --only-binary :all: "socair==$version" 2>/dev/null; then
    echo "socair: no released wheel of socair $version; building it from $repo (once; a few minutes)" >&2
    rm -rf "$venv"
    install_command_into "$venv" "$(build_wheel "$repo")"
  fi
  touch "$venv/.complete"
fi
[ $# -gt 0 ] || exit 0
exec "$(venv_bin "$venv")/socair" scan --format text --each "$@"
