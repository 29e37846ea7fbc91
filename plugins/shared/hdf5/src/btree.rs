//! Version 1 B-trees (`H5B.c`, `H5Gnode.c`, `H5Dbtree.c`, HDF5 1.14), the local heaps that
//! hold an old-style group's link names (`H5HL.c`), and the global heap collections that hold
//! variable-length strings (`H5HG.c`). Every node is read once: a tree whose pointers loop or
//! meet is refused.

use crate::io::{Cursor, Source};
use crate::model::{Hdf5Error, UNDEFINED};
use socair_plugin_api::ReadAt;
use std::collections::{HashMap, HashSet};

/// Levels a B-tree may have: HDF5 builds trees of a few levels; 64 is far past any file.
const MAX_LEVEL: u8 = 64;

/// One entry of an old-style group (a symbol table entry in a group node).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The link's name.
    pub name: String,
    /// The object header's address.
    pub header: u64,
    /// The cache type: 2 for a soft link, whose target is in the scratch pad.
    pub cache: u32,
    /// A soft link's target, from the local heap.
    pub soft: Option<String>,
}

/// A local heap's data segment.
pub fn local_heap<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    what: &str,
) -> Result<Vec<u8>, Hdf5Error> {
    let n = 8 + 2 * u64::from(src.lengths) + u64::from(src.offsets);
    let head = src.bytes(addr, n, what)?;
    let mut c = src.cursor(&head, what);
    if c.take(4)? != b"HEAP" || c.u8()? != 0 {
        return Err(Hdf5Error::new(
            format!("{what} at address {addr}"),
            "not a version 0 local heap (HEAP)",
        ));
    }
    c.skip(3)?;
    let size = c.length()?;
    let _free = c.length()?;
    let data = c.addr()?;
    src.bytes(data, size, what)
}

/// The NUL-terminated string at `offset` of a local heap's data.
pub fn heap_string(heap: &[u8], offset: u64, what: &str) -> Result<String, Hdf5Error> {
    let rest = usize::try_from(offset)
        .ok()
        .and_then(|o| heap.get(o..))
        .ok_or_else(|| {
            Hdf5Error::new(
                what,
                format!(
                    "a name at offset {offset}, past its local heap ({} bytes)",
                    heap.len()
                ),
            )
        })?;
    let end = rest.iter().position(|&b| b == 0).ok_or_else(|| {
        Hdf5Error::new(
            what,
            format!("the name at offset {offset} of its local heap runs to the heap's end"),
        )
    })?;
    Ok(String::from_utf8_lossy(rest.get(..end).unwrap_or_default()).into_owned())
}

/// The addresses of the symbol nodes the old-style group B-tree at `btree` lists, in order.
pub fn symbol_nodes<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    btree: u64,
    what: &str,
) -> Result<Vec<u64>, Hdf5Error> {
    let mut leaves = Vec::new();
    walk(
        src,
        btree,
        0,
        None,
        what,
        &mut HashSet::new(),
        &mut |_, child| {
            leaves.push(child);
            Ok(())
        },
    )?;
    Ok(leaves)
}

/// The entries of the old-style group whose B-tree and local heap are given, in the tree's
/// order (by name, as the library keeps them).
pub fn group_entries<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    btree: u64,
    heap: u64,
    place: &str,
) -> Result<Vec<Entry>, Hdf5Error> {
    let what = format!("group {place}");
    let names = local_heap(src, heap, &what)?;
    let leaves = symbol_nodes(src, btree, &what)?;
    // Over object storage the symbol nodes are fetched side by side, not one by one.
    src.prefetch(&leaves);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for node in leaves {
        if !seen.insert(node) {
            return Err(Hdf5Error::new(
                &what,
                format!("its B-tree lists the symbol node at address {node} twice"),
            ));
        }
        let head = src.bytes(node, 8, &what)?;
        let mut c = src.cursor(&head, &what);
        if c.take(4)? != b"SNOD" || c.u8()? != 1 {
            return Err(Hdf5Error::new(
                format!("{what}, symbol node at address {node}"),
                "not a version 1 symbol table node (SNOD)",
            ));
        }
        c.skip(1)?;
        let count = u64::from(c.u16()?);
        let entry = 2 * u64::from(src.offsets) + 24;
        let body = src.bytes(node.saturating_add(8), count * entry, &what)?;
        let mut c = src.cursor(&body, &what);
        for _ in 0..count {
            let name_at = c.addr()?;
            let header = c.addr()?;
            let cache = c.u32()?;
            c.skip(4)?;
            let scratch = c.take(16)?;
            let name = heap_string(&names, name_at, &what)?;
            let soft = if cache == 2 {
                let off = Cursor::with(scratch, 8, 8, &what).u32()?;
                Some(heap_string(&names, u64::from(off), &what)?)
            } else {
                None
            };
            out.push(Entry {
                name,
                header,
                cache,
                soft,
            });
        }
    }
    Ok(out)
}

/// One chunk of a chunked dataset, as its B-tree lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Its bytes as stored (after filters).
    pub size: u64,
    /// Filters skipped for this chunk (a bit per filter of the pipeline).
    pub mask: u32,
    /// Its offset in the dataset, in elements, per dimension.
    pub offset: Vec<u64>,
    /// Its address.
    pub addr: u64,
}

