//! A protobuf message decoded as Paddle reads it: the kit's wire pre-pass by Paddle 3.3.1's
//! field table ([`crate::schema`]) first, which refuses what is malformed and bounds what
//! decoding allocates, then prost.

use crate::schema::MESSAGES;
use socair_plugin_kit::protobuf::schema::Field;
use socair_plugin_kit::protobuf::walk::{self, Core, Dialect, Visitor, Walked, WireError};

pub use socair_plugin_kit::protobuf::error::{ProtoError, MAX_PROTO_LEN};

struct Plain;

impl Visitor for Plain {
    type Role = ();

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
/// names the root in findings.
pub fn decode<M: prost::Message + Default>(
    data: &[u8],
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
        schema: "Paddle 3.3.1's framework.proto",
        versioned: "Paddle 3.3.1's framework.proto",
        undefined_kind: "fields Paddle 3.3.1's framework.proto does not define",
        root: place,
        // A program decodes to many small messages, as a TensorFlow graph does (each the size
        // of its prost struct, a repeated field's growth doubled, text at its length): 7x the
        // input by that estimate, with the input, stays within 64 MiB + 8x.
        overhead_factor: 7,
    };
    let walked = walk::walk(data, dialect, root, (), &mut Plain)
        .map_err(|error| ProtoError::Wire { message, error })?;
    let m = M::decode(data).map_err(|e| ProtoError::Decode {
        message,
        error: e.to_string(),
    })?;
    Ok((m, walked))
}
