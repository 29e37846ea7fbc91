#!/bin/sh
# Regenerates plugins/shared/pickle/src/globals/dangerous_callables.tsv (and the .tsv.deflate the
# plugins carry, compress.py): analyse.py over the standard
# library of the python3 that runs it (3.11.7, as requirements.txt pins) and the pinned
# libraries.
#
#   scripts/dangerous-callables/regenerate.sh                  # downloads the pinned wheels
#   scripts/dangerous-callables/regenerate.sh SITE [SITE ...]  # or reads installed ones
#
# Without arguments the pinned wheels are fetched with `pip download --no-deps` (nothing is
# installed or built) into $CACHE (default ~/.cache/socair-dangerous-callables) and only their
# .py files and .dist-info are unpacked. With site-packages directories, every pinned
# distribution must be in one of them at its pinned version (analyse.py checks). Takes about
# four minutes of CPU.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
OUT="$HERE/../../plugins/shared/pickle/src/globals/dangerous_callables.tsv"
if [ $# -eq 0 ]; then
  CACHE=${CACHE:-$HOME/.cache/socair-dangerous-callables}
  mkdir -p "$CACHE/wheels" "$CACHE/site"
  grep '==' "$HERE/requirements.txt" | grep -v '^python==' > "$CACHE/wheels.txt"
  # Every manylinux tag a wheel of these may carry: pip matches --platform exactly, and
  # safetensors 0.8.0 (say) ships only manylinux_2_17/manylinux2014 wheels.
  "$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.11 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64 \
    --platform manylinux1_x86_64 -d "$CACHE/wheels" -r "$CACHE/wheels.txt"
  "$PY" - "$CACHE" <<'PYEOF'
import os, sys, zipfile
cache = sys.argv[1]
for w in sorted(os.listdir(os.path.join(cache, "wheels"))):
    with zipfile.ZipFile(os.path.join(cache, "wheels", w)) as z:
        for n in z.namelist():
            # Every directory too: a test directory holding no Python is still listed whole.
            os.makedirs(os.path.join(cache, "site", os.path.dirname(n)), exist_ok=True)
            if n.endswith(".py") or ".dist-info/" in n:
                z.extract(n, os.path.join(cache, "site"))
PYEOF
  set -- "$CACHE/site"
fi
SITES=""
for s in "$@"; do SITES="$SITES --site $s"; done
STDLIB=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
# shellcheck disable=SC2086
"$PY" "$HERE/analyse.py" --stdlib "$STDLIB" $SITES --pins "$HERE/requirements.txt" --out "$OUT"
echo "wrote $OUT"
"$PY" "$HERE/compress.py" "$OUT"
