//! The shared-message table (libhdf5 1.14 and 2.0, `H5SM*.c`): where a file made with
//! `H5Pset_shared_mesg_nindexes` keeps one copy of the datatypes, dataspaces, fill values,
//! filter pipelines and attributes many objects share. The superblock extension's message
//! (`H5O__shmesg_decode`, `H5Oshmesg.c`: version, table address, number of indexes) points at
//! the table (`H5SM__cache_table_deserialize`, `H5SMcache.c`: "SMTB", one header per index,
//! a checksum); each index header names the message types it holds and the fractal heap they
//! are stored in. An object header's shared message of type `H5O_SHARE_TYPE_SOHM` holds the
//! heap ID of its bytes in that heap (`H5O__shared_decode`, `H5Oshared.c`), which is all the
//! library reads to get them (`H5SM_get_fheap_addr`, `H5SM.c`: the index's heap for the
//! message's type); the index itself (a list or a version 2 B-tree) only counts references,
//! for writers, and is not read here.

use crate::io::{check_sum, Cursor, Source};
use crate::messages::kind;
use crate::model::Hdf5Error;
use socair_plugin_api::ReadAt;

/// Indexes a table may hold (`H5O_SHMESG_MAX_NINDEXES`, `H5Opublic.h`).
pub const MAX_INDEXES: u8 = 8;

/// One index of the table: the message types it holds and the heap that holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Index {
    /// `H5O_SHMESG_*_FLAG` bits: one per message type (`1 << type`).
    pub types: u16,
    /// The fractal heap of the shared messages.
    pub heap: u64,
}

/// The flag of message type `kind` in an index's types (`H5SM__type_to_flag`, `H5SM.c`: the
/// old fill value message shares the new one's flag), or `None` for a type never shared.
pub fn flag(message: u16) -> Option<u16> {
    let bit = match message {
        kind::FILL_OLD => kind::FILL,
        kind::DATASPACE | kind::DATATYPE | kind::FILL | kind::FILTERS | kind::ATTRIBUTE => message,
        _ => return None,
    };
    Some(1 << bit)
}

/// The table's (address, number of indexes), from the superblock extension's message.
pub fn table_message(data: &[u8], offsets: u8) -> Result<(u64, u8), Hdf5Error> {
    let mut c = Cursor::with(data, offsets, 8, "shared message table message");
    let version = c.u8()?;
    if version != 0 {
        return Err(Hdf5Error::new(
            "shared message table message",
            format!("version {version}: HDF5 writes 0"),
        ));
    }
    let addr = c.addr()?;
    let n = c.u8()?;
    if n == 0 || n > MAX_INDEXES {
        return Err(Hdf5Error::new(
            "shared message table message",
            format!("{n} indexes: HDF5 allows 1 to {MAX_INDEXES}"),
        ));
    }
    Ok((addr, n))
}

/// Reads the table at `addr` of `n` indexes, its checksum checked as the library checks it.
pub fn table<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    n: u8,
) -> Result<Vec<Index>, Hdf5Error> {
    let what = "shared message table";
    let o = usize::from(src.offsets);
    // "SMTB", then per index: version, type, message types (2), minimum size (4), list
    // maximum (2), B-tree minimum (2), messages (2), index and heap addresses; a checksum.
    let per_index = 1 + 1 + 2 + 4 + 2 + 2 + 2 + 2 * o;
    let len = 4 + usize::from(n) * per_index + 4;
    let block = src.bytes(addr, len as u64, what)?;
    if block.get(..4) != Some(b"SMTB".as_slice()) {
        return Err(Hdf5Error::new(
            format!("{what} at address {addr}"),
            "no SMTB signature",
        ));
    }
    check_sum(&block, what)?;
    let mut c = Cursor::with(block.get(4..).unwrap_or_default(), src.offsets, 8, what);
    let mut out = Vec::with_capacity(usize::from(n));
    for i in 0..n {
        let version = c.u8()?;
        let index_type = c.u8()?;
        if version != 0 || index_type > 1 {
            return Err(Hdf5Error::new(
                format!("{what} index {i}"),
                format!("version {version}, type {index_type}: HDF5 writes version 0, a list (0) or a B-tree (1)"),
            ));
        }
        let types = c.u16()?;
        c.skip(4 + 2 + 2 + 2)?;
        let _index = c.addr()?;
        let heap = c.addr()?;
        out.push(Index { types, heap });
    }
    Ok(out)
}

/// The heap of the index that holds messages of type `message`: the first whose types
/// include it, as `H5SM__get_index` finds it.
pub fn heap_for(indexes: &[Index], message: u16) -> Option<u64> {
    let f = flag(message)?;
    indexes.iter().find(|i| i.types & f != 0).map(|i| i.heap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_one_bit_per_message_type() {
        assert_eq!(flag(kind::DATATYPE), Some(1 << 3));
        assert_eq!(flag(kind::FILL_OLD), Some(1 << 5));
        assert_eq!(flag(kind::ATTRIBUTE), Some(1 << 12));
        assert_eq!(flag(kind::LAYOUT), None);
        let idx = [
            Index {
                types: (1 << 3) | (1 << 1),
                heap: 10,
            },
            Index {
                types: 1 << 12,
                heap: 20,
            },
        ];
        assert_eq!(heap_for(&idx, kind::ATTRIBUTE), Some(20));
        assert_eq!(heap_for(&idx, kind::DATASPACE), Some(10));
        assert_eq!(heap_for(&idx, kind::FILTERS), None);
    }

    #[test]
    fn table_messages_are_bounded() {
        assert!(table_message(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 0], 8).is_err());
        assert!(table_message(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 9], 8).is_err());
        assert!(table_message(&[1, 1, 0, 0, 0, 0, 0, 0, 0, 1], 8).is_err());
        assert_eq!(
            table_message(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 2], 8).unwrap(),
            (1, 2)
        );
    }
}
