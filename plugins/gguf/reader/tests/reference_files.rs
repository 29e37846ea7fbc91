//! The reader and writer against files gguf-py 0.19 wrote (fixtures/gguf/make_fixtures.py).

use socair_gguf::reader::parse;
use socair_gguf::writer::{inputs_of, plan};
use std::path::PathBuf;

fn valid_files() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/gguf/valid");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(out.len() >= 7);
    out
}

/// Re-plans each file from what the reader found (metadata in file order, tensors in file
/// order) and checks that the header is gguf-py's byte for byte, every tensor lands at the
/// same offset, and the file has the same length: the writer lays files out as GGUFWriter.
#[test]
fn writer_reproduces_gguf_py_layouts() {
    for (name, bytes) in valid_files() {
        let g = parse(&bytes[..], true).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (tensors, metadata) =
            inputs_of(&g).unwrap_or_else(|| panic!("{name}: a type that cannot be sized"));
        let p = plan(&tensors, &metadata).unwrap_or_else(|e| panic!("{name}: {e}"));
        // With no tensors ggml's data section starts right after the header; gguf-py (and
        // this writer) still pad the header to the alignment.
        let header_len = if g.tensors.is_empty() {
            bytes.len() as u64
        } else {
            g.data_start
        };
        assert_eq!(p.header.len() as u64, header_len, "{name}");
        assert_eq!(
            p.header[..],
            bytes[..header_len as usize],
            "{name}: header bytes"
        );
        assert_eq!(p.total_len, bytes.len() as u64, "{name}: length");
        for (i, offset) in p.placements {
            assert_eq!(
                offset,
                g.data_start + g.tensors[i].offset,
                "{name}: {}",
                g.tensors[i].name
            );
        }
    }
}
