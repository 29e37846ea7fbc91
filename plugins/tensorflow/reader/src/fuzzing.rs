//! The property the fuzz target checks, shared with the test that replays every saved corpus
//! entry and every fixture (`tests/fuzz_regressions.rs`), so that CI checks exactly what the
//! fuzzer checked.

use bytes::Bytes;
use socair_plugin_api::OpenedFile;

/// Every reader of the plugin on arbitrary bytes: it returns (never panics), and every tensor
/// it locates in the file lies inside it (or in a named data shard, for the checkpoint
/// reader), holds exactly its shape's bytes when its element type has a width, and decoded
/// bytes total at most 4 times the input.
pub fn check_readers(data: &[u8]) {
    let len = data.len() as u64;
    let head = &data[..data.len().min(4096)];
    let _ = crate::looks_like_saved_model(head, len);
    let _ = crate::looks_like_fingerprint(head, len);
    let _ = crate::looks_like_keras_metadata(head, len);
    let _ = crate::looks_like_graph_def(head, len);
    let _ = crate::looks_like_meta_graph(head, len);
    let _ = crate::looks_like_meta_graph_text(head);
    let _ = crate::bundle::looks_like_index(head, len);
    let bytes = Bytes::copy_from_slice(data);
    for opened in [
        crate::savedmodel::read(bytes.clone()),
        crate::parts::fingerprint(bytes.clone()),
        crate::parts::keras_metadata(bytes.clone()),
        crate::graphdef::read(bytes.clone()),
        crate::metagraph::read(bytes.clone()),
        crate::bundle::read(bytes.clone()),
        crate::tflite::read(bytes.clone(), len),
    ] {
        check(&opened, len);
    }
}

fn check(opened: &OpenedFile, len: u64) {
    let mut inline = 0u64;
    for t in opened.tensors.iter() {
        let width = t
            .element_type
            .as_ref()
            .into_option()
            .and_then(|e| crate_width(e.as_str()));
        let elements = t.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        let total: u64 = match t.inline.as_ref().into_option() {
            Some(b) => {
                assert!(t.ranges.is_empty() && t.file.is_none(), "{}", t.name);
                inline += b.len() as u64;
                b.len() as u64
            }
            None => t.ranges.iter().map(|r| r.len).sum(),
        };
        if let (Some(w), Some(n)) = (width, elements) {
            assert_eq!(n * w, total, "{}: bytes do not hold the shape", t.name);
        }
        if t.file.is_none() {
            for r in t.ranges.iter() {
                assert!(r.offset + r.len <= len, "{}: range past the end", t.name);
            }
        } else {
            let f = t.file.as_ref().unwrap();
            assert!(f.starts_with("{stem}.data-"), "{f}");
        }
    }
    assert!(inline <= len.max(1), "{inline} bytes decoded");
}

fn crate_width(e: &str) -> Option<u64> {
    Some(match e {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E4M3FNUZ" | "F8_E5M2FNUZ" => 1,
        "I16" | "U16" | "F16" | "BF16" => 2,
        "I32" | "U32" | "F32" => 4,
        "I64" | "U64" | "F64" | "C64" => 8,
        _ => return None,
    })
}
