"""Reads dangerous_callables.tsv and looks paths up exactly as socair does
(plugins/shared/pickle/src/globals/callables.rs `lookup`): each component prefix of the path in turn;
aliases (`=`), instances (`~`) and a class's bases (`<`) followed where the prefix is reached
as an attribute; a flagged row, a sink or a module listed whole is a hit.
"""
import os

TSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "pickle",
                   "src", "globals", "dangerous_callables.tsv")
KINDS = {"=", "~", "<"}
MAX_STEPS = 16


def load(path=TSV):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            p, kind, target, nxt = line.rstrip("\n").split("\t")
            rows[p] = (kind, target, nxt)
    return rows


def target_path(target, rest):
    if ":" in target:
        m, q = target.split(":", 1)
        return (f"{m}.{q}" if q else m) + rest, len(m)
    return target + rest, 0


def lookup(rows, path, module_len, steps=None):
    """The flagged path a global reaches (`path` is module.name, the module its first
    `module_len` characters; 0 for a path reached wholly as attributes), or None."""
    steps = steps if steps is not None else [MAX_STEPS]
    if steps[0] == 0:
        return None
    steps[0] -= 1
    ends = [i for i, c in enumerate(path) if c == "."] + [len(path)]
    for end in ends:
        row = rows.get(path[:end])
        if row is None:
            continue
        kind, target, _ = row
        rest = path[end:]
        attribute = end > module_len
        if kind == "=":
            if attribute:
                return lookup(rows, *target_path(target, rest), steps)
            continue
        if kind == "~":
            if end >= module_len and rest:
                return lookup(rows, *target_path(target, rest), steps)
            continue
        if kind == "<":
            if attribute and rest:
                for base in target.split(" "):
                    hit = lookup(rows, *target_path(base, rest), steps)
                    if hit:
                        return hit
            continue
        return path[:end]
    return None


def chain(rows, path):
    out = [path]
    while rows[path][2] != "-" and len(out) < 32:
        path = rows[path][2]
        out.append(path)
    if rows[path][1] != path and rows[path][0] != "module":
        out.append(rows[path][1])
    return out
