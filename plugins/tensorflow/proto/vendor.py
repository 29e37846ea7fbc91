"""Vendors the TensorFlow protobuf schemas socair's tensorflow plugin decodes, from the
TensorFlow 2.21.0 wheel itself.

    python vendor.py            # with tensorflow-cpu==2.21.0 installed (pinned below)

The wheel ships no `.proto` files, but every `*_pb2.py` module embeds the exact
FileDescriptorProto that TensorFlow's build compiled from its `.proto` source (serialized by
protoc). This script writes

* `descriptors.binpb`: a FileDescriptorSet of those descriptors, byte for byte as the wheel
  holds them (dependencies first), for the files below and everything they import; the plugin's
  codegen (`../codegen`) generates the prost types and the wire table from it;
* one `.proto` file per descriptor under `tensorflow/...` (and `google/protobuf/...`), rendered
  from the descriptor: the same messages, fields, numbers, types, labels, oneofs, maps, enums and
  reserved ranges, without the source's comments; the codegen compiles these with protoc and
  checks that they define exactly what `descriptors.binpb` does.

Pinned: tensorflow-cpu 2.21.0 (git version v2.21.0-rc1-5-ga481b10260d), protobuf as the wheel
requires. TensorFlow's protos are Apache-2.0 (Copyright The TensorFlow Authors).
"""

import hashlib
import importlib
import os
import sys

import tensorflow as tf
from google.protobuf import descriptor_pb2

assert tf.__version__ == "2.21.0", tf.__version__

ROOTS = [
    "tensorflow.core.protobuf.saved_model_pb2",
    "tensorflow.core.protobuf.tensor_bundle_pb2",
    "tensorflow.core.protobuf.fingerprint_pb2",
    "tensorflow.core.framework.graph_pb2",
    # A MetaGraphDef's cond_context and while_context collections hold these serialized
    # (import_meta_graph's from_proto; queue_runner.proto's one message is in metagraph.rs).
    "tensorflow.core.protobuf.control_flow_pb2",
    "tensorflow.python.keras.protobuf.saved_metadata_pb2",
]

HERE = os.path.dirname(os.path.abspath(__file__))

LICENSE = """// Copyright The TensorFlow Authors. All Rights Reserved.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
"""

F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    F.TYPE_DOUBLE: "double", F.TYPE_FLOAT: "float", F.TYPE_INT64: "int64",
    F.TYPE_UINT64: "uint64", F.TYPE_INT32: "int32", F.TYPE_FIXED64: "fixed64",
    F.TYPE_FIXED32: "fixed32", F.TYPE_BOOL: "bool", F.TYPE_STRING: "string",
    F.TYPE_BYTES: "bytes", F.TYPE_UINT32: "uint32", F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_SFIXED64: "sfixed64", F.TYPE_SINT32: "sint32", F.TYPE_SINT64: "sint64",
}


def ordered_files():
    seen, order = set(), []

    def visit(fd):
        if fd.name in seen:
            return
        seen.add(fd.name)
        for d in fd.dependencies:
            visit(d)
        order.append(fd)

    for m in ROOTS:
        visit(importlib.import_module(m).DESCRIPTOR)
    return order


def type_name(f):
    if f.type in (F.TYPE_MESSAGE, F.TYPE_ENUM):
        return f.type_name  # fully qualified, with the leading dot
    return SCALARS[f.type]


def field_options(f, syntax):
    opts = []
    if f.options.HasField("packed"):
        opts.append("packed = %s" % ("true" if f.options.packed else "false"))
    if f.options.HasField("deprecated") and f.options.deprecated:
        opts.append("deprecated = true")
    if f.HasField("default_value"):
        v = f.default_value
        if f.type == F.TYPE_STRING:
            v = '"%s"' % v
        opts.append("default = %s" % v)
    if f.HasField("json_name") and f.json_name != default_json(f.name):
        opts.append('json_name = "%s"' % f.json_name)
    return " [%s]" % ", ".join(opts) if opts else ""


def default_json(name):
    out, up = "", False
    for c in name:
        if c == "_":
            up = True
        else:
            out += c.upper() if up else c
            up = False
    return out


def render_enum(e, ind):
    out = ["%senum %s {" % (ind, e.name)]
    if e.options.HasField("allow_alias") and e.options.allow_alias:
        out.append("%s  option allow_alias = true;" % ind)
    for v in e.value:
        extra = " [deprecated = true]" if v.options.deprecated else ""
        out.append("%s  %s = %d%s;" % (ind, v.name, v.number, extra))
    for r in e.reserved_range:
        out.append("%s  reserved %s;" % (ind, rng(r.start, r.end, inclusive=True)))
    if e.reserved_name:
        out.append("%s  reserved %s;" % (ind, ", ".join('"%s"' % n for n in e.reserved_name)))
    out.append("%s}" % ind)
    return out


def rng(start, end, inclusive=False):
    last = end if inclusive else end - 1
    if last >= 536870911:
        return "%d to max" % start
    return str(start) if start == last else "%d to %d" % (start, last)


