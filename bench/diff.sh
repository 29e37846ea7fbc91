#!/usr/bin/env bash
# Time of `socair tensors diff` on two manifests of N tensors (default 10,000): the reference,
# and a copy where 1% of the tensors differ, 1% are renamed and 1% are converted to BF16
# (same values). Generates its own inputs; prints wall time per run and tensors per second.
#
#   bench/diff.sh [N=10000]
set -euo pipefail
n=${1:-10000}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cargo build --release --workspace --quiet --manifest-path "$repo/Cargo.toml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$work" <<'PY'
import hashlib, json, sys
n, work = int(sys.argv[1]), sys.argv[2]
h = lambda s: hashlib.sha256(s.encode()).hexdigest()
def manifest(tensors):
    return {"schema": "socair.tensors/v1",
            "artifact": {"name": "m", "format": "model directory", "sha256": h("m")},
            "value_encoding": "float32-le-bits/v1", "tensors": tensors, "unread": []}
ref, art = [], []
for i in range(n):
    name = f"model.layers.{i // 10}.t{i % 10}.weight"
    t = {"file": f"model-{i % 4}.safetensors", "name": name, "dtype": "F32", "shape": [64, 64],
         "bytes": 16384, "sha256": h(name), "values": h(name)}
    ref.append(t)
    a = dict(t)
    if i % 100 == 1: a["sha256"] = a["values"] = h(name + "edited")
    if i % 100 == 2: a["name"] = "renamed." + name
    if i % 100 == 3: a.update(dtype="BF16", bytes=8192, sha256=h(name + "bf16"))
    art.append(a)
key = lambda t: (t["file"].encode(), t["name"].encode())
for path, ts in (("ref", ref), ("art", art)):
    json.dump(manifest(sorted(ts, key=key)), open(f"{work}/{path}.json", "w"), indent=2)
PY
socair="$repo/target/release/socair"
for run in 1 2 3; do
  t0=$(date +%s.%N)
  "$socair" tensors diff "$work/art.json" "$work/ref.json" --out "$work/diff.json" 2>/dev/null || true
  t1=$(date +%s.%N)
  python3 -c "t=$t1-$t0; print(f'run $run: {t:.3f} s for $n + $n tensors ({2*$n/t:,.0f} tensors/s)')"
done
python3 -c "import json; print('summary:', json.load(open('$work/diff.json'))['summary'])"
