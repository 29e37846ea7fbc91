//! The messages that say where a dataset's bytes are and what a group holds: data layout,
//! filter pipeline, external data files, attributes, links, link info and symbol tables
//! (`H5Olayout.c`, `H5Opline.c`, `H5Oefl.c`, `H5Oattr.c`, `H5Olink.c`, `H5Olinfo.c`,
//! `H5Ostab.c`, HDF5 1.14).

use crate::io::Cursor;
use crate::model::{Hdf5Error, UNDEFINED};
use crate::types::{self, Type};

/// Message types.
pub mod kind {
    /// Dataspace.
    pub const DATASPACE: u16 = 0x01;
    /// Link info (a group stored with links, compact or dense).
    pub const LINK_INFO: u16 = 0x02;
    /// Datatype.
    pub const DATATYPE: u16 = 0x03;
    /// Fill value (old).
    pub const FILL_OLD: u16 = 0x04;
    /// Fill value.
    pub const FILL: u16 = 0x05;
    /// Link.
    pub const LINK: u16 = 0x06;
    /// External data files.
    pub const EXTERNAL: u16 = 0x07;
    /// Data layout.
    pub const LAYOUT: u16 = 0x08;
    /// Bogus (a test message).
    pub const BOGUS: u16 = 0x09;
    /// Group info.
    pub const GROUP_INFO: u16 = 0x0a;
    /// Filter pipeline.
    pub const FILTERS: u16 = 0x0b;
    /// Attribute.
    pub const ATTRIBUTE: u16 = 0x0c;
    /// Object comment.
    pub const COMMENT: u16 = 0x0d;
    /// Modification time (old).
    pub const MTIME_OLD: u16 = 0x0e;
    /// Shared message table.
    pub const SHARED_TABLE: u16 = 0x0f;
    /// Symbol table (an old-style group).
    pub const SYMBOL_TABLE: u16 = 0x11;
    /// Modification time.
    pub const MTIME: u16 = 0x12;
    /// B-tree 'K' values.
    pub const BTREE_K: u16 = 0x13;
    /// Driver info.
    pub const DRIVER_INFO: u16 = 0x14;
    /// Attribute info.
    pub const ATTRIBUTE_INFO: u16 = 0x15;
    /// Object reference count.
    pub const REFCOUNT: u16 = 0x16;
    /// File space info.
    pub const FSINFO: u16 = 0x17;
}

/// Where a dataset's raw data is, as its layout message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// In the object header itself.
    Compact(Vec<u8>),
    /// One run of bytes at an address (undefined when nothing was written); its size, when
    /// the message records one (versions 1 and 2 do not: the dataspace gives it).
    Contiguous {
        /// Its address.
        addr: u64,
        /// Its length.
        size: Option<u64>,
    },
    /// Chunks, found through an index.
    Chunked(Chunking),
    /// A virtual dataset: its elements are read from other datasets, in this file or others,
    /// as the global heap object its mappings are in lists them ([`crate::vds`]).
    Virtual {
        /// The global heap collection's address.
        heap: u64,
        /// The object's index there.
        index: u32,
    },
}

/// A chunked layout: the chunk's shape and where the index of its chunks is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunking {
    /// The message's version (1 to 5): version 5 writes a filtered chunk's size in a field of
    /// the file's length size.
    pub version: u8,
    /// The chunk's dimensions, in elements (the element size dropped).
    pub dims: Vec<u64>,
    /// The element size the layout records.
    pub element: u64,
    /// The index of the chunks.
    pub index: ChunkIndex,
    /// Partial edge chunks are stored unfiltered (`H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS`).
    pub unfiltered_edges: bool,
}

/// The structure that lists a chunked dataset's chunks (`H5D_chunk_index_t`, `H5Dpublic.h`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkIndex {
    /// A version 1 B-tree (layout versions 1 to 3) at this address.
    BtreeV1(u64),
    /// One chunk covering the dataset, at this address; when filtered, its stored size and
    /// filter mask.
    Single {
        /// The chunk's address.
        addr: u64,
        /// Its stored size and filter mask, when the pipeline is not empty.
        filtered: Option<(u64, u32)>,
    },
    /// Chunks laid out one after another from this address, in the order of their index
    /// (no filter, allocated early).
    Implicit(u64),
    /// A fixed array at this address.
    FixedArray(u64),
    /// An extensible array at this address.
    ExtensibleArray(u64),
    /// A version 2 B-tree at this address.
    BtreeV2(u64),
}

