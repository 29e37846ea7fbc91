"""Generates plugins/xml/reader/src/openvino/tables.rs and src/pmml/tables.rs from upstream.

Versions: openvino 2026.4.1 (pip), nyoka 5.5.0 (pip, pure Python).

    python3 -m venv /tmp/xmlenv && /tmp/xmlenv/bin/pip install openvino==2026.4.1 nyoka==5.5.0
    /tmp/xmlenv/bin/opt_in_out --opt_out  # openvino-telemetry would report every read_model
    /tmp/xmlenv/bin/python plugins/xml/reader/codegen/make_tables.py

OpenVINO: the opsets are the `_OPENVINO_OP_REG(Name, namespace)` lines of the headers the wheel
installs (`openvino/include/openvino/opsets/opset<N>_tbl.hpp`), for every opset the pinned
runtime offers (`ov::get_available_opsets()`), and every entry is confirmed against the runtime:
a one-layer IR of that type and version is read with `Core.read_model`, and the IR reader's
refusal "Opset opsetN doesn't contain the operation with type: X" (xml_deserialize_util.cpp,
`XmlDeserializer::create_node`) is the only answer that removes it. An opset is offered when
a Parameter of that version is not refused "from unsupported opset". The element types are
the names `ov::element::Type(string)` accepts (element_type.cpp at the pinned version: the
canonical names and their aliases), each confirmed by reading a Const of that type.

PMML: the element names of the PMML 4.4 schema as nyoka 5.5.0 generated its classes from it
(`nyoka/PMML44Super.py`, generateDS over pmml44.xsd: every `nodeName_ == '...'` a class reads,
and the root `PMML`), and the built-in functions of "PMML 4.4.1 - Built-in functions"
(dmg.org/pmml/v4-4-1/BuiltinFunctions.html), listed below by hand in the page's order.
"""

import os
import re

import numpy as np
import openvino as ov

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
assert ov.__version__.startswith("2026.4.1"), ov.__version__
CORE = ov.Core()
HEADERS = os.path.join(os.path.dirname(ov.__file__), "include", "openvino", "opsets")

PROBE = """<?xml version="1.0"?>
<net name="probe" version="11">
<layers>
<layer id="0" name="p" type="{type}" version="{version}">{data}
<output><port id="0" precision="FP32"><dim>1</dim></port></output>
</layer>
<layer id="1" name="r" type="Result" version="opset1"><input><port id="0" precision="FP32"><dim>1</dim></port></input></layer>
</layers>
<edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges>
</net>"""


def _read(type_, version, data, weights):
    try:
        CORE.read_model(PROBE.format(type=type_, version=version, data=data), ov.Tensor(np.frombuffer(weights or b"\0", np.uint8)))
        return None
    except RuntimeError as e:
        return str(e)


