#!/usr/bin/env python3
"""Writes a large safetensors file for benchmarks (standard library only).

    python3 make_safetensors.py OUT DTYPE TOTAL_MIB TENSORS

Tensor data is taken from /dev/urandom (content does not change hashing speed); the layout
follows the safetensors serializer (one dtype, names in byte order, header padded to 8).
"""
import json
import os
import struct
import sys

out, dtype, total_mib, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
width = {"F32": 4, "F16": 2, "BF16": 2}[dtype]
per_tensor = total_mib * (1 << 20) // count
cols = 1024
rows = per_tensor // (cols * width)
# Many small tensors (100,000 in 256 MiB): one dimension.
shape = [rows, cols] if rows else [per_tensor // width]
nbytes = (rows * cols if rows else per_tensor // width) * width
header = {}
offset = 0
names = sorted(f"layer.{i:05d}.weight" for i in range(count))
for name in names:
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
    offset += nbytes
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as fh, open("/dev/urandom", "rb") as rnd:
    fh.write(struct.pack("<Q", len(text)))
    fh.write(text)
    chunk = rnd.read(1 << 24)
    left = offset
    while left:
        n = min(left, len(chunk))
        fh.write(chunk[:n])
        left -= n