/// Layout flags of version 4 and 5 messages (`H5Opkg.h`): partial edge chunks unfiltered,
/// the single chunk's size and mask stored in the message.
const DONT_FILTER_PARTIAL_CHUNKS: u8 = 0x01;
const SINGLE_INDEX_WITH_FILTER: u8 = 0x02;

/// Parses a data layout message (`H5O__layout_decode`, `H5Olayout.c`: versions 1 to 4 as
/// HDF5 1.14 writes them; version 5, which HDF5 2.0 writes for libver v200, shares version
/// 4's encoding and changes only how a filtered chunk's size is written in the index).
pub fn layout(data: &[u8], offsets: u8, lengths: u8) -> Result<Layout, Hdf5Error> {
    let what = "data layout message";
    let mut c = Cursor::with(data, offsets, lengths, what);
    let version = c.u8()?;
    if !(1..=5).contains(&version) {
        return Err(Hdf5Error::new(
            what,
            format!("version {version}: HDF5 writes 1 to 5"),
        ));
    }
    if version < 3 {
        return old_layout(&mut c, version);
    }
    let class = c.u8()?;
    Ok(match class {
        0 => {
            let size = usize::from(c.u16()?);
            Layout::Compact(c.take(size)?.to_vec())
        }
        1 => Layout::Contiguous {
            addr: c.addr()?,
            size: Some(c.length()?),
        },
        2 if version == 3 => {
            let rank = usize::from(c.u8()?);
            let btree = c.addr()?;
            let mut dims = chunk_rank(rank)?;
            for _ in 0..rank {
                dims.push(u64::from(c.u32()?));
            }
            chunking(version, dims, ChunkIndex::BtreeV1(btree), 0)?
        }
        2 => {
            let flags = c.u8()?;
            if flags & !(DONT_FILTER_PARTIAL_CHUNKS | SINGLE_INDEX_WITH_FILTER) != 0 {
                return Err(Hdf5Error::new(
                    what,
                    format!("chunk flags {flags:#x}: HDF5 defines 0x1 and 0x2"),
                ));
            }
            let rank = usize::from(c.u8()?);
            let width = usize::from(c.u8()?);
            if !(1..=8).contains(&width) {
                return Err(Hdf5Error::new(
                    what,
                    format!("chunk dimensions of {width} bytes each: HDF5 writes 1 to 8"),
                ));
            }
            let mut dims = chunk_rank(rank)?;
            for _ in 0..rank {
                dims.push(c.uint(width)?);
            }
            let index = match c.u8()? {
                1 => {
                    let filtered = if flags & SINGLE_INDEX_WITH_FILTER != 0 {
                        Some((c.length()?, c.u32()?))
                    } else {
                        None
                    };
                    ChunkIndex::Single {
                        addr: c.addr()?,
                        filtered,
                    }
                }
                2 => ChunkIndex::Implicit(c.addr()?),
                3 => {
                    c.skip(1)?; // page bits: the array's header records them too
                    ChunkIndex::FixedArray(c.addr()?)
                }
                4 => {
                    c.skip(5)?; // creation parameters: the array's header records them too
                    ChunkIndex::ExtensibleArray(c.addr()?)
                }
                5 => {
                    c.skip(6)?; // node size, split and merge percentages: likewise
                    ChunkIndex::BtreeV2(c.addr()?)
                }
                k => {
                    return Err(Hdf5Error::new(
                        what,
                        format!(
                        "chunk index type {k}: HDF5 defines 1 to 5 in a version {version} message"
                    ),
                    ))
                }
            };
            chunking(version, dims, index, flags)?
        }
        3 if version >= 4 => Layout::Virtual {
            heap: c.addr()?,
            index: c.u32()?,
        },
        k => {
            return Err(Hdf5Error::new(
                what,
                format!("layout class {k} in a version {version} message"),
            ))
        }
    })
}

/// Room for a chunked layout's `rank` dimensions (the dataset's and the element size's),
/// checked: 2 to 33.
fn chunk_rank(rank: usize) -> Result<Vec<u64>, Hdf5Error> {
    if !(2..=33).contains(&rank) {
        return Err(Hdf5Error::new(
            "data layout message",
            format!("a chunked layout of {rank} dimensions (1 + the dataset's rank, at most 33)"),
        ));
    }
    Ok(Vec::with_capacity(rank))
}

