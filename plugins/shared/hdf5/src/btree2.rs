//! Version 2 B-trees (`H5B2cache.c`, `H5B2hdr.c`, HDF5 1.14 and 2.0): the header, internal
//! and leaf nodes, every record handed over in the tree's order. Used for the chunk index of
//! datasets with more than one unlimited dimension (records of type 10 and 11).
//!
//! Each node's checksum is checked; a node reached twice, a depth past the header's, or more
//! records than the header counts is an error naming the place.

use crate::io::{check_sum, Cursor, Source};
use crate::model::{Hdf5Error, UNDEFINED};
use socair_plugin_api::ReadAt;
use std::collections::HashSet;

/// Signature, version, type and checksum around every node (`H5B2_METADATA_PREFIX_SIZE`).
const PREFIX: u64 = 4 + 1 + 1 + 4;

/// Deeper trees than this are refused: a tree of 2-record nodes this deep holds more records
/// than any file (`H5B2_MAX_DEPTH`-like bound; the library itself stores depth in 16 bits).
const MAX_DEPTH: u16 = 64;

/// Bytes that encode a count of up to `n` (`H5VM_limit_enc_size`).
fn count_size(n: u64) -> u64 {
    u64::from(n.max(1).ilog2()) / 8 + 1
}

/// What reading a node needs per depth: its most records, and the size of the running count
/// of records below a child pointer of a node at that depth (`H5B2__hdr_init`).
struct Depths {
    max_records: Vec<u64>,
    cumulative_size: Vec<u64>,
    nrec_size: u64,
}

fn depths(
    node_size: u64,
    record: u64,
    depth: u16,
    offsets: u8,
    what: &str,
) -> Result<Depths, Hdf5Error> {
    let leaf = node_size.saturating_sub(PREFIX) / record;
    if leaf == 0 {
        return Err(Hdf5Error::new(
            what,
            format!("nodes of {node_size} bytes hold no record of {record} bytes"),
        ));
    }
    let nrec_size = count_size(leaf);
    let mut max_records = vec![leaf];
    let mut cumulative = vec![leaf];
    let mut cumulative_size = vec![0u64];
    for d in 1..=u64::from(depth) {
        let pointer = u64::from(offsets)
            + nrec_size
            + if d > 1 {
                cumulative_size[d as usize - 1]
            } else {
                0
            };
        let n = node_size.saturating_sub(PREFIX) / (record + pointer);
        if n == 0 {
            return Err(Hdf5Error::new(
                what,
                format!("internal nodes of {node_size} bytes hold no record at depth {d}"),
            ));
        }
        let below = n
            .saturating_add(1)
            .saturating_mul(cumulative[d as usize - 1])
            .saturating_add(n);
        max_records.push(n);
        cumulative.push(below);
        cumulative_size.push(count_size(below));
    }
    Ok(Depths {
        max_records,
        cumulative_size,
        nrec_size,
    })
}

/// What a walk calls with the tree's type and each record.
pub type EachRecord<'e> = dyn FnMut(u8, &[u8]) -> Result<(), Hdf5Error> + 'e;

