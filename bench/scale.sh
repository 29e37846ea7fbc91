#!/usr/bin/env bash
# Object storage at scale (docs/scale.md): bytes fetched and time per model for scans of
# objects served by an S3-protocol server on loopback, and the peak resident memory of a local
# scan of a large checkpoint.
#
#   bench/scale.sh [SIZE_MIB=2048] [WORKDIR=$(mktemp -d)]
#
# moto answers a range request by reading the whole object (its cost grows with the object, not
# the range), so full scans through it are measured on a FULL_MIB object (default 256), and the
# SIZE_MIB checkpoint is scanned header-only: a full scan's time here is moto's, not socair's.
# OLD_SOCAIR names another build to compare the local peak RSS with (one that predates object
# storage; its plugins beside it, in plugins/).
#
# Uses the socair already built (SOCAIR_BIN, else target/release/socair, else target/debug/
# socair, whose dependencies are optimised in this workspace's dev profile). Starts
# scripts/s3-test-server.py on a free loopback port unless SOCAIR_TEST_S3 names one, uploads
# every committed torch/safetensors/GGUF fixture and a SIZE_MIB torch checkpoint made by
# scripts/make_big_checkpoint.py (with boto3, which moto installs), then for each object:
#   header-only scan: bytes fetched, share of the object, range requests, seconds
#   full scan:        bytes fetched, seconds
set -euo pipefail
size_mib=${1:-2048}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
repo=$(cd "$(dirname "$0")/.." && pwd)
socair=${SOCAIR_BIN:-}
for b in "$repo/target/release/socair" "$repo/target/debug/socair"; do
  [ -z "$socair" ] && [ -x "$b" ] && socair=$b
done
[ -n "$socair" ] || { echo "build socair first (cargo build --workspace)" >&2; exit 2; }
if [ -z "${SOCAIR_TEST_S3:-}" ]; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 "$repo/scripts/s3-test-server.py" "$port" >/dev/null 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null || true' EXIT
  export SOCAIR_TEST_S3="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
    sleep 0.2
  done
fi
export AWS_ENDPOINT_URL=$SOCAIR_TEST_S3 AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
export AWS_DEFAULT_REGION=us-east-1 AWS_ALLOW_HTTP=true
bucket=scale-bench-$$
full_mib=${FULL_MIB:-256}
big="$work/big-${size_mib}m.pt"
many="$work/many-records-512m.pt"
small="$work/full-${full_mib}m.pt"
[ -f "$big" ] || python3 "$repo/scripts/make_big_checkpoint.py" "$big" "$size_mib" 8
[ -f "$many" ] || python3 "$repo/scripts/make_big_checkpoint.py" "$many" 512 256
[ -f "$small" ] || python3 "$repo/scripts/make_big_checkpoint.py" "$small" "$full_mib" 8
python3 - "$bucket" "$repo/fixtures" "$big" "$many" "$small" <<'PY'
import boto3, os, sys
bucket, fixtures, *bigs = sys.argv[1:]
s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
s3.create_bucket(Bucket=bucket)
for d in ["torch/legit", "torch/malicious", "safetensors", "gguf/valid"]:
    for name in sorted(os.listdir(os.path.join(fixtures, d))):
        p = os.path.join(fixtures, d, name)
        if os.path.isfile(p) and name.rsplit(".", 1)[-1] in ("pt", "safetensors", "gguf"):
            s3.upload_file(p, bucket, f"fixtures/{d}/{name}")
for big in bigs:
    s3.upload_file(big, bucket, "big/" + os.path.basename(big))
PY
echo "socair: $socair"
printf '%-52s %12s %12s %9s %6s %8s %12s %8s\n' object bytes "header-only" share reqs seconds "full scan" seconds
measure() { # url size [header-only]
  local t0 t1 t2 err1 err2
  err1=$(mktemp); err2=$(mktemp)
  t0=$(date +%s.%N)
  "$socair" scan --header-only --json "$1" >/dev/null 2>"$err1" || true
  t1=$(date +%s.%N)
  [ -z "${3:-}" ] && "$socair" scan --json "$1" >/dev/null 2>"$err2" || true
  t2=$(date +%s.%N)
  python3 - "$1" "$2" "$err1" "$err2" "$t0" "$t1" "$t2" <<'PY'
import re, sys
url, size, e1, e2, t0, t1, t2 = sys.argv[1:]
def got(path):
    m = re.search(r"fetched (\d+) bytes.* in (\d+) range requests", open(path).read())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)
(h, hr), (f, _) = got(e1), got(e2)
size = int(size)
print(f"{url[-52:]:<52} {size:>12} {h:>12} {h*100/size:>8.4f}% {hr:>6} {float(t1)-float(t0):>8.2f} {f:>12} {float(t2)-float(t1):>8.2f}")
PY
  rm -f "$err1" "$err2"
}
for d in torch/legit torch/malicious safetensors gguf/valid; do
  for f in "$repo/fixtures/$d"/*; do
    case "$f" in *.pt|*.safetensors|*.gguf) ;; *) continue ;; esac
    measure "s3://$bucket/fixtures/$d/$(basename "$f")" "$(stat -c %s "$f")"
  done
done
measure "s3://$bucket/big/$(basename "$big")" "$(stat -c %s "$big")" header-only
measure "s3://$bucket/big/$(basename "$many")" "$(stat -c %s "$many")" header-only
measure "s3://$bucket/big/$(basename "$small")" "$(stat -c %s "$small")"
t0=$(date +%s.%N); "$socair" tensors --json "s3://$bucket/big/$(basename "$small")" >/dev/null 2>&1; t1=$(date +%s.%N)
python3 -c "print(f'tensors of the {$full_mib} MiB object: {$t1-$t0:.2f} s')"
# Peak resident memory of local scans of the large checkpoint (GNU time's maximum RSS).
rss_of() { local f; f=$(mktemp); /usr/bin/time -f '%M' -o "$f" "$@" >/dev/null 2>&1 || true; tail -1 "$f"; rm -f "$f"; }
for bin in "$socair" ${OLD_SOCAIR:-}; do
  for cmd in "scan --json" "scan --header-only --json" "tensors --json"; do
    t0=$(date +%s.%N)
    rss=$(rss_of "$bin" $cmd "$big")
    t1=$(date +%s.%N)
    python3 -c "print(f'local {\"$cmd\":<26} of {$size_mib} MiB by {\"$bin\"}: peak RSS {$rss // 1024} MiB, {$t1-$t0:.2f} s')"
  done
done