fn chunking(
    version: u8,
    mut dims: Vec<u64>,
    index: ChunkIndex,
    flags: u8,
) -> Result<Layout, Hdf5Error> {
    let element = dims.pop().unwrap_or(0);
    if element == 0 || dims.contains(&0) {
        return Err(Hdf5Error::new(
            "data layout message",
            format!("chunks of {dims:?} elements of {element} bytes: the HDF5 library refuses a dimension of 0"),
        ));
    }
    Ok(Layout::Chunked(Chunking {
        version,
        dims,
        element,
        index,
        unfiltered_edges: flags & DONT_FILTER_PARTIAL_CHUNKS != 0,
    }))
}

/// Versions 1 and 2 (HDF5 1.4 and older): the rank, the class, an address for contiguous and
/// chunked storage, then the dimensions as 32-bit numbers.
fn old_layout(c: &mut Cursor<'_>, version: u8) -> Result<Layout, Hdf5Error> {
    let rank = usize::from(c.u8()?);
    let class = c.u8()?;
    c.skip(5)?;
    if rank == 0 || rank > 33 {
        return Err(Hdf5Error::new(
            "data layout message",
            format!("{rank} dimensions in a version {version} message (1 to 33)"),
        ));
    }
    let addr = if class == 0 { UNDEFINED } else { c.addr()? };
    let mut dims = Vec::with_capacity(rank);
    for _ in 0..rank {
        dims.push(u64::from(c.u32()?));
    }
    Ok(match class {
        0 => {
            let size = usize::try_from(c.u32()?).unwrap_or(usize::MAX);
            Layout::Compact(c.take(size)?.to_vec())
        }
        1 => Layout::Contiguous { addr, size: None },
        2 => {
            chunk_rank(rank)?;
            chunking(version, dims, ChunkIndex::BtreeV1(addr), 0)?
        }
        k => {
            return Err(Hdf5Error::new(
                "data layout message",
                format!("layout class {k} in a version {version} message"),
            ))
        }
    })
}

/// One filter of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// Its id (1 deflate, 2 shuffle, 3 Fletcher-32, 4 SZIP, 5 N-bit, 6 scale-offset; 256 and
    /// above user-defined, loaded from a plugin library).
    pub id: u16,
    /// Its name, when stored.
    pub name: String,
    /// Optional: the pipeline skipped it for a chunk it failed on, and says so in the chunk's
    /// filter mask.
    pub optional: bool,
    /// Its client data (the shuffle filter's element size, deflate's level…).
    pub values: Vec<u32>,
}

impl Filter {
    /// The filter's name for a reason.
    pub fn describe(&self) -> String {
        let known = match self.id {
            1 => "deflate",
            2 => "shuffle",
            3 => "fletcher32",
            4 => "szip",
            5 => "nbit",
            6 => "scaleoffset",
            _ => "",
        };
        if !known.is_empty() {
            return known.to_owned();
        }
        if self.name.is_empty() {
            format!("filter {}", self.id)
        } else {
            format!("filter {} ({:?})", self.id, self.name)
        }
    }
}

/// Parses a filter pipeline message.
pub fn filters(data: &[u8]) -> Result<Vec<Filter>, Hdf5Error> {
    let mut c = Cursor::with(data, 8, 8, "filter pipeline message");
    let version = c.u8()?;
    let count = c.u8()?;
    if version == 1 {
        c.skip(6)?;
    } else if version != 2 {
        return Err(Hdf5Error::new(
            "filter pipeline message",
            format!("version {version}: HDF5 writes 1 and 2"),
        ));
    }
    if count > 32 {
        return Err(Hdf5Error::new(
            "filter pipeline message",
            format!("{count} filters: the HDF5 library applies at most 32"),
        ));
    }
    let mut out = Vec::new();
    for _ in 0..count {
        let id = c.u16()?;
        let name_len = if version == 1 || id >= 256 {
            usize::from(c.u16()?)
        } else {
            0
        };
        let flags = c.u16()?;
        let values = usize::from(c.u16()?);
        let stored = if version == 1 {
            (name_len + 7) & !7
        } else {
            name_len
        };
        let name = c.take(stored)?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let name = String::from_utf8_lossy(name.get(..end).unwrap_or_default()).into_owned();
        let mut cd = Vec::with_capacity(values.min(c.left() / 4));
        for _ in 0..values {
            cd.push(c.u32()?);
        }
        if version == 1 && values % 2 == 1 {
            c.skip(4)?;
        }
        out.push(Filter {
            id,
            name,
            optional: flags & 1 != 0,
            values: cd,
        });
    }
    Ok(out)
}

