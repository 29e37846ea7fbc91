//! The hostile shapes the GGUF, ONNX and safetensors readers' bounds are measured on, as
//! generators: each returns a whole file. Used by `tests/tests/bounds.rs` (end to end) and
//! those plugins' `tests/bounds.rs` (the plugin alone), and written small into the fuzz
//! corpora (`tests/src/bin/write-bounds-corpora.rs`).

// ------------------------------------------------------------------------------------------
// GGUF

fn gguf_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

/// A GGUF v3 file: header, `kv` (already encoded, `n_kv` pairs), `infos` (`n_tensors` tensor
/// infos), zero padding to 32, then `data`.
fn gguf_file(n_kv: u64, kv: &[u8], n_tensors: u64, infos: &[u8], data: &[u8]) -> Vec<u8> {
    let mut f = b"GGUF".to_vec();
    f.extend(3u32.to_le_bytes());
    f.extend(n_tensors.to_le_bytes());
    f.extend(n_kv.to_le_bytes());
    f.extend_from_slice(kv);
    f.extend_from_slice(infos);
    if n_tensors > 0 {
        f.resize(f.len().next_multiple_of(32), 0);
    }
    f.extend_from_slice(data);
    f
}

/// One key holding an ARRAY of `elem_type` whose encoded elements are `elements`.
fn gguf_array_kv(key: &str, elem_type: u32, count: u64, elements: &[u8]) -> Vec<u8> {
    let mut kv = Vec::new();
    gguf_string(&mut kv, key.as_bytes());
    kv.extend(9u32.to_le_bytes());
    kv.extend(elem_type.to_le_bytes());
    kv.extend(count.to_le_bytes());
    kv.extend_from_slice(elements);
    kv
}

/// A tensor info: name, one dimension, type, offset.
fn gguf_info(out: &mut Vec<u8>, name: &[u8], dim: u64, type_id: u32, offset: u64) {
    gguf_string(out, name);
    out.extend(1u32.to_le_bytes());
    out.extend(dim.to_le_bytes());
    out.extend(type_id.to_le_bytes());
    out.extend(offset.to_le_bytes());
}

/// 30 million UINT8 elements in one metadata array.
pub fn gguf_u8_array(n: usize) -> Vec<u8> {
    let kv = gguf_array_kv("big.u8", 0, n as u64, &vec![7u8; n]);
    gguf_file(1, &kv, 0, &[], &[])
}

/// BOOL elements, whose JSON (`false,`) is the widest per input byte.
pub fn gguf_bool_array(n: usize) -> Vec<u8> {
    let kv = gguf_array_kv("big.bool", 7, n as u64, &vec![0u8; n]);
    gguf_file(1, &kv, 0, &[], &[])
}

/// Millions of one-byte strings in one array.
pub fn gguf_string_array(n: usize) -> Vec<u8> {
    let mut elements = Vec::with_capacity(n * 9);
    for _ in 0..n {
        gguf_string(&mut elements, b"a");
    }
    let kv = gguf_array_kv("big.strings", 8, n as u64, &elements);
    gguf_file(1, &kv, 0, &[], &[])
}

/// An array of `n` empty arrays of UINT8.
pub fn gguf_nested_empty(n: usize) -> Vec<u8> {
    let mut elements = Vec::with_capacity(n * 12);
    for _ in 0..n {
        elements.extend(0u32.to_le_bytes());
        elements.extend(0u64.to_le_bytes());
    }
    let kv = gguf_array_kv("nested.empty", 9, n as u64, &elements);
    gguf_file(1, &kv, 0, &[], &[])
}

/// An array of `n` elements, each a chain of arrays 7 deep (the reader's depth limit is 8)
/// ending in an empty array.
pub fn gguf_nested_deep(n: usize) -> Vec<u8> {
    let mut chain = Vec::new();
    // Innermost: ARRAY of UINT8, count 0.
    chain.extend(0u32.to_le_bytes());
    chain.extend(0u64.to_le_bytes());
    for _ in 0..6 {
        let mut outer = 9u32.to_le_bytes().to_vec();
        outer.extend(1u64.to_le_bytes());
        outer.extend_from_slice(&chain);
        chain = outer;
    }
    let mut elements = Vec::with_capacity(n * chain.len());
    for _ in 0..n {
        elements.extend_from_slice(&chain);
    }
    let kv = gguf_array_kv("nested.deep", 9, n as u64, &elements);
    gguf_file(1, &kv, 0, &[], &[])
}

