#!/usr/bin/env python3
"""Lists every callable a pickle can name that can reach a sink (sinks.py): code execution,
imports by name, processes, the network, native code, nested unpicklers, files.

    python3 analyse.py --stdlib DIR --site DIR [--site DIR ...] --pins requirements.txt \
        --out dangerous_callables.tsv

Python 3.11, standard library `ast` only; nothing analysed is imported or run. The sources are
the standard library at DIR (its version must be the one `requirements.txt` pins) and, in the
`--site` directories, the top-level packages of every distribution `requirements.txt` pins,
each at its pinned version (read from its `.dist-info/METADATA`; a mismatch stops the run).

What a pickle can name (the callables, each a row when it reaches a sink):

* every module-level function and class, and every method and nested class
  (`module.Class.method`, which protocol 4 pickles name as dotted paths and REDUCE can call with
  any arguments, `self` included);
* a class counts as the calls its instances receive from unpickling and use: `__new__` and
  `__init__` (REDUCE, NEWOBJ), `__setstate__` and `__setattr__` (BUILD), `__setitem__`,
  `append`, `extend` (SETITEM(S), APPEND(S) on non-dict, non-list objects), `__hash__` (dict
  keys), `__call__` (a REDUCE of the instance), `__del__` (when it is freed), `__post_init__`
  (dataclasses' `__init__`), each looked up along the class's resolvable bases;
* module-level aliases of those (`from .x import f`, `f = g`, `f = functools.partial(g, ...)`,
  `import ctypes as _c`), members of module-level instances (`_inst = Random(); random =
  _inst.random`), and modules whose class is replaced at import (torch's config modules call
  `install_config_module(sys.modules[__name__])`, which sets `module.__class__` to
  `ConfigModule`, so `torch._dynamo.config.load_config` is `ConfigModule.load_config`).

What a body reaches (its edges): every name or dotted attribute path it references, anywhere
in it (nested functions, lambdas and local classes included), resolved through the module's
imports (module-level and function-local, relative ones too, `from x import *`; a name no
source binds may be a builtin even after a star import of a C module), aliases,
`self.`/`cls.`/`super().` lookups along the enclosing class's bases, module-level instances,
and locals bound to an instance of a known class (`x = C(...)`, `with C(...) as x`). A
function referenced counts as called (it may be a callback); a class counts as constructed
where it is called (`C(...)`) and where it is handed to a function that calls the parameter
it lands in (`load(stream, UnsafeLoader)`), not in `isinstance` checks, annotations or other
arguments. A class that is or derives from a sink by name is that sink. An attribute of
something whose class is unknown (a parameter, a call's result) is an edge only when its name
is one of METHOD_SINKS.

The import system's modules are read a second time under the names CPython runs them as,
frozen (`_frozen_importlib`, `_frozen_importlib_external`: FROZEN).

What it cannot see: dynamic dispatch (a method of an object whose class is not known where
it is called, beyond METHOD_SINKS; subclasses overriding what a base class calls on `self`),
`getattr`/`setattr`/`globals()`/`sys.modules` with computed names, code in strings, C
extensions (their functions are sinks only by name, sinks.py), decorators that replace a
function (the function's own body is analysed), metaclasses, descriptors and properties,
module import-time code, and the calls of objects a caller passes in. Calls into BARRIERS are
not followed. Test packages (`tests`, `test`, `testing`) are not analysed: each is listed whole.

Each row gives the sink and the next callable of ONE shortest witness chain (breadth-first over
the reversed call graph, ties broken by name), so that the whole chain is found by following
`next` from row to row.
"""

import argparse
import ast
import os
import re
import sys
from collections import deque

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sinks as S  # noqa: E402
import table_out  # noqa: E402
from body import (BARRIER_SET, BUILTINS, NOT_A_CALL, BodyRefs, _dotted,  # noqa: E402
                  _is_this_module)

# Members a class's instances receive from unpickling and use.
CONSTRUCT = ["__new__", "__init__", "__post_init__", "__setstate__", "__setattr__",
             "__setitem__", "append", "extend", "__hash__", "__call__", "__del__"]
