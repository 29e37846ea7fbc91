#!/usr/bin/env python3
"""Writes a large GGUF file for benchmarks (standard library only).

    python3 make_gguf.py OUT TOTAL_MIB TENSORS

GGUF version 3 as gguf-py's GGUFWriter lays it out: the header, two metadata pairs
(general.architecture, general.alignment = 32), the tensor infos, padding to the alignment,
then F32 tensors of 1024 columns, each at an aligned offset. Tensor data comes from
/dev/urandom (content does not change hashing speed).
"""
import struct
import sys

out, total_mib, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ALIGN = 32
cols = 1024
rows = max(1, total_mib * (1 << 20) // count // (cols * 4))
nbytes = rows * cols * 4


def string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


head = b"GGUF" + struct.pack("<IQQ", 3, count, 2)
head += string("general.architecture") + struct.pack("<I", 8) + string("llama")
head += string("general.alignment") + struct.pack("<II", 4, ALIGN)
for i in range(count):
    # dims are listed fastest-varying first, as ggml does.
    head += string(f"blk.{i}.weight") + struct.pack("<IQQIQ", 2, cols, rows, 0, i * nbytes)
head += b"\0" * (-len(head) % ALIGN)
with open(out, "wb") as fh, open("/dev/urandom", "rb") as rnd:
    fh.write(head)
    for _ in range(count):
        fh.write(rnd.read(nbytes))