def render_field(f, maps, syntax, ind):
    if f.type == F.TYPE_MESSAGE and f.type_name in maps:
        k, v = maps[f.type_name]
        return "%smap<%s, %s> %s = %d%s;" % (ind, type_name(k), type_name(v), f.name, f.number, field_options(f, syntax))
    label = ""
    if f.label == F.LABEL_REPEATED:
        label = "repeated "
    elif f.proto3_optional:
        label = "optional "
    elif syntax == "proto2":
        label = "required " if f.label == F.LABEL_REQUIRED else "optional "
    return "%s%s%s %s = %d%s;" % (ind, label, type_name(f), f.name, f.number, field_options(f, syntax))


def render_message(m, prefix, syntax, ind):
    full = "%s.%s" % (prefix, m.name)
    maps = {}
    for n in m.nested_type:
        if n.options.map_entry:
            maps["%s.%s" % (full, n.name)] = (n.field[0], n.field[1])
    out = ["%smessage %s {" % (ind, m.name)]
    inner = ind + "  "
    for e in m.enum_type:
        out += render_enum(e, inner)
    # Nested messages go where they keep their order relative to the map entries protoc
    # synthesizes at each map field's declaration.
    nested = list(m.nested_type)
    pending = [0]

    def nested_before(entry_name):
        while pending[0] < len(nested):
            n = nested[pending[0]]
            pending[0] += 1
            if n.options.map_entry:
                if "%s.%s" % (full, n.name) == entry_name:
                    return
                continue
            out.extend(render_message(n, full, syntax, inner))

    real_oneofs = {}
    for i, o in enumerate(m.oneof_decl):
        members = [f for f in m.field if f.HasField("oneof_index") and f.oneof_index == i]
        if not all(f.proto3_optional for f in members):
            real_oneofs[i] = o.name
    done = set()
    for f in m.field:
        if f.type == F.TYPE_MESSAGE and f.type_name in maps:
            nested_before(f.type_name)
        if f.HasField("oneof_index") and f.oneof_index in real_oneofs:
            i = f.oneof_index
            if i in done:
                continue
            done.add(i)
            out.append("%soneof %s {" % (inner, real_oneofs[i]))
            for g in m.field:
                if g.HasField("oneof_index") and g.oneof_index == i:
                    out.append(render_field(g, maps, syntax, inner + "  "))
            out.append("%s}" % inner)
        else:
            out.append(render_field(f, maps, syntax, inner))
    nested_before(None)
    for r in m.reserved_range:
        out.append("%sreserved %s;" % (inner, rng(r.start, r.end)))
    if m.reserved_name:
        out.append("%sreserved %s;" % (inner, ", ".join('"%s"' % n for n in m.reserved_name)))
    out.append("%s}" % ind)
    return out


def render(fdp):
    syntax = fdp.syntax or "proto2"
    out = []
    if not fdp.name.startswith("google/"):
        out.append(LICENSE)
    out.append("// Rendered by plugins/tensorflow/proto/vendor.py from the FileDescriptorProto that the")
    out.append("// tensorflow-cpu 2.21.0 wheel embeds for %s (comments not kept)." % fdp.name)
    out.append("")
    out.append('syntax = "%s";' % syntax)
    out.append("")
    out.append("package %s;" % fdp.package)
    out.append("")
    for d in fdp.dependency:
        out.append('import "%s";' % d)
    if fdp.dependency:
        out.append("")
    o = fdp.options
    if o.HasField("cc_enable_arenas"):
        out.append("option cc_enable_arenas = %s;" % ("true" if o.cc_enable_arenas else "false"))
    for name in ("java_package", "java_outer_classname", "go_package", "objc_class_prefix", "csharp_namespace"):
        if o.HasField(name):
            out.append('option %s = "%s";' % (name, getattr(o, name)))
    if o.HasField("java_multiple_files"):
        out.append("option java_multiple_files = %s;" % ("true" if o.java_multiple_files else "false"))
    out.append("")
    for e in fdp.enum_type:
        out += render_enum(e, "")
        out.append("")
    for m in fdp.message_type:
        out += render_message(m, "." + fdp.package, syntax, "")
        out.append("")
    assert not fdp.service and not fdp.extension, fdp.name
    return "\n".join(out).rstrip() + "\n"


def main():
    fds = descriptor_pb2.FileDescriptorSet()
    listing = []
    for fd in ordered_files():
        fdp = fds.file.add()
        fdp.ParseFromString(fd.serialized_pb)
        text = render(fdp)
        path = os.path.join(HERE, fdp.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        listing.append((fdp.name, hashlib.sha256(fd.serialized_pb).hexdigest()))
    blob = fds.SerializeToString()
    with open(os.path.join(HERE, "descriptors.binpb"), "wb") as f:
        f.write(blob)
    for name, sha in listing:
        print(sha, name)
    print(hashlib.sha256(blob).hexdigest(), "descriptors.binpb")


if __name__ == "__main__":
    main()
