#!/usr/bin/env python3
"""Writes a large HDF5 file for benchmarks, laid out as Keras 2 saves weights (needs h5py and
numpy).

    python3 make_hdf5.py OUT TOTAL_MIB DATASETS

One group a layer (`layer_000`, ...), each holding a contiguous F32 `kernel` of 1024 columns;
h5py's defaults (no chunks, no filters), so each dataset's object header, and where its bytes
lie, is reached only through the groups' B-trees and heaps.
"""
import sys

import h5py
import numpy as np

out, total_mib, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = max(1, total_mib * (1 << 20) // count // (1024 * 4))
rng = np.random.default_rng(0)
with h5py.File(out, "w") as f:
    for i in range(count):
        f.create_group(f"layer_{i:03d}").create_dataset(
            "kernel", data=rng.standard_normal((rows, 1024), dtype=np.float32)
        )
