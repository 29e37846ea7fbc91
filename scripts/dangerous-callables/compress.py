#!/usr/bin/env python3
"""Writes dangerous_callables.tsv.deflate beside the table: the table's length (8 bytes,
little-endian) then the table as one raw deflate stream (zlib level 9). socair's plugins carry
this form (plugins/shared/pickle/src/globals/callables.rs inflates it once, on the first lookup), so
that each plugin file that links the pickle machine grows by about 0.6 MB, not by the table's
7.3 MB, which the host hashes every time it loads a plugin. A test of callables.rs checks that
it inflates to exactly the committed .tsv. Run by regenerate.sh after analyse.py.
"""
import os
import struct
import sys
import zlib

TSV = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "pickle", "src",
    "globals", "dangerous_callables.tsv")
with open(TSV, "rb") as f:
    data = f.read()
c = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
packed = c.compress(data) + c.flush()
with open(TSV + ".deflate", "wb") as f:
    f.write(struct.pack("<Q", len(data)) + packed)
print(f"wrote {TSV}.deflate: {len(data)} bytes in {len(packed) + 8}", file=sys.stderr)
