"""Writes the table analyse.py computes (plugins/shared/pickle/src/globals/dangerous_callables.tsv):
the flagged callables with their witness chains, and the alias, instance, bases and
whole-module rows through which a pickle reaches them. Called by analyse.py `main`.
"""
import ast
import sys

import sinks as S


def write(an, result, out, py, found):
    """The table: one row per path, sorted by bytes. Kinds (second column):

    * what a flagged callable does (`runs code`, ...): third column the sink, fourth the next
      callable of the witness chain (`-` when it reaches the sink itself); a sink by name is a
      row of its own whose next is `-`;
    * `=`: an alias (a module-level binding): the path is its target, and so is everything
      reached through it, when it is reached as an attribute (a pickle whose module is the
      path imports the module, not the binding of its parent package);
    * `~`: a module-level instance of a class (or a module whose class is replaced) with
      flagged members: what is reached through it is reached through the class;
    * `<`: a class that inherits flagged members: what is reached through it is reached
      through its bases (space-separated), unless the class has a row of its own for it;
    * `module`: a module listed whole (not analysed).

    Targets that are callables or modules of the sources are written `module:qualname` (or
    `module:` for a module), so that a lookup knows where the module part of the target ends.
    """
    rows = {}
    for i, (sink, what, nxt) in result.items():
        rows[i] = (what, sink, nxt or "-")
    for name, what in S.SINKS.items():
        rows.setdefault(name, (what, name, "-"))
    members = {}
    flagged_modules = set()
    for i in result:
        parts = an.defs[i].module.split(".")
        for k in range(1, len(parts) + 1):
            flagged_modules.add(".".join(parts[:k]))

    sink_prefixes = {".".join(k.split(".")[:i]) for k in S.SINKS
                     for i in range(1, k.count(".") + 1)}

    def sink_under(name):
        """A sink is the name or lies under it (`torch._C.StorageBase`, whose `from_file` is
        one): a class deriving from it inherits the sink as a member."""
        return bool(an.sink_of(name)) or name in sink_prefixes

    def ext_sinks(cls_id):
        return [t[1] for t in an.mro(cls_id) if t[0] == "ext" and sink_under(t[1])]

    def has_flagged(cls_id):
        if cls_id not in members:
            members[cls_id] = (flagged_members(an, result, cls_id)
                               + [(None, e) for e in ext_sinks(cls_id)])
        return members[cls_id]

    def spelt(target):
        if target in an.defs:
            d = an.defs[target]
            return f"{d.module}:{target[len(d.module) + 1:]}"
        if target in an.modules:
            return f"{target}:"
        return target

    for mname in sorted(an.modules):
        m = an.modules[mname]
        bindings = dict(m.bindings)
        for name, b in star_exports(an, m).items():
            bindings.setdefault(name, [b])
        for name in sorted(bindings):
            path = f"{mname}.{name}"
            if path in rows or path in an.defs:
                continue
            row = None
            for b in bindings[name]:
                if b[0] == "inst":
                    for t in an.resolve_binding(b, [], 0):
                        if t[0] == "inst" and has_flagged(t[1]):
                            row = ("~", spelt(t[1]), "-")
                    continue
                for t in an.resolve_binding(b, [], 0):
                    kind, target = t
                    if kind == "def" and (target in result or (
                            an.defs[target].kind == "class" and has_flagged(target))):
                        row = ("=", spelt(target), "-")
                    elif kind in ("ext", "mod", "def") and an.sink_of(target):
                        row = ("=", an.sink_of(target)[0], "-")
                    elif kind == "mod" and name != target.rsplit(".", 1)[-1] and (
                            target in flagged_modules):
                        row = ("=", spelt(target), "-")
                    if row:
                        break
                if row:
                    break
            if row:
                rows[path] = row
        cls = an.module_class_of(m)
        if cls and has_flagged(cls):
            rows.setdefault(mname, ("~", spelt(cls), "-"))
    for cid in sorted(an.defs):
        d = an.defs[cid]
        if d.kind != "class" or cid in result:
            continue
        # A member inherited from a flagged base, or from a C base that has a sink as a
        # member (torch/storage.py `UntypedStorage(torch._C.StorageBase, _StorageBase)`
        # inherits the C `from_file`).
        inherited = [mem for mem, target in has_flagged(cid)
                     if mem is None or mem not in d.members]
        if not inherited:
            continue
        bases = []
        for t in an.bases_of(cid):
            if t[0] == "def" and (t[1] in result or has_flagged(t[1])):
                bases.append(spelt(t[1]))
            elif t[0] == "ext" and an.sink_of(t[1]):
                bases.append(an.sink_of(t[1])[0])
            elif t[0] == "ext" and sink_under(t[1]):
                bases.append(t[1])
        if bases:
            rows.setdefault(cid, ("<", " ".join(bases), "-"))
    for path, why in an.whole.items():
        if path:
            rows.setdefault(path, ("module", why, "-"))
    kinds = {}
    for r in rows.values():
        k = r[0] if r[0] in ("=", "~", "<", "module") else "flagged"
        kinds[k] = kinds.get(k, 0) + 1
    with open(out, "w", encoding="utf-8") as f:
        f.write("# @generated by scripts/dangerous-callables/analyse.py; do not edit. Regenerate with\n")
        f.write("# scripts/dangerous-callables/regenerate.sh. Sources analysed:\n")
        f.write(f"#   CPython {py} standard library\n")
        for key in sorted(found):
            f.write(f"#   {found[key][0]} {found[key][1]}\n")
        f.write("# Columns: path, what it does (code, import, command, signal, network, native,\n")
        f.write("# unpickle, file, debugger) or the row's kind (= alias, ~ instance, < bases,\n")
        f.write("# module), the sink or the row's target, the next callable of one shortest witness\n")
        f.write("# chain (- when the path reaches the sink itself).\n")
        for path in sorted(rows, key=lambda p: p.encode()):
            what, target, nxt = rows[path]
            f.write(f"{path}\t{S.CODES.get(what, what)}\t{target}\t{nxt}\n")
    print(f"{len(result)} callables reach a sink; rows {kinds}; {len(an.defs)} defs in "
          f"{len(an.modules)} modules", file=sys.stderr)


