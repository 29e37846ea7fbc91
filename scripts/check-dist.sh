#!/usr/bin/env bash
# Checks what scripts/dist.sh built, as a new user meets it, on this machine:
#
#   scripts/check-dist.sh [DIST_DIR]        (default: dist/)
#
# 1. The wheel, installed into a fresh virtual environment whose PATH has no cargo or rustc,
#    NumPy from the package index included: the install is timed (the target is under 30 s),
#    then `socair --version`, `socair plugins` (every first-party plugin, found where the wheel
#    installed them), `socair scan` of the README's clean fixture (exit 0) and of its malicious
#    one (exit 1, BLOCKED), `python -m socair`, and `import socair` scanning and loading.
# 2. The tarball, extracted into a new directory and run from there (and through a link to its
#    binary elsewhere): the same plugins, the same verdicts.
# 3. The Python package's test suite (python/tests) against the installed package, its reports
#    compared with the installed command's.
#
# Prints `SOCAIR_VENV=<dir>` last, for the end-to-end tests that run against the installed
# command (.ci/run). Needs python3 with venv and pip, and the network to the package index for
# NumPy and pytest.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dist=$(cd "${1:-$repo/dist}" && pwd)
. "$repo/scripts/dist/common.sh"
version=$(socair_version "$repo")
wheel=$(ls "$dist/socair-$version"-*.whl | head -n 1)
tarball=$(ls "$dist/socair-$version"-*.tar.gz 2>/dev/null | head -n 1 || true)
work=$(mktemp -d "${TMPDIR:-/tmp}/socair-check-dist.XXXXXX")
clean="$repo/fixtures/safetensors/tiny-bert"
malicious="$repo/fixtures/torch/malicious/pickle-os-system.pt"
plugins_built=$(find "$repo/plugins" -name Cargo.toml -not -path "*/target/*" | xargs grep -l '^crate-type = .*"cdylib"' | wc -l)

fail() { echo "check-dist: $*" >&2; exit 1; }

# A PATH without cargo and rustc: the system's directories only.
bare_path=/usr/local/bin:/usr/bin:/bin
for tool in cargo rustc; do
  if PATH=$bare_path command -v "$tool" >/dev/null; then fail "$tool is on $bare_path: this check needs a PATH without it"; fi
done

echo "== the wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))" >&2
python3 -m venv "$work/venv"
venv="$work/venv"
now() { python3 -c 'import time; print(time.time())'; }
start=$(now)
PATH="$venv/bin:$bare_path" "$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
elapsed=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(now)")
echo "check-dist: installed the wheel with NumPy in $elapsed s (target: under 30 s)" >&2
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 30 else 1)" "$elapsed" \
  || fail "installing the wheel took $elapsed s, over 30 s"

run() { PATH="$1/bin:$bare_path" "${@:2}"; }
[ "$(run "$venv" command -v socair)" = "$venv/bin/socair" ] || fail "socair is not on the venv's PATH"
run "$venv" socair --version >&2
listing=$(run "$venv" socair plugins --json)
loaded=$(printf '%s' "$listing" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["plugins"]))')
where=$(printf '%s' "$listing" | python3 -c 'import json,sys,os; d=json.load(sys.stdin); print(sorted({os.path.dirname(p["file"]) for p in d["plugins"]}))')
[ "$loaded" = "$plugins_built" ] || fail "socair plugins lists $loaded plugins, the workspace builds $plugins_built"
[ "$where" = "['$venv/lib/socair/plugins']" ] || fail "plugins found in $where, not where the wheel installed them"
echo "check-dist: socair plugins: $loaded plugins, in $venv/lib/socair/plugins" >&2

scan_expect() { # prefix code path
  local code=0 out
  out=$(cd "$work" && run "$1" socair scan --format text "$3" 2>&1) || code=$?
  printf '%s\n' "$out" | head -n 3 >&2
  [ "$code" = "$2" ] || fail "socair scan $3: exit $code, expected $2"
  printf '%s' "$out"
}
# The verdict is read from a variable: `scan_expect | grep -q` would close the pipe early.
verdict=$(scan_expect "$venv" 0 "$clean")
[[ "$verdict" == CLEAN* ]] || fail "the clean fixture is not CLEAN"
verdict=$(scan_expect "$venv" 1 "$malicious")
[[ "$verdict" == BLOCKED* ]] || fail "the malicious fixture is not BLOCKED"
run "$venv" python -m socair --version >&2
run "$venv" python - "$clean" "$malicious" <<'PY'
import sys
import socair
clean, malicious = sys.argv[1:]
assert socair.scan(clean).clean, "the clean fixture does not scan clean"
assert socair.scan(malicious).verdict == "FAIL", socair.scan(malicious).verdict
tensors = socair.load(clean)
assert len(tensors) > 0
loaded = socair.plugins().loaded
print(f"check-dist: import socair: {len(loaded)} plugins, {len(tensors)} tensors loaded from the clean fixture", file=sys.stderr)
PY

if [ -n "$tarball" ]; then
  echo "== the tarball: $(basename "$tarball") ($(du -h "$tarball" | cut -f1))" >&2
  mkdir "$work/extract" "$work/elsewhere"
  tar -xzf "$tarball" -C "$work/extract"
  root=$(ls -d "$work"/extract/socair-*)
  for f in bin/socair LICENSE README.md share/bash-completion/completions/socair \
    share/zsh/site-functions/_socair share/fish/vendor_completions.d/socair.fish; do
    [ -f "$root/$f" ] || fail "the tarball has no $f"
  done
  n=$("$root/bin/socair" plugins --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["plugins"]))')
  [ "$n" = "$plugins_built" ] || fail "the tarball's socair finds $n plugins"
  scan_expect "$root" 0 "$clean" >/dev/null
  scan_expect "$root" 1 "$malicious" >/dev/null
  # Linked from a directory on PATH, it still finds the plugins beside its real self.
  ln -s "$root/bin/socair" "$work/elsewhere/socair"
  n=$("$work/elsewhere/socair" plugins --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["plugins"]))')
  [ "$n" = "$plugins_built" ] || fail "through a link, the tarball's socair finds $n plugins"
  echo "check-dist: the tarball: $n plugins, the same verdicts, from where it was extracted and through a link" >&2
fi

echo "== python/tests against the installed package" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check pytest
(cd "$work" && PATH="$venv/bin:$bare_path" SOCAIR_CLI="$venv/bin/socair" SOCAIR_FIXTURES="$repo/fixtures" \
  "$venv/bin/pytest" -q -p no:cacheprovider "$repo/python/tests")
echo "SOCAIR_VENV=$venv"
