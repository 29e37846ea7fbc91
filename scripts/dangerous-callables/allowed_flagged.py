#!/usr/bin/env python3
"""Lists the globals a weights-only loader allows that dangerous_callables.tsv flags, so that a
person can look at each: socair keeps accepting the grammar's own exact pairs (an allowed
global wins over the analysis, plugins/shared/pickle/src/globals.rs `classify`), but where the
analysis says one can reach a sink, that is worth knowing.

    /work/venv-ml/bin/python scripts/dangerous-callables/allowed_flagged.py > \
        scripts/dangerous-callables/allowed-flagged.txt
    python3 scripts/dangerous-callables/allowed_flagged.py --from-rust   # without torch

Reads torch's own allowlist, `torch._weights_only_unpickler._get_allowed_globals()` (the torch
this runs with must be the version requirements.txt pins), and the grammar's pairs as
plugins/shared/pickle/src/globals.rs `known` lists them. Imports torch; analyses nothing. With
`--from-rust` it reads the same allowlist as plugins/shared/pickle/src/globals/weights_only.rs
`TORCH_ALLOWED` carries it (printed from that torch by make_weights_only.py), so that the
table can be checked where torch does not import; the output is the same.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import table  # noqa: E402

GRAMMAR = ["collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
           "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
           "torch._utils._rebuild_parameter_with_state", "torch.storage.UntypedStorage",
           "_codecs.encode"]
GRAMMAR += [f"torch.{s}Storage" for s in ("Double", "Float", "Half", "Long", "Int", "Short",
                                           "Char", "Byte", "Bool", "BFloat16", "ComplexDouble",
                                           "ComplexFloat")]

pins = dict(line.strip().split("==") for line in open(os.path.join(HERE, "requirements.txt"))
            if "==" in line and not line.startswith("#"))
if sys.argv[1:] == ["--from-rust"]:
    rs = open(os.path.join(HERE, "..", "..", "plugins", "pickle", "src", "globals",
                           "weights_only.rs"), encoding="utf-8").read()
    block = rs.split("pub const TORCH_ALLOWED: &[&str] = &[", 1)[1].split("];", 1)[0]
    torch_allowed = re.findall(r'"([^"]+)"', block)
    if "torch 2.15.0" not in rs and f"v{pins['torch']}" not in rs:
        sys.exit(f"weights_only.rs does not say it mirrors torch {pins['torch']}")
else:
    import torch
    from torch import _weights_only_unpickler as wo

    if torch.__version__.split("+")[0] != pins["torch"]:
        sys.exit(f"torch {torch.__version__}, pinned {pins['torch']}")
    torch_allowed = wo._get_allowed_globals()
rows = table.load()
allowed = sorted(set(torch_allowed) | set(GRAMMAR))
print(f"# Globals torch {pins['torch']}'s weights-only unpickler (_get_allowed_globals) or the")
print("# socair-wo grammar allows that dangerous_callables.tsv flags, with the witness chain.")
print(f"# {len(allowed)} allowed globals looked up.")
for name in allowed:
    module = name.rsplit(".", 1)[0]
    hit = table.lookup(rows, name, len(module))
    if hit:
        print(f"{name}\t{' -> '.join(table.chain(rows, hit))}")
