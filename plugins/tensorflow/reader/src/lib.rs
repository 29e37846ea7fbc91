//! TensorFlow's files read and judged without TensorFlow: the formats of socair's
//! tensorflow plugin (`plugins/tensorflow`, the cdylib that exports them), in a library of
//! their own (the host reads TensorFlow files it finds in archives with the same readers).
//!
//! * SavedModels' `saved_model.pb` ([`savedmodel`]): every op of every meta graph and of every
//!   library function judged against TensorFlow 2.21.0's op registry ([`ops`], [`graph`]),
//!   with what runs at load time; the directory's `fingerprint.pb` and `keras_metadata.pb`
//!   ([`parts`]);
//! * checkpoint indexes (`*.index`, a SavedModel's `variables/variables.index`): the table read
//!   strictly ([`sstable`]), every variable located in its data shard ([`bundle`]);
//! * frozen `GraphDef`s (`.pb`): their ops judged, their `Const` nodes their weights
//!   ([`graphdef`]);
//! * TF1 `.meta` files (a bare `MetaGraphDef`, beside a checkpoint): judged as
//!   `tf.compat.v1.train.import_meta_graph` loads them, by the SavedModel reader's code
//!   ([`metagraph`], their collections by [`collection_defs`]);
//! * TFLite FlatBuffers ([`tflite`]).
//!
//! The protobuf files are walked by the kit's wire pre-pass before prost decodes them
//! ([`decode`]); the schemas are TensorFlow 2.21.0's own ([`proto`]). protobuf has no magic:
//! each reader claims a file only when its first bytes parse as its root message with the
//! layout TensorFlow writes (each `looks_like_*` below).

pub mod bindings;
pub mod bundle;
pub mod collection_defs;
pub mod crc32c;
pub mod decode;
pub mod dtype;
#[doc(hidden)]
pub mod fuzzing;
pub mod graph;
pub mod graphdef;
pub mod metagraph;
pub mod ops;
pub mod outcome;
pub mod parts;
pub mod proto;
pub mod savedmodel;
pub mod sstable;
pub mod tensor;
pub mod tflite;

use proto::schema::{
    FINGERPRINT_DEF, GRAPH_DEF, MESSAGES, META_GRAPH_DEF, SAVED_METADATA, SAVED_MODEL,
};
use socair_plugin_kit::protobuf::head::fields;

/// Whether `head` starts like a `saved_model.pb`: `saved_model_schema_version` (field 1, a
/// varint TensorFlow sets to 1) first, then a `meta_graphs` message (field 2), and everything
/// the head holds a well-formed prefix of a `SavedModel`, the meta graph's fields included.
/// An ONNX ModelProto also starts with field 1 (`ir_version`), but its field 2 is the
/// `producer_name` string.
pub fn looks_like_saved_model(head: &[u8], file_len: u64) -> bool {
    let Some(f) = fields(head, file_len, MESSAGES, SAVED_MODEL) else {
        return false;
    };
    matches!(
        f.as_slice(),
        [first, second, ..] if first.number == 1
            && first.varint.is_some_and(|v| (1..16).contains(&v))
            && second.number == 2
            && second.len.is_some_and(|l| l >= 2)
    )
}

/// Whether `head` is a whole `fingerprint.pb` (a `FingerprintDef` of a few dozen bytes): its
/// hashes (fields 1 to 5, varints) in order, at least three of them, and nothing undefined.
pub fn looks_like_fingerprint(head: &[u8], file_len: u64) -> bool {
    if file_len > 1024 || head.len() as u64 != file_len {
        return false;
    }
    let Some(f) = fields(head, file_len, MESSAGES, FINGERPRINT_DEF) else {
        return false;
    };
    let hashes = f
        .iter()
        .filter(|x| (1..=5).contains(&x.number) && x.varint.is_some())
        .count();
    hashes >= 3
        && f.first().is_some_and(|x| x.number == 1)
        && f.windows(2)
            .all(|w| w[0].number < w[1].number || w[1].number == 7)
        && f.iter().all(|x| x.whole)
}

