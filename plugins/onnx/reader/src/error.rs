//! Why a file is refused whole.

use crate::wire::WireError;

/// The largest file decoded: protobuf's own limit for one message (2 GiB − 1).
pub const MAX_MODEL_LEN: u64 = i32::MAX as u64;

/// Why a file is refused whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OnnxError {
    /// Bigger than protobuf allows for one message.
    #[error("the file is {len} bytes; a protobuf message (an ONNX ModelProto) is at most {MAX_MODEL_LEN} bytes, so it is not decoded (larger models keep their weights in external data files)")]
    TooLarge {
        /// The file's length.
        len: u64,
    },
    /// Nothing in it.
    #[error("the file is empty: no ModelProto")]
    Empty,
    /// Refused by the wire pre-pass.
    #[error("not a sound protobuf ModelProto: {0}")]
    Wire(#[from] WireError),
    /// prost refused it (the pre-pass accepted it).
    #[error("prost cannot decode it as a ModelProto: {0}")]
    Decode(String),
    /// The pre-pass and prost disagree (a bug in one of them, never the file's fault).
    #[error("the wire pre-pass and prost disagree: {0}")]
    Inconsistent(String),
}

impl OnnxError {
    /// The place the error names.
    pub fn place(&self) -> String {
        match self {
            OnnxError::Wire(e) => e.place(),
            _ => "model".into(),
        }
    }
}
