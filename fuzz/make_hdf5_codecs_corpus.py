"""Writes fuzz/corpus/hdf5_codecs/: chunks as h5py 3.16 (HDF5 2.0, libaec) stored them with
szip and n-bit, taken whole from fixtures/hdf5/features/{szip,nbit}.h5 and the files of
fixtures/hdf5/random-codecs/, each framed as `check_codecs` reads its input (a byte picking the
filter and the output limit, the filter's values one byte each, then the chunk as stored).
A chunk whose filter values do not fit in bytes is left out.

    python fuzz/make_hdf5_codecs_corpus.py
"""

import glob
import hashlib
import os

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus", "hdf5_codecs")


def cases(path):
    with h5py.File(path, "r") as f:
        found = []

        def visit(_, obj):
            if not isinstance(obj, h5py.Dataset) or obj.chunks is None:
                return
            plist = obj.id.get_create_plist()
            filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
            if len(filters) != 1 or filters[0][0] not in (4, 5):
                return
            fid, _, values, _ = filters[0]
            if any(v > 255 for v in values) or (fid == 5 and len(values) > 31):
                return
            for i in range(min(obj.id.get_num_chunks(), 2)):
                info = obj.id.get_chunk_info(i)
                mask, raw = obj.id.read_direct_chunk(info.chunk_offset)
                if mask:
                    continue  # stored as it is: the optional filter did not shrink it
                limit_kib = min(127, 1 + len(raw) * 8 // 1024 + 8)
                if fid == 4:
                    head = bytes([limit_kib << 1]) + bytes(values)
                else:
                    head = bytes([(limit_kib << 1) | 1, len(values)]) + bytes(values)
                found.append(head + raw)

        f.visititems(visit)
        return found


def main():
    os.makedirs(OUT, exist_ok=True)
    paths = [os.path.join(ROOT, "fixtures/hdf5/features", n) for n in ("szip.h5", "nbit.h5")]
    paths += sorted(glob.glob(os.path.join(ROOT, "fixtures/hdf5/random-codecs/*.h5")))
    n = 0
    for p in paths:
        for case in cases(p):
            with open(os.path.join(OUT, hashlib.sha1(case).hexdigest()), "wb") as fh:
                fh.write(case)
            n += 1
    print(n, "cases")


if __name__ == "__main__":
    main()
