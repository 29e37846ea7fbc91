#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml), one subcommand each, so that they run the same
# on a runner and on a developer's machine (tests/tests/ci.rs runs them through action.yml).
#
#   github-action.sh install   INPUT_SOCAIR: a socair binary to use. Else a wheel installed into
#                              a virtual environment under $RUNNER_TEMP: INPUT_WHEEL (a file);
#                              else the release INPUT_VERSION names, or ACTION_REF when it is a
#                              tag vX.Y.Z (downloaded from ACTION_REPOSITORY's release, checked
#                              against its SHA256SUMS); else built from this checkout with
#                              scripts/dist.sh. Puts socair's directory on $GITHUB_PATH.
#   github-action.sh scan      INPUT_PATHS, INPUT_EACH (one path per line; neither: each .),
#                              INPUT_SARIF_FILE: runs `socair scan --format sarif`; writes the
#                              outputs sarif-file, exit-code and summary to $GITHUB_OUTPUT and
#                              the verdict lines to $GITHUB_STEP_SUMMARY. Exits 0 whatever the
#                              verdict (the upload runs next), 2 when socair could not scan.
#   github-action.sh verdict   INPUT_EXIT_CODE, INPUT_SUMMARY: exits 1 when the scan was not
#                              clean, saying so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
. "$here/dist/common.sh"

# One path per line, blank lines and surrounding spaces dropped.
lines() {
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [ -n "$line" ] && printf '%s\n' "$line"
  done <<<"${1:-}"
}

# The wheel of release $1 for this runner, downloaded from the action's repository and checked
# against the release's SHA256SUMS; prints its path.
release_wheel() {
  local base dir sums name pattern
  base="${GITHUB_SERVER_URL:-https://github.com}/${ACTION_REPOSITORY:?}/releases/download/v$1"
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) pattern='manylinux.*_x86_64\.whl$' ;;
    Linux-aarch64) pattern='manylinux.*_aarch64\.whl$' ;;
    Darwin-arm64) pattern='macosx.*_arm64\.whl$' ;;
    Darwin-x86_64) pattern='macosx.*_x86_64\.whl$' ;;
    MINGW*|MSYS*|CYGWIN*) pattern='win_amd64\.whl$' ;;
    *) echo "::error::no socair wheel is released for $(uname -s) $(uname -m)" >&2; return 2 ;;
  esac
  dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/socair-release"
  mkdir -p "$dir"
  sums="$dir/SHA256SUMS"
  curl -fsSL --retry 3 -o "$sums" "$base/SHA256SUMS" >&2
  name=$(awk '{print $2}' "$sums" | grep -E "$pattern" | head -n 1)
  [ -n "$name" ] || { echo "::error::release v$1 has no wheel for this runner ($pattern)" >&2; return 2; }
  curl -fsSL --retry 3 -o "$dir/$name" "$base/$name" >&2
  python3 - "$sums" "$dir/$name" <<'PY' >&2
import hashlib, sys
from pathlib import Path
sums, wheel = Path(sys.argv[1]), Path(sys.argv[2])
want = {n: h for h, n in (l.split() for l in sums.read_text().splitlines() if l.strip())}[wheel.name]
got = hashlib.sha256(wheel.read_bytes()).hexdigest()
if got != want:
    sys.exit(f"::error::{wheel.name}: sha256 {got}, the release's SHA256SUMS says {want}")
PY
  printf '%s\n' "$dir/$name"
}

case "${1:-}" in
  install)
    if [ -n "${INPUT_SOCAIR:-}" ]; then
      bin=$(cd "$(dirname "$INPUT_SOCAIR")" && pwd)
      [ -x "$bin/$(basename "$INPUT_SOCAIR")" ] || { echo "::error::$INPUT_SOCAIR is not an executable" >&2; exit 2; }
      if [ "$(basename "$INPUT_SOCAIR")" != socair ]; then
        ln -sf "$bin/$(basename "$INPUT_SOCAIR")" "$bin/socair"
      fi
    else
      wheel="${INPUT_WHEEL:-}"
      if [ -z "$wheel" ]; then
        version="${INPUT_VERSION:-}"
        if [ -z "$version" ] && [[ "${ACTION_REF:-}" =~ ^v([0-9]+\.[0-9]+\.[0-9]+)$ ]]; then
          version="${BASH_REMATCH[1]}"
        fi
        if [ -n "$version" ]; then
          wheel=$(release_wheel "$version")
        else
          echo "socair: building the wheel from $repo (scripts/dist.sh)" >&2
          wheel=$(build_wheel "$repo")
        fi
      fi
      [ -f "$wheel" ] || { echo "::error::no socair wheel at $wheel" >&2; exit 2; }
      venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/socair-venv"
      install_command_into "$venv" "$wheel"
      bin=$(venv_bin "$venv")
    fi
    echo "$bin" >>"${GITHUB_PATH:-/dev/null}"
    "$bin/socair" --version
    ;;
  scan)
    sarif="${INPUT_SARIF_FILE:-socair.sarif}"
    args=()
    while IFS= read -r p; do args+=("$p"); done < <(lines "${INPUT_PATHS:-}")
    each=()
    while IFS= read -r p; do each+=("$p"); done < <(lines "${INPUT_EACH:-}")
    if [ ${#args[@]} -eq 0 ] && [ ${#each[@]} -eq 0 ]; then
      each=(.)
    fi
    if [ ${#each[@]} -gt 0 ]; then
      args+=(--each "${each[@]}")
    fi
    mkdir -p "$(dirname "$sarif")"
    log=$(mktemp)
    code=0
    socair scan --format sarif --out "$sarif" "${args[@]}" 2>"$log" || code=$?
    cat "$log" >&2
    summary=$(sed -n 's/^socair: \([0-9]* artifacts\{0,1\}: .*\)$/\1/p' "$log" | tail -n 1)
    {
      echo "exit-code=$code"
      echo "summary=$summary"
      if [ -f "$sarif" ]; then echo "sarif-file=$sarif"; fi
    } >>"${GITHUB_OUTPUT:-/dev/null}"
    {
      echo "### socair scan"
      echo
      echo '```'
      sed -n 's/^socair: //p' "$log"
      echo '```'
    } >>"${GITHUB_STEP_SUMMARY:-/dev/null}"
    rm -f "$log"
    if [ ! -f "$sarif" ]; then
      echo "::error::socair did not write $sarif (exit $code)" >&2
      exit 2
    fi
    ;;
  verdict)
    code="${INPUT_EXIT_CODE:-}"
    if [ "$code" = 0 ]; then
      echo "socair: every artifact is clean (${INPUT_SUMMARY:-})"
      exit 0
    fi
    echo "::error::socair: not every artifact is clean (exit ${code:-unknown}): ${INPUT_SUMMARY:-see the scan step}" >&2
    exit 1
    ;;
  *)
    echo "usage: $0 install|scan|verdict (see the comment at its top)" >&2
    exit 2
    ;;
esac
