#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml), one subcommand each, so that they run the same
# on a runner and on a developer's machine (tests/tests/ci.rs runs them through action.yml).
#
#   github-action.sh install   INPUT_SOCAIR: a socair binary to use; empty: build and install
#                              this checkout with scripts/install.sh under $RUNNER_TEMP/socair.
#                              Puts socair's directory on $GITHUB_PATH.
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

# One path per line, blank lines and surrounding spaces dropped.
lines() {
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [ -n "$line" ] && printf '%s\n' "$line"
  done <<<"${1:-}"
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
      prefix="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/socair"
      "$repo/scripts/install.sh" --prefix "$prefix"
      bin="$prefix/bin"
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
