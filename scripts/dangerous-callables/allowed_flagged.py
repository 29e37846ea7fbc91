#!/usr/bin/env python3
"""Lists the globals a weights-only loader allows that dangerous_callables.tsv flags, so that a
person can look at each: socair keeps accepting the grammar's own exact pairs (an allowed
global wins over the analysis, plugins/pickle/src/globals.rs `classify`), but where the
analysis says one can reach a sink, that is worth knowing.

    /work/venv-ml/bin/python scripts/dangerous-callables/allowed_flagged.py > \
        scripts/dangerous-callables/allowed-flagged.txt

Reads torch's own allowlist, `torch._weights_only_unpickler._get_allowed_globals()` (the torch
this runs with must be the version requirements.txt pins), and the grammar's pairs as
plugins/pickle/src/globals.rs `known` lists them. Imports torch; analyses nothing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import table  # noqa: E402
import torch  # noqa: E402
from torch import _weights_only_unpickler as wo  # noqa: E402

GRAMMAR = ["collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
           "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
           "torch._utils._rebuild_parameter_with_state", "torch.storage.UntypedStorage",
           "_codecs.encode"]
GRAMMAR += [f"torch.{s}Storage" for s in ("Double", "Float", "Half", "Long", "Int", "Short",
                                           "Char", "Byte", "Bool", "BFloat16", "ComplexDouble",
                                           "ComplexFloat")]

pins = dict(line.strip().split("==") for line in open(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "requirements.txt"))
    if "==" in line and not line.startswith("#"))
if torch.__version__.split("+")[0] != pins["torch"]:
    sys.exit(f"torch {torch.__version__}, pinned {pins['torch']}")
rows = table.load()
allowed = sorted(set(wo._get_allowed_globals()) | set(GRAMMAR))
print(f"# Globals torch {pins['torch']}'s weights-only unpickler (_get_allowed_globals) or the")
print("# socair-wo grammar allows that dangerous_callables.tsv flags, with the witness chain.")
print(f"# {len(allowed)} allowed globals looked up.")
for name in allowed:
    module = name.rsplit(".", 1)[0]
    hit = table.lookup(rows, name, len(module))
    if hit:
        print(f"{name}\t{' -> '.join(table.chain(rows, hit))}")
