//! Links and attributes in dense storage: once a new-style group holds more links, or an
//! object more attributes, than its compact maximum (8 by default), the library keeps each
//! link or attribute message as an object of a fractal heap ([`fheap`]) and indexes them by
//! name in a version 2 B-tree ([`btree2`]; `H5Gdense.c`, `H5Adense.c`, `H5Olinfo.c`,
//! `H5Oainfo.c`, HDF5 1.14 and 2.0). This reads the index and hands back every message it
//! names, in the index's order, as the library's iteration by name reaches them.

use crate::btree2;
use crate::fheap;
use crate::io::{Cursor, Source};
use crate::model::{Hdf5Error, UNDEFINED};
use socair_plugin_api::ReadAt;

/// Where a dense store is: its heap and its name index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Store {
    /// The fractal heap holding the messages.
    pub heap: u64,
    /// The version 2 B-tree indexing them by name.
    pub names: u64,
}

/// The dense store a link info message names, if any (version, flags, the maximum creation
/// index when creation order is tracked, then the heap and the name index).
pub fn links(data: &[u8], offsets: u8) -> Result<Option<Store>, Hdf5Error> {
    store(data, offsets, 8, "link info message")
}

/// The dense store an attribute info message names, if any (as [`links`], with a 2-byte
/// maximum creation index).
pub fn attributes(data: &[u8], offsets: u8) -> Result<Option<Store>, Hdf5Error> {
    store(data, offsets, 2, "attribute info message")
}

fn store(
    data: &[u8],
    offsets: u8,
    index_len: usize,
    what: &str,
) -> Result<Option<Store>, Hdf5Error> {
    let mut c = Cursor::with(data, offsets, 8, what);
    let version = c.u8()?;
    if version != 0 {
        return Err(Hdf5Error::new(
            what,
            format!("version {version}: HDF5 writes 0"),
        ));
    }
    let flags = c.u8()?;
    if flags & 1 != 0 {
        c.skip(index_len)?;
    }
    let heap = c.addr()?;
    let names = c.addr()?;
    Ok((heap != UNDEFINED).then_some(Store { heap, names }))
}

/// One message of a dense store: its bytes, and the message flags its index records (for
/// attributes: whether the message is shared, stored elsewhere).
pub struct Message {
    /// The message's bytes; for a shared one, its ID in the shared-message table's heap.
    pub data: Vec<u8>,
    /// The message flags (0 for links).
    pub flags: u8,
}

/// Every message of `store`, in the name index's order: link records (type 5: a name hash and
/// a 7-byte heap ID) or attribute records (type 8: an 8-byte heap ID, message flags, creation
/// order, name hash).
pub fn messages<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    store: Store,
    what: &str,
) -> Result<Vec<Message>, Hdf5Error> {
    let heap = fheap::open(src, store.heap)?;
    messages_in(src, &heap, store.names, what)
}

/// [`messages`], from the heap already open, indexed by the name index at `names`.
pub fn messages_in<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    heap: &fheap::Heap,
    names: u64,
    what: &str,
) -> Result<Vec<Message>, Hdf5Error> {
    let mut ids = Vec::new();
    btree2::records(src, names, what, &mut |ty, rec| {
        let (id, flags) = match ty {
            5 => (rec.get(4..), 0),
            8 => (rec.get(..8), rec.get(8).copied().unwrap_or(0)),
            t => {
                return Err(Hdf5Error::new(
                    what,
                    format!("records of type {t} in a name index (5 for links, 8 for attributes)"),
                ))
            }
        };
        let id =
            id.ok_or_else(|| Hdf5Error::new(what, format!("a record of {} bytes", rec.len())))?;
        ids.push((id.to_vec(), flags));
        Ok(())
    })?;
    let mut out = Vec::with_capacity(ids.len());
    for (id, flags) in ids {
        // A shared attribute's ID names its message in the shared-message table's heap, not
        // in this one (`H5A__dense_iterate_bt2_cb`, `H5Adense.c`): it is left as the ID.
        if flags & 0x02 != 0 {
            out.push(Message { data: id, flags });
            continue;
        }
        let data = heap.object(src, &id).map_err(|e| Hdf5Error::new(what, e))?;
        out.push(Message { data, flags });
    }
    Ok(out)
}