/// What storage never written reads as: the dataset's fill value, zeros when it has none, or
/// nothing defined when the dataset says never to fill (`H5D_FILL_TIME_NEVER`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fill {
    /// The value's bytes, when one is stored.
    pub value: Option<Vec<u8>>,
    /// The library never fills: an unwritten chunk reads as whatever memory held.
    pub never: bool,
}

/// Parses a fill value message (`H5O__fill_new_decode`, `H5Ofill.c`; `old` for the old
/// message, `H5O__fill_old_decode`: a size and the value).
pub fn fill(data: &[u8], old: bool) -> Result<Fill, Hdf5Error> {
    let what = "fill value message";
    let mut c = Cursor::with(data, 8, 8, what);
    let sized = |c: &mut Cursor<'_>| -> Result<Option<Vec<u8>>, Hdf5Error> {
        let size = usize::try_from(c.u32()?).unwrap_or(usize::MAX);
        (size > 0)
            .then(|| c.take(size).map(<[u8]>::to_vec))
            .transpose()
    };
    if old {
        return Ok(Fill {
            value: sized(&mut c)?,
            never: false,
        });
    }
    let version = c.u8()?;
    let (fill_time, value) = match version {
        1 | 2 => {
            let _alloc_time = c.u8()?;
            let fill_time = c.u8()?;
            let defined = c.u8()? != 0;
            // Version 1 always stores the size; version 2 only for a defined value.
            let value = if version == 1 || defined {
                sized(&mut c)?
            } else {
                None
            };
            (fill_time, value)
        }
        3 => {
            let flags = c.u8()?;
            if flags & !0x3f != 0 {
                return Err(Hdf5Error::new(
                    what,
                    format!("flags {flags:#x}: HDF5 defines the low six bits"),
                ));
            }
            let value = if flags & 0x10 == 0 && flags & 0x20 != 0 {
                sized(&mut c)?
            } else {
                None
            };
            ((flags >> 2) & 3, value)
        }
        v => {
            return Err(Hdf5Error::new(
                what,
                format!("version {v}: HDF5 writes 1 to 3"),
            ))
        }
    };
    Ok(Fill {
        value,
        never: fill_time == 1,
    })
}

/// An external data files message: the local heap holding the names, and each slot's name
/// offset, offset in that file and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    /// The local heap's address.
    pub heap: u64,
    /// `(name offset, file offset, size)` of each slot in use.
    pub slots: Vec<(u64, u64, u64)>,
}

/// Parses an external data files message.
pub fn external(data: &[u8], offsets: u8, lengths: u8) -> Result<External, Hdf5Error> {
    let mut c = Cursor::with(data, offsets, lengths, "external data files message");
    let _version = c.u8()?;
    c.skip(3)?;
    let _allocated = c.u16()?;
    let used = c.u16()?;
    let heap = c.addr()?;
    let mut slots = Vec::new();
    for _ in 0..used {
        slots.push((c.length()?, c.length()?, c.length()?));
    }
    Ok(External { heap, slots })
}

/// An attribute message: its name, type, dimensions and raw value.
#[derive(Debug, Clone)]
pub struct RawAttribute {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: Type,
    /// Its dimensions (none: a null dataspace).
    pub dims: Option<Vec<u64>>,
    /// Its value's bytes.
    pub data: Vec<u8>,
}

/// Parses an attribute message (versions 1 to 3) whose datatype and dataspace are its own.
pub fn attribute(data: &[u8], offsets: u8, lengths: u8) -> Result<RawAttribute, Hdf5Error> {
    attribute_with(data, offsets, lengths, &mut |_, _| {
        Err(Hdf5Error::new(
            "attribute message",
            "its datatype or dataspace is shared (stored elsewhere): not read",
        ))
    })
}

/// What gives a shared message's bytes: (message type, the shared message) to its own bytes.
pub type Resolve<'r> = dyn FnMut(u16, &[u8]) -> Result<Vec<u8>, Hdf5Error> + 'r;