/// Calls `each` with the tree's type and every record of the version 2 B-tree at `addr`, in
/// key order.
pub fn records<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    what: &str,
    each: &mut EachRecord<'_>,
) -> Result<(), Hdf5Error> {
    if addr == UNDEFINED {
        return Ok(());
    }
    let (o, l) = (src.offsets, src.lengths);
    let head_len = 4 + 2 + 4 + 2 + 2 + 2 + u64::from(o) + 2 + u64::from(l) + 4;
    let head = src.bytes(addr, head_len, what)?;
    check_sum(&head, &format!("{what}, B-tree header at address {addr}"))?;
    let mut c = Cursor::with(&head, o, l, what);
    if c.take(4)? != b"BTHD" || c.u8()? != 0 {
        return Err(Hdf5Error::new(
            what,
            format!("no version 2 B-tree header (BTHD, version 0) at address {addr}"),
        ));
    }
    let ty = c.u8()?;
    let node_size = u64::from(c.u32()?);
    let record = u64::from(c.u16()?);
    let depth = c.u16()?;
    c.skip(2)?; // split and merge percentages
    let root = c.addr()?;
    let root_records = u64::from(c.u16()?);
    let total = c.length()?;
    if record == 0 || depth > MAX_DEPTH || node_size > src.len.max(1 << 16) {
        return Err(Hdf5Error::new(
            what,
            format!(
                "a tree of depth {depth}, nodes of {node_size} bytes and records of {record} bytes"
            ),
        ));
    }
    if root == UNDEFINED || total == 0 {
        return Ok(());
    }
    let d = depths(node_size, record, depth, o, what)?;
    let mut seen = HashSet::new();
    let mut listed = 0u64;
    // Depth-first, children in order: each entry is a node to read, or a record of an
    // internal node to hand over between two children.
    enum Step {
        Node(u64, u16, u64),
        Record(Vec<u8>),
    }
    let mut stack = vec![Step::Node(root, depth, root_records)];
    while let Some(step) = stack.pop() {
        let (node, level, n) = match step {
            Step::Record(r) => {
                each(ty, &r)?;
                continue;
            }
            Step::Node(node, level, n) => (node, level, n),
        };
        let place = format!("{what}, B-tree node at address {node}");
        if !seen.insert(node) {
            return Err(Hdf5Error::new(
                place,
                "reached twice (a loop, or two parents)",
            ));
        }
        if n > d.max_records[usize::from(level)] {
            return Err(Hdf5Error::new(
                place,
                format!(
                    "{n} records where a node holds at most {}",
                    d.max_records[usize::from(level)]
                ),
            ));
        }
        listed = listed.saturating_add(n);
        if listed > total {
            return Err(Hdf5Error::new(
                place,
                format!("more records than the {total} its header counts"),
            ));
        }
        let pointer = if level > 0 {
            u64::from(o)
                + d.nrec_size
                + if level > 1 {
                    d.cumulative_size[usize::from(level) - 1]
                } else {
                    0
                }
        } else {
            0
        };
        let len = 6 + n * record + if level > 0 { (n + 1) * pointer } else { 0 } + 4;
        let b = src.bytes(node, len, &place)?;
        check_sum(&b, &place)?;
        let mut c = Cursor::with(&b, o, l, &place);
        let signature = if level > 0 { b"BTIN" } else { b"BTLF" };
        if c.take(4)? != signature || c.u8()? != 0 || c.u8()? != ty {
            return Err(Hdf5Error::new(
                place,
                format!(
                    "not a {} node of type {ty}",
                    String::from_utf8_lossy(signature)
                ),
            ));
        }
        let mut recs = Vec::with_capacity(n as usize);
        for _ in 0..n {
            recs.push(c.take(record as usize)?.to_vec());
        }
        if level == 0 {
            for r in &recs {
                each(ty, r)?;
            }
            continue;
        }
        let mut children = Vec::with_capacity(n as usize + 1);
        for _ in 0..=n {
            let child = c.addr()?;
            let count = c.uint(d.nrec_size as usize)?;
            if level > 1 {
                c.uint(d.cumulative_size[usize::from(level) - 1] as usize)?;
            }
            children.push((child, count));
        }
        // Pushed in reverse: child 0, record 0, child 1, … come off the stack in order.
        for (k, (child, count)) in children.into_iter().enumerate().rev() {
            stack.push(Step::Node(child, level - 1, count));
            if k > 0 {
                stack.push(Step::Record(std::mem::take(&mut recs[k - 1])));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_sizes_are_the_librarys() {
        assert_eq!(count_size(1), 1);
        assert_eq!(count_size(255), 1);
        assert_eq!(count_size(256), 2);
        assert_eq!(count_size(65_535), 2);
        assert_eq!(count_size(65_536), 3);
    }
}
