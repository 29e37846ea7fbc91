//! TensorFlow files met as members of an archive (a SavedModel zipped, a `.tflite` in a 7z):
//! the archive plugin opens each member's bytes and asks here whether one of this plugin's
//! readers claims it, by content (or by the names the host reads by: `saved_model.pb`,
//! `*.tflite`), and for that reader's verdict. A checkpoint's data shard
//! (`<prefix>.data-00000-of-00001`) holds only the raw bytes its index locates: it is data.
//!
//! Tensors of members are not fingerprinted (an archive's members are not the host's files);
//! what is judged is what the readers judge: every op, every structure.

use bytes::Bytes;
use socair_plugin_api::RowStatus;

/// What a reader made of a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The reader's format.
    pub format: String,
    /// The reader's verdict on it.
    pub status: RowStatus,
    /// Its summary.
    pub summary: String,
    /// Each finding: `(place, reason)`.
    pub findings: Vec<(String, String)>,
}

/// Whether `name` (a member's path) is a checkpoint data shard's name:
/// `<prefix>.data-<5 digits>-of-<5 digits>`.
pub fn is_data_shard(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    let Some((_, tail)) = base.rsplit_once(".data-") else {
        return false;
    };
    let b = tail.as_bytes();
    b.len() == 14
        && b[..5].iter().all(u8::is_ascii_digit)
        && &b[5..9] == b"-of-"
        && b[9..].iter().all(u8::is_ascii_digit)
}

/// The verdict of the reader that claims member `name` holding `bytes`, when one does.
pub fn read(name: &str, bytes: &[u8]) -> Option<Member> {
    let len = bytes.len() as u64;
    let head = &bytes[..bytes.len().min(4096)];
    let base = name.rsplit('/').next().unwrap_or(name);
    let data = Bytes::copy_from_slice(bytes);
    let opened = if crate::tflite::looks_like_tflite(head, len) || base.ends_with(".tflite") {
        crate::tflite::read(data, len)
    } else if crate::bundle::looks_like_index(head, len) {
        crate::bundle::read(data)
    } else if crate::looks_like_fingerprint(head, len) {
        crate::parts::fingerprint(data)
    } else if crate::looks_like_keras_metadata(head, len) {
        crate::parts::keras_metadata(data)
    } else if crate::looks_like_saved_model(head, len) || base == "saved_model.pb" {
        crate::savedmodel::read(data)
    } else if crate::looks_like_graph_def(head, len) {
        crate::graphdef::read(data)
    } else {
        return None;
    };
    let row = opened.rows.first()?;
    Some(Member {
        format: opened.format.to_string(),
        status: row.status,
        summary: row.summary.to_string(),
        findings: row
            .findings
            .iter()
            .map(|f| (f.place.to_string(), f.reason.to_string()))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_shards_by_name() {
        assert!(is_data_shard("m/variables/variables.data-00000-of-00001"));
        assert!(is_data_shard("ckpt-3.data-00001-of-00002"));
        assert!(!is_data_shard("x.data-0-of-1"));
        assert!(!is_data_shard("x.data"));
        assert!(read("notes.txt", b"hello").is_none());
    }
}
