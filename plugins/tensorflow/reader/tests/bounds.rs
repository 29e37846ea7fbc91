//! The readers alone on hostile shapes of each format, each about 30 MB: `bounds-tensorflow`
//! (a program of `socair-tests`) opens the file with the reader that claims it, and its peak
//! RSS, CPU time and output are checked against 64 MiB + 8x the input, 5 s per 30 MB and 8x
//! the input (`socair_test_support::measure`).

use socair_plugin_kit::protobuf::write_varint as varint;
use socair_test_support::measure::{plugin_alone, TARGET};

fn field(number: u32, payload: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(number) << 3 | 2, out);
    varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// A SavedModel whose graph is `n` nodes, each `node` (bytes of a NodeDef).
fn saved_model_of_nodes(node: &[u8], n: usize) -> Vec<u8> {
    let mut graph = Vec::with_capacity(n * (node.len() + 3));
    for _ in 0..n {
        field(1, node, &mut graph);
    }
    let mut mg = Vec::new();
    field(2, &graph, &mut mg);
    let mut out = vec![0x08, 0x01];
    field(2, &mg, &mut out);
    out
}

#[test]
fn savedmodel_millions_of_empty_nodes() {
    // node { op: "A" }: 5 bytes of input, a whole NodeDef decoded.
    let n = TARGET / 5;
    plugin_alone(
        "tf-empty-nodes",
        "saved_model.pb",
        saved_model_of_nodes(b"\x12\x01A", n),
        "bounds-tensorflow",
    );
}

#[test]
fn savedmodel_a_hundred_thousand_file_ops() {
    // node { name: <200 bytes> op: "ReadFile" }: decoded within the budget, a FAIL finding
    // each, the first hundred kept.
    let mut node = Vec::new();
    field(1, &[b'r'; 200], &mut node);
    field(2, b"ReadFile", &mut node);
    let n = TARGET / (node.len() + 3);
    plugin_alone(
        "tf-file-ops",
        "saved_model.pb",
        saved_model_of_nodes(&node, n),
        "bounds-tensorflow",
    );
}

#[test]
fn savedmodel_constants_filled_from_one_value() {
    // node { name: "cN" op: "Const" attr { key: "value" value { tensor { dtype: DT_FLOAT
    // tensor_shape { dim { size: 1000 } } float_val: 0 } } } }: a splat of 4,000 bytes from a
    // few dozen, past the inline budget quickly.
    let mut shape = Vec::new();
    let mut dim = Vec::new();
    dim.push(0x08);
    varint(1000, &mut dim);
    field(2, &dim, &mut shape);
    let mut tensor = vec![0x08, 0x01];
    field(2, &shape, &mut tensor);
    tensor.extend([0x2d, 0, 0, 0, 0]);
    let mut value = Vec::new();
    field(8, &tensor, &mut value);
    let mut entry = Vec::new();
    field(1, b"value", &mut entry);
    field(2, &value, &mut entry);
    let mut node = Vec::new();
    field(1, &[b'c'; 1000], &mut node);
    field(2, b"Const", &mut node);
    field(5, &entry, &mut node);
    let n = TARGET / (node.len() + 4);
    plugin_alone(
        "tf-splat-constants",
        "saved_model.pb",
        saved_model_of_nodes(&node, n),
        "bounds-tensorflow",
    );
}

#[test]
fn savedmodel_deeply_nested_functions() {
    // attr values nesting lists of function attrs of lists...: bounded by the pre-pass depth.
    let mut inner: Vec<u8> = Vec::new();
    for _ in 0..200 {
        let mut list = Vec::new();
        // ListValue.func (9) { name "f" attr { key "x" value <inner> } }
        let mut entry = Vec::new();
        field(1, b"x", &mut entry);
        field(2, &inner, &mut entry);
        let mut nal = Vec::new();
        field(1, b"f", &mut nal);
        field(2, &entry, &mut nal);
        field(9, &nal, &mut list);
        inner = Vec::new();
        field(1, &list, &mut inner);
    }
    let mut node = Vec::new();
    field(2, b"NoOp", &mut node);
    let mut entry = Vec::new();
    field(1, b"a", &mut entry);
    field(2, &inner, &mut entry);
    field(5, &entry, &mut node);
    let n = TARGET / (node.len() + 4);
    plugin_alone(
        "tf-deep-attrs",
        "saved_model.pb",
        saved_model_of_nodes(&node, n.min(20_000)),
        "bounds-tensorflow",
    );
}

