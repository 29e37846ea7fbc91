#!/usr/bin/env bash
# Builds every distributable of socair into dist/:
#
#   dist/socair-<version>-cp39-abi3-manylinux_2_17_x86_64.whl   the Python package, its extension,
#        every first-party plugin and the `socair` command (pip install, no Rust needed)
#   dist/socair-<version>.tar.gz                               the sdist: builds the same wheel
#        with `pip install` where Rust is installed
#   dist/socair-<version>-x86_64-linux.tar.gz                  bin/socair, lib/socair/plugins/,
#        shell completions, LICENSE, README: extract anywhere and run
#   dist/SHA256SUMS
#
#   scripts/dist.sh [--no-sdist] [--no-tarball]
#
# Everything is linked with zig against glibc 2.17 (cargo-zigbuild's wrappers; ziglang), so it
# runs on any x86_64 Linux with glibc 2.17 or newer, and the wheel is audited for
# manylinux_2_17 by maturin and then shown by auditwheel. The build tools are pinned and
# installed into target/dist-tools (a virtual environment of their own); the build goes to
# target/dist, apart from `cargo build`'s target/debug and target/release. Needs Rust 1.93+,
# Python 3.9+ with pip and venv, and git (the sdist lists the repository's files).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
sdist=1
tarball=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-sdist) sdist=0; shift ;;
    --no-tarball) tarball=0; shift ;;
    *) echo "usage: $0 [--no-sdist] [--no-tarball]" >&2; exit 2 ;;
  esac
done
# Linux: linked with zig against glibc 2.17. macOS: the platform's own linker (the wheel is
# tagged for the deployment target rustc uses).
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) zig_target=x86_64-unknown-linux-gnu.2.17; platform=x86_64-linux ;;
  Linux-aarch64) zig_target=aarch64-unknown-linux-gnu.2.17; platform=aarch64-linux ;;
  Darwin-arm64) zig_target=; platform=aarch64-macos ;;
  Darwin-x86_64) zig_target=; platform=x86_64-macos ;;
  *) echo "scripts/dist.sh builds on Linux and macOS; Windows: .github/workflows/release.yml" >&2; exit 2 ;;
esac
started=$(date +%s)

# The pinned build tools.
tools="$repo/target/dist-tools"
python=${PYTHON:-python3}
if [ ! -x "$tools/bin/python" ]; then
  "$python" -m venv "$tools"
fi
"$tools/bin/pip" install --quiet --disable-pip-version-check 'maturin==1.16.0'
if [ -n "$zig_target" ]; then
  "$tools/bin/pip" install --quiet --disable-pip-version-check \
    'ziglang==0.17.1' 'cargo-zigbuild==0.24.1' 'auditwheel==6.8.2'
fi
export PATH="$tools/bin:$PATH"
export CARGO_TARGET_DIR="$repo/target/dist"
export SOCAIR_WHEEL_ZIG=$zig_target
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

mkdir -p dist
. scripts/dist/common.sh
version=$(socair_version "$repo")
rm -f "dist/socair-$version"-*.whl "dist/socair-$version.tar.gz" "dist/socair-$version-$platform.tar.gz" dist/SHA256SUMS

# The wheel: the backend builds the workspace (command, plugins, extension) once with zig, then
# maturin packs and audits it (python/build_backend/socair_build_backend.py).
echo "== wheel" >&2
"$tools/bin/pip" wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --wheel-dir dist ./python
wheel=$(ls "dist/socair-$version"-*.whl)
if [ -n "$zig_target" ]; then
  echo "== auditwheel show $(basename "$wheel")" >&2
  "$tools/bin/auditwheel" show "$wheel" | tee target/dist/auditwheel.txt >&2
  # The tag auditwheel finds must be manylinux_2_17 or older (manylinux_2_5...).
  tag=$(tr '\n' ' ' < target/dist/auditwheel.txt | tr -s ' ' | sed -n 's/.*consistent with the following platform tag: "manylinux_2_\([0-9]*\)_.*/\1/p')
  [ -n "$tag" ] && [ "$tag" -le 17 ] \
    || { echo "auditwheel does not find $(basename "$wheel") consistent with manylinux_2_17 or older" >&2; exit 1; }
fi

if [ "$sdist" = 1 ]; then
  echo "== sdist" >&2
  (cd python && "$tools/bin/python" -c \
    'import sys; sys.path.insert(0, "build_backend"); import socair_build_backend as b; print(b.build_sdist(sys.argv[1]))' \
    "$repo/dist" >/dev/null)
fi

if [ "$tarball" = 1 ]; then
  echo "== tarball" >&2
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  root="$stage/socair-$version-$platform"
  # The command and the plugins the wheel carries (the same files), laid out by
  # scripts/install.sh as it installs under a prefix: bin/, lib/socair/plugins/, share/.
  from="$stage/from"
  unzip -q -o -j "$wheel" "socair-$version.data/scripts/socair" \
    "socair-$version.data/data/lib/socair/plugins/*" -d "$from"
  chmod 755 "$from/socair"
  scripts/install.sh --prefix "$root" --from "$from" 2>"$stage/install.log" \
    || { cat "$stage/install.log" >&2; exit 1; }
  head -n 1 "$stage/install.log" >&2
  install -m 644 LICENSE "$root/LICENSE"
  sed "s/@VERSION@/$version/g; s/@PLATFORM@/$platform/g" scripts/dist/README.tarball.md > "$root/README.md"
  # The same bytes for the same files: sorted members, no owners, the commit's time.
  "$tools/bin/python" - "$stage" "socair-$version-$platform" "dist/socair-$version-$platform.tar.gz" <<'PY'
import gzip, os, sys, tarfile
stage, top, out = sys.argv[1:]
mtime = int(os.environ["SOURCE_DATE_EPOCH"])
def clean(ti):
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    ti.mtime = mtime
    return ti
paths = [top]
for d, dirs, files in os.walk(os.path.join(stage, top)):
    paths += [os.path.relpath(os.path.join(d, n), stage) for n in dirs + files]
with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=mtime, filename="") as gz:
    with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for p in sorted(paths):
            tar.add(os.path.join(stage, p), arcname=p, recursive=False, filter=clean)
PY
fi

"$tools/bin/python" - dist "socair-$version" <<'PY'
import hashlib, pathlib, sys
d, prefix = pathlib.Path(sys.argv[1]), sys.argv[2]
lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}" for p in sorted(d.glob(prefix + "*"))]
(d / "SHA256SUMS").write_text("".join(l + "\n" for l in lines))
PY
echo "== dist/ ($(( $(date +%s) - started )) s)" >&2
(cd dist && for f in "socair-$version"*; do printf '%8s  %s\n' "$(du -h "$f" | cut -f1)" "$f"; done) >&2
