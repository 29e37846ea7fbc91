#!/usr/bin/env bash
# Fingerprinting throughput of `socair tensors`, as a ratio to `openssl dgst -sha256` on the
# same file in the same run (openssl uses the CPU's SHA instructions; it is the limit).
#
#   bench/fingerprint.sh [SIZE_MIB=2048] [WORKDIR=$(mktemp -d)]
#
# What one run of `socair tensors FILE` hashes: the whole file once (the artifact's sha256),
# every tensor's bytes once (its sha256), and for F16/BF16 the widened values (twice the
# tensor bytes); for F32 the values hash is the bytes hash. So:
#   F32:  2 x size hashed      BF16: 4 x size hashed
# Printed per dtype:
#   wall ratio       = openssl time / socair time          (same file, whole command)
#   per-thread ratio = (bytes socair hashed / socair time / threads) / (size / openssl time)
set -euo pipefail
size_mib=${1:-2048}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cargo build --release --workspace --quiet --manifest-path "$repo/Cargo.toml"
socair="$repo/target/release/socair"
cores=$(nproc)

now() { date +%s.%N; }
best_of_3() { # prints the best wall time of three runs of "$@" (output discarded)
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
    best=$(python3 -c "a='$best'; t=$t1-$t0; print(t if not a or t<float(a) else a)")
  done
  echo "$best"
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores; $(openssl version)"
echo "file size: $size_mib MiB; best of 3 runs each, page cache warm"
printf '%-5s %-9s %10s %10s %12s %11s %16s\n' dtype threads "openssl s" "socair s" "socair MB/s" "wall ratio" "per-thread ratio"
for dtype in F32 BF16; do
  f="$work/bench-$dtype.safetensors"
  [ -f "$f" ] || python3 "$here/make_safetensors.py" "$f" "$dtype" "$size_mib" 64
  cat "$f" >/dev/null
  t_ssl=$(best_of_3 openssl dgst -sha256 "$f")
  factor=2; [ "$dtype" = F32 ] || factor=4
  for threads in 1 "$cores"; do
    t_soc=$(best_of_3 env RAYON_NUM_THREADS="$threads" "$socair" tensors "$f")
    python3 - "$dtype" "$threads" "$t_ssl" "$t_soc" "$size_mib" "$factor" <<'PY'
import sys
dtype, threads, t_ssl, t_soc, mib, factor = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
size = mib * 1048576
ssl_rate = size / t_ssl
per_thread = factor * size / t_soc / threads
print(f"{dtype:<5} {threads:<9} {t_ssl:10.3f} {t_soc:10.3f} {size / t_soc / 1e6:12.0f} {t_ssl / t_soc:11.2f} {per_thread / ssl_rate:16.2f}")
PY
  done
done
