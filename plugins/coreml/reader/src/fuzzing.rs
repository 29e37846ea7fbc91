//! The property the fuzz target checks, shared with the test that replays every saved corpus
//! entry (`tests/fuzz_regressions.rs`), so that CI checks exactly what the fuzzer checked.

use socair_plugin_api::OpenedFile;

/// The readers on arbitrary bytes: they return (never panic); every tensor located in the
/// model file lies inside it; a tensor of fixed-width elements holds exactly its shape's bytes;
/// a tensor in another file names `weights/<name>`; decoded bytes are at most the input's size;
/// every read has its one row.
pub fn check_reader(data: &[u8]) {
    let len = data.len() as u64;
    let _ = crate::claim::looks_like_mlmodel(data, len);
    let _ = crate::blob::looks_like_weights(data, len);
    let _ = crate::manifest::looks_like_manifest(data, len);
    check_opened(&crate::model::read(data), len);
    check_opened(&crate::blob::read(data, true), len);
    check_opened(&crate::manifest::read(data), len);
}

fn width(element_type: &str) -> Option<u64> {
    Some(match element_type {
        "BOOL" | "U8" | "I8" | "F8_E4M3" | "F8_E5M2" => 1,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "F32" | "I32" | "U32" => 4,
        "F64" | "I64" | "U64" => 8,
        _ => return None,
    })
}

fn check_opened(o: &OpenedFile, len: u64) {
    assert_eq!(o.rows.len(), 1);
    let mut inline = 0u64;
    for t in o.tensors.iter() {
        let total: u64 = match t.inline.as_ref().into_option() {
            Some(b) => {
                assert!(t.ranges.is_empty());
                inline += b.len() as u64;
                b.len() as u64
            }
            None => t.ranges.iter().map(|r| r.len).sum(),
        };
        assert!(total > 0, "{}", t.name);
        if let Some(w) = t.element_type.as_ref().into_option().and_then(|e| width(e)) {
            let n = t.shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
            assert_eq!(n.and_then(|n| n.checked_mul(w)), Some(total), "{}", t.name);
        }
        match t.file.as_ref().into_option() {
            None => {
                for r in t.ranges.iter() {
                    assert!(
                        r.offset.checked_add(r.len).is_some_and(|e| e <= len),
                        "{}",
                        t.name
                    );
                }
            }
            Some(f) => {
                let name = f.as_str().strip_prefix("weights/").unwrap_or("");
                assert!(
                    !name.is_empty() && !name.contains('/') && name != "..",
                    "{f}"
                );
            }
        }
    }
    assert!(inline <= len, "{inline} bytes decoded from {len}");
}
