//! Why a file is refused: one error per kind of refusal, each naming its place in the file.
//! Apart from the checks that raise them.

use super::limits::{MAX_HEADER_LEN, METADATA_KEY};

/// Why a file is not a sound safetensors file. Each variant names the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SafetensorsError {
    /// Fewer than the 8 bytes of the header length.
    #[error("file is {file_len} bytes long, shorter than the 8-byte header length")]
    TooShort {
        /// The file's length.
        file_len: u64,
    },
    /// The header length is over [`MAX_HEADER_LEN`].
    #[error("header length {header_len} (bytes 0..8) is over the limit of {MAX_HEADER_LEN} bytes")]
    HeaderTooLarge {
        /// The declared header length.
        header_len: u64,
    },
    /// The header runs past the end of the file.
    #[error(
        "header length {header_len} (bytes 0..8) runs past the end of the {file_len}-byte file"
    )]
    HeaderPastEnd {
        /// The declared header length.
        header_len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// The header is empty or does not start with `{`.
    #[error("header must start with '{{' at byte 8 (after any JSON whitespace), found {found}")]
    NotAnObject {
        /// What was found there.
        found: String,
    },
    /// The header is not UTF-8.
    #[error("header is not UTF-8: invalid byte at file offset {offset}")]
    NotUtf8 {
        /// File offset of the first invalid byte.
        offset: u64,
    },
    /// The header is not valid JSON.
    #[error("header is not valid JSON near file offset {offset}: {message}")]
    InvalidJson {
        /// File offset near the error.
        offset: u64,
        /// serde_json's description.
        message: String,
    },
    /// A key appears twice in one object.
    #[error(
        "header has a {message} near file offset {offset}; readers disagree on which one counts"
    )]
    DuplicateKey {
        /// File offset near the second occurrence.
        offset: u64,
        /// Which key.
        message: String,
    },
    /// Something other than JSON whitespace follows the JSON object.
    #[error("header padding byte at file offset {offset} is {byte:#04x}; only JSON whitespace (spaces, tabs, newlines, carriage returns) may follow the JSON object")]
    BadPadding {
        /// File offset of the byte.
        offset: u64,
        /// The byte.
        byte: u8,
    },
    /// `__metadata__` is not a string-to-string map.
    #[error("`__metadata__` must map strings to strings: {detail}")]
    BadMetadata {
        /// What is wrong.
        detail: String,
    },
    /// A tensor entry is malformed.
    #[error("tensor {name:?}: {detail}")]
    BadEntry {
        /// The tensor's name.
        name: String,
        /// What is wrong.
        detail: String,
    },
    /// Two tensors overlap, or the data has a hole.
    #[error("tensor {name:?}: data_offsets [{begin}, {end}] {detail}")]
    Layout {
        /// The tensor's name.
        name: String,
        /// Its first data offset.
        begin: u64,
        /// Its end data offset.
        end: u64,
        /// What is wrong.
        detail: String,
    },
    /// The data section is longer or shorter than the tensors cover.
    #[error("data section is {data_len} bytes but the tensors cover {covered}: {detail}")]
    Coverage {
        /// Bytes after the header.
        data_len: u64,
        /// Bytes the tensors account for.
        covered: u64,
        /// What that means.
        detail: &'static str,
    },
}

impl SafetensorsError {
    /// Where in the file the problem is, for a report finding.
    pub fn place(&self) -> String {
        match self {
            SafetensorsError::TooShort { .. }
            | SafetensorsError::HeaderTooLarge { .. }
            | SafetensorsError::HeaderPastEnd { .. } => "bytes 0..8 (header length)".into(),
            SafetensorsError::NotAnObject { .. } => "byte 8 (header start)".into(),
            SafetensorsError::NotUtf8 { offset }
            | SafetensorsError::InvalidJson { offset, .. }
            | SafetensorsError::DuplicateKey { offset, .. }
            | SafetensorsError::BadPadding { offset, .. } => format!("byte {offset} (header)"),
            SafetensorsError::BadMetadata { .. } => format!("header key {METADATA_KEY:?}"),
            SafetensorsError::BadEntry { name, .. } | SafetensorsError::Layout { name, .. } => {
                format!("header key {name:?}")
            }
            SafetensorsError::Coverage { .. } => "data section".into(),
        }
    }
}
