"""Differential test of socair's mirror of CPython's tarfile (src/tarfile.rs).

torch.load reads a legacy checkpoint as pickles only when
`tarfile.open(fileobj=f, mode="r:", format=tarfile.PAX_FORMAT)` raises a tarfile.TarError.
This script generates tar headers (plain, GNU long names and links, GNU sparse with extension
blocks, pax extended and global headers with GNU sparse 0.0/0.1/1.0 records, nested chains,
legacy-pickle starts sealed with a valid checksum) and mutations of them, feeds each to the
Python running it exactly as torch does (through io.BytesIO), and writes every case with what
happened: "opened", "ReadError", or the class of any other exception. The Rust test
(tests/differential.rs) runs socair's model on the same bytes and compares.

Seeded and reproducible: random.Random(seed) draws the same cases on every CPython 3.8+.

    python3 differential.py --seed 16 --count 4000 --out cases.bin
        [--no-int-limit] [--negative-block-check]

--no-int-limit runs with sys.set_int_max_str_digits(0) (the behaviour of CPython before the
limit existed); --negative-block-check applies the upstream check of gh-130577 (CVE-2025-8194)
to TarInfo._block, as PyPI did before the releases that carry it. Output: per case a 4-byte
little-endian length, the bytes, a 1-byte length and the outcome; a JSON summary on stdout.
"""

import argparse
import io
import json
import random
import struct
import sys
import tarfile

