"""What one function body references, resolved (analyse.py `Analysis.edges` uses it): the
visitor `BodyRefs` and the small helpers both modules share. Standard library `ast` only;
nothing analysed is imported or run.
"""
import ast

import sinks as S

# A reference's call form: (all arguments fixed, every argument fixed or a parameter of the
# caller). A reference that is not a call (a callback) is neither.
NOT_A_CALL = (False, False)

BUILTINS = set(dir(__builtins__)) if not isinstance(__builtins__, dict) else set(__builtins__)
BARRIER_SET = set(S.BARRIERS)
NOT_CONSTRUCTION = {"isinstance", "issubclass"}


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_this_module(node):
    # sys.modules[__name__]
    return (isinstance(node, ast.Subscript) and _dotted(node.value) == "sys.modules"
            and isinstance(node.slice, ast.Name) and node.slice.id == "__name__")


class BodyRefs(ast.NodeVisitor):
    """Every reference a function body makes, resolved."""

    def __init__(self, an, d):
        self.an = an
        self.d = d
        self.edges = []
        self.locals = set()
        self.local_imports = {}
        args = d.node.args
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        if args.vararg:
            params.append(args.vararg.arg)
        if args.kwarg:
            params.append(args.kwarg.arg)
        self.self_name = None
        if d.cls is not None and params and not _is_static(d.node):
            self.self_name = params[0]
        self.locals.update(params)
        for node in ast.walk(d.node):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                m = an.modules[d.module]
                for name, b in an.import_bindings(m, node):
                    if b[0] == "ref":
                        self.local_imports.setdefault(name, []).append(b)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.locals.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node is not d.node:
                    self.locals.add(node.name)
            elif isinstance(node, ast.arg):
                self.locals.add(node.arg)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for n in node.names:
                    self.locals.discard(n)
        self.calls = {}
        self.class_args = {}  # argument node -> (callee, position or keyword)
        self.skip = set()
        self.tainted = self.find_tainted(params)
        self.types = {}
        self.types = self.find_types()
        for node in ast.walk(d.node):
            if isinstance(node, ast.Call):
                values = list(node.args) + [k.value for k in node.keywords]
                if isinstance(node.func, ast.Attribute):
                    values.append(node.func.value)
                self.calls[id(node.func)] = (all(self.fixed(a) for a in values), True)
                callee = _dotted(node.func)
                if callee is not None:
                    for i, a in enumerate(node.args):
                        if isinstance(a, (ast.Name, ast.Attribute)):
                            self.class_args[id(a)] = (callee, i)
                    for k in node.keywords:
                        if k.arg and isinstance(k.value, (ast.Name, ast.Attribute)):
                            self.class_args[id(k.value)] = (callee, k.arg)
                if isinstance(node.func, ast.Name) and node.func.id in NOT_CONSTRUCTION:
                    for a in node.args[1:]:
                        for sub in ast.walk(a):
                            self.skip.add(id(sub))
            elif isinstance(node, ast.AnnAssign):
                for sub in ast.walk(node.annotation):
                    self.skip.add(id(sub))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    for sub in ast.walk(dec):
                        self.skip.add(id(sub))
                for ann in [node.returns] + [a.annotation for a in ast.walk(node.args)
                                             if isinstance(a, ast.arg)]:
                    if ann is not None:
                        for sub in ast.walk(ann):
                            self.skip.add(id(sub))

    def find_types(self):
        """Locals bound to an instance of a class the analysis knows: `x = C(...)`,
        `with C(...) as x` (`__enter__` taken to return the instance). A later `x.m(...)`
        is C's member m (xml/etree/ElementTree.py `parse`: `tree = ElementTree();
        tree.parse(source)`; click/termui.py `edit`: `ed = Editor(...); ed.edit(text)`).
        A local bound several ways has every class it may hold."""
        types = {}
        for node in ast.walk(self.d.node):
            pairs = []
            if isinstance(node, ast.Assign):
                pairs = [(node.value, t) for t in node.targets]
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                pairs = [(node.value, node.target)]
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                pairs = [(i.context_expr, i.optional_vars) for i in node.items
                         if i.optional_vars is not None]
            for value, target in pairs:
                if not (isinstance(target, ast.Name) and isinstance(value, ast.Call)):
                    continue
                fn = _dotted(value.func)
                if not fn or fn.split(".")[0] == target.id:
                    continue
                targets, _ = self.resolve_chain(fn)
                for t in targets or []:
                    if t[0] == "def" and self.an.defs[t[1]].kind == "class":
                        types.setdefault(target.id, set()).add(t[1])
        return types

    def find_tainted(self, params):
        """Names whose value may come from the caller: the parameters (of the function and of
        the functions, lambdas and handlers nested in it), and every local assigned, iterated
        or entered from an expression that mentions one."""
        tainted = set(params)
        bindings = []  # (value expression, target expression)
        for node in ast.walk(self.d.node):
            if isinstance(node, ast.arg):
                tainted.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                tainted.add(node.name)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    bindings.append((node.value, t))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                if node.value is not None:
                    bindings.append((node.value, node.target))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                bindings.append((node.iter, node.target))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        bindings.append((item.context_expr, item.optional_vars))
        changed = True
        while changed:
            changed = False
            for value, target in bindings:
                if self.mentions(value, tainted):
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name) and sub.id not in tainted:
                            tainted.add(sub.id)
                            changed = True
        return tainted

    @staticmethod
    def mentions(e, names):
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(e))

    def fixed(self, e):
        """Whether an expression's value is fixed by the program, not by the caller: it
        mentions no parameter and no local that may hold one's value (module-level names,
        constants, `__file__`, and calls over them are fixed)."""
        return not self.mentions(e, self.tainted)

    def add(self, targets, surface, node):
        call = self.calls.get(id(node))
        for t in targets:
            if t[0] == "def" and self.an.defs[t[1]].kind == "class" and call is None:
                # A class handed to a callee that calls the parameter it lands in is
                # constructed there, with arguments not seen here (yaml/__init__.py
                # `unsafe_load`: `load(stream, UnsafeLoader)`, whose `Loader(stream)` builds
                # it). A class handed to anything else (`expr.atoms(Symbol)`, `super(C,
                # self)`, a registry) is not.
                if id(node) in self.class_args and self.constructs_arg(*self.class_args[id(node)]):
                    self.edges += self.an.target_edges(t, surface, NOT_A_CALL)
                continue
            self.edges += self.an.target_edges(t, surface, call or NOT_A_CALL)

    def constructs_arg(self, callee, where):
        """Whether some function `callee` resolves to calls the parameter an argument at
        `where` (a position, or a keyword) binds. A method's positions are tried both as
        written and shifted past `self`, whichever way it was reached."""
        targets, _ = self.resolve_chain(callee)
        for t in targets or []:
            if t[0] != "def" or self.an.defs[t[1]].kind != "func":
                continue
            fn = self.an.defs[t[1]].node
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            if isinstance(where, int):
                names = params[where:where + 1]
                if self.an.defs[t[1]].cls is not None:
                    names += params[where + 1:where + 2]
            else:
                names = [where] if where in params + [a.arg for a in fn.args.kwonlyargs] else []
            if any(self.an.calls_param(t[1], n) for n in names):
                return True
        return False

    def resolve_chain(self, dotted):
        parts = dotted.split(".")
        head, tail = parts[0], parts[1:]
        an, d = self.an, self.d
        if head in self.local_imports:
            out = []
            for b in self.local_imports[head]:
                out += an.resolve_binding(b, tail, 0)
            return out, None
        if head == self.self_name and tail:
            return an.resolve_member(d.cls.id, tail, 0), None
        if tail and head in self.types:
            out = []
            for cls_id in sorted(self.types[head]):
                out += an.resolve_member(cls_id, tail, 0)
            return out, None
        if head in self.locals:
            return None, None
        owner = None
        return an.resolve_expr(dotted, d.module, owner, 0), dotted

    def visit_Attribute(self, node):
        if id(node) in self.skip:
            return
        dotted = _dotted(node)
        if dotted is None:
            value = node.value
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id == "super" and self.d.cls is not None):
                for base in self.an.bases_of(self.d.cls.id):
                    ts = self.an.extend(base, [node.attr], 0)
                    # super() passes the caller's own self: never fixed.
                    call = self.calls.get(id(node), NOT_A_CALL)
                    for t in ts:
                        self.edges += self.an.target_edges(t, None, (False, call[1]))
            else:
                self.method_sink(node)
            self.generic_visit(node)
            return
        targets, surface = self.resolve_chain(dotted)
        if targets is None or not targets:
            self.method_sink(node)
            return
        self.add(targets, surface and self.surface(surface), node)

    def surface(self, dotted):
        """The dotted name's module-level spelling (`os.system` for `_os.system`)."""
        parts = dotted.split(".")
        m = self.an.modules[self.d.module]
        for b in m.bindings.get(parts[0], []) + self.local_imports.get(parts[0], []):
            if b[0] == "ref":
                return ".".join([b[1]] + parts[1:])
        return None

    def method_sink(self, node):
        what = S.METHOD_SINKS.get(node.attr)
        call = self.calls.get(id(node), NOT_A_CALL)
        if what and not call[0]:
            self.edges.append(("sink", f"<object>.{node.attr}", what, call))

    def visit_Name(self, node):
        if id(node) in self.skip or not isinstance(node.ctx, ast.Load):
            return
        targets, surface = self.resolve_chain(node.id)
        if targets:
            self.add(targets, surface and self.surface(surface), node)


def _is_static(fn):
    return any(_dotted(dec) == "staticmethod" for dec in getattr(fn, "decorator_list", []))
