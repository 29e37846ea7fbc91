//! The properties the fuzz target checks, shared with the regression test.

use crate::reader::parse;
use crate::writer::{inputs_of, plan};

/// The reader on arbitrary bytes: returns, never panics; what it accepts lies inside the
/// file, aligned, without overlaps; and the writer re-plans an accepted file's tensors and
/// metadata into a file the reader accepts with the same tensors and metadata.
pub fn check_reader(data: &[u8]) {
    let Ok(g) = parse(data, true) else {
        return;
    };
    let mut end = 0;
    for t in &g.tensors {
        assert_eq!(t.offset % g.alignment, 0);
        assert!(t.offset >= end, "overlap");
        if let Some(len) = t.byte_len {
            end = t.offset + len;
            assert!(g.data_start + end <= data.len() as u64, "past the end");
        } else {
            return; // nothing more to re-plan
        }
    }
    let (tensors, metadata) = inputs_of(&g).expect("every type is known");
    let p = plan(&tensors, &metadata).expect("an accepted file re-plans");
    let mut file = p.header.clone();
    file.resize(p.total_len as usize, 0);
    let again = parse(&file[..], true).expect("the writer's output parses");
    assert_eq!(again.tensors.len(), g.tensors.len());
    for (a, b) in again.tensors.iter().zip(&g.tensors) {
        assert_eq!((&a.name, &a.ne, a.type_id), (&b.name, &b.ne, b.type_id));
    }
    assert_eq!(again.metadata.len(), g.metadata.len());
    for ((ka, va), (kb, vb)) in again.metadata.iter().zip(&g.metadata) {
        assert_eq!(ka, kb);
        assert_eq!(va.json_text(), vb.json_text(), "{ka}");
    }
}