BLOCK = 512
PICKLE_START = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.\x80\x02}q\x00("


def outcome(data):
    try:
        tarfile.open(fileobj=io.BytesIO(data), mode="r:", format=tarfile.PAX_FORMAT)
        return "opened"
    except tarfile.ReadError:
        return "ReadError"
    except tarfile.TarError as e:  # never expected at open: kept distinct so it shows
        return "TarError:" + type(e).__name__
    except Exception as e:  # noqa: BLE001 - the class is the answer
        return type(e).__name__


class Gen:
    def __init__(self, rng):
        self.r = rng

    def chance(self, p):
        return self.r.random() < p

    def bytes_(self, n):
        return bytes(self.r.getrandbits(8) for _ in range(n))

    # Numeric fields as tar writers and hostile files spell them.
    def number(self, value, width):
        r = self.r
        k = r.randrange(24)
        digits = width - 1
        if k < 8:
            return (b"%0*o" % (digits, value) + b"\0")[:width] if value >= 0 else self.base256(value, width)
        if k == 8:
            return self.base256(value, width)
        if k == 9:
            return (b" %o \0" % value).ljust(width, b"\0")[:width] if value >= 0 else self.base256(value, width)
        if k == 10:
            return (b"\x1c%o\x1f" % abs(value)).ljust(width, b" ")[:width]
        if k == 11:
            s = b"%o" % abs(value)
            s = b"_".join(s[i:i + 1] for i in range(len(s)))
            return s.ljust(width, b"\0")[:width]
        if k == 12:
            return (b"0o%o" % abs(value)).ljust(width, b"\0")[:width]
        if k == 13:
            return (r.choice([b"+", b"-"]) + b"%o" % abs(value)).ljust(width, b"\0")[:width]
        if k == 14:
            return b"\0" * width
        if k == 15:
            return b" " * width
        if k == 16:
            return r.choice([b"8", b"9", b"0x1", b"1__2", b"_1", b"1_", b"0o", b"0o_7", b"- 1", b"\t7\x0b"]).ljust(width, b"\0")
        if k == 17:
            return self.bytes_(width)
        if k == 18:
            return (b"%o" % abs(value)).rjust(width, b"0")[-width:]  # no NUL at all
        if k == 19:
            return (b"%o\0garbage" % abs(value)).ljust(width, b"x")[:width]
        if k == 20:
            return bytes([r.choice([0x80, 0xFF])]) + self.bytes_(width - 1)
        if k == 21:
            return (b"%o" % abs(value)).ljust(width - 1, b"\x1d") + b"\x85"
        if k == 22:
            return r.choice([b"\x0c", b"\x1e", b"\x20", b"\x09"]) * (width - 2) + b"7\0"
        return (b"%o" % abs(value)).ljust(width, r.choice([b"\0", b" ", b"\n"]))[:width]

    def base256(self, value, width):
        if value < 0:
            value += 256 ** (width - 1)
            lead = 0o377
        else:
            lead = 0o200
        value %= 256 ** (width - 1)
        return bytes([lead]) + value.to_bytes(width - 1, "big")

    def size(self):
        r = self.r
        k = r.randrange(10)
        if k < 4:
            return r.randrange(0, 3000)
        if k == 4:
            return 0
        if k == 5:
            return -r.choice([1, 511, 512, 513, 1024, 10 ** 6])
        if k == 6:
            return r.choice([2 ** 33, 8 ** 11 - 1, 2 ** 62, 2 ** 63, 2 ** 70])
        if k == 7:
            return r.choice([511, 512, 513, 1023, 1024, 1025])
        return r.randrange(0, 100)

    def header(self, name=None, kind=None, size=None, seal=True, sparse_ext=None, prefix=b""):
        r = self.r
        buf = bytearray(BLOCK)
        if name is None:
            name = r.choice([b"storages", b"tensors", b"pickle", b"dir/", b"a" * 100, b"././@LongLink",
                             b"././@PaxHeader", b"\xc3\xa9t\xc3\xa9", b"x\xff/", b""]) 
        buf[0:100] = name[:100].ljust(100, b"\0")
        if kind is None:
            kind = r.choice([b"0", b"\0", b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"L", b"K", b"S",
                             b"x", b"g", b"X", b"V", b"A", b"D", b"M"])
        if size is None:
            size = self.size()
        fields = [(100, 8, 0o644), (108, 8, r.randrange(0, 70000)), (116, 8, r.randrange(0, 70000)),
                  (124, 12, size), (136, 12, r.randrange(0, 2 ** 33)), (329, 8, 0), (337, 8, 0)]
        for at, width, value in fields:
            if self.chance(0.85):
                buf[at:at + width] = (b"%0*o" % (width - 1, value) + b"\0") if 0 <= value < 8 ** (width - 1) else self.base256(value, width)
            else:
                buf[at:at + width] = self.number(value, width)
        buf[156:157] = kind
        if self.chance(0.8):
            buf[257:265] = r.choice([b"ustar\x0000", b"ustar  \0"])
        if self.chance(0.3):
            buf[157:257] = self.bytes_(100)
        if prefix:
            buf[345:345 + len(prefix)] = prefix[:155]
        if kind == b"S" or sparse_ext is not None:
            pos = 386
            for _ in range(4):
                buf[pos:pos + 12] = self.number(r.randrange(0, 5000), 12) if self.chance(0.2) else b"%011o\0" % r.randrange(0, 5000)
                buf[pos + 12:pos + 24] = b"%011o\0" % r.randrange(0, 5000)
                pos += 24
            buf[482] = 1 if sparse_ext else (r.choice([0, 0, 1, 7]))
            buf[483:495] = self.number(r.randrange(0, 10 ** 6), 12) if self.chance(0.2) else b"%011o\0" % r.randrange(0, 10 ** 6)
        if seal:
            self.seal(buf)
        return bytes(buf)

    def seal(self, buf):
        r = self.r
        buf[148:156] = b"        "
        unsigned = sum(buf)
        signed = sum(b - 256 if b > 127 else b for b in buf)
        value = signed if self.chance(0.15) else unsigned
        k = r.randrange(14)
        if k < 6:
            field = b"%06o\0 " % value if value >= 0 else self.base256(value, 8)
        elif k == 6:
            field = (b"%07o\0" % value) if value >= 0 else self.base256(value, 8)
        elif k == 7:
            field = self.base256(value, 8)
        elif k == 8:
            field = (b"0o%o" % value).ljust(8, b"\0") if value >= 0 else self.base256(value, 8)
        elif k == 9:
            field = (b"\x1c%o\x1f" % value).ljust(8, b" ") if value >= 0 else self.base256(value, 8)
        elif k == 10:
            field = (b"%o" % (value + r.choice([-1, 1, 8, 256]))).ljust(8, b"\0") if value > 8 else b"00000000"
        elif k == 11:
            s = b"%o" % abs(value)
            field = (b"-" if value < 0 else b"+") + s
            field = field.ljust(8, b" ")
        elif k == 12:
            s = b"%o" % abs(value)
            field = (s[:1] + b"_" + s[1:]).ljust(8, b"\0") if value >= 0 else self.base256(value, 8)
        else:
            field = (b"%o" % value).rjust(8, b"0") if value >= 0 else self.base256(value, 8)
        buf[148:156] = field[:8]

    def pax_record(self):
        r = self.r
        key = r.choice([b"GNU.sparse.size", b"GNU.sparse.realsize", b"GNU.sparse.map", b"GNU.sparse.major",
                        b"GNU.sparse.minor", b"GNU.sparse.offset", b"GNU.sparse.numbytes", b"GNU.sparse.name",
                        b"size", b"path", b"mtime", b"uid", b"hdrcharset", b"comment", b"linkpath", b"gname",
                        b"GNUxsparseYoffset"])
        value = self.pax_value(key)
        body = b" " + key + b"=" + value + b"\n"
        n = len(body)
        length = n + len(str(n + len(str(n))))
        length = n + len(str(length))
        k = r.randrange(20)
        if k == 0:
            length += r.choice([-3, -1, 1, 2, 40])
        elif k == 1:
            return (b"%d" % length) + body[:-1] + b"X"  # no newline
        elif k == 2:
            return b"0" + body  # length 0
        elif k == 3:
            return b"%d" % 3 + body
        elif k == 4:
            return b"0" * 21 + (b"%d" % length) + body
        elif k == 5:
            return (b"%d" % length) + body.replace(b"=", b"", 1)
        elif k == 6:
            return (b"%05d" % (length + 3)) + body
        return (b"%d" % length) + body

    def pax_value(self, key):
        r = self.r
        if key in (b"GNU.sparse.size", b"GNU.sparse.realsize", b"size", b"GNU.sparse.offset",
                   b"GNU.sparse.numbytes", b"uid", b"mtime"):
            return self.int_text()
        if key == b"GNU.sparse.map":
            return b",".join(self.int_text() if self.chance(0.85) else b"%d" % r.randrange(100)
                             for _ in range(r.randrange(0, 5)))
        if key in (b"GNU.sparse.major", b"GNU.sparse.minor"):
            return r.choice([b"1", b"0", b"1", b"0", b" 1", b"01"])
        if key == b"hdrcharset":
            return r.choice([b"BINARY", b"ISO-IR 10646 2000 UTF-8", b"\xff\xfe", b"", b"\xc3\xa9"])
        return r.choice([b"file", b"dir/", b"\xff\xfe", "é".encode(), b"x" * r.randrange(0, 300)])

    def int_text(self):
        r = self.r
        k = r.randrange(18)
        if k < 6:
            return b"%d" % r.randrange(0, 10 ** 6)
        choices = [
            b"-%d" % r.randrange(1, 5000),
            b" 12 ",
            b"1_000",
            b"1__0",
            b"x",
            b"",
            b"\x1c5",
            "\u0665\u0660".encode(),  # Arabic-Indic digits
            "\uff17\u00a0".encode(),  # fullwidth 7, no-break space
            "\u0967\u2003".encode(),  # Devanagari 1, em space
            b"1" * 4301,
            b"0" * 5000 + b"1",
            b"\xff1",
            b"+7",
            b"1e3",
            b"0x10",
            "\u3000\u0661".encode(),
            b"9" * 40,
        ]
        return choices[r.randrange(len(choices))]

    def pax_body(self):
        r = self.r
        records = b"".join(self.pax_record() for _ in range(r.randrange(0, 6)))
        if self.chance(0.1):
            records += b"\0" + self.bytes_(r.randrange(0, 40))
        if self.chance(0.05):
            records = b"21 hdrcharset=\xff\xfe\xfd\xfc\n" + records
        return records

    def member(self, depth, max_depth):
        """A header, its data, and the follow-up header an extended header needs."""
        r = self.r
        kind = r.choice([b"0", b"\0", b"5", b"L", b"K", b"S", b"x", b"g", b"X", b"2", b"V", b"0", b"x", b"L"])
        if depth >= max_depth and kind in (b"L", b"K", b"x", b"g", b"X"):
            kind = b"0"
        out = b""
        if kind in (b"x", b"g", b"X"):
            body = self.pax_body()
            size = len(body) if self.chance(0.8) else self.size()
            out += self.header(name=b"././@PaxHeader", kind=kind, size=size, seal=self.chance(0.95))
            out += body.ljust(((len(body) + BLOCK - 1) // BLOCK) * BLOCK, b"\0")
            out += self.member(depth + 1, max_depth)
            if self.chance(0.3):
                # GNU sparse 1.0 keeps its map in the block after the next header.
                n = r.randrange(0, 4)
                lines = [b"%d" % n] + [b"%d" % r.randrange(0, 10 ** 6) for _ in range(2 * n)]
                text = b"\n".join(lines) + b"\n"
                if self.chance(0.3):
                    text = text[:r.randrange(len(text) + 1)]
                if self.chance(0.2):
                    text = text.replace(b"\n", b"\nx", 1)
                if self.chance(0.1):
                    text = b"\n".join([b"%d" % 2000] + [b"1"] * 700)
                out += text.ljust(BLOCK, b"\0") if self.chance(0.8) else text
            return out
        if kind in (b"L", b"K"):
            name = (r.choice([b"a/long/name/", b"file", b"d" * 300 + b"/", b"x\0y/"]))
            size = len(name) + 1 if self.chance(0.8) else self.size()
            out += self.header(name=b"././@LongLink", kind=kind, size=size, seal=self.chance(0.95))
            out += (name + b"\0").ljust(((len(name) + BLOCK) // BLOCK) * BLOCK, b"\0")
            out += self.member(depth + 1, max_depth)
            return out
        if kind == b"S":
            ext = self.chance(0.5)
            out += self.header(kind=b"S", sparse_ext=ext)
            blocks = r.randrange(0, 3) if ext else 0
            for i in range(blocks):
                block = bytearray(BLOCK)
                for j in range(21):
                    if self.chance(0.9):
                        block[24 * j:24 * j + 12] = b"%011o\0" % r.randrange(0, 10 ** 5)
                        block[24 * j + 12:24 * j + 24] = b"%011o\0" % r.randrange(0, 10 ** 5)
                    else:
                        block[24 * j:24 * j + 24] = self.number(r.randrange(100), 12) + self.number(5, 12)
                block[504] = 1 if (i + 1 < blocks or self.chance(0.2)) else 0
                out += bytes(block)
            if ext and self.chance(0.3):
                out += b"\0" * r.randrange(0, 600)
            return out
        name = r.choice([b"storages", b"dir/", b"tensors", b"pickle", b"a/b/c/"])
        return out + self.header(name=name, kind=kind, size=self.size() if self.chance(0.5) else r.randrange(0, 2000))

    def generated(self):
        r = self.r
        k = r.randrange(10)
        if k == 0:
            # The start of a legacy pickle checkpoint, sealed as a tar header.
            buf = bytearray((PICKLE_START + self.bytes_(r.randrange(0, 600))).ljust(BLOCK, b"\0")[:BLOCK])
            if self.chance(0.5):
                buf[156] = r.choice(b"0x5LgS")
            self.seal(buf)
            tail = self.bytes_(r.randrange(0, 1500))
            return bytes(buf) + tail
        if k == 1:
            return r.choice([b"", b"\0" * 511, b"\0" * 512, b"\0" * 1024, self.bytes_(r.randrange(1, 512)),
                             self.bytes_(512), PICKLE_START])
        data = self.member(0, r.choice([1, 2, 3, 6, 40]))
        if self.chance(0.5):
            data += self.bytes_(r.randrange(0, 1200))
        if self.chance(0.3):
            data += b"\0" * 1024
        return data

    def mutated(self, data):
        r = self.r
        buf = bytearray(data)
        for _ in range(r.randrange(1, 4)):
            k = r.randrange(6)
            if k == 0 and buf:
                i = r.randrange(min(len(buf), 1536))
                buf[i] = r.getrandbits(8)
            elif k == 1 and buf:
                del buf[r.randrange(len(buf) + 1):]
            elif k == 2:
                i = r.randrange(len(buf) + 1)
                buf[i:i] = self.bytes_(r.randrange(1, 8))
            elif k == 3 and len(buf) >= BLOCK:
                at = r.choice([100, 108, 116, 124, 136, 148, 156, 329, 337, 482, 483])
                width = {156: 1, 482: 1, 483: 12, 124: 12, 136: 12}.get(at, 8)
                buf[at:at + width] = self.number(r.randrange(-600, 5000), width)[:width] if width > 1 else bytes([r.getrandbits(8)])
            elif k == 4 and len(buf) >= 1024:
                i = r.randrange(BLOCK, min(len(buf), 4096))
                buf[i] = r.choice(b"0123456789 =\n\0")
            elif buf:
                i = r.randrange(len(buf))
                buf[i:i + 1] = b""
        # Re-seal the first (and maybe another) header, so mutations reach past the checksum.
        if len(buf) >= BLOCK and self.chance(0.7):
            block = bytearray(buf[:BLOCK])
            self.seal(block)
            buf[:BLOCK] = block
        if len(buf) >= 2 * BLOCK and self.chance(0.4):
            at = BLOCK * r.randrange(1, len(buf) // BLOCK)
            block = bytearray(buf[at:at + BLOCK])
            self.seal(block)
            buf[at:at + BLOCK] = block
        return bytes(buf)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-int-limit", action="store_true")
    ap.add_argument("--negative-block-check", action="store_true")
    args = ap.parse_args()
    if args.no_int_limit:
        sys.set_int_max_str_digits(0)
    if args.negative_block_check:
        original = tarfile.TarInfo._block

        def _block(self, count):
            if count < 0:
                raise tarfile.InvalidHeaderError("invalid offset")
            return original(self, count)

        tarfile.TarInfo._block = _block

    gen = Gen(random.Random(args.seed))
    counts = {"generated": 0, "mutated": 0}
    outcomes = {}
    pool = []
    with open(args.out, "wb") as out:
        for i in range(args.count):
            if pool and gen.chance(0.5):
                data = gen.mutated(gen.r.choice(pool))
                counts["mutated"] += 1
            else:
                data = gen.generated()
                counts["generated"] += 1
                if len(pool) < 400:
                    pool.append(data)
            got = outcome(data)
            outcomes[got] = outcomes.get(got, 0) + 1
            label = got.encode()
            out.write(struct.pack("<I", len(data)) + data + bytes([len(label)]) + label)
    v = sys.version_info
    print(json.dumps({"python": "%d.%d.%d" % (v[0], v[1], v[2]), "cases": args.count,
                      "generated": counts["generated"], "mutated": counts["mutated"],
                      "outcomes": outcomes}))


if __name__ == "__main__":
    main()
