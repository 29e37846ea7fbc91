#!/usr/bin/env bash
# Conversion throughput and memory, as ratios to the physical limit measured in the same run.
#
#   bench/convert.sh [SIZE_MIB=2048] [TENSORS=512] [PYTHON=python3]
#
# PYTHON must have torch (it writes the input checkpoint with torch.save, and times
# torch.load + safetensors.torch.save_file when safetensors is installed too).
# Printed, best of 3 each, page cache warm:
#   limit      = cp of the checkpoint + openssl dgst -sha256 of the copy
#   convert    = socair convert (read, write, verify through a second path)
#   airlock    = socair airlock convert (copy into work/ hashing, convert, verify, sign)
#   torch      = torch.load + save_file
# with each one's ratio to the limit, and peak resident memory (GNU time).
set -euo pipefail
size_mib=${1:-2048}
count=${2:-512}
py=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cargo build --release --workspace --quiet --manifest-path "$repo/Cargo.toml"
socair="$repo/target/release/socair"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" - "$work/model.pt" "$size_mib" "$count" <<'PY'
import sys, torch
path, mib, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = mib * 1048576 // n // 4
torch.manual_seed(0)
torch.save({f"layers.{i}.weight": torch.randn(per) for i in range(n)}, path)
PY
cat "$work/model.pt" >/dev/null
now() { date +%s.%N; }
best() { # best wall time of 3 runs of "$@"; prints "seconds peak_kib"
  local best="" mem=""
  for _ in 1 2 3; do
    rm -rf "$work/out" && mkdir -p "$work/out"
    local t0 t1
    t0=$(now)
    /usr/bin/time -f "%M" -o "$work/mem" "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
    t1=$(now)
    local t; t=$(python3 -c "print($t1-$t0)")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $t < $best else 1)"; then best=$t; mem=$(cat "$work/mem"); fi
  done
  echo "$best $mem"
}
limit() { cp "$work/model.pt" "$work/out/copy.pt" && openssl dgst -sha256 "$work/out/copy.pt" >/dev/null; }
read -r t_limit m_limit < <(best bash -c "$(declare -f limit); work=$work; limit")
read -r t_conv m_conv < <(best "$socair" convert "$work/model.pt" "$work/out/model.safetensors" --from torch-zip --to safetensors)
# The airlock: a store, a key with scan and derive, an attestation (not timed), then convert.
"$socair" keygen --out "$work/k" >/dev/null 2>&1
"$socair" airlock init --store "$work/store" 2>/dev/null
"$socair" airlock trust "$work/k.pub" --role scan,derive --store "$work/store" 2>/dev/null
"$socair" attest "$work/model.pt" --key "$work/k" --out "$work/att.json" 2>/dev/null
airlock_once() { rm -rf "$work/store/incoming/"*; "$socair" airlock convert "$work/model.pt" --attestation "$work/att.json" --key "$work/k" --store "$work/store"; }
read -r t_air m_air < <(best bash -c "$(declare -f airlock_once); work=$work; socair=$socair; airlock_once")
file_mib=$(( $(stat -c %s "$work/model.pt") / 1048576 ))
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(openssl version)"
echo "input: torch.save of $count F32 tensors, $file_mib MiB"
printf '%-10s %9s %10s %14s\n' step seconds "ratio" "peak RSS MiB"
python3 - "$t_limit" "$m_limit" "$t_conv" "$m_conv" "$t_air" "$m_air" <<'PY'
import sys
tl, ml, tc, mc, ta, ma = map(float, sys.argv[1:])
print(f"{'limit':<10} {tl:9.3f} {'1.00':>10} {ml/1024:14.0f}")
print(f"{'convert':<10} {tc:9.3f} {tc/tl:10.2f} {mc/1024:14.0f}")
print(f"{'airlock':<10} {ta:9.3f} {ta/tl:10.2f} {ma/1024:14.0f}")
PY
if "$py" -c "import safetensors.torch" 2>/dev/null; then
  torch_once() { "$py" -c "import torch, safetensors.torch as s; s.save_file(torch.load('$work/model.pt', weights_only=True), '$work/out/t.safetensors')"; }
  read -r t_torch m_torch < <(best bash -c "$(declare -f torch_once); work=$work; py=$py; torch_once")
  python3 - "$t_limit" "$t_torch" "$m_torch" "$t_conv" "$t_air" <<'PY'
import sys
tl, tt, mt, tc, ta = map(float, sys.argv[1:])
print(f"{'torch':<10} {tt:9.3f} {tt/tl:10.2f} {mt/1024:14.0f}")
print(f"socair convert is {tt/tc:.1f}x faster than torch.load + save_file; airlock convert {tt/ta:.1f}x")
PY
fi