/// The chunks of a dataset of `rank` dimensions whose chunk B-tree is at `btree`.
pub fn chunks<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    btree: u64,
    rank: usize,
    place: &str,
) -> Result<Vec<Chunk>, Hdf5Error> {
    let what = format!("chunk index of dataset {place}");
    let mut out = Vec::new();
    if btree == UNDEFINED {
        return Ok(out);
    }
    walk(
        src,
        btree,
        1,
        Some(rank),
        &what,
        &mut HashSet::new(),
        &mut |key, addr| {
            let mut c = Cursor::with(key, 8, 8, "chunk key");
            let size = u64::from(c.u32()?);
            let mask = c.u32()?;
            let mut offset = Vec::with_capacity(rank + 1);
            for _ in 0..=rank {
                offset.push(c.u64()?);
            }
            out.push(Chunk {
                size,
                mask,
                offset,
                addr,
            });
            Ok(())
        },
    )?;
    Ok(out)
}

/// What a B-tree walk calls with each leaf child's key and address.
type Leaf<'l> = dyn FnMut(&[u8], u64) -> Result<(), Hdf5Error> + 'l;

/// Walks the B-tree of `kind` (0 group, 1 chunk) at `addr`, calling `leaf` with each leaf
/// child's key (the key before it) and address.
fn walk<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    kind: u8,
    rank: Option<usize>,
    what: &str,
    seen: &mut HashSet<u64>,
    leaf: &mut Leaf<'_>,
) -> Result<(), Hdf5Error> {
    let key_len = match rank {
        Some(r) => 8 + 8 * (r as u64 + 1),
        None => u64::from(src.lengths),
    };
    let mut stack = vec![(addr, None::<u8>)];
    while let Some((node, expect)) = stack.pop() {
        if !seen.insert(node) {
            return Err(Hdf5Error::new(
                what,
                format!(
                    "its B-tree reaches the node at address {node} twice (a loop, or two parents)"
                ),
            ));
        }
        let fixed = 8 + 2 * u64::from(src.offsets);
        let head = src.bytes(node, fixed, what)?;
        let mut c = src.cursor(&head, what);
        if c.take(4)? != b"TREE" {
            return Err(Hdf5Error::new(
                format!("{what}, B-tree node at address {node}"),
                "not a B-tree node (TREE)",
            ));
        }
        let ty = c.u8()?;
        let level = c.u8()?;
        let entries = u64::from(c.u16()?);
        if ty != kind || level > MAX_LEVEL || expect.is_some_and(|e| e != level) {
            return Err(Hdf5Error::new(
                format!("{what}, B-tree node at address {node}"),
                format!(
                    "a node of type {ty} at level {level} where the tree needs type {kind}{}",
                    expect.map(|e| format!(" at level {e}")).unwrap_or_default()
                ),
            ));
        }
        let body_len = entries * (key_len + u64::from(src.offsets)) + key_len;
        let body = src.bytes(node.saturating_add(fixed), body_len, what)?;
        let mut c = src.cursor(&body, what);
        let mut children = Vec::new();
        for _ in 0..entries {
            let key = c.take(key_len as usize)?;
            let child = c.addr()?;
            children.push((key, child));
        }
        if level == 0 {
            for (key, child) in children {
                leaf(key, child)?;
            }
        } else {
            // Over object storage the children are fetched side by side, not one by one.
            src.prefetch(&children.iter().map(|&(_, child)| child).collect::<Vec<_>>());
            // Children are pushed in reverse so that they are walked in the tree's order.
            for (_, child) in children.into_iter().rev() {
                stack.push((child, Some(level - 1)));
            }
        }
    }
    Ok(())
}

/// Global heap collections read so far, by address: each object's bytes by index.
#[derive(Default)]
pub struct GlobalHeaps {
    collections: HashMap<u64, HashMap<u16, Vec<u8>>>,
}

impl GlobalHeaps {
    /// The bytes of object `index` of the collection at `addr`.
    pub fn object<S: ReadAt + ?Sized>(
        &mut self,
        src: &mut Source<'_, S>,
        addr: u64,
        index: u32,
        what: &str,
    ) -> Result<&[u8], Hdf5Error> {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.collections.entry(addr) {
            slot.insert(collection(src, addr, what)?);
        }
        let missing = || {
            Hdf5Error::new(what, format!("it refers to object {index} of the global heap at address {addr}, which holds no such object"))
        };
        let index = u16::try_from(index).map_err(|_| missing())?;
        self.collections
            .get(&addr)
            .and_then(|c| c.get(&index))
            .map(Vec::as_slice)
            .ok_or_else(missing)
    }
}

fn collection<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    what: &str,
) -> Result<HashMap<u16, Vec<u8>>, Hdf5Error> {
    let n = 8 + u64::from(src.lengths);
    let head = src.bytes(addr, n, what)?;
    let mut c = src.cursor(&head, what);
    if c.take(4)? != b"GCOL" || c.u8()? != 1 {
        return Err(Hdf5Error::new(
            format!("{what}: global heap at address {addr}"),
            "not a version 1 global heap collection (GCOL)",
        ));
    }
    c.skip(3)?;
    let size = c.length()?;
    if size < n {
        return Err(Hdf5Error::new(
            format!("{what}: global heap at address {addr}"),
            "its size is smaller than its header",
        ));
    }
    let body = src.bytes(addr.saturating_add(n), size - n, what)?;
    let mut c = src.cursor(&body, what);
    let mut out = HashMap::new();
    let fixed = 8 + usize::from(src.lengths);
    while c.left() >= fixed {
        let index = c.u16()?;
        let _refs = c.u16()?;
        c.skip(4)?;
        let size = c.length()?;
        if index == 0 {
            // The free space object ends the collection.
            break;
        }
        let len = usize::try_from(size).map_err(|_| c.short())?;
        let data = c.take(len)?.to_vec();
        let pad = ((len + 7) & !7) - len;
        c.skip(pad.min(c.left()))?;
        if out.insert(index, data).is_some() {
            return Err(Hdf5Error::new(
                format!("{what}: global heap at address {addr}"),
                format!("object {index} is stored twice"),
            ));
        }
    }
    Ok(out)
}
