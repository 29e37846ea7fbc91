//! The format's fixed sizes and names: the length prefix before the header, the largest header
//! accepted, and the key of the file-level metadata. Apart from everything that reads them.

/// Largest header accepted, as the reference reader's `MAX_HEADER_SIZE`.
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// Bytes before the header: its length, a u64 little-endian.
pub const LEN_PREFIX: u64 = 8;

/// The key of the file-level metadata map.
pub const METADATA_KEY: &str = "__metadata__";
