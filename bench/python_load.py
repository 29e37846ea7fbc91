#!/usr/bin/env python3
"""socair.load against torch.load(weights_only=True, mmap=True), both followed by touching
every byte of every tensor, on one checkpoint written by torch.save, in the same run.

    python bench/python_load.py [SIZE_MIB=1024] [TENSORS=128]

Run it with a Python that has torch and the socair package installed (a release build:
`pip install ./python`). Each load runs in a fresh process, alternately, 3 times; the best
wall time of each is kept. Printed: seconds, the ratio torch / socair (above 1: socair is
faster), and peak memory: the process's peak resident set (VmHWM) above what it held before
loading, and that less the file's size (the mapped file's pages count as resident once they
are touched).

The page cache is warm (the file was just written and is read once before timing). Touching is
the same for both: each tensor as a NumPy array (torch's through .numpy(), which shares its
memory), reduced with bitwise OR over its 32-bit words, which reads every byte once.
"""

import os
import subprocess
import sys
import tempfile
import time

RUNS = 3


def touch(array):
    import numpy as np

    flat = array.reshape(-1)
    if flat.dtype.itemsize == 4:
        return int(np.bitwise_or.reduce(flat.view(np.uint32)))
    return int(np.bitwise_or.reduce(flat.view(np.uint8)))


def status_kib(field):
    # /proc/self/status, not getrusage: ru_maxrss survives exec, so a child of this (large)
    # parent would report the parent's peak.
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_kib():
    return status_kib("VmRSS")


def child(method, path):
    """Times one load + touch in this process; prints seconds, KiB before, peak KiB."""
    import numpy as np  # noqa: F401  (imported before the baseline, as both need it)

    if method == "torch":
        import torch

        before = rss_kib()
        t0 = time.perf_counter()
        state = torch.load(path, weights_only=True, mmap=True)
        for t in state.values():
            touch(t.numpy())
    else:
        import socair

        socair.plugins()  # the plugins are loaded once per process, before timing
        before = rss_kib()
        t0 = time.perf_counter()
        verify = method == "socair"
        state = socair.load(path) if verify else socair.load(path, verify=False)
        for a in state.values():
            touch(a)
    seconds = time.perf_counter() - t0
    peak = status_kib("VmHWM")
    print(f"{seconds:.4f} {before} {peak} {len(state)}")


def make_checkpoint(path, mib, count):
    import torch

    per = mib * 1048576 // count // 4
    torch.manual_seed(0)
    rows = 1024
    state = {f"layers.{i}.weight": torch.randn(rows, per // rows) for i in range(count)}
    torch.save(state, path)
    del state


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    import socair
    import torch

    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "model.pt")
        make_checkpoint(path, mib, count)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
        methods = ["torch", "socair", "socair-unverified"]
        best = {}
        for _ in range(RUNS):
            for m in methods:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", m, path], check=True, capture_output=True, text=True
                ).stdout.split()
                seconds, before, peak, n = float(out[0]), int(out[1]), int(out[2]), int(out[3])
                assert n == count, (m, n)
                if m not in best or seconds < best[m][0]:
                    best[m] = (seconds, before, peak)
        print(f"checkpoint: {count} F32 tensors, {size / 1048576:.0f} MiB (torch {torch.__version__}, socair {socair.__version__})")
        print(f"{'load + touch every tensor':<52} {'seconds':>8} {'torch/it':>9} {'peak MiB':>9} {'beyond file':>12}")
        base = best["torch"][0]
        for m in methods:
            seconds, before, peak = best[m]
            grown = (peak - before) / 1024
            label = {
                "torch": "torch.load(weights_only=True, mmap=True)",
                "socair": "socair.load (every check, CRC-32 of every record)",
                "socair-unverified": "socair.load(verify=False) (structure only)",
            }[m]
            print(f"{label:<52} {seconds:>8.3f} {base / seconds:>9.2f} {grown:>9.0f} {grown - size / 1048576:>12.0f}")


if __name__ == "__main__":
    main()
