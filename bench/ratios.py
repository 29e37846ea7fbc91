#!/usr/bin/env python3
"""Scan, tensors and convert of 1 GiB, each against its limit measured in the same run on the
same bytes (docs/performance.md, "One pass over the bytes"):

  scan     socair scan --json CHECKPOINT           against  openssl dgst -sha256 CHECKPOINT
           on both cores, and on one (taskset -c 0, openssl too)      target: time <= 1.1x
  tensors  socair tensors SAFETENSORS (F32)        against  openssl dgst -sha256 SAFETENSORS
           (socair hashes the file and every tensor: twice the bytes) target: openssl / socair >= 1.15
           and its bound: socair scan SAFETENSORS, the file's SHA-256 alone (one chain, one core)
  convert  socair convert CHECKPOINT OUT --rules N against  cp CHECKPOINT COPY; openssl dgst COPY
           for every rule set, output (and copy) in OUTDIR           target: time <= 1.1x
           and against the same with the copy fsynced (sync COPY), as socair fsyncs its output

Usage: bench/ratios.py [--size-mib 1024] [--records 256] [--runs 5] [--outdir DIR]
                       [--socair target/release/socair] [--before DIR] [--work DIR] [--only WHAT]

The inputs are made without torch: scripts/make_big_checkpoint.py (a torch.save zip layout,
one storage record per tensor) and bench/make_safetensors.py (64 F32 tensors). Each figure
is the best of --runs runs, socair's and the limit's interleaved so that both see the same
machine; page cache warm. --before names a directory with an older build (socair and its
plugins) measured in the same rounds. `socair convert` fsyncs its output before keeping it
(cp does not): the seconds it waited for the disk are included, so --outdir on a tmpfs
(/dev/shm) measures the work and a disk directory measures it with the disk's write-back.
Prints the load average before and after: figures taken on a busy machine are upper bounds.
Standard library only.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def timed(cmd, cores=None):
    """Wall seconds and CPU seconds (user + system) of one run of `cmd`, output discarded."""
    if cores is not None:
        cmd = ["taskset", "-c", cores] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def best(runs, jobs):
    """Runs every job of `jobs` (name -> (setup, command, cores)) once per round, `runs` rounds
    interleaved; the best wall time of each, with that run's CPU time."""
    out = {}
    for _ in range(runs):
        for name, (setup, cmd, cores) in jobs.items():
            if setup:
                setup()
            wall, cpu = timed(cmd, cores)
            if name not in out or wall < out[name][0]:
                out[name] = (wall, cpu)
    return out


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--records", type=int, default=256)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--outdir", default=None, help="where convert writes (default: the work dir)")
    ap.add_argument("--socair", default=os.path.join(REPO, "target", "release", "socair"))
    ap.add_argument("--before", default=None, help="a directory holding an older socair and its plugins")
    ap.add_argument("--work", default=None, help="where the inputs are made (kept if given)")
    ap.add_argument("--only", default="scan,tensors,convert")
    a = ap.parse_args()
    work = a.work or os.path.join(os.environ.get("TMPDIR", "/tmp"), f"socair-ratios-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    outdir = a.outdir or work
    os.makedirs(outdir, exist_ok=True)
    ckpt = os.path.join(work, f"ckpt-{a.size_mib}m-{a.records}.pt")
    st = os.path.join(work, f"f32-{a.size_mib}m.safetensors")
    if not os.path.exists(ckpt):
        subprocess.run([sys.executable, os.path.join(REPO, "scripts", "make_big_checkpoint.py"), ckpt, str(a.size_mib), str(a.records)], check=True)
    if not os.path.exists(st):
        subprocess.run([sys.executable, os.path.join(HERE, "make_safetensors.py"), st, "F32", str(a.size_mib), "64"], check=True)
    for f in (ckpt, st):
        with open(f, "rb") as fh:
            while fh.read(8 << 20):
                pass
    builds = {"socair": a.socair}
    if a.before:
        builds["before"] = os.path.join(a.before, "socair")
    ssl = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"machine: {cpu}, {os.cpu_count()} cores; {ssl}")
    print(f"load average before: {load()}; best of {a.runs} runs, interleaved; page cache warm")
    print(f"inputs: {ckpt} ({os.path.getsize(ckpt)} bytes, {a.records} storage records), {st} ({os.path.getsize(st)} bytes, 64 F32 tensors)")
    rows = []
    only = set(a.only.split(","))

    def row(what, limit_name, limit, results, target, inverse=False):
        for name, (wall, cpu) in results.items():
            ratio = limit[0] / wall if inverse else wall / limit[0]
            rows.append((what, name, limit_name, limit[0], wall, cpu, ratio, target))

    if "scan" in only:
        for cores, label in ((None, "2 cores"), ("0", "1 core")):
            jobs = {"limit": (None, ["openssl", "dgst", "-sha256", ckpt], cores)}
            for name, b in builds.items():
                jobs[name] = (None, [b, "scan", "--json", ckpt], cores)
            r = best(a.runs, jobs)
            limit = r.pop("limit")
            row(f"scan ({label})", "openssl dgst", limit, r, "<= 1.10")
    if "tensors" in only:
        jobs = {"limit": (None, ["openssl", "dgst", "-sha256", st], None)}
        for name, b in builds.items():
            jobs[name] = (None, [b, "tensors", st], None)
        # What tensors cannot beat: the manifest names the file's SHA-256, one chain of blocks
        # that one core computes in file order, whatever the other core hashes beside it.
        # `scan` of the same file reads its header and computes that digest alone.
        jobs["digest"] = (None, [a.socair, "scan", "--json", st], None)
        r = best(a.runs, jobs)
        limit = r.pop("limit")
        digest = r.pop("digest")
        row("tensors F32 (2 cores)", "openssl dgst", limit, r, ">= 1.15 (openssl/socair)", inverse=True)
        row("  bound: the file's digest alone (scan)", "openssl dgst", limit, {"socair": digest}, "tensors' best", inverse=True)
    if "convert" in only:
        out = os.path.join(outdir, "out.safetensors")
        copy = os.path.join(outdir, "copy.pt")

        def clean():
            for p in (out, copy):
                if os.path.exists(p):
                    os.remove(p)
            os.sync()

        for rules in ("1", "2", "3"):
            jobs = {
                "limit": (clean, ["sh", "-c", f"cp '{ckpt}' '{copy}' && openssl dgst -sha256 '{copy}'"], None),
                # The same with the copy fsynced (coreutils `sync FILE`), as socair fsyncs its
                # output before keeping it: the limit when the disk's write-back counts too.
                "durable": (clean, ["sh", "-c", f"cp '{ckpt}' '{copy}' && sync '{copy}' && openssl dgst -sha256 '{copy}'"], None),
            }
            for name, b in builds.items():
                jobs[name] = (clean, [b, "convert", ckpt, out, "--from", "torch-zip", "--to", "safetensors", "--rules", rules], None)
            r = best(a.runs, jobs)
            limit = r.pop("limit")
            durable = r.pop("durable")
            row(f"convert --rules {rules} to {outdir}", "cp + openssl dgst", limit, r, "<= 1.10")
            row(f"convert --rules {rules} to {outdir}", "cp, fsync, openssl", durable, r, "<= 1.10")
        clean()
    print(f"load average after: {load()}")
    print()
    print(f"{'what':<44} {'build':<7} {'limit':<19} {'limit s':>8} {'socair s':>9} {'cpu s':>6} {'ratio':>6}  target")
    for what, name, limit_name, lt, wall, cpu, ratio, target in rows:
        print(f"{what:<44} {name:<7} {limit_name:<19} {lt:8.3f} {wall:9.3f} {cpu:6.2f} {ratio:6.2f}  {target}")
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
