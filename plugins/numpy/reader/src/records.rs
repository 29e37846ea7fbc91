//! A file of consecutive `.npy` records: what equinox's `tree_serialise_leaves` writes, and
//! `tree_deserialise_leaves` reads back record by record (equinox 0.13.8,
//! `equinox/_serialisation.py`: `default_serialise_filter_spec` calls `jnp.save(f, x)` or
//! `np.save(f, x)` for each array leaf, and for each Python or NumPy scalar leaf, into the one
//! open file, in the pytree's leaf order; `default_deserialise_filter_spec` calls
//! `jnp.load(f)`/`np.load(f)` on the same file object for each leaf, so that each load starts
//! where the previous record ended). No name is stored: the leaves are named by their index
//! (`0`, `1`, …), the order the model's pytree gives them.
//!
//! A record's end is where its data ends (`shape` × itemsize bytes after its header, as
//! `read_array` reads it with `numpy.fromfile`/`readinto`); the next record starts there
//! with the `.npy` magic. Splitting stops at the first record that is not followed by the
//! magic, or whose length the header cannot give (an object array, whose pickle runs to its
//! STOP, and a dtype of unknown size): that record runs to the end of the file and is judged
//! as the last one, its trailing bytes refused as for any `.npy` file. A plain `.npy` file is
//! one record. `np.load` of such a file reads its first record only; the structure row says
//! so. This module finds the records' windows; `crate::read` reads each as a `.npy` file.

use crate::npy::{self, Kind, MAGIC};
use crate::span::Span;
use socair_plugin_api::ReadAt;

/// The most records split off (each is at least a header's 10 bytes; this bounds the work
/// and the tensors listed well below what the file's size allows).
pub const MAX_RECORDS: usize = 1 << 20;

/// The windows `(start, len)` of the file's records, in order; one window, the whole file,
/// for a plain `.npy` file.
pub fn windows(file: &Span<'_>) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut base = 0u64;
    while out.len() + 1 < MAX_RECORDS {
        let Some(end) = record_end(file, base) else {
            break;
        };
        out.push((base, end - base));
        base = end;
    }
    out.push((base, file.len.saturating_sub(base)));
    out
}

/// Where the record at `base` ends when another record starts there, before the file's end.
fn record_end(file: &Span<'_>, base: u64) -> Option<u64> {
    let h = npy::read_header(file, base, file.len.checked_sub(base)?).ok()?;
    let itemsize = match npy::classify(&h.descr) {
        Kind::Element { itemsize, .. }
        | Kind::Other {
            itemsize: Some(itemsize),
            ..
        } => itemsize,
        _ => return None,
    };
    let end = h
        .data_offset
        .checked_add(npy::data_len(&h.shape, itemsize)?)
        .filter(|&e| e < file.len)?;
    let mut magic = [0u8; 6];
    file.read_exact_at(end, &mut magic).ok()?;
    (&magic == MAGIC).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f4(shape: &str, n: usize) -> Vec<u8> {
        crate::npy::tests::npy(
            1,
            &format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"),
            &vec![7u8; 4 * n],
        )
    }

    #[test]
    fn records_split_where_the_next_magic_starts() {
        let (a, b) = (f4("(2, 3)", 6), f4("()", 1));
        let (la, lb) = (a.len() as u64, b.len() as u64);
        let file = [a.clone(), b.clone(), a.clone()].concat();
        assert_eq!(
            windows(&Span::file_bytes(&file)),
            [(0, la), (la, lb), (la + lb, la)]
        );
        // Junk after a record: no split, the one window is the whole file.
        let junk = [a.clone(), b"junk".to_vec()].concat();
        assert_eq!(windows(&Span::file_bytes(&junk)), [(0, la + 4)]);
        assert_eq!(windows(&Span::file_bytes(&a)), [(0, la)]);
        assert_eq!(windows(&Span::file_bytes(b"")), [(0, 0)]);
    }
}