TEST_DIRS = {"tests", "test", "testing"}
# Standard-library sources the interpreter also runs, frozen, under another module name.
FROZEN = {"_frozen_importlib": "_bootstrap.py",
          "_frozen_importlib_external": "_bootstrap_external.py"}
MAX_RESOLVE_DEPTH = 24


def read_pins(path):
    pins = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, ver = line.split("==")
        pins[norm(name)] = ver.strip()
    return pins


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def dist_info(site):
    """(distribution, version, top-level names) of each .dist-info in `site`."""
    out = []
    for entry in sorted(os.listdir(site)):
        if not entry.endswith(".dist-info"):
            continue
        meta = os.path.join(site, entry, "METADATA")
        name = ver = None
        for line in open(meta, encoding="utf-8", errors="replace"):
            if line.startswith("Name: "):
                name = line[6:].strip()
            elif line.startswith("Version: "):
                ver = line[9:].strip()
            elif not line.strip():
                break
        tops = set()
        top = os.path.join(site, entry, "top_level.txt")
        if os.path.exists(top):
            tops = {t.strip() for t in open(top) if t.strip()}
        else:
            for rec in open(os.path.join(site, entry, "RECORD"), encoding="utf-8"):
                first = rec.split(",", 1)[0].split("/", 1)[0]
                if first.endswith(".py"):
                    tops.add(first[:-3])
                elif "." not in first and first != "..":
                    tops.add(first)
        out.append((name, ver, tops))
    return out


class Def:
    __slots__ = ("id", "kind", "module", "node", "members", "bases", "file", "is_method",
                 "cls")

    def __init__(self, id_, kind, module, node, file, cls=None):
        self.id = id_
        self.kind = kind  # "func" or "class"
        self.module = module
        self.node = node
        self.members = {}  # class: name -> [binding]
        self.bases = []  # class: base expressions
        self.file = file
        self.cls = cls  # the class a method belongs to


class Module:
    __slots__ = ("name", "file", "is_pkg", "bindings", "stars", "module_class", "tree", "consts")

    def __init__(self, name, file, is_pkg):
        self.name = name
        self.file = file
        self.is_pkg = is_pkg
        self.bindings = {}  # name -> [binding]
        self.stars = []
        self.module_class = None
        self.tree = None
        self.consts = {}  # name -> value expressions assigned at module level


