#!/usr/bin/env python3
"""Scans of objects in object storage: bytes fetched, range requests, round trips waited for
and wall time, against the S3 test server with an injected per-request delay
(docs/performance.md and docs/scale.md).

  bench/remote.py [--delay-ms 20] [--size-mib 1024] [--runs 3]
                  [--socair target/release/socair] [--before DIR] [--work DIR]

Starts scripts/s3-test-server.py on a free loopback port with --delay-ms (each request waits
that long before it is answered, requests in flight together waiting side by side: a round
trip to a distant S3) and --direct-ranges (a range is answered from the stored bytes; moto
itself reads the whole object for each range, one request at a time). Uploads a torch
checkpoint of --size-mib MiB with 8 storage records and one of 512 MiB with 256 (made by
scripts/make_big_checkpoint.py), a safetensors file and a GGUF file of 512 MiB with 256
tensors each (bench/make_safetensors.py, bench/make_gguf.py) and an HDF5 file of 512 MiB in
256 groups (bench/make_hdf5.py, h5py), then for each build prints,
for `scan --header-only` and `scan` of each object: the bytes fetched (and their share of the
object), the range requests, the round trips waited for one after another (as socair counts
them; an older build does not), and the best wall time of --runs runs.
Needs python3 with moto[server] and boto3 (what .ci/run installs), and h5py and numpy.
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr}")
    m = re.search(r"fetched (\d+) bytes.* in (\d+) range requests(?: \((\d+) round trips)?", r.stderr)
    if not m:
        sys.exit(f"no `fetched` line from {' '.join(cmd)}: {r.stderr}")
    fetched, requests = int(m.group(1)), int(m.group(2))
    # A build from before the count says nothing of them.
    trips = int(m.group(3)) if m.group(3) else None
    return wall, fetched, requests, trips


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--socair", default=os.path.join(REPO, "target", "release", "socair"))
    ap.add_argument("--before", default=None)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    work = a.work or os.path.join(os.environ.get("TMPDIR", "/tmp"), f"socair-remote-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    # (path, the script that makes it and its arguments)
    objects = [
        (os.path.join(work, f"big-{a.size_mib}m-8.pt"), os.path.join(REPO, "scripts", "make_big_checkpoint.py"), [a.size_mib, 8]),
        (os.path.join(work, "many-512m-256.pt"), os.path.join(REPO, "scripts", "make_big_checkpoint.py"), [512, 256]),
        # Readers whose header lies at the start: one round trip, with the read-ahead.
        (os.path.join(work, "f32-512m-256.safetensors"), os.path.join(HERE, "make_safetensors.py"), ["F32", 512, 256]),
        (os.path.join(work, "f32-512m-256.gguf"), os.path.join(HERE, "make_gguf.py"), [512, 256]),
        # A reader that finds its objects by walking B-trees: where each lies is known only
        # once the one before it is read.
        (os.path.join(work, "w-512m-256.h5"), os.path.join(HERE, "make_hdf5.py"), [512, 256]),
    ]
    for path, script, args in objects:
        if not os.path.exists(path):
            subprocess.run([sys.executable, script, path] + [str(x) for x in args], check=True)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, os.path.join(REPO, "scripts", "s3-test-server.py"), str(port), "--delay-ms", str(a.delay_ms), "--direct-ranges"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.2)
        endpoint = f"http://127.0.0.1:{port}"
        env = dict(os.environ, AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="testing",
                   AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1", AWS_ALLOW_HTTP="true")
        import boto3
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
        s3.create_bucket(Bucket="bench")
        for path, _, _ in objects:
            s3.upload_file(path, "bench", os.path.basename(path))
        builds = {"socair": a.socair}
        if a.before:
            builds["before"] = os.path.join(a.before, "socair")
        print(f"S3 test server with --delay-ms {a.delay_ms:g} --direct-ranges; best of {a.runs} runs")
        print(f"load average: {' '.join(open('/proc/loadavg').read().split()[:3])}")
        print()
        print(f"{'object':<26} {'scan':<12} {'build':<7} {'size':>11} {'fetched':>11} {'x size':>7} {'requests':>8} {'round trips':>11} {'seconds':>8}")
        for path, _, _ in objects:
            size = os.path.getsize(path)
            url = f"s3://bench/{os.path.basename(path)}"
            for mode, args in (("header-only", ["--header-only"]), ("full", [])):
                for name, b in builds.items():
                    results = [run([b, "scan", "--json"] + args + [url], env) for _ in range(a.runs)]
                    wall = min(r[0] for r in results)
                    _, fetched, requests, trips = results[0]
                    shown = str(trips) if trips is not None else "not counted"
                    print(f"{os.path.basename(path):<26} {mode:<12} {name:<7} {size:>11} {fetched:>11} {fetched / size:>7.4f} {requests:>8} {shown:>11} {wall:>8.2f}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