/// Whether `head` starts like a `keras_metadata.pb`: nothing but `nodes` (field 1, each a
/// `SavedObject`, whose fields the head check walks), at least one.
pub fn looks_like_keras_metadata(head: &[u8], file_len: u64) -> bool {
    let Some(f) = fields(head, file_len, MESSAGES, SAVED_METADATA) else {
        return false;
    };
    !f.is_empty()
        && f.iter().all(|x| x.number == 1 && x.len.is_some())
        && head.get(2..).is_some_and(|rest| {
            // The first node's first field: node_id (varint) or node_path (a string).
            let mut at = 0;
            socair_plugin_kit::protobuf::read_varint(rest, &mut at, rest.len()).is_some()
                && matches!(rest.get(at), Some(0x10 | 0x1a))
        })
}

/// Whether `head` starts like a binary `GraphDef`: its first field a `node` (field 1) whose
/// first fields are its name and its op (fields 1 and 2), both short printable text, and
/// everything the head holds a well-formed prefix of a `GraphDef`.
pub fn looks_like_graph_def(head: &[u8], file_len: u64) -> bool {
    use socair_plugin_kit::protobuf::read_varint;
    if head.first() != Some(&0x0a) || fields(head, file_len, MESSAGES, GRAPH_DEF).is_none() {
        return false;
    }
    let mut at = 1;
    if read_varint(head, &mut at, head.len()).is_none() {
        return false;
    }
    let mut text = |tag: u8| -> bool {
        if head.get(at) != Some(&tag) {
            return false;
        }
        at += 1;
        let Some(len) = read_varint(head, &mut at, head.len()) else {
            return false;
        };
        let Some(end) = usize::try_from(len).ok().and_then(|l| at.checked_add(l)) else {
            return false;
        };
        let ok = len > 0
            && len <= 1024
            && head
                .get(at..end)
                .is_some_and(|t| t.iter().all(|&c| (0x20..0x7f).contains(&c)));
        at = end;
        ok
    };
    text(0x0a) && text(0x12)
}

/// Whether `head` opens a `MetaGraphDef` in protobuf's text format, as
/// `tf.compat.v1.train.export_meta_graph(as_text=True)` writes one (`meta_info_def {`): past
/// white space and `#` comments, one of the message's field names, then `{`, `<` or `:`.
/// TensorFlow reads a `.meta` file in the text format when it does not parse in the wire
/// format (`meta_graph.read_meta_graph_file`).
pub fn looks_like_meta_graph_text(head: &[u8]) -> bool {
    let mut at = 0;
    loop {
        match head.get(at) {
            Some(b'#') => {
                while head.get(at).is_some_and(|&c| c != b'\n') {
                    at += 1;
                }
            }
            Some(c) if c.is_ascii_whitespace() => at += 1,
            _ => break,
        }
    }
    let start = at;
    while head
        .get(at)
        .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
    {
        at += 1;
    }
    let name = &head[start..at];
    let named = MESSAGES[META_GRAPH_DEF]
        .fields
        .iter()
        .any(|f| f.name.as_bytes() == name);
    while head.get(at).is_some_and(|c| c.is_ascii_whitespace()) {
        at += 1;
    }
    named && matches!(head.get(at), Some(b'{' | b'<' | b':'))
}

/// Whether `head` starts like a `.meta` file (a bare `MetaGraphDef`): `meta_info_def` (field 1,
/// a message of at least two bytes) first, every field in the order of its number as
/// TensorFlow serializes them, and everything the head holds a well-formed prefix of a
/// `MetaGraphDef` (its `MetaInfoDef`'s fields and their `OpDef`s included); a file the head
/// holds whole has a `graph_def` (field 2). A `GraphDef` also starts with field 1, whose
/// `NodeDef` does not parse as a `MetaInfoDef` (its op name, field 2, is no `OpList`); a
/// `SavedModel` starts with a varint.
pub fn looks_like_meta_graph(head: &[u8], file_len: u64) -> bool {
    let Some(f) = fields(head, file_len, MESSAGES, META_GRAPH_DEF) else {
        return false;
    };
    let whole = head.len() as u64 == file_len;
    matches!(f.first(), Some(first) if first.number == 1 && first.len.is_some_and(|l| l >= 2))
        && f.windows(2).all(|w| w[0].number <= w[1].number)
        && (!whole || f.iter().any(|x| x.number == 2))
}
