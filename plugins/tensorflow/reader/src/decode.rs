//! A protobuf file decoded as TensorFlow reads it: the kit's wire pre-pass by TensorFlow
//! 2.21's field table ([`crate::proto::schema`]) first, which refuses what is malformed and
//! bounds what decoding allocates, then prost, from a `Bytes` buffer so that every `bytes`
//! field (a Const's `tensor_content`) is a zero-copy slice of the file whose offset is known.

use crate::proto::schema::{MAP_ENTRIES, MESSAGES};
use bytes::Bytes;
use socair_plugin_kit::protobuf::schema::Field;
use socair_plugin_kit::protobuf::walk::{self, Core, Dialect, Visitor, Walked, WireError};

pub use socair_plugin_kit::protobuf::error::{ProtoError, MAX_PROTO_LEN};

/// The walk's part for TensorFlow: nothing to record beyond the kit's own checks (tensor
/// bytes are located from prost's zero-copy slices). `tensorflow`: the table walked is
/// TensorFlow's [`MESSAGES`], whose map entries cost what a `BTreeMap` allocates.
struct Plain {
    tensorflow: bool,
}

impl Visitor for Plain {
    type Role = ();

    /// A map's entries decode into a `BTreeMap`, whose first entry allocates a whole leaf of
    /// eleven slots (std's `B = 6`) and whose later ones at most a half-full node's share: the
    /// first costs twelve entries, each later one three.
    fn message_cost(&self, _field: &'static Field, child: usize, index: u64, default: u64) -> u64 {
        if !self.tensorflow || MAP_ENTRIES.binary_search(&child).is_err() {
            return default;
        }
        let entry = MESSAGES.get(child).map_or(0, |m| m.size as u64);
        if index == 0 {
            entry * 12
        } else {
            entry * 3
        }
    }

    fn enter(
        &mut self,
        _core: &mut Core<'_>,
        _parent: (),
        _field: &'static Field,
        _child: usize,
        _index: u64,
        _tag_at: usize,
    ) -> Result<(), WireError> {
        Ok(())
    }
}

/// Walks `data` as message `root` (an index in [`MESSAGES`]) and decodes it as `M`; `place`
/// names the root in findings (`saved_model`, `graph`).
pub fn decode<M: prost::Message + Default>(
    data: &Bytes,
    root: usize,
    place: &'static str,
) -> Result<(M, Walked), ProtoError> {
    let message = MESSAGES.get(root).map_or("message", |m| m.name);
    let len = data.len() as u64;
    if len == 0 {
        return Err(ProtoError::Empty);
    }
    if len > MAX_PROTO_LEN {
        return Err(ProtoError::TooLarge { len });
    }
    let walked = walk_as(data, MESSAGES, root, place)
        .map_err(|error| ProtoError::Wire { message, error })?;
    let m = M::decode(data.clone()).map_err(|e| ProtoError::Decode {
        message,
        error: e.to_string(),
    })?;
    Ok((m, walked))
}

/// Walks `data` as message `root` of `messages` (TensorFlow's [`MESSAGES`], or a table of
/// its own for a message outside them), with TensorFlow's dialect and nothing decoded: whether
/// a protobuf parser of that schema accepts it (an empty buffer is an empty message, as for
/// every protobuf parser), and what it holds that the schema does not define.
pub fn walk_as(
    data: &[u8],
    messages: &'static [socair_plugin_kit::protobuf::schema::MessageSchema],
    root: usize,
    place: &'static str,
) -> Result<Walked, WireError> {
    let dialect = Dialect {
        messages,
        schema: "TensorFlow 2.21's schema",
        versioned: "TensorFlow 2.21's schema",
        undefined_kind: "fields TensorFlow 2.21's schema does not define",
        root: place,
        // TensorFlow's graphs decode to many small messages: the 6.5 MB saved_model.pb
        // tf-keras 2.21 writes for a bidirectional LSTM decodes to 75.7 MB (11.5x, measured
        // from the process's resident set), which the walk estimates at 107 MB (16.3x: every
        // message at its struct's size, a repeated field's growth doubled, a map's first
        // entry a whole tree node). 7x the input by that estimate, with the inline values'
        // 1x (outcome.rs) and the input, is about 6.5x in fact: within 64 MiB + 8x.
        overhead_factor: 7,
    };
    let tensorflow = std::ptr::eq(messages, MESSAGES);
    walk::walk(data, dialect, root, (), &mut Plain { tensorflow })
}

/// Where `part` (a zero-copy slice of `data`) starts in it, when it is one.
pub fn offset_in(data: &Bytes, part: &Bytes) -> Option<u64> {
    let base = data.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    let end = at.checked_add(part.len())?;
    (at >= base && end <= base + data.len()).then(|| (at - base) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use socair_plugin_api::RowStatus;

    /// A file past socair's decoding bounds is a LEAD (nothing checked, no evidence against
    /// it); a malformed one is a FAIL. (A 6.5 MB saved_model.pb tf-keras 2.21 wrote for a
    /// bidirectional LSTM was a FAIL under the ONNX dialect's 2x bound.)
    #[test]
    fn bounds_are_a_lead_and_malformed_files_a_fail() {
        let costly = ProtoError::Wire {
            message: "SavedModel",
            error: WireError::TooCostly {
                offset: 9,
                place: "meta_graphs[0]".into(),
                limit: 10,
                what: "messages".into(),
            },
        };
        let malformed = ProtoError::Wire {
            message: "SavedModel",
            error: WireError::Malformed {
                offset: 9,
                place: "meta_graphs[0]".into(),
                what: "a truncated varint".into(),
            },
        };
        for (e, status) in [
            (costly, RowStatus::Lead),
            (ProtoError::TooLarge { len: 1 << 40 }, RowStatus::Lead),
            (malformed, RowStatus::Fail),
        ] {
            let o = e.refused("savedmodel", "not a sound SavedModel");
            assert_eq!(o.rows[0].status, status, "{e}");
            assert!(o.rows[0].findings[0].reason.contains(&e.to_string()));
        }
    }
}
