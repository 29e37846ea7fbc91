#!/usr/bin/env python3
"""What CPython's unpicklers look up: the Python half of tests/differential.rs.

    python3 differential.py DIR

For every file in DIR, runs the pickles in it through each way Python reads a pickle from a
file, with a find_class that records (module, name) and imports nothing (it returns a harmless
stub class), and a persistent_load that returns a stub:

  * the C unpickler (pickle.Unpickler, what pickle.load runs) over io.BytesIO, which has no
    peek: every frame is read whole (what torch.load does with data.pkl);
  * the C unpickler over a file object whose peek returns everything left: frames are read
    through a window, contiguously (what pickle.loads does);
  * the C unpickler over the real file (io.BufferedReader, whose peek gives what its buffer
    holds), with the default buffer and with a 16-byte one: some frames whole, some through a
    window;
  * the pure-Python unpickler (pickle._Unpickler) over io.BytesIO.

Each reader calls load() again after every pickle that loads, as a program reading a stream
of pickles would, until the stream ends or a load raises. find_class sees names before
fix_imports renames them (the base class applies the renaming, and is never called). Prints,
for each file, a line `FILE <name>` and then a line `NAME <module> <name>` for every global
any reader looked up, in order of first lookup, each as the hex of its UTF-8 (surrogates
passed through).
"""
import io
import os
import pickle
import resource
import sys

# Hostile lengths (a memo index of 2**32, a BINBYTES8 of 2**40) must fail to allocate rather
# than take the machine's memory.
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


class Stub:
    """What every global and persistent id becomes: callable, buildable, a container."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Stub()

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def extend(self, items):
        pass

    def append(self, item):
        pass

    def add(self, item):
        pass


def recording(base):
    class Recording(base):
        def __init__(self, file, names):
            super().__init__(file)
            self.recorded = names

        def find_class(self, module, name):
            self.recorded.append((module, name))
            return Stub

        def persistent_load(self, pid):
            return Stub()

    return Recording


C_UNPICKLER = recording(pickle.Unpickler)
PY_UNPICKLER = recording(pickle._Unpickler)


class Peekable:
    """A file whose peek returns everything left: the C unpickler reads contiguously."""

    def __init__(self, data):
        self.buf = io.BytesIO(data)

    def read(self, n=-1):
        return self.buf.read(n)

    def readinto(self, b):
        return self.buf.readinto(b)

    def readline(self):
        return self.buf.readline()

    def peek(self, n=0):
        at = self.buf.tell()
        rest = self.buf.read()
        self.buf.seek(at)
        return rest


def load_stream(file, cls, names, max_loads=64):
    for _ in range(max_loads):
        try:
            cls(file, names).load()
        except BaseException as e:  # the stream ends (EOFError) or the pickle raises
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return


def main(directory):
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        with open(path, "rb") as f:
            data = f.read()
        names = []
        load_stream(io.BytesIO(data), C_UNPICKLER, names)
        load_stream(Peekable(data), C_UNPICKLER, names)
        with open(path, "rb") as f:
            load_stream(f, C_UNPICKLER, names)
        with open(path, "rb", buffering=16) as f:
            load_stream(f, C_UNPICKLER, names)
        load_stream(io.BytesIO(data), PY_UNPICKLER, names)
        print(f"FILE {entry}")
        seen = set()
        for module, name in names:
            if (module, name) in seen:
                continue
            seen.add((module, name))
            hexed = [s.encode("utf-8", "surrogatepass").hex() for s in (module, name)]
            print(f"NAME {hexed[0]} {hexed[1]}")


if __name__ == "__main__":
    main(sys.argv[1])