def refusal(type_, version, data="", weights=b""):
    """The IR reader's error for a one-layer model, or None when it reads it. Each probe runs in
    a forked child: an operation created without its inputs may crash the process while
    validating (Broadcast does), which says the opset holds it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        why = _read(type_, version, data, weights)
        os.write(write, b"\1" if why is None else b"\0" + why.encode()[-4000:])
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    answer = b"".join(chunks)
    if answer == b"\1":
        return None
    if not answer:
        return "the process crashed after creating the operation"
    return answer[1:].decode(errors="replace")


def opsets():
    out = []
    for n in range(1, 64):
        version = f"opset{n}"
        if "from unsupported opset" in (refusal("Parameter", version) or ""):
            continue
        header = os.path.join(HEADERS, f"opset{n}_tbl.hpp")
        names = re.findall(r"^_OPENVINO_OP_REG\((\w+),", open(header).read(), re.M)
        assert names, header
        kept = []
        for name in names:
            why = refusal(name, version) or ""
            if "doesn't contain the operation" in why:
                print(f"{version}: {name} listed in the header but refused by the runtime")
                continue
            kept.append(name)
        out.append((version, sorted(set(kept))))
    return out


# element_type.cpp's names and aliases (canonical name first), as far as upstream has them;
# each is kept only when the pinned runtime reads a Const of it.
ELEMENT_CANDIDATES = [
    ["boolean", "BOOL"], ["bf16", "BF16"], ["f16", "FP16"], ["f32", "FP32"], ["f64", "FP64"],
    ["i4", "I4"], ["i8", "I8"], ["i16", "I16"], ["i32", "I32"], ["i64", "I64"],
    ["u1", "U1", "bin", "BIN"], ["u2", "U2"], ["u3", "U3"], ["u4", "U4"], ["u6", "U6"],
    ["u8", "U8"], ["u16", "U16"], ["u32", "U32"], ["u64", "U64"], ["nf4", "NF4"],
    ["f8e4m3", "F8E4M3"], ["f8e5m2", "F8E5M2"], ["string", "STRING"], ["f4e2m1", "F4E2M1"],
    ["f8e8m0", "F8E8M0"], ["dynamic", "undefined", "UNSPECIFIED"],
] + [[n, n.upper()] for n in [
    "gguf_q4_0", "gguf_q4_1", "gguf_q5_0", "gguf_q5_1", "gguf_q8_0", "gguf_q8_1", "gguf_q2_k",
    "gguf_q3_k", "gguf_q4_k", "gguf_q5_k", "gguf_q6_k", "gguf_q8_k", "gguf_iq2_xxs", "gguf_iq2_xs",
    "gguf_iq3_xxs", "gguf_iq1_s", "gguf_iq4_nl", "gguf_iq3_s", "gguf_iq2_s", "gguf_iq4_xs",
    "gguf_iq1_m", "gguf_tq1_0", "gguf_tq2_0"]]

# socair's element types (the safetensors names) for OpenVINO's fixed-width ones.
SOCAIR = {
    "boolean": "BOOL", "bf16": "BF16", "f16": "F16", "f32": "F32", "f64": "F64", "i8": "I8",
    "i16": "I16", "i32": "I32", "i64": "I64", "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64",
    "f8e4m3": "F8_E4M3", "f8e5m2": "F8_E5M2", "f8e8m0": "F8_E8M0",
}

STRING_BYTES = np.array([1, 0, 1], "<i4").tobytes() + b"a"


def element_types():
    out = []
    for names in ELEMENT_CANDIDATES:
        canonical = names[0]
        accepted = []
        bitwidth = None
        for name in names:
            data = f'\n<data element_type="{name}" shape="1" offset="0" size="{13 if canonical == "string" else 8}" />'
            weights = STRING_BYTES if canonical == "string" else bytes(8)
            why = refusal("Const", "opset1", data, weights)
            if why is not None and "Unsupported element type" in why:
                continue
            if why is not None:
                # Read but not constructible (a dynamic-typed constant): still a name the
                # reader knows; socair refuses its data.
                pass
            accepted.append(name)
        if not accepted:
            print(f"element type {canonical}: not read by the runtime")
            continue
        try:
            bitwidth = getattr(ov.Type, canonical).bitwidth if hasattr(ov.Type, canonical) else None
        except Exception:
            bitwidth = None
        if bitwidth is None:
            # gguf block types are not exposed to Python; their bitwidth as element_type.cpp has it.
            bitwidth = GGUF_BITS.get(canonical, 0)
        out.append((canonical, accepted, bitwidth))
    return out


GGUF_BITS = {
    "gguf_q4_0": 5, "gguf_q4_1": 5, "gguf_q5_0": 6, "gguf_q5_1": 6, "gguf_q8_0": 9, "gguf_q8_1": 9,
    "gguf_q2_k": 3, "gguf_q3_k": 4, "gguf_q4_k": 5, "gguf_q5_k": 6, "gguf_q6_k": 7, "gguf_q8_k": 10,
    "gguf_iq2_xxs": 3, "gguf_iq2_xs": 3, "gguf_iq3_xxs": 4, "gguf_iq1_s": 2, "gguf_iq4_nl": 5,
    "gguf_iq3_s": 4, "gguf_iq2_s": 3, "gguf_iq4_xs": 5, "gguf_iq1_m": 2, "gguf_tq1_0": 2, "gguf_tq2_0": 3,
}


def rust_str_list(items, indent="    "):
    lines, line = [], indent
    for s in items:
        piece = f'"{s}", '
        if len(line) + len(piece) > 99:
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip())
    return "\n".join(lines)


def write_openvino():
    sets = opsets()
    types = element_types()
    out = [
        "//! OpenVINO's operation sets and element types at openvino 2026.4.1, generated by",
        "//! `codegen/make_tables.py` from the wheel's `opset<N>_tbl.hpp` headers, every entry confirmed",
        "//! by the runtime's IR reader (see the script). Do not edit: run the script (rustfmt skips the",
        "//! file: its module is declared `#[rustfmt::skip]`).",
        "",
        "/// Each opset the runtime offers (`ov::get_available_opsets()`) with its operations' type names,",
        "/// sorted (the IR reader looks them up ignoring ASCII case: `OpSet::create_insensitive`).",
        "pub const OPSETS: &[(&str, &[&str])] = &[",
    ]
    for version, names in sets:
        out.append(f'    (\n        "{version}",\n        &[\n{rust_str_list(names, "            ")}\n        ],\n    ),')
    out.append("];")
    out += [
        "",
        "/// An element type: the names `ov::element::Type(string)` reads for it (canonical first),",
        "/// its bit width, and socair's element type when its elements have a fixed byte width.",
        "pub struct ElementType {",
        "    /// Accepted names, the canonical (the one ov.save_model writes) first.",
        "    pub names: &'static [&'static str],",
        "    /// Bits per element (`Type::bitwidth`); a constant's bytes are `ceil(elements x bits / 8)`.",
        "    pub bits: u64,",
        "    /// socair's element type (the safetensors names), or none.",
        "    pub socair: Option<&'static str>,",
        "}",
        "",
        "/// Every element type the pinned runtime reads.",
        "pub const ELEMENT_TYPES: &[ElementType] = &[",
    ]
    for canonical, names, bits in types:
        socair = f'Some("{SOCAIR[canonical]}")' if canonical in SOCAIR else "None"
        quoted = ", ".join(f'"{n}"' for n in names)
        out.append(f"    ElementType {{ names: &[{quoted}], bits: {bits}, socair: {socair} }},")
    out.append("];")
    path = os.path.join(SRC, "openvino", "tables.rs")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {path}: {len(sets)} opsets, {len(types)} element types")


# "PMML 4.4.1 - Built-in functions", in the page's order.
BUILTIN_FUNCTIONS = [
    "+", "-", "*", "/", "min", "max", "sum", "avg", "median", "product", "log10", "ln", "sqrt",
    "abs", "exp", "pow", "threshold", "floor", "ceil", "round", "modulo", "isMissing",
    "isNotMissing", "isValid", "isNotValid", "equal", "notEqual", "lessThan", "lessOrEqual",
    "greaterThan", "greaterOrEqual", "and", "or", "not", "isIn", "isNotIn", "if", "uppercase",
    "lowercase", "stringLength", "substring", "trimBlanks", "concat", "replace", "matches",
    "formatNumber", "formatDatetime", "dateDaysSinceYear", "dateSecondsSinceYear",
    "dateSecondsSinceMidnight", "normalCDF", "normalPDF", "stdNormalCDF", "stdNormalPDF", "erf",
    "normalIDF", "stdNormalIDF", "expm1", "hypot", "ln1p", "rint", "sin", "asin", "sinh", "cos",
    "acos", "cosh", "tan", "atan", "tanh",
]


def write_pmml():
    import nyoka

    source = open(os.path.join(os.path.dirname(nyoka.__file__), "PMML44Super.py")).read()
    names = set(re.findall(r"nodeName_ == '([A-Za-z_-]+)'", source)) | {"PMML"}
    out = [
        "//! The PMML 4.4 vocabulary, generated by `codegen/make_tables.py`: the schema's element names as",
        "//! nyoka 5.5.0 generated its classes from pmml44.xsd (`nyoka/PMML44Super.py`), and the built-in",
        "//! functions of \"PMML 4.4.1 - Built-in functions\". Do not edit: run the script (rustfmt skips",
        "//! the file: its module is declared `#[rustfmt::skip]`).",
        "",
        "/// Every element name of the PMML 4.4 schema, sorted.",
        "pub const ELEMENTS: &[&str] = &[",
        rust_str_list(sorted(names)),
        "];",
        "",
        "/// The built-in functions an `Apply` may name, sorted.",
        "pub const BUILTIN_FUNCTIONS: &[&str] = &[",
        rust_str_list(sorted(set(BUILTIN_FUNCTIONS))),
        "];",
    ]
    path = os.path.join(SRC, "pmml", "tables.rs")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {path}: {len(names)} elements, {len(BUILTIN_FUNCTIONS)} functions")


if __name__ == "__main__":
    os.makedirs(os.path.join(SRC, "openvino"), exist_ok=True)
    os.makedirs(os.path.join(SRC, "pmml"), exist_ok=True)
    write_openvino()
    write_pmml()
