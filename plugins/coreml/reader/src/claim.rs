//! Whether a file is a Core ML model by its first bytes: protobuf has no magic number, so the
//! claim rests on Core ML's own field numbers. coremltools writes `specificationVersion`
//! (field 1, a varint) first; every field the head shows must then be one
//! `CoreML.Specification.Model` defines, with its wire type, every message inside it parsing
//! as its type to the depth the head holds (the kit's [`head`] check), and the model's type
//! (a member of the oneof `Type`, fields 200 and up) must be among them, unless the head ends
//! before the file does (a long description comes first).

use crate::proto::schema::{MESSAGES, MODEL, ONEOFS};
use socair_plugin_kit::protobuf::head;

/// The highest `specificationVersion` claimed (coremltools 9.0 writes 1 to 10).
pub const MAX_VERSION: u64 = 64;

/// Whether `head` (the first bytes of a file of `file_len` bytes) starts as a Core ML model.
pub fn looks_like_mlmodel(head: &[u8], file_len: u64) -> bool {
    if head.first() != Some(&0x08) {
        return false;
    }
    let Some(fields) = head::fields(head, file_len, MESSAGES, MODEL) else {
        return false;
    };
    let types = ONEOFS
        .get(MODEL)
        .and_then(|g| g.first())
        .copied()
        .unwrap_or(&[]);
    let version = fields.first().and_then(|f| f.varint);
    if !version.is_some_and(|v| (1..=MAX_VERSION).contains(&v)) || fields.len() < 2 {
        return false;
    }
    let typed = fields
        .iter()
        .any(|f| types.binary_search(&f.number).is_ok());
    typed || (head.len() as u64) < file_len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_and_a_type_are_claimed_other_protobufs_are_not() {
        // specificationVersion 4, identity {} (field 900).
        let m = [0x08, 0x04, 0xa2, 0x38, 0x00];
        assert!(looks_like_mlmodel(&m, m.len() as u64));
        // No type, whole: not claimed; cut by the head: claimed.
        let d = [0x08, 0x04, 0x12, 0x00];
        assert!(!looks_like_mlmodel(&d, 4));
        assert!(looks_like_mlmodel(&d, 5000));
        // ONNX: ir_version then producer_name "pytorch", which is no ModelDescription.
        let mut onnx = vec![0x08, 0x07, 0x12, 0x07];
        onnx.extend(b"pytorch");
        assert!(!looks_like_mlmodel(&onnx, onnx.len() as u64));
        // Version 0 or a field Model does not define.
        assert!(!looks_like_mlmodel(&[0x08, 0x00, 0xa2, 0x38, 0x00], 5));
        assert!(!looks_like_mlmodel(&[0x08, 0x04, 0x18, 0x01], 4));
    }
}
