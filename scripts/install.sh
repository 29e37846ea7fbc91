#!/usr/bin/env bash
# Builds socair and its plugins and installs them under a prefix:
#
#   PREFIX/bin/socair
#   PREFIX/lib/socair/plugins/libsocair_plugin_*.so     (found by socair without configuration)
#   PREFIX/share/bash-completion/completions/socair
#   PREFIX/share/zsh/site-functions/_socair
#   PREFIX/share/fish/vendor_completions.d/socair.fish
#
#   scripts/install.sh [--prefix DIR] [--debug | --from TARGET_DIR]
#
# Default prefix: ~/.local. It builds in release mode (--debug: a debug build; --from: no build,
# install what TARGET_DIR, such as target/release, already holds).
#
# `cargo install --path host/cli` alone installs the binary without its plugins: socair would then
# read no format. This script installs both, from the same checkout.
set -euo pipefail
prefix="$HOME/.local"
profile=release
target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --debug) profile=debug; shift ;;
    --from) target=$2; shift 2 ;;
    *) echo "usage: $0 [--prefix DIR] [--debug | --from TARGET_DIR]" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$target" ]; then
  if [ "$profile" = release ]; then
    cargo build --release --workspace --quiet --manifest-path "$repo/Cargo.toml"
  else
    cargo build --workspace --quiet --manifest-path "$repo/Cargo.toml"
  fi
  target="${CARGO_TARGET_DIR:-$repo/target}/$profile"
fi
install -d "$prefix/bin" "$prefix/lib/socair/plugins" \
  "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
  "$prefix/share/fish/vendor_completions.d"
install -m 755 "$target/socair" "$prefix/bin/socair"
found=0
for lib in "$target"/libsocair_plugin_*.so "$target"/libsocair_plugin_*.dylib; do
  [ -e "$lib" ] || continue
  install -m 644 "$lib" "$prefix/lib/socair/plugins/"
  found=$((found + 1))
done
[ "$found" -gt 0 ] || { echo "no plugin libraries in $target" >&2; exit 1; }
"$prefix/bin/socair" completions bash > "$prefix/share/bash-completion/completions/socair"
"$prefix/bin/socair" completions zsh > "$prefix/share/zsh/site-functions/_socair"
"$prefix/bin/socair" completions fish > "$prefix/share/fish/vendor_completions.d/socair.fish"
echo "installed $("$prefix/bin/socair" --version) and $found plugins under $prefix" >&2
"$prefix/bin/socair" plugins >&2