/// Parses an attribute message (versions 1 to 3); a datatype or dataspace it shares
/// (`H5O_ATTR_FLAG_TYPE_SHARED`, `H5O_ATTR_FLAG_SPACE_SHARED`: the field holds a shared
/// message, `H5O__attr_decode`, `H5Oattr.c`) is the bytes `resolve` gives for (message type,
/// shared message).
pub fn attribute_with(
    data: &[u8],
    offsets: u8,
    lengths: u8,
    resolve: &mut Resolve<'_>,
) -> Result<RawAttribute, Hdf5Error> {
    let mut c = Cursor::with(data, offsets, lengths, "attribute message");
    let version = c.u8()?;
    let flags = c.u8()?;
    let name_len = usize::from(c.u16()?);
    let type_len = usize::from(c.u16()?);
    let space_len = usize::from(c.u16()?);
    if version == 3 {
        c.skip(1)?;
    } else if version != 1 && version != 2 {
        return Err(Hdf5Error::new(
            "attribute message",
            format!("version {version}: HDF5 writes 1 to 3"),
        ));
    }
    // Version 1 reserves the byte (`H5O__attr_decode`, `H5Oattr.c`: flags from version 2);
    // the library refuses an undefined flag.
    let flags = if version == 1 { 0 } else { flags };
    if flags & !0b11 != 0 {
        return Err(Hdf5Error::new(
            "attribute message",
            format!("flags {flags:#x}: HDF5 defines bits 0 and 1"),
        ));
    }
    let pad = |n: usize| if version == 1 { (n + 7) & !7 } else { n };
    let name = c.take(pad(name_len))?;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    let name = String::from_utf8_lossy(name.get(..end).unwrap_or_default()).into_owned();
    let mut field = |len: usize, shared: bool, kind: u16| -> Result<Vec<u8>, Hdf5Error> {
        let bytes = c.take(pad(len))?;
        if shared {
            resolve(kind, bytes)
        } else {
            Ok(bytes.to_vec())
        }
    };
    let ty_bytes = field(type_len, flags & 0b01 != 0, kind::DATATYPE)?;
    let space_bytes = field(space_len, flags & 0b10 != 0, kind::DATASPACE)?;
    let ty = types::datatype(&ty_bytes, offsets, lengths)?;
    let dims = types::dataspace(&space_bytes, offsets, lengths)?;
    Ok(RawAttribute {
        name,
        ty,
        dims,
        data: c.rest().to_vec(),
    })
}

/// What a link message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkTarget {
    /// A hard link: an object header's address.
    Hard(u64),
    /// A soft link: a path in this file.
    Soft(String),
    /// An external link: a file and a path in it.
    External {
        /// The file.
        file: String,
        /// The object's path there.
        path: String,
    },
    /// A user-defined link type.
    User(u8),
}

/// Parses a link message: its name and target.
pub fn link(data: &[u8], offsets: u8) -> Result<(String, LinkTarget), Hdf5Error> {
    let mut c = Cursor::with(data, offsets, 8, "link message");
    let version = c.u8()?;
    if version != 1 {
        return Err(Hdf5Error::new(
            "link message",
            format!("version {version}: HDF5 writes 1"),
        ));
    }
    let flags = c.u8()?;
    let kind = if flags & 0x08 != 0 { c.u8()? } else { 0 };
    if flags & 0x04 != 0 {
        c.skip(8)?;
    }
    if flags & 0x10 != 0 {
        c.skip(1)?;
    }
    let name_len = c.uint(1 << (flags & 3))? as usize;
    let name = String::from_utf8_lossy(c.take(name_len)?).into_owned();
    let target = match kind {
        0 => LinkTarget::Hard(c.addr()?),
        1 => {
            let n = usize::from(c.u16()?);
            LinkTarget::Soft(String::from_utf8_lossy(c.take(n)?).into_owned())
        }
        64 => {
            let n = usize::from(c.u16()?);
            let value = c.take(n)?;
            let mut parts = value.get(1..).unwrap_or_default().split(|&b| b == 0);
            let file = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
            let path = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
            LinkTarget::External { file, path }
        }
        k => LinkTarget::User(k),
    };
    Ok((name, target))
}

/// Whether a link info message says the group's links are in dense storage (a fractal heap),
/// which this reader does not read.
pub fn dense_links(data: &[u8], offsets: u8) -> Result<bool, Hdf5Error> {
    let mut c = Cursor::with(data, offsets, 8, "link info message");
    let _version = c.u8()?;
    let flags = c.u8()?;
    if flags & 1 != 0 {
        c.skip(8)?;
    }
    Ok(c.addr()? != UNDEFINED)
}

/// A symbol table message: the group's B-tree and local heap.
pub fn symbol_table(data: &[u8], offsets: u8) -> Result<(u64, u64), Hdf5Error> {
    let mut c = Cursor::with(data, offsets, 8, "symbol table message");
    Ok((c.addr()?, c.addr()?))
}
