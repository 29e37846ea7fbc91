"""Checks schema_subset.fbs against the TFLite schema TensorFlow 2.21.0 was built with, and
writes builtin_ops.tsv (every BuiltinOperator and TensorType of that schema).

    python vendor.py        # tensorflow-cpu==2.21.0 installed

The wheel ships no schema.fbs, but `tensorflow/lite/python/schema_py_generated.py` is flatc's
Python code generated from it: each table accessor reads its field at a vtable offset
(4 + 2 * field id), each enum is a class of constants. This script parses
schema_subset.fbs (the tables the reader uses, excerpted from
tensorflow/compiler/mlir/lite/schema/schema.fbs) and asserts that every field has the id the
wheel's generated code reads it at, and writes the enums the reader names ops and types by.
"""

import os
import re
import sys

import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as g

assert tf.__version__ == "2.21.0", tf.__version__
HERE = os.path.dirname(os.path.abspath(__file__))
src = open(g.__file__).read()


def wheel_fields(cls):
    m = re.search(r"\nclass %s\(object\):(.*?)\n(?:class |def )" % cls, src, re.S)
    body = m.group(1)
    out = {}
    for name, off in re.findall(
        r"    def (\w+)\(self[^)]*\):\n        o = flatbuffers.number_types.UOffsetTFlags.py_type\(self._tab.Offset\((\d+)\)\)",
        body,
    ):
        if name.endswith(("Length", "IsNone", "AsNumpy")):
            continue
        out.setdefault(name, (int(off) - 4) // 2)
    return out


def camel(s):
    return "".join(p[:1].upper() + p[1:] for p in s.split("_"))


def main():
    text = open(os.path.join(HERE, "schema_subset.fbs")).read()
    checked = 0
    for table, body in re.findall(r"\ntable (\w+)[^{]*\{(.*?)\n\}", text, re.S):
        wheel = wheel_fields(table)
        fid = 0
        for line in body.splitlines():
            line = line.split("//")[0].strip()
            m = re.match(r"(\w+)\s*:\s*([\w\[\]]+)", line)
            if not m:
                continue
            name, ty = m.groups()
            unions = {"QuantizationDetails", "BuiltinOptions", "BuiltinOptions2", "SparseIndexVector"}
            if ty in unions:
                assert wheel.get(camel(name) + "Type") == fid, (table, name, "type", wheel)
                fid += 1
            if camel(name) in wheel:
                assert wheel[camel(name)] == fid, (table, name, fid, wheel[camel(name)])
                checked += 1
            fid += 1
    lines = ["# enum\tvalue\tname  (TFLite schema of TensorFlow %s, written by vendor.py)" % tf.__version__]
    for enum in ("BuiltinOperator", "TensorType"):
        cls = getattr(g, enum)
        for name, value in sorted(
            ((k, v) for k, v in vars(cls).items() if not k.startswith("_")), key=lambda kv: kv[1]
        ):
            lines.append("%s\t%d\t%s" % (enum, value, name))
    with open(os.path.join(HERE, "builtin_ops.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("checked %d fields; wrote builtin_ops.tsv" % checked)


if __name__ == "__main__":
    main()
