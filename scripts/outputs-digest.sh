#!/usr/bin/env bash
# Prints one line per (command, committed fixture): the exit code and the sha256 of what the
# command wrote (standard output, standard error, and for `convert` the output file). Two
# builds that print the same listing behave the same on every fixture: a refactor is checked
# with
#
#   scripts/outputs-digest.sh old/socair PLUGINS > before.txt
#   scripts/outputs-digest.sh new/socair PLUGINS > after.txt && diff before.txt after.txt
#
# PLUGINS is the plugin directory each build loads. A plugin's file hash is part of every
# report; each plugin file's sha256 is replaced by its file name before the digest, so a change
# to the plugins themselves is checked too (old host with old plugins, new host with new ones).
set -euo pipefail
bin=$(realpath "$1")
plugins=$(realpath "$2")
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

digest() { sha256sum | cut -c1-16; }

# One sed expression per plugin file: its sha256 becomes "plugin:<file name>".
plugin_hashes=()
for so in "$plugins"/*.so; do
  [ -e "$so" ] || continue
  plugin_hashes+=(-e "s#$(sha256sum "$so" | cut -c1-64)#plugin:$(basename "$so")#g")
done
normalize() { sed -i -e "s#$work#WORK#g" "${plugin_hashes[@]}" "$@"; }

# Runs socair with the given arguments; prints "<code> <stdout digest> <stderr digest>".
# Temporary paths in messages are replaced by a fixed name first.
run() {
  local code=0
  "$bin" --plugin-dir "$plugins" "$@" >"$work/out" 2>"$work/err" </dev/null || code=$?
  normalize "$work/out" "$work/err"
  printf '%s %s %s' "$code" "$(digest <"$work/out")" "$(digest <"$work/err")"
}

mapfile -t files < <(find fixtures -type f ! -name '*.py' ! -name '*.md' ! -name '*.json' | LC_ALL=C sort)
mapfile -t dirs < <(find fixtures -mindepth 2 -type d | LC_ALL=C sort)
for f in "${files[@]}" "${dirs[@]}"; do
  echo "scan $f: $(run scan "$f")"
  echo "scan --header-only $f: $(run scan --header-only "$f")"
  echo "tensors $f: $(run tensors "$f")"
done
for f in "${files[@]}" "${dirs[@]}"; do
  for from in torch-zip torch-legacy safetensors gguf onnx model-dir; do
    for to in safetensors gguf; do
      rm -f "$work/converted"
      line=$(run convert "$f" "$work/converted" --from "$from" --to "$to")
      if [ -f "$work/converted" ]; then
        normalize "$work/converted"
        line="$line $(digest <"$work/converted")"
      fi
      echo "convert $from $to $f: $line"
    done
  done
done
for a in fixtures/diff/*; do
  for b in fixtures/diff/*; do
    [ -e "$a" ] && [ -e "$b" ] || continue
    case "$a$b" in *.py* | *.md* | *.json*) continue ;; esac
    echo "tensors diff $a $b: $(run tensors diff "$a" "$b")"
  done
done