/// `n` metadata keys, each a UINT8.
pub fn gguf_many_keys(n: usize) -> Vec<u8> {
    let mut kv = Vec::with_capacity(n * 21);
    for i in 0..n {
        gguf_string(&mut kv, format!("k{i:07}").as_bytes());
        kv.extend(0u32.to_le_bytes());
        kv.push(1);
    }
    gguf_file(n as u64, &kv, 0, &[], &[])
}

/// `n` zero-size F32 tensors, all at data offset 0.
pub fn gguf_zero_tensors(n: usize, name_len: usize) -> Vec<u8> {
    let mut infos = Vec::with_capacity(n * (name_len + 32));
    for i in 0..n {
        let mut name = format!("t{i:07}").into_bytes();
        name.resize(name_len.max(name.len()), b'x');
        gguf_info(&mut infos, &name, 0, 0, 0);
    }
    gguf_file(0, &[], n as u64, &infos, &[])
}

/// `n` tensors of a type ggml removed (id 4): each one a finding and an unread tensor.
pub fn gguf_removed_types(n: usize) -> Vec<u8> {
    let mut infos = Vec::with_capacity(n * 40);
    for i in 0..n {
        gguf_info(
            &mut infos,
            format!("t{i:07}").as_bytes(),
            32,
            4,
            i as u64 * 32,
        );
    }
    let data = vec![0u8; n * 32];
    gguf_file(0, &[], n as u64, &infos, &data)
}

// ------------------------------------------------------------------------------------------
// ONNX (protobuf written by hand: varints and length-delimited fields)

fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn field_varint(out: &mut Vec<u8>, number: u32, v: u64) {
    varint(out, u64::from(number) << 3);
    varint(out, v);
}

fn field_bytes(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
    varint(out, u64::from(number) << 3 | 2);
    varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// A ModelProto: IR 9, opset 17, `extra` model fields, and `graph` as its graph.
fn onnx_model(graph: &[u8], extra: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(graph.len() + extra.len() + 32);
    field_varint(&mut m, 1, 9);
    let mut opset = Vec::new();
    field_varint(&mut opset, 2, 17);
    field_bytes(&mut m, 8, &opset);
    m.extend_from_slice(extra);
    field_bytes(&mut m, 7, graph);
    m
}

/// A zero-element FLOAT TensorProto named `name` (dims [0]).
fn onnx_empty_tensor(name: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    field_varint(&mut t, 1, 0);
    field_varint(&mut t, 2, 1);
    field_bytes(&mut t, 8, name);
    t
}

/// `n` tiny nodes: `Relu(x) -> y<i>`.
pub fn onnx_tiny_nodes(n: usize) -> Vec<u8> {
    let mut g = Vec::with_capacity(n * 16);
    for i in 0..n {
        let mut node = Vec::new();
        field_bytes(&mut node, 1, b"x");
        field_bytes(&mut node, 2, format!("y{i}").as_bytes());
        field_bytes(&mut node, 4, b"Relu");
        field_bytes(&mut g, 1, &node);
    }
    onnx_model(&g, &[])
}

/// One node with `n` tiny INT attributes.
pub fn onnx_attributes(n: usize) -> Vec<u8> {
    let mut node = Vec::with_capacity(n * 10);
    field_bytes(&mut node, 4, b"Custom");
    for _ in 0..n {
        let mut a = Vec::new();
        field_bytes(&mut a, 1, b"a");
        field_varint(&mut a, 3, 1);
        field_varint(&mut a, 20, 2);
        field_bytes(&mut node, 5, &a);
    }
    let mut g = Vec::new();
    field_bytes(&mut g, 1, &node);
    onnx_model(&g, &[])
}

/// `n` zero-element initializers with distinct names.
pub fn onnx_initializers(n: usize) -> Vec<u8> {
    let mut g = Vec::with_capacity(n * 16);
    for i in 0..n {
        field_bytes(&mut g, 5, &onnx_empty_tensor(format!("i{i}").as_bytes()));
    }
    onnx_model(&g, &[])
}

/// `n` initializers without a name: each one a FAIL finding.
pub fn onnx_unnamed_initializers(n: usize) -> Vec<u8> {
    let mut g = Vec::with_capacity(n * 8);
    for _ in 0..n {
        field_bytes(&mut g, 5, &onnx_empty_tensor(b""));
    }
    onnx_model(&g, &[])
}

/// If-subgraphs nested `depth` deep, the innermost graph holding `n` initializers: each one
/// is named as a tensor outside the main graph, with its whole path as its place.
pub fn onnx_deep_subgraphs(depth: usize, n: usize) -> Vec<u8> {
    let mut g = Vec::with_capacity(n * 8);
    for i in 0..n {
        field_bytes(&mut g, 5, &onnx_empty_tensor(format!("s{i}").as_bytes()));
    }
    for _ in 0..depth {
        let mut attr = Vec::new();
        field_bytes(&mut attr, 1, b"then_branch_with_a_long_attribute_name");
        field_bytes(&mut attr, 6, &g);
        field_varint(&mut attr, 20, 5);
        let mut node = Vec::new();
        field_bytes(&mut node, 3, b"a_node_name_that_is_repeated_in_every_place");
        field_bytes(&mut node, 4, b"If");
        field_bytes(&mut node, 5, &attr);
        g = Vec::new();
        field_bytes(&mut g, 1, &node);
    }
    onnx_model(&g, &[])
}

/// A node whose repeated `input` field holds `n` names.
pub fn onnx_repeated_inputs(n: usize) -> Vec<u8> {
    let mut node = Vec::with_capacity(n * 8);
    for i in 0..n {
        field_bytes(&mut node, 1, format!("{i:06}").as_bytes());
    }
    field_bytes(&mut node, 4, b"Concat");
    let mut g = Vec::new();
    field_bytes(&mut g, 1, &node);
    onnx_model(&g, &[])
}

/// `n` metadata_props entries.
pub fn onnx_metadata_props(n: usize) -> Vec<u8> {
    let mut extra = Vec::with_capacity(n * 24);
    for i in 0..n {
        let mut e = Vec::new();
        field_bytes(&mut e, 1, format!("key{i:08}").as_bytes());
        field_bytes(&mut e, 2, b"value");
        field_bytes(&mut extra, 14, &e);
    }
    onnx_model(&[], &extra)
}

/// `n` Constant nodes, each holding a zero-element FLOAT tensor in its `value` attribute.
pub fn onnx_constants(n: usize) -> Vec<u8> {
    let mut g = Vec::with_capacity(n * 40);
    for i in 0..n {
        let mut attr = Vec::new();
        field_bytes(&mut attr, 1, b"value");
        field_bytes(&mut attr, 5, &onnx_empty_tensor(b""));
        field_varint(&mut attr, 20, 4);
        let mut node = Vec::new();
        field_bytes(&mut node, 2, format!("c{i}").as_bytes());
        field_bytes(&mut node, 4, b"Constant");
        field_bytes(&mut node, 5, &attr);
        field_bytes(&mut g, 1, &node);
    }
    onnx_model(&g, &[])
}

// ------------------------------------------------------------------------------------------
// safetensors

/// A safetensors file whose header is `json` (padded with spaces to 8) and data `data_len`
/// zero bytes.
fn safetensors_file(json: &str, data_len: usize) -> Vec<u8> {
    let mut header = json.as_bytes().to_vec();
    header.resize(header.len().next_multiple_of(8), b' ');
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(&header);
    f.resize(f.len() + data_len, 0);
    f
}

/// `n` zero-size tensors.
pub fn safetensors_zero_tensors(n: usize) -> Vec<u8> {
    let mut json = String::with_capacity(n * 60);
    json.push('{');
    for i in 0..n {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            "\"t{i:07}\":{{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}"
        ));
    }
    json.push('}');
    safetensors_file(&json, 0)
}

