//! The reader and writer against files the safetensors Python package (0.8.0) wrote.

use socair_safetensors::header::{parse_header, LEN_PREFIX};
use socair_safetensors::writer::{inputs_of, plan};
use std::path::PathBuf;

fn fixture(rel: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/safetensors")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Re-plans a reference file from what its header says and checks that the plan is that
/// file's header byte for byte, with every tensor at the same offset.
fn replan_matches(bytes: &[u8]) {
    let header = parse_header(bytes, bytes.len() as u64).expect("reference file parses");
    let (tensors, metadata) = inputs_of(&header);
    let p = plan(&tensors, &metadata).expect("plan");
    let data_start = header.data_start() as usize;
    assert_eq!(p.header.len(), data_start);
    assert_eq!(
        String::from_utf8_lossy(&p.header[8..]),
        String::from_utf8_lossy(&bytes[8..data_start])
    );
    assert_eq!(p.header, bytes[..data_start]);
    assert_eq!(p.total_len, bytes.len() as u64);
    for (i, offset) in p.placements {
        assert_eq!(
            offset,
            LEN_PREFIX + header.header_len + header.tensors[i].begin,
            "{}",
            header.tensors[i].name
        );
    }
}

#[test]
fn writer_reproduces_the_python_serializer_for_every_dtype() {
    replan_matches(&fixture("all-dtypes.safetensors"));
}

#[test]
fn writer_reproduces_transformers_shards() {
    for shard in 1..=4 {
        replan_matches(&fixture(&format!(
            "tiny-bert/model-0000{shard}-of-00004.safetensors"
        )));
    }
}

#[test]
fn all_twenty_python_dtypes_are_known() {
    let bytes = fixture("all-dtypes.safetensors");
    let header = parse_header(&bytes, bytes.len() as u64).unwrap();
    let mut dtypes: Vec<&str> = header.tensors.iter().map(|t| t.dtype.name()).collect();
    dtypes.sort_unstable();
    dtypes.dedup();
    assert_eq!(dtypes.len(), 20, "{dtypes:?}");
    assert_eq!(
        header.metadata,
        Some(vec![("format".to_owned(), "pt".to_owned())])
    );
}
