//! Why a protobuf file is refused whole, shared by the protobuf formats' readers (TensorFlow,
//! PaddlePaddle): too large for one message, empty, refused by the wire pre-pass
//! ([`super::walk`]), or by prost; and the `OpenedFile` that says so (a LEAD when only
//! socair's bounds refused it, else a FAIL).

use super::walk::WireError;

/// The largest protobuf file decoded: protobuf's own limit for one message (2 GiB − 1).
pub const MAX_PROTO_LEN: u64 = i32::MAX as u64;

/// Why a protobuf file is refused whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// Bigger than protobuf allows for one message.
    #[error("the file is {len} bytes; a protobuf message is at most {MAX_PROTO_LEN} bytes, which protobuf's own parsers enforce")]
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
    /// Whether the file is refused for its size or what it would decode to (past socair's
    /// bounds), not for what is in it.
    pub fn is_bound(&self) -> bool {
        matches!(
            self,
            ProtoError::TooLarge { .. }
                | ProtoError::Wire {
                    error: WireError::TooCostly { .. },
                    ..
                }
        )
    }

    /// The file refused as a whole: `summary` for what is unsound in it, and a LEAD instead
    /// when only socair's bounds refuse it.
    pub fn refused(&self, format: &str, summary: &str) -> crate::api::OpenedFile {
        let (status, summary) = if self.is_bound() {
            (crate::api::RowStatus::Lead, crate::report::PAST_BOUNDS)
        } else {
            (crate::api::RowStatus::Fail, summary)
        };
        crate::report::refused_as(
            status,
            format,
            summary,
            self.to_string(),
            crate::api::Finding::new(status.finding_severity(), self.place(), self.to_string()),
        )
    }

    /// The place the error names.
    pub fn place(&self) -> String {
        match self {
            ProtoError::Wire { error, .. } => error.place(),
            _ => "file".into(),
        }
    }
}