class Analysis:
    def __init__(self):
        self.modules = {}
        self.defs = {}
        self.whole = {}  # module name -> why listed whole
        self.cache = {}
        self.base_cache = {}
        self.param_calls = {}

    # ---- loading ---------------------------------------------------------------------

    def add_tree(self, root, prefix_filter=None, skip=()):
        """Modules under `root` (a directory on sys.path); `prefix_filter` limits to packages."""
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            parts = [] if rel == "." else rel.split(os.sep)
            if parts and prefix_filter is not None and parts[0] not in prefix_filter:
                dirnames[:] = []
                continue
            if not parts:
                dirnames[:] = sorted(d for d in dirnames
                                     if prefix_filter is None or d in prefix_filter)
            else:
                dirnames.sort()
            if parts and not all(p.isidentifier() for p in parts):
                dirnames[:] = []
                continue
            if parts and "__init__.py" not in filenames and prefix_filter is not None:
                # Namespace packages are importable too; keep them.
                pass
            dotted = ".".join(parts)
            if any(p in skip for p in [dotted]):
                self.whole[dotted] = "not analysed (listed whole)"
                dirnames[:] = []
                continue
            if parts and parts[-1] in TEST_DIRS:
                self.whole[dotted] = "a test package (not analysed): test code runs commands, code and I/O"
                dirnames[:] = []
                continue
            for fn in sorted(filenames):
                if not fn.endswith(".py"):
                    continue
                stem = fn[:-3]
                if not stem.isidentifier():
                    continue
                if not parts and prefix_filter is not None and stem not in prefix_filter:
                    continue
                if stem == "__main__":
                    continue
                if stem == "__init__":
                    name, is_pkg = dotted, True
                    if not name:
                        continue
                else:
                    name, is_pkg = (f"{dotted}.{stem}" if dotted else stem), False
                if name.split(".")[-1] in TEST_DIRS or stem.startswith("test_"):
                    self.whole[name] = "a test module (not analysed): test code runs commands, code and I/O"
                    continue
                self.parse(name, os.path.join(dirpath, fn), is_pkg,
                           os.path.relpath(os.path.join(dirpath, fn), root))

    def add_frozen(self, stdlib):
        """The import system's modules again under the names the interpreter runs them as:
        CPython 3.11 freezes importlib/_bootstrap.py and _bootstrap_external.py into the
        interpreter as `_frozen_importlib` and `_frozen_importlib_external`, and
        importlib/__init__.py only renames the same module objects and adds them to
        sys.modules under their importlib names (Lib/importlib/__init__.py, 3.11.7), so both
        names import the same functions (`_frozen_importlib_external._write_atomic`)."""
        for name, file in FROZEN.items():
            path = os.path.join(stdlib, "importlib", file)
            if os.path.exists(path):
                self.parse(name, path, False, os.path.relpath(path, stdlib))

    def parse(self, name, path, is_pkg, rel):
        try:
            src = open(path, "rb").read()
            tree = ast.parse(src, filename=path)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            return
        m = Module(name, rel, is_pkg)
        m.tree = tree
        self.modules[name] = m
        self.collect_scope(m, tree.body, None, name)

    def package_of(self, m):
        return m.name if m.is_pkg else m.name.rpartition(".")[0]

    def absolute(self, m, module, level):
        if not level:
            return module or ""
        base = self.package_of(m).split(".")
        if level > 1:
            base = base[: len(base) - (level - 1)]
        base = ".".join(base)
        return f"{base}.{module}" if module else base

    def import_bindings(self, m, stmt):
        """(name, binding) pairs an import statement makes."""
        out = []
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname:
                    out.append((a.asname, ("ref", a.name)))
                else:
                    top = a.name.split(".")[0]
                    out.append((top, ("ref", top)))
        else:
            mod = self.absolute(m, stmt.module, stmt.level)
            for a in stmt.names:
                if a.name == "*":
                    out.append(("*", ("star", mod)))
                else:
                    out.append((a.asname or a.name, ("ref", f"{mod}.{a.name}")))
        return out

    def collect_scope(self, m, body, cls, prefix):
        """Bindings of a module body (cls None) or a class body, recursively into if/try."""
        target = m.bindings if cls is None else cls.members
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                d = Def(f"{prefix}.{stmt.name}", "func", m.name, stmt, m.file, cls)
                self.defs[d.id] = d
                target.setdefault(stmt.name, []).append(("def", d.id))
            elif isinstance(stmt, ast.ClassDef):
                d = Def(f"{prefix}.{stmt.name}", "class", m.name, stmt, m.file, cls)
                d.bases = list(stmt.bases)
                self.defs[d.id] = d
                target.setdefault(stmt.name, []).append(("def", d.id))
                self.collect_scope(m, stmt.body, d, d.id)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for name, b in self.import_bindings(m, stmt):
                    if b[0] == "star":
                        if cls is None:
                            m.stars.append(b[1])
                    else:
                        target.setdefault(name, []).append(b)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                value = stmt.value
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if value is None:
                    continue
                for t in targets:
                    if not isinstance(t, ast.Name):
                        continue
                    if cls is None:
                        m.consts.setdefault(t.id, []).append(value)
                    b = self.value_binding(m, value, prefix, t.id, cls)
                    if b is not None:
                        target.setdefault(t.id, []).append(b)
            elif isinstance(stmt, (ast.If, ast.Try, ast.With)) or type(stmt).__name__ == "TryStar":
                for field in ("body", "orelse", "finalbody"):
                    self.collect_scope(m, getattr(stmt, field, []) or [], cls, prefix)
                for h in getattr(stmt, "handlers", []) or []:
                    self.collect_scope(m, h.body, cls, prefix)
            elif cls is None and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                # install_config_module(sys.modules[__name__]) and the like.
                call = stmt.value
                if call.args and _is_this_module(call.args[0]):
                    m.module_class = ("pending", call.func)

    def value_binding(self, m, value, prefix, name, cls):
        if isinstance(value, (ast.Name, ast.Attribute)):
            dotted = _dotted(value)
            if dotted:
                return ("expr", dotted, m.name, cls.id if cls else None)
        if isinstance(value, ast.Lambda):
            d = Def(f"{prefix}.{name}", "func", m.name, value, m.file, cls)
            self.defs[d.id] = d
            return ("def", d.id)
        if isinstance(value, ast.Call):
            fn = _dotted(value.func)
            if fn and fn.split(".")[-1] in ("partial", "staticmethod", "classmethod",
                                               "partialmethod", "wraps", "lru_cache", "cache"):
                if value.args:
                    inner = _dotted(value.args[0])
                    if inner:
                        return ("expr", inner, m.name, cls.id if cls else None)
            elif fn:
                return ("inst", fn, m.name, cls.id if cls else None)
        return ("var",)

    # ---- resolution ------------------------------------------------------------------

    def module_prefix(self, parts):
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if name in self.modules:
                return name, parts[i:]
        return None, parts

    def resolve(self, full, depth=0):
        """Targets a dotted name denotes: ("def", id), ("mod", name), ("inst", class id),
        ("ext", name)."""
        key = full
        if key in self.cache:
            return self.cache[key]
        if depth > MAX_RESOLVE_DEPTH:
            return []
        self.cache[key] = []  # cycles resolve to nothing
        parts = full.split(".")
        mod, rest = self.module_prefix(parts)
        if mod is None:
            out = [("ext", full)]
        elif not rest:
            out = [("mod", mod)]
            parent, _, last = mod.rpartition(".")
            if parent in self.modules:
                bound = []
                for b in self.modules[parent].bindings.get(last, []):
                    if b[0] == "ref" and b[1] == mod:
                        continue
                    bound += self.resolve_binding(b, [], depth + 1)
                if any(t[0] == "def" for t in bound):
                    out = [t for t in bound if t[0] == "def"]
        else:
            out = self.resolve_in_module(mod, rest, depth + 1)
            if not out:
                out = [("ext", full)]
        self.cache[key] = out
        return out

    def resolve_in_module(self, mod, rest, depth, seen=None):
        m = self.modules[mod]
        name, tail = rest[0], rest[1:]
        out = []
        for b in m.bindings.get(name, []):
            if b == ("ref", f"{mod}.{name}") and b[1] not in self.modules:
                # `from torch import _C as _C` in torch/__init__.py: a submodule with no
                # Python source, an extension module (torch._C.StorageBase.from_file is a
                # sink by name); resolving the binding would only come back here.
                out.append(("ext", ".".join([mod] + rest)))
                continue
            out += self.resolve_binding(b, tail, depth)
        if not out and f"{mod}.{name}" in self.modules:
            out = self.resolve(".".join([mod] + rest), depth + 1)
        if not out:
            seen = seen or set()
            seen.add(mod)
            for star in m.stars:
                if star in self.modules and star not in seen:
                    out += self.resolve_in_module(star, rest, depth + 1, seen)
                elif star not in self.modules:
                    out += [("ext", ".".join([star] + rest))]
                if out:
                    break
        if not out and m.module_class:
            cls = self.module_class_of(m)
            if cls:
                out = self.resolve_member(cls, rest, depth + 1)
        return out

    def module_class_of(self, m):
        mc = m.module_class
        if mc and mc[0] == "pending":
            m.module_class = None
            fn = _dotted(mc[1])
            cls = None
            if fn:
                for t in self.resolve_expr(fn, m.name, None, 0):
                    if t[0] == "def":
                        cls = self.sets_module_class(self.defs[t[1]])
                        if cls:
                            break
            m.module_class = ("done", cls)
        return m.module_class[1] if m.module_class else None

    def sets_module_class(self, d):
        """The class a function assigns to its first parameter's __class__, if it does (a
        class local to the function counts as its first base that resolves)."""
        if d.kind != "func" or not d.node.args.args:
            return None
        p = d.node.args.args[0].arg
        local_classes = {n.name: n for n in ast.walk(d.node) if isinstance(n, ast.ClassDef)}
        for node in ast.walk(d.node):
            if not isinstance(node, ast.Assign):
                continue
            for t in node.targets:
                if not (isinstance(t, ast.Attribute) and t.attr == "__class__"
                        and isinstance(t.value, ast.Name) and t.value.id == p):
                    continue
                dotted = _dotted(node.value)
                candidates = [dotted]
                if dotted in local_classes:
                    candidates = [_dotted(b) for b in local_classes[dotted].bases]
                for c in candidates:
                    if not c:
                        continue
                    for r in self.resolve_expr(c, d.module, None, 0):
                        if r[0] == "def" and self.defs[r[1]].kind == "class":
                            return r[1]
        return None

    def resolve_binding(self, b, tail, depth):
        kind = b[0]
        if kind == "def":
            d = self.defs[b[1]]
            if not tail:
                return [("def", d.id)]
            if d.kind == "class":
                return self.resolve_member(d.id, tail, depth + 1)
            return []
        if kind == "ref":
            return self.resolve(".".join([b[1]] + tail), depth + 1)
        if kind == "expr":
            _, dotted, mod, cls = b
            out = []
            for t in self.resolve_expr(dotted, mod, cls, depth + 1):
                out += self.extend(t, tail, depth + 1)
            return out
        if kind == "var":
            return [("var", "")]
        if kind == "inst":
            _, dotted, mod, cls = b
            out = []
            for t in self.resolve_expr(dotted, mod, cls, depth + 1):
                if t[0] == "def" and self.defs[t[1]].kind == "class":
                    if not tail:
                        out.append(("inst", t[1]))
                    else:
                        out += self.resolve_member(t[1], tail, depth + 1)
            return out
        return []

    def extend(self, target, tail, depth):
        if not tail:
            return [target]
        kind, name = target
        if kind == "var":
            return []
        if kind == "def":
            d = self.defs[name]
            return self.resolve_member(name, tail, depth) if d.kind == "class" else []
        if kind == "mod":
            return self.resolve(".".join([name] + tail), depth)
        if kind == "inst":
            return self.resolve_member(name, tail, depth)
        return [("ext", ".".join([name] + tail))]

    def resolve_expr(self, dotted, mod, cls_id, depth):
        """A dotted expression as written in module `mod` (in class `cls_id`'s body)."""
        if depth > MAX_RESOLVE_DEPTH:
            return []
        parts = dotted.split(".")
        head, tail = parts[0], parts[1:]
        if cls_id is not None:
            c = self.defs[cls_id]
            if head in c.members:
                out = []
                for b in c.members[head]:
                    out += self.resolve_binding(b, tail, depth + 1)
                if out:
                    return out
        m = self.modules[mod]
        out = []
        for b in m.bindings.get(head, []):
            out += self.resolve_binding(b, tail, depth + 1)
        if not out:
            for star in m.stars:
                if star in self.modules:
                    out += self.resolve_in_module(star, parts, depth + 1)
                else:
                    out += [("ext", ".".join([star] + parts))]
                if out:
                    break
        # A name no Python source binds may still be a builtin even after `from _c import *`
        # of a C module the analysis cannot read (xml/etree/ElementTree.py ends with
        # `from _elementtree import *`, and its `open(source, "rb")` is builtins.open): the C
        # module's name is kept and the builtin added, both judged.
        if head in BUILTINS and all(t[0] == "ext" for t in out):
            out = out + [("ext", "builtins." + dotted)]
        return out

    def bases_of(self, cls_id):
        if cls_id in self.base_cache:
            return self.base_cache[cls_id]
        self.base_cache[cls_id] = []
        d = self.defs[cls_id]
        out = []
        owner = d.cls.id if d.cls else None
        for b in d.bases:
            dotted = _dotted(b.value if isinstance(b, ast.Subscript) else b)
            if not dotted:
                continue
            for t in self.resolve_expr(dotted, d.module, owner, 0):
                if t[0] == "def" and self.defs[t[1]].kind == "class":
                    out.append(t)
                elif t[0] == "ext":
                    out.append(t)
        self.base_cache[cls_id] = out
        return out

    def mro(self, cls_id, limit=64):
        order, queue, seen = [], deque([("def", cls_id)]), set()
        while queue and len(order) < limit:
            t = queue.popleft()
            if t in seen:
                continue
            seen.add(t)
            order.append(t)
            if t[0] == "def":
                queue.extend(self.bases_of(t[1]))
        return order

    def resolve_member(self, cls_id, tail, depth):
        name, rest = tail[0], tail[1:]
        for t in self.mro(cls_id):
            if t[0] == "ext":
                if t[1] in ("builtins.object", "object"):
                    continue
                return [("ext", ".".join([t[1], name] + rest))]
            c = self.defs[t[1]]
            if name in c.members:
                out = []
                for b in c.members[name]:
                    out += self.resolve_binding(b, rest, depth + 1)
                return out
        return []

    # ---- edges -----------------------------------------------------------------------

    def calls_param(self, def_id, name):
        """Whether the function's body calls its parameter `name` (`Loader(stream)`)."""
        key = (def_id, name)
        if key not in self.param_calls:
            self.param_calls[key] = any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
                for n in ast.walk(self.defs[def_id].node))
        return self.param_calls[key]

    def sink_of(self, name):
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            what = S.SINKS.get(".".join(parts[:i]))
            if what:
                return ".".join(parts[:i]), what
        return None

    def barrier(self, name):
        parts = name.split(".")
        return any(".".join(parts[:i]) in BARRIER_SET for i in range(1, len(parts) + 1))

    def edges(self, d):
        """(kind, target, how) edges of a def: ("sink", name, what) or ("def", id, None)."""
        if d.kind == "class":
            out = []
            # A class that is, or derives from, a sink by name (yaml's UnsafeConstructor, a
            # subclass of ctypes.CDLL) is that sink: its instances are the sink's instances.
            for t in self.mro(d.id):
                s = self.sink_of(t[1]) if t[0] in ("def", "ext") else None
                if s and not self.barrier(t[1]):
                    out.append(("sink", s[0], s[1], NOT_A_CALL))
                    break
            for member in CONSTRUCT:
                for t in self.resolve_member(d.id, [member], 0):
                    out += self.target_edges(t, surface=None)
            # Constructing runs these with a new instance, whatever the arguments.
            return out
        visitor = BodyRefs(self, d)
        node = d.node
        body = node.body if isinstance(node.body, list) else [node.body]
        for stmt in body:
            visitor.visit(stmt)
        return visitor.edges

    def target_edges(self, t, surface, call=NOT_A_CALL):
        """Edges to a resolved target: ("sink", name, what, call) or ("def", id, None, call),
        where `call` says whether the reference is a call whose arguments are all fixed, and
        whether each is fixed or a parameter of the caller."""
        kind, name = t
        if kind in ("inst", "var"):
            return []
        names = [name] + ([surface] if surface and surface != name else [])
        for n in names:
            if self.barrier(n):
                return []
        for n in names:
            s = self.sink_of(n)
            if s:
                if call[0]:
                    return []
                return [("sink", s[0], s[1], call)]
        if kind == "def":
            return [("def", name, None, call)]
        return []


