#!/usr/bin/env python3
"""Writes a large PyTorch zip checkpoint without torch, for the object-storage measurements
(docs/scale.md): a small protocol-2 data.pkl holding an OrderedDict of float32 tensors, and one
large storage record per tensor.

How it matches what torch.save writes: the record list, order and names are those of a real
torch.save output (fixtures/torch/legit/state-dict.pt: data.pkl, .format_version,
.storage_alignment, byteorder, data/N…, version, .data/serialization_id, under the archive's
own name), and every header is that file's own header bytes with only names, sizes, CRC-32s
and offsets changed, laid out as torch's PyTorchStreamWriter lays them out: local header with
flags 0x0808 and zero CRC and sizes, an "FB" extra field padding the data to a 64-byte
boundary, the data, a 16-byte data descriptor; the central directory; a zip64 end record and
locator, then the classic end record. The pickle is the one torch writes for a state dict
(collections.OrderedDict, torch._utils._rebuild_tensor_v2 over a FloatStorage persistent id),
as fixtures/torch/make_fixtures.py builds them. Records stay under 4 GiB each (no zip64 extra
fields needed); the storage bytes repeat one random MiB (hashing does not care).

Usage: make_big_checkpoint.py OUT.pt SIZE [TENSORS]
SIZE is in MiB, or in KiB with a `k` after it (`4096k`: many small records for the tests).
"""
import os
import struct
import sys
import zlib

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "torch", "legit", "state-dict.pt")


def template_headers(path):
    """The first record's local and central headers of a real torch.save file."""
    b = open(path, "rb").read()
    eocd = b.rindex(b"PK\x05\x06")
    cd_off = struct.unpack("<I", b[eocd + 16:eocd + 20])[0]
    cd = bytearray(b[cd_off:cd_off + 46])
    lo = struct.unpack("<I", cd[42:46])[0]
    lfh = bytearray(b[lo:lo + 30])
    loc = eocd - 20
    z64_off = struct.unpack("<IIQI", b[loc:loc + 20])[2]
    z = struct.unpack("<IQHHIIQQQQ", b[z64_off:z64_off + 56])
    return lfh, cd, z[2], z[3]


def p_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def p_glob(mod, name):
    return b"c" + mod.encode() + b"\n" + name.encode() + b"\n"


def p_int(n):
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if 0 <= n < 65536:
        return b"M" + struct.pack("<H", n)
    return b"J" + struct.pack("<i", n)


def p_tuple(items):
    items = [p_int(i) for i in items]
    return b"".join(items) + {1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(items)]


def p_tensor(key, numel, size, stride):
    pid = b"(" + p_str("storage") + p_glob("torch", "FloatStorage") + p_str(key) + p_str("cpu") + p_int(numel) + b"t"
    return (p_glob("torch._utils", "_rebuild_tensor_v2") + b"(" + pid + b"Q" + p_int(0)
            + p_tuple(size) + p_tuple(stride) + b"\x89"
            + p_glob("collections", "OrderedDict") + b")R" + b"t" + b"R")


def state_dict_pickle(tensors):
    body = b"".join(p_str(name) + p_tensor(key, numel, (rows, cols), (cols, 1)) + b"s"
                    for name, key, numel, rows, cols in tensors)
    return b"\x80\x02" + p_glob("collections", "OrderedDict") + b")R" + body + b"."


def main():
    out, size = sys.argv[1], sys.argv[2]
    total = int(size[:-1]) << 10 if size.endswith("k") else int(size) << 20
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    stem = os.path.splitext(os.path.basename(out))[0]
    lfh_t, cd_t, vmade, vneed = template_headers(TEMPLATE)
    cols = 1024
    # Bytes per tensor: whole MiB from a MiB on (the block repeats), else whole rows.
    per = total // count
    per = per >> 20 << 20 if per >= 1 << 20 else per // (4 * cols) * 4 * cols
    rows = per // 4 // cols
    tensors = [(f"layers.{i}.weight", str(i), rows * cols, rows, cols) for i in range(count)]
    block = os.urandom(min(per, 1 << 20))
    repeats = per // len(block) if block else 0
    records = [("data.pkl", state_dict_pickle(tensors)), (".format_version", b"1"),
               (".storage_alignment", b"64"), ("byteorder", b"little")]
    records += [(f"data/{key}", (repeats, block)) for _, key, _, _, _ in tensors]
    records += [("version", b"3\n"), (".data/serialization_id", b"0" * 40)]
    central = []
    with open(out, "wb") as f:
        for name, data in records:
            full = f"{stem}/{name}".encode()
            off = f.tell()
            start = off + 30 + len(full) + 4
            pad = (64 - start % 64) % 64
            extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            lfh = bytearray(lfh_t)
            lfh[14:26] = b"\0" * 12
            lfh[26:30] = struct.pack("<HH", len(full), len(extra))
            f.write(lfh + full + extra)
            crc, n = 0, 0
            if isinstance(data, tuple):
                for _ in range(data[0]):
                    f.write(data[1])
                    crc = zlib.crc32(data[1], crc)
                    n += len(data[1])
            else:
                f.write(data)
                crc, n = zlib.crc32(data), len(data)
            f.write(b"PK\x07\x08" + struct.pack("<III", crc, n, n))
            cd = bytearray(cd_t)
            cd[16:28] = struct.pack("<III", crc, n, n)
            cd[28:34] = struct.pack("<HHH", len(full), 0, 0)
            cd[42:46] = struct.pack("<I", off)
            central.append(bytes(cd) + full)
        cd_off = f.tell()
        for c in central:
            f.write(c)
        cd_size = f.tell() - cd_off
        n = len(central)
        z64_off = f.tell()
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, vmade, vneed, 0, 0, n, n, cd_size, cd_off))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, z64_off, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size, cd_off, 0))


if __name__ == "__main__":
    main()