/// `__metadata__` with `n` keys.
pub fn safetensors_metadata(n: usize) -> Vec<u8> {
    let mut json = String::with_capacity(n * 16);
    json.push_str("{\"__metadata__\":{");
    for i in 0..n {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!("\"k{i:07}\":\"\""));
    }
    json.push_str("}}");
    safetensors_file(&json, 0)
}

/// `__metadata__` holding arrays nested `n` deep (refused: metadata values are strings).
pub fn safetensors_deep_json(n: usize) -> Vec<u8> {
    let json = format!("{{\"__metadata__\":{}{}}}", "[".repeat(n), "]".repeat(n));
    safetensors_file(&json, 0)
}

/// One tensor whose shape lists `n` ones: a rank of millions.
pub fn safetensors_huge_rank(n: usize) -> Vec<u8> {
    let mut json = String::with_capacity(n * 2 + 64);
    json.push_str("{\"a\":{\"dtype\":\"U8\",\"shape\":[");
    for i in 0..n {
        if i > 0 {
            json.push(',');
        }
        json.push('1');
    }
    json.push_str("],\"data_offsets\":[0,1]}}");
    safetensors_file(&json, 1)
}

/// One tensor entry with an unknown field holding a huge array.
pub fn safetensors_unknown_field(n: usize) -> Vec<u8> {
    let mut json = String::with_capacity(n * 2 + 64);
    json.push_str("{\"a\":{\"x\":[");
    for i in 0..n {
        if i > 0 {
            json.push(',');
        }
        json.push('0');
    }
    json.push_str("],\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}");
    safetensors_file(&json, 1)
}
