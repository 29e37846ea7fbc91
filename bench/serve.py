#!/usr/bin/env python3
"""`socair serve` against a plain static file server, in the same run on the same bytes
(docs/serve.md, "Speed"):

  bench/serve.py [--size-mib 1024] [--runs 5] [--socair target/release/socair]
                 [--scanner target/debug/socair] [--work DIR]

Makes a model directory with one safetensors file of --size-mib MiB (bench/make_safetensors.py)
and a config.json, pulls it into a new store `--as bench/big`, scans it with a fresh scan key
and promotes it (with --scanner, the build whose plugins do the scan), then serves the store
with `socair serve --quiet` and the same file with two static servers on loopback:

  http.server  python3 -m http.server (the standard library's: reads and writes 64 KiB
               buffers, shutil.copyfileobj)
  sendfile     a static server of a dozen lines answering with socket.sendfile (the kernel's
               sendfile(2): the zero-copy path nginx takes)

and downloads the file from each with curl into /dev/null, --runs times, interleaved so that
every server sees the same machine. Prints each one's best MiB/s and socair's ratio to each
(target: >= 0.8 of the static server's speed). Page cache warm (the file is read once first).

Then the first pull-through: the same model directory served as `bench/big` by a stand-in hub
(tests/python/fake_hub.py), downloaded from it alone, and through a new gateway each run
(`socair serve --upstream HUB --key K` over an empty store trusting K): the first request
fetches the revision, scans it, promotes it and then answers. Prints both best times and their
ratio (target: <= 1.3 of the upstream download alone).
Needs curl. Standard library only.
"""
import argparse
import http.server
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def sh(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in (0,):
        sys.exit(f"{' '.join(map(str, cmd))} failed ({r.returncode}): {r.stderr}")
    return r.stdout.strip()


class SendfileHandler(socketserver.BaseRequestHandler):
    """GET /<name> of the one file, with sendfile(2)."""

    path = None

    def handle(self):
        data = b""
        while b"\r\n\r\n" not in data:
            got = self.request.recv(65536)
            if not got:
                return
            data += got
        size = os.path.getsize(self.path)
        self.request.sendall(
            f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n".encode()
        )
        with open(self.path, "rb") as fh:
            self.request.sendfile(fh)


def start_sendfile_server(path):
    SendfileHandler.path = path
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), SendfileHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/x", server


