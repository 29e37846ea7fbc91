#!/usr/bin/env bash
# How the cost grows with size (1 MiB -> 4 GiB) and with tensor count (10 -> 100,000), each
# figure beside the limit measured in the same run on the same bytes.
#
#   bench/scaling.sh [MAX_MIB=4096] [PYTHON_WITH_TORCH]
#
# 1. `socair tensors` of an F32 safetensors file of 64 tensors, 1 MiB .. MAX_MIB, against
#    `openssl dgst -sha256` of the file (socair hashes the file and each tensor: 2x the bytes).
# 2. `socair tensors` of 256 MiB in 10 .. 100,000 tensors, against openssl of the same file.
# 3. With a Python that has torch: `socair convert` of a torch.save checkpoint of 256 MiB in
#    10 .. 100,000 tensors, against cp + openssl of the same file.
# Best of 3 each, page cache warm. Needs ~2.2x MAX_MIB of free space in $TMPDIR.
set -euo pipefail
max_mib=${1:-4096}
py=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cargo build --release --workspace --quiet --manifest-path "$repo/Cargo.toml"
socair="$repo/target/release/socair"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
best_of_3() { # best wall seconds of "$@", output discarded; a failure stops the script
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(now); "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }; t1=$(now)
    best=$(python3 -c "a='$best'; t=$t1-$t0; print(t if not a or t<float(a) else a)")
  done
  echo "$best"
}
row() { # label, bytes, limit seconds, socair seconds
  python3 - "$@" <<'PY'
import sys
label, size, tl, ts = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
print(f"{label:>12} {tl:10.3f} {ts:10.3f} {size / ts / 1e6:10.0f} {tl / ts:8.2f}")
PY
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(openssl version | cut -d' ' -f1-2)"

echo
echo "1. socair tensors by size (F32, 64 tensors); ratio = openssl s / socair s (socair hashes 2x)"
printf '%12s %10s %10s %10s %8s\n' "MiB" "openssl s" "socair s" "MB/s" "ratio"
for mib in 1 16 256 1024 4096; do
  [ "$mib" -le "$max_mib" ] || continue
  f="$work/size-$mib.safetensors"
  python3 "$here/make_safetensors.py" "$f" F32 "$mib" 64
  cat "$f" >/dev/null
  row "$mib" "$(stat -c %s "$f")" "$(best_of_3 openssl dgst -sha256 "$f")" "$(best_of_3 "$socair" tensors "$f")"
  rm -f "$f"
done

echo
echo "2. socair tensors by tensor count (F32, 256 MiB)"
printf '%12s %10s %10s %10s %8s\n' "tensors" "openssl s" "socair s" "MB/s" "ratio"
for n in 10 100 1000 10000 100000; do
  f="$work/count-$n.safetensors"
  python3 "$here/make_safetensors.py" "$f" F32 256 "$n"
  cat "$f" >/dev/null
  row "$n" "$(stat -c %s "$f")" "$(best_of_3 openssl dgst -sha256 "$f")" "$(best_of_3 "$socair" tensors "$f")"
  rm -f "$f"
done

if [ -n "$py" ] && "$py" -c "import torch" 2>/dev/null; then
  echo
  echo "3. socair convert by tensor count (torch.save, F32, 256 MiB); limit = cp + openssl"
  printf '%12s %10s %10s %10s %8s\n' "tensors" "limit s" "socair s" "MB/s" "ratio"
  limit() { rm -f "$work/copy" && cp "$1" "$work/copy" && openssl dgst -sha256 "$work/copy"; }
  convert() { rm -f "$work/out.safetensors" && "$socair" convert "$1" "$work/out.safetensors" --from torch-zip --to safetensors; }
  for n in 10 100 1000 10000 100000; do
    f="$work/count-$n.pt"
    "$py" - "$f" 256 "$n" <<'PY'
import sys, torch
path, mib, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = mib * 1048576 // n // 4
torch.manual_seed(0)
torch.save({f"layers.{i}.weight": torch.randn(per) for i in range(n)}, path)
PY
    cat "$f" >/dev/null
    row "$n" "$(stat -c %s "$f")" "$(best_of_3 limit "$f")" "$(best_of_3 convert "$f")"
    rm -f "$f" "$work/copy" "$work/out.safetensors"
  done
fi
