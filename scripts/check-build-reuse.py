#!/usr/bin/env python3
"""Fails when `cargo test --workspace` would compile again something `cargo build --workspace`
already compiled.

The README's test command is `cargo build --workspace && cargo test --workspace`. A test-only
dependency that asks for another feature of a crate socair uses (serde's "alloc", say) makes
cargo build that crate a second time, and with it every crate above it: the host and every
plugin. That once cost four minutes of a cold run. This compares the two unit graphs: every unit
of the build, identified by its package, target, mode, features, profile and (recursively) its
dependencies, must be a unit of the test build too.

Uses cargo's `--unit-graph` (unstable, enabled with RUSTC_BOOTSTRAP=1 for this query only): it
resolves the graph and compiles nothing.
"""
import hashlib
import json
import os
import subprocess
import sys


def unit_ids(args):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    out = subprocess.run(
        ["cargo", *args, "--unit-graph", "-Z", "unstable-options"],
        capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        sys.exit(f"cargo {' '.join(args)} --unit-graph failed:\n{out.stderr}")
    units = json.loads(out.stdout)["units"]
    ids = {}

    def ident(i):
        if i not in ids:
            u = units[i]
            deps = sorted(ident(d["index"]) + d["extern_crate_name"] for d in u["dependencies"])
            # The profile's name differs (dev, test) while its settings, what the artifact
            # depends on, are the same.
            profile = {k: v for k, v in u["profile"].items() if k != "name"}
            own = [u["pkg_id"], u["target"]["name"], u["target"]["crate_types"], u["mode"],
                   u["features"], profile, u["platform"], deps]
            ids[i] = hashlib.sha256(json.dumps(own, sort_keys=True).encode()).hexdigest()
        return ids[i]

    return {ident(i): units[i] for i in range(len(units))}


def main():
    built = unit_ids(["build", "--workspace"])
    tested = unit_ids(["test", "--workspace", "--no-run"])
    # A library that is only a cdylib (plugins/tensorflow: its formats are another crate) is
    # never a dependency, so the test build does not need the build's unit at all: it is not
    # built again, only not built.
    again = [u for k, u in built.items() if k not in tested
             and not (u["target"]["crate_types"] == ["cdylib"] and u["mode"] == "build")]
    if again:
        print(f"`cargo test --workspace` would compile {len(again)} unit(s) of the build again:")
        for u in sorted(again, key=lambda u: u["pkg_id"]):
            print(f"  {u['pkg_id']} {u['target']['name']} ({u['mode']}) features {u['features']}")
        print("A test dependency changes their features (see `cargo tree -e features -i <crate>`).")
        sys.exit(1)
    print(f"cargo test reuses all {len(built)} units of cargo build")


main()