def download(url):
    """Seconds curl took to download url into /dev/null, and the bytes it got."""
    out = sh(["curl", "-sS", "-o", "/dev/null", "-w", "%{time_total} %{size_download} %{http_code}", url])
    t, n, code = out.split()
    if code != "200":
        sys.exit(f"{url}: HTTP {code}")
    return float(t), int(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--socair", default=os.path.join(REPO, "target/release/socair"))
    ap.add_argument("--scanner", default=None, help="the socair whose plugins scan (default: --socair)")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    scanner = a.scanner or a.socair
    work = a.work or tempfile.mkdtemp(prefix="socair-serve-bench-")
    model = os.path.join(work, "big")
    os.makedirs(model, exist_ok=True)
    weights = os.path.join(model, "model.safetensors")
    if not os.path.exists(weights):
        sh([sys.executable, os.path.join(HERE, "make_safetensors.py"), weights, "F32", str(a.size_mib), "64"])
    with open(os.path.join(model, "config.json"), "w") as fh:
        fh.write('{"model_type": "bert", "architectures": ["BertModel"]}\n')
    store = os.path.join(work, "store")
    shutil.rmtree(store, ignore_errors=True)
    key = os.path.join(work, "scan.key")
    if not os.path.exists(key):
        sh([scanner, "keygen", "--out", key])
    sh([scanner, "airlock", "init", "--store", store])
    sh([scanner, "airlock", "trust", key + ".pub", "--role", "scan", "--store", store])
    sha = sh([scanner, "airlock", "pull", model, "--as", "bench/big", "--store", store])
    sh([scanner, "airlock", "scan", sha, "--key", key, "--store", store])
    sh([scanner, "airlock", "promote", sha, "--store", store])
    served = os.path.join(store, "promoted", sha, "big", "model.safetensors")
    size = os.path.getsize(served)

    proc = subprocess.Popen(
        [a.socair, "serve", "--quiet", "--listen", "127.0.0.1:0", "--store", store],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    socair_url = proc.stdout.readline().strip() + "/bench/big/resolve/main/model.safetensors"
    static_dir = os.path.dirname(served)
    port_sock = socket.socket()
    port_sock.bind(("127.0.0.1", 0))
    port = port_sock.getsockname()[1]
    port_sock.close()
    static = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", static_dir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    sendfile_url, sendfile_server = start_sendfile_server(served)
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        urls = {
            "socair serve": socair_url,
            "http.server": f"http://127.0.0.1:{port}/model.safetensors",
            "sendfile": sendfile_url,
        }
        with open(served, "rb") as fh:  # page cache warm
            while fh.read(1 << 24):
                pass
        best = {name: None for name in urls}
        for _ in range(a.runs):
            for name, url in urls.items():
                t, n = download(url)
                if n != size:
                    sys.exit(f"{name}: {n} bytes, not {size}")
                best[name] = t if best[name] is None else min(best[name], t)
        print(f"{size / (1 << 20):.0f} MiB over loopback, best of {a.runs} (load average {os.getloadavg()[0]:.2f}):")
        for name, t in best.items():
            print(f"  {name:13} {t:7.3f} s  {size / (1 << 20) / t:8.0f} MiB/s")
        for other in ("http.server", "sendfile"):
            print(f"  socair serve / {other}: {best[other] / best['socair serve']:.2f} of its speed")
    finally:
        proc.terminate()
        proc.wait()
        static.terminate()
        static.wait()
        sendfile_server.shutdown()
    pull_through(a, work, model, key, size)


def pull_through(a, work, model, key, size):
    """The first download through a pulling gateway against the upstream download alone."""
    hub_root = os.path.join(work, "hub")
    shutil.rmtree(hub_root, ignore_errors=True)
    os.makedirs(os.path.join(hub_root, "bench"))
    os.symlink(model, os.path.join(hub_root, "bench", "big"))
    hub = subprocess.Popen(
        [sys.executable, os.path.join(REPO, "tests/python/fake_hub.py"), hub_root],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    hub_url = hub.stdout.readline().strip()
    threading.Thread(target=lambda: [None for _ in hub.stdout], daemon=True).start()
    path = "/bench/big/resolve/main/model.safetensors"
    best_up = best_gateway = None
    try:
        for run in range(a.runs):
            t, n = download(hub_url + path)
            if n != size:
                sys.exit(f"upstream: {n} bytes, not {size}")
            best_up = t if best_up is None else min(best_up, t)
            store = os.path.join(work, f"gateway-store-{run}")
            shutil.rmtree(store, ignore_errors=True)
            sh([a.socair, "airlock", "init", "--store", store])
            sh([a.socair, "airlock", "trust", key + ".pub", "--role", "scan", "--store", store])
            gateway = subprocess.Popen(
                [a.socair, "serve", "--quiet", "--listen", "127.0.0.1:0", "--store", store,
                 "--upstream", hub_url, "--key", key],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )
            try:
                url = gateway.stdout.readline().strip()
                t, n = download(url + path)
                if n != size:
                    sys.exit(f"gateway: {n} bytes, not {size}")
                best_gateway = t if best_gateway is None else min(best_gateway, t)
            finally:
                gateway.terminate()
                gateway.wait()
                shutil.rmtree(store, ignore_errors=True)
        print(f"first pull-through of {size / (1 << 20):.0f} MiB, best of {a.runs} (load average {os.getloadavg()[0]:.2f}):")
        print(f"  upstream alone      {best_up:7.3f} s")
        print(f"  through the gateway {best_gateway:7.3f} s")
        print(f"  gateway / upstream: {best_gateway / best_up:.2f} (target <= 1.3)")
    finally:
        hub.terminate()
        hub.wait()


if __name__ == "__main__":
    main()