def flagged_members(an, result, cls_id):
    """(member, flagged def) for each member of the class, own or inherited, that is flagged."""
    out = []
    seen = set()
    for t in an.mro(cls_id):
        if t[0] != "def":
            continue
        for member in sorted(an.defs[t[1]].members):
            if member in seen:
                continue
            seen.add(member)
            for b in an.defs[t[1]].members[member]:
                for r in an.resolve_binding(b, [], 0):
                    if r[0] == "def" and r[1] in result:
                        out.append((member, r[1]))
                        break
    return out


def star_exports(an, m, depth=0, seen=None):
    """The names a module's `from x import *` binds (yaml/__init__.py `from .loader import
    *` makes `yaml.UnsafeLoader`; xml/etree/cElementTree.py is only such an import): each
    as a binding to the star module's name. A star module's literal `__all__` says which
    names; without one, every name not starting with `_`. Stars of stars are followed."""
    seen = seen if seen is not None else {m.name}
    out = {}
    if depth > 8:
        return out
    for star in m.stars:
        sm = an.modules.get(star)
        if sm is None or star in seen:
            continue
        seen.add(star)
        names = set(sm.bindings)
        for name in star_exports(an, sm, depth + 1, seen):
            names.add(name)
        listed = literal_all(sm)
        for name in sorted(names):
            if (name in listed) if listed is not None else not name.startswith("_"):
                out.setdefault(name, ("ref", f"{star}.{name}"))
    return out


def literal_all(m):
    """A module's `__all__` when every assignment of it is a literal list or tuple of
    strings (then their union), else None."""
    values = m.consts.get("__all__")
    if not values:
        return None
    names = set()
    for v in values:
        if not isinstance(v, (ast.List, ast.Tuple)):
            return None
        for e in v.elts:
            if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
                return None
            names.add(e.value)
    return names