def analyse(an):
    """Shortest witness to a sink for every def: {id: (sink, what, next)}.

    A def is *parametric* when it reaches sinks only through the values its caller passes: each
    of its edges is a call whose arguments are fixed values or its own parameters, to a sink or
    to a parametric def (a def with no edges is parametric). A call of a parametric def whose
    arguments are all fixed (`_is_package_available("torch")`) is not an edge, as a call of a
    sink with fixed arguments is not (`ctypes.CDLL("libnvidia-ml.so.1")`)."""
    ids = sorted(an.defs)
    succ = {}
    for i in ids:
        seen = {}
        for e in an.edges(an.defs[i]):
            key = (e[0], e[1])
            old = seen.get(key)
            # Keep the strongest form of an edge: a non-call beats a call with a parameter,
            # which beats a call with fixed arguments.
            if old is None or rank(e[3]) < rank(old[3]):
                seen[key] = e
        succ[i] = list(seen.values())
    # Which defs are parametric depends on which are flagged, and the other way round: start
    # from "every def may be flagged" and narrow, a few rounds (each round's flagged set
    # contains the next one's).
    callers = {}
    for i in ids:
        for e in succ[i]:
            if e[0] == "def":
                callers.setdefault(e[1], set()).add(i)
    flagged = set(ids)
    for _ in range(4):
        parametric = {i for i in ids if an.defs[i].kind == "func"}

        def bad(i):
            return any(not e[3][1] or (e[0] == "def" and e[1] not in parametric
                                       and e[1] in flagged) for e in succ[i])

        queue = deque(i for i in sorted(parametric) if bad(i))
        while queue:
            i = queue.popleft()
            if i in parametric and bad(i):
                parametric.discard(i)
                queue.extend(sorted(callers.get(i, ())))
        result = reach(ids, succ, parametric)
        if set(result) == flagged:
            break
        flagged = set(result)
    an.parametric = parametric
    return result


