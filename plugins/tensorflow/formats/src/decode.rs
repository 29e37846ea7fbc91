//! A protobuf file decoded as TensorFlow reads it: the kit's wire pre-pass by TensorFlow
//! 2.21's field table ([`crate::proto::schema`]) first, which refuses what is malformed and
//! bounds what decoding allocates, then prost, from a `Bytes` buffer so that every `bytes`
//! field (a Const's `tensor_content`) is a zero-copy slice of the file whose offset is known.

use crate::proto::schema::{MAP_ENTRIES, MESSAGES};
use bytes::Bytes;
use socair_plugin_kit::protobuf::schema::Field;
use socair_plugin_kit::protobuf::walk::{self, Core, Dialect, Visitor, Walked, WireError};

/// The largest protobuf file decoded: protobuf's own limit for one message (2 GiB − 1).
pub const MAX_PROTO_LEN: u64 = i32::MAX as u64;

/// Why a protobuf file is refused whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// Bigger than protobuf allows for one message.
    #[error("the file is {len} bytes; a protobuf message is at most {MAX_PROTO_LEN} bytes, which TensorFlow's own parser enforces")]
    TooLarge {
        /// The file's length.
        len: u64,
    },
    /// Nothing in it.
    #[error("the file is empty")]
    Empty,
    /// Refused by the wire pre-pass.
    #[error("not a sound protobuf {message}: {error}")]
    Wire {
        /// The root message.
        message: &'static str,
        /// What the walk refused.
        error: WireError,
    },
    /// prost refused it (the pre-pass accepted it).
    #[error("prost cannot decode it as a {message}: {error}")]
    Decode {
        /// The root message.
        message: &'static str,
        /// prost's message.
        error: String,
    },
}

impl ProtoError {
    /// The place the error names.
    pub fn place(&self) -> String {
        match self {
            ProtoError::Wire { error, .. } => error.place(),
            _ => "file".into(),
        }
    }
}

/// The walk's part for TensorFlow: nothing to record beyond the kit's own checks (tensor
/// bytes are located from prost's zero-copy slices).
struct Plain;

impl Visitor for Plain {
    type Role = ();

    /// A map's entries decode into a `BTreeMap`, whose first entry allocates a whole leaf of
    /// eleven slots (std's `B = 6`) and whose later ones at most a half-full node's share: the
    /// first costs twelve entries, each later one three.
    fn message_cost(&self, _field: &'static Field, child: usize, index: u64, default: u64) -> u64 {
        if MAP_ENTRIES.binary_search(&child).is_err() {
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
    let dialect = Dialect {
        messages: MESSAGES,
        schema: "TensorFlow 2.21's schema",
        versioned: "TensorFlow 2.21's schema",
        undefined_kind: "fields TensorFlow 2.21's schema does not define",
        root: place,
    };
    let walked = walk::walk(data, dialect, root, (), &mut Plain)
        .map_err(|error| ProtoError::Wire { message, error })?;
    let m = M::decode(data.clone()).map_err(|e| ProtoError::Decode {
        message,
        error: e.to_string(),
    })?;
    Ok((m, walked))
}

/// Where `part` (a zero-copy slice of `data`) starts in it, when it is one.
pub fn offset_in(data: &Bytes, part: &Bytes) -> Option<u64> {
    let base = data.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    let end = at.checked_add(part.len())?;
    (at >= base && end <= base + data.len()).then(|| (at - base) as u64)
}
