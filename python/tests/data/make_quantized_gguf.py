"""Writes quantized.gguf: a GGUF v3 file with block-quantized tensors (Q8_0, Q4_0) and a plain
F32 one, for socair.load's quantized-tensor refusal and raw=True.

Made with gguf-py (the `gguf` package) 0.19.0 and numpy 2.4.6:
    python make_quantized_gguf.py
"""

import gguf
import numpy as np

rng = np.random.default_rng(32)
writer = gguf.GGUFWriter("quantized.gguf", "llama")
writer.add_block_count(1)
plain = rng.standard_normal((4, 64), dtype=np.float32)
writer.add_tensor("plain.weight", plain)
for name, kind in (("q8.weight", gguf.GGMLQuantizationType.Q8_0), ("q4.weight", gguf.GGMLQuantizationType.Q4_0)):
    data = rng.standard_normal((2, 64), dtype=np.float32)
    q = gguf.quants.quantize(data, kind)
    writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=kind)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
