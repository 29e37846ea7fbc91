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


def only_for_cdylibs(args):
    """Identities of the units that only cdylib-only libraries need (the Python extension's
    pyo3): the test build has no use for them, so it does not build them again either."""
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    out = subprocess.run(
        ["cargo", *args, "--unit-graph", "-Z", "unstable-options"],
        capture_output=True, text=True, env=env, check=True)
    graph = json.loads(out.stdout)
    units = graph["units"]
    cdylib = {i for i, u in enumerate(units)
              if u["target"]["crate_types"] == ["cdylib"] and u["mode"] == "build"}
    reached, stack = set(), [r for r in graph["roots"] if r not in cdylib]
    while stack:
        i = stack.pop()
        if i not in reached:
            reached.add(i)
            stack.extend(d["index"] for d in units[i]["dependencies"])
    ids = unit_ids(args)
    keys = list(ids)
    return {keys[i] for i in range(len(units)) if i not in reached}


def fail_if_built_again(who, again, hint):
    if again:
        print(f"{who} would compile {len(again)} unit(s) of the build again:")
        for u in sorted(again, key=lambda u: u["pkg_id"]):
            print(f"  {u['pkg_id']} {u['target']['name']} ({u['mode']}) features {u['features']}")
        print(hint)
        sys.exit(1)


def main():
    built = unit_ids(["build", "--workspace"])
    tested = unit_ids(["test", "--workspace", "--no-run"])
    # A library that is only a cdylib (plugins/tensorflow: its formats are another crate; the
    # Python extension) is never a dependency, so the test build does not need the build's
    # unit at all, nor the units only it needs (pyo3): they are not built again, only not built.
    cdylib_only = only_for_cdylibs(["build", "--workspace"])
    fail_if_built_again(
        "`cargo test --workspace`",
        [u for k, u in built.items() if k not in tested and k not in cdylib_only],
        "A test dependency changes their features (see `cargo tree -e features -i <crate>`).")
    # maturin builds the Python extension alone (`cargo rustc -p socair-python`): resolved for
    # that package only, the host's dependencies must get the features the workspace build
    # gave them (python/Cargo.toml names those the plugins add), or the wheel's build compiles
    # the host and its dependencies a second time.
    extension = unit_ids(["build", "-p", "socair-python", "--lib"])
    fail_if_built_again(
        "maturin's build of socair-python",
        [u for k, u in extension.items() if k not in built],
        "Give python/Cargo.toml the features the workspace build unifies (see `cargo tree -e features -i <crate>`).")
    print(f"cargo test reuses all {len(built)} units of cargo build, and the Python extension's build all of its {len(extension)}")


main()