def reach(ids, succ, parametric):
    """Breadth-first from the defs that reach a sink themselves, over the reversed edges that
    are not fixed calls of parametric defs."""
    result = {}
    rev = {}
    frontier = []
    for i in ids:
        direct = sorted({(e[1], e[2]) for e in succ[i] if e[0] == "sink"})
        if direct:
            result[i] = (direct[0][0], direct[0][1], None)
            frontier.append(i)
        for e in succ[i]:
            if e[0] == "def" and e[1] != i:
                if e[3][0] and e[1] in parametric:
                    continue
                rev.setdefault(e[1], set()).add(i)
    queue = deque(sorted(frontier))
    while queue:
        level = sorted(queue)
        queue = deque()
        for cur in level:
            for caller in sorted(rev.get(cur, ())):
                if caller not in result:
                    s, what, _ = result[cur]
                    result[caller] = (s, what, cur)
                    queue.append(caller)
    return result


def rank(call):
    fixed, paramish = call
    return 2 if fixed else 1 if paramish else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdlib", required=True)
    ap.add_argument("--site", action="append", default=[])
    ap.add_argument("--pins", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    pins = read_pins(args.pins)
    py = pins.pop("python")
    if f"{sys.version_info.major}.{sys.version_info.minor}" != "3.11":
        sys.exit("run with Python 3.11")
    import platform
    import sysconfig
    if os.path.realpath(args.stdlib) != os.path.realpath(sysconfig.get_paths()["stdlib"]):
        sys.exit(f"--stdlib must be the running interpreter's ({sysconfig.get_paths()['stdlib']})")
    if platform.python_version() != py:
        sys.exit(f"this is Python {platform.python_version()}, pinned {py}")
    an = Analysis()
    an.add_tree(args.stdlib, skip={"site-packages"})
    an.add_frozen(args.stdlib)
    found = {}
    for site in args.site:
        for name, ver, tops in dist_info(site):
            if norm(name) not in pins:
                continue
            if pins[norm(name)] != ver:
                sys.exit(f"{name} {ver} in {site}, pinned {pins[norm(name)]}")
            found[norm(name)] = (name, ver)
            skip = {"torch.testing._internal"}
            an.add_tree(site, prefix_filter=tops, skip=skip)
    missing = sorted(set(pins) - set(found))
    if missing:
        sys.exit(f"pinned but not found: {missing}")
    result = analyse(an)
    table_out.write(an, result, args.out, py, found)


if __name__ == "__main__":
    main()
