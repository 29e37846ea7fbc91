#!/usr/bin/env bash
# The `socair-build` pre-commit hook (.pre-commit-hooks.yaml): builds socair and its plugins in
# this checkout on first use (release, target/release/), then scans the files pre-commit gives:
# `socair scan --format text --each FILE…` (a file no reader claims is skipped).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin="${CARGO_TARGET_DIR:-$repo/target}/release/socair"
if [ ! -x "$bin" ]; then
  echo "socair: building socair in $repo (once; a few minutes)" >&2
  cargo build --release --workspace --quiet --manifest-path "$repo/Cargo.toml" >&2
fi
[ $# -gt 0 ] || exit 0
exec "$bin" scan --format text --each "$@"