/// A checkpoint index of `n` entries of empty float tensors, as a table of one data block.
fn index_of_entries(n: usize) -> Vec<u8> {
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    entries.push((Vec::new(), vec![0x08, 0x01, 0x1a, 0x02, 0x08, 0x01]));
    for i in 0..n {
        // BundleEntryProto { dtype: DT_FLOAT, shape {} }
        entries.push((
            format!("v{i:09}").into_bytes(),
            vec![0x08, 0x01, 0x12, 0x00],
        ));
    }
    let refs: Vec<(&[u8], &[u8])> = entries.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    table(&refs)
}

/// A LevelDB table of one data block (restart interval 1), the empty meta block, the index.
fn table(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    use socair_tensorflow::crc32c::{crc32c, extend, mask};
    fn block(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut b = Vec::new();
        let mut restarts = Vec::new();
        for (k, v) in entries {
            restarts.push(b.len() as u32);
            varint(0, &mut b);
            varint(k.len() as u64, &mut b);
            varint(v.len() as u64, &mut b);
            b.extend_from_slice(k);
            b.extend_from_slice(v);
        }
        if restarts.is_empty() {
            restarts.push(0);
        }
        for r in &restarts {
            b.extend(r.to_le_bytes());
        }
        b.extend((restarts.len() as u32).to_le_bytes());
        b
    }
    let mut file = Vec::new();
    let push = |contents: &[u8], file: &mut Vec<u8>| {
        let at = file.len() as u64;
        file.extend_from_slice(contents);
        file.push(0);
        file.extend(mask(extend(crc32c(contents), &[0])).to_le_bytes());
        (at, contents.len() as u64)
    };
    let data = push(&block(entries), &mut file);
    let meta = push(&block(&[]), &mut file);
    let mut h = Vec::new();
    varint(data.0, &mut h);
    varint(data.1, &mut h);
    let last = entries.last().map_or(&b""[..], |e| e.0);
    let index = push(&block(&[(last, &h)]), &mut file);
    let mut footer = Vec::new();
    for (o, s) in [meta, index] {
        varint(o, &mut footer);
        varint(s, &mut footer);
    }
    footer.resize(40, 0);
    footer.extend(socair_tensorflow::sstable::MAGIC.to_le_bytes());
    file.extend(footer);
    file
}

#[test]
fn checkpoint_index_of_millions_of_entries() {
    plugin_alone(
        "tf-index-entries",
        "v.index",
        index_of_entries(TARGET / 22),
        "bounds-tensorflow",
    );
}

#[test]
fn tflite_millions_of_tensors() {
    // Model { version 3, subgraphs [ SubGraph { tensors [ n offsets to one empty Tensor ] } ] },
    // laid out by hand.
    let n = TARGET / 4 - 32;
    let t = 68 + 4 * n;
    let mut b = vec![0u8; t + 8];
    let put32 =
        |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let put16 =
        |b: &mut Vec<u8>, at: usize, v: u16| b[at..at + 2].copy_from_slice(&v.to_le_bytes());
    put32(&mut b, 0, 20);
    b[4..8].copy_from_slice(b"TFL3");
    // The model's vtable at 8: three slots, version at +4, subgraphs at +8.
    for (i, v) in [10u16, 12, 4, 0, 8].into_iter().enumerate() {
        put16(&mut b, 8 + 2 * i, v);
    }
    put32(&mut b, 20, 12); // soffset: vtable at 20 - 12
    put32(&mut b, 24, 3);
    put32(&mut b, 28, 32 - 28); // subgraphs at 32
    put32(&mut b, 32, 1);
    put32(&mut b, 36, 56 - 36); // the subgraph at 56
    for (i, v) in [6u16, 8, 4].into_iter().enumerate() {
        put16(&mut b, 48 + 2 * i, v);
    }
    put32(&mut b, 56, 8); // vtable at 48
    put32(&mut b, 60, 64 - 60); // tensors at 64
    put32(&mut b, 64, n as u32);
    for i in 0..n {
        let at = 68 + 4 * i;
        put32(&mut b, at, (t - at) as u32);
    }
    put32(&mut b, t, (-4i32) as u32); // vtable right after the table
    put16(&mut b, t + 4, 4);
    put16(&mut b, t + 6, 4);
    plugin_alone("tflite-many-tensors", "m.tflite", b, "bounds-tensorflow");
}
