//! The walk from the root group over every link: each object's header read once, its
//! attributes decoded, its children visited by name, its bytes located.

use crate::btree::{self, GlobalHeaps};
use crate::dense;
use crate::external;
use crate::fheap;
use crate::filters;
use crate::header;
use crate::io::{Cursor, Source};
use crate::messages::{self, kind, LinkTarget};
use crate::model::{
    Attribute, Dataset, File, Finding, Findings, Hdf5Error, Kind, Object, Options, Severity,
    Storage, Value, UNDEFINED,
};
use crate::sohm;
use crate::superblock;
use crate::types::{self, Type};
use crate::vds;
use socair_plugin_api::ReadAt;
use std::collections::{HashMap, HashSet};

/// Groups nested this deep are read ahead of the walk ([`crate::ahead`]) no further (Keras
/// nests five or six); the walk itself goes as deep as the file does, bounded by
/// [`path_budget`].
pub const MAX_DEPTH: usize = 64;

/// The bytes of object paths one walk holds for a file of `file_len` bytes: a quarter of the
/// memory every reader is held to (a chain of nested groups makes paths grow with its depth).
pub fn path_budget(file_len: u64) -> u64 {
    socair_plugin_kit::model::memory_share(file_len, 4)
}

/// The bytes assembled inline for a file of `file_len` bytes, over all datasets (chunks out of
/// row-major order, decompressed, or never written): half the memory every reader is held to,
/// 32 MiB + 4x the file (each byte of a chunk is copied at most once).
pub fn inline_budget(file_len: u64) -> u64 {
    socair_plugin_kit::model::memory_share(file_len, 2)
}

/// The text of attributes decoded for a file of `file_len` bytes: the file's size and 1 MiB.
fn text_budget(file_len: u64) -> u64 {
    file_len.saturating_add(1 << 20)
}

/// The chunks listed for a file of `file_len` bytes, over all datasets: one per 32 bytes of the
/// file and 65,536 (every chunk takes an index entry of at least an address, and its bytes).
pub fn chunk_budget(file_len: u64) -> u64 {
    file_len / 32 + 65_536
}

/// One walk: what it has read and found, and the budgets left.
struct Walk<'a, S: ReadAt + ?Sized> {
    src: Source<'a, S>,
    options: Options,
    objects: Vec<Object>,
    findings: Findings,
    headers: HashSet<u64>,
    heaps: GlobalHeaps,
    /// Bytes that may still be assembled inline ([`inline_budget`]).
    inline_left: u64,
    text_left: u64,
    /// Chunks that may still be listed ([`chunk_budget`]).
    chunks_left: u64,
    /// Path bytes that may still be held ([`path_budget`]).
    paths_left: u64,
    /// The shared-message table's indexes ([`sohm`]), from the superblock extension.
    shared_indexes: Vec<sohm::Index>,
    /// The shared-message heaps opened, by address.
    shared_heaps: HashMap<u64, fheap::Heap>,
}

/// Reads the file (see [`crate::read`]).
pub fn read<S: ReadAt + ?Sized>(src: &S, options: Options) -> Result<File, Hdf5Error> {
    let mut w = Walk {
        src: Source::new(src),
        options,
        objects: Vec::new(),
        findings: Findings::default(),
        headers: HashSet::new(),
        heaps: GlobalHeaps::default(),
        inline_left: inline_budget(src.size()),
        text_left: text_budget(src.size()),
        chunks_left: chunk_budget(src.size()),
        paths_left: path_budget(src.size()),
        shared_indexes: Vec::new(),
        shared_heaps: HashMap::new(),
    };
    let mut early = Vec::new();
    let sb = superblock::read(&mut w.src, &mut early)?;
    for f in early {
        w.find(f.severity, f.place, f.reason);
    }
    if sb.extension != UNDEFINED {
        w.extension(sb.extension)?;
    }
    crate::ahead::read_ahead(&mut w.src, sb.root, MAX_DEPTH);
    // Depth first, children in name order, without recursion: a chain of groups as deep as
    // the file holds costs a stack entry each, not a call frame.
    let mut stack = vec![(sb.root, String::new())];
    while let Some((addr, path)) = stack.pop() {
        let children = w.object(addr, path)?;
        stack.extend(children.into_iter().rev());
    }
    Ok(File {
        superblock_at: sb.at,
        superblock_version: sb.version,
        objects: w.objects,
        findings: w.findings,
        metadata_read: w.src.read,
    })
}

/// What an object header's messages say ([`Walk::messages`]).
#[derive(Default)]
struct Messages {
    attributes: Vec<Attribute>,
    layout: Option<messages::Layout>,
    ty: Option<Type>,
    dims: Option<Option<types::Extent>>,
    filters: Option<Vec<messages::Filter>>,
    external: Option<messages::External>,
    fill: Option<messages::Fill>,
    fill_old: Option<messages::Fill>,
    stab: Option<(u64, u64)>,
    links: Vec<(String, LinkTarget)>,
    group_like: bool,
    /// Why its storage is not read (a shared message not read).
    unread_why: Option<String>,
}

/// Where a dataset in external storage keeps its bytes ([`external::ranges`]): ranges of
/// another file, or why not (data of no tensor type is listed as data).
fn external_storage(
    slots: Option<&Result<Vec<external::Slot>, String>>,
    ty: &Type,
    dims: &[u64],
    offsets: u8,
) -> Storage {
    if ty.tensor_element().is_none() {
        return Storage::Data(format!(
            "its elements are {}: data, not a tensor type",
            ty.describe()
        ));
    }
    let Some(bytes) = types::elements(dims).and_then(|n| n.checked_mul(ty.size(offsets))) else {
        return Storage::Unread(format!("its dimensions {dims:?} overflow"));
    };
    match slots {
        Some(Ok(slots)) => match external::ranges(slots, bytes) {
            Ok((file, ranges)) => Storage::Elsewhere { file, ranges },
            Err(why) => Storage::Unread(why),
        },
        Some(Err(why)) => Storage::Unread(why.clone()),
        None => Storage::Unread("no External Data Files message".into()),
    }
}

/// An object's path for a place: `/` and its path.
fn shown(path: &str) -> String {
    format!("/{path}")
}

impl<S: ReadAt + ?Sized> Walk<'_, S> {
    fn find(&mut self, severity: Severity, place: String, reason: String) {
        self.findings.add(severity, place, reason);
    }

    /// A finding about `file`, another file the library opens (see `Finding::file`).
    fn find_about(&mut self, severity: Severity, place: String, reason: String, file: &str) {
        let mut finding = Finding::new(severity, place, reason);
        finding.file = Some(file.to_owned());
        self.findings.push(finding);
    }

    /// A group's links in dense storage (`link_info` its link info message): read through
    /// the name index, as the library lists them ([`dense`]). Every managed byte of the heap
    /// is also searched for external link messages ([`fheap::dense_links`]): one the index
    /// does not reach is still a FAIL, so no index, however it was edited, hides one.
    fn dense_links(
        &mut self,
        link_info: &[u8],
        path: &str,
        place: &str,
    ) -> Vec<(String, LinkTarget)> {
        let o = self.src.offsets;
        let mut links = Vec::new();
        // The heap's blocks, read once: for the links the index names, and searched for
        // external link messages (unless objects outside the blocks could hold one too).
        let mut searched = None;
        let indexed = match dense::links(link_info, o) {
            Ok(Some(store)) => fheap::open(&mut self.src, store.heap).and_then(|heap| {
                searched = heap.external_links();
                let what = format!("the links of group {place}");
                dense::messages_in(&mut self.src, &heap, store.names, &what)
            }),
            Ok(None) => Ok(Vec::new()),
            Err(e) => Err(e),
        };
        let mut read = true;
        match indexed {
            Ok(messages) => {
                for m in messages {
                    match messages::link(&m.data, o) {
                        Ok(link) => links.push(link),
                        Err(e) => {
                            read = false;
                            self.find(
                                Severity::Lead,
                                place.to_owned(),
                                format!("a link in dense storage not read ({})", e.reason),
                            );
                        }
                    }
                }
            }
            Err(e) => {
                read = false;
                self.find(Severity::Lead, place.to_owned(), format!("its links are in dense storage (a fractal heap and a version 2 B-tree), which was not read to the end ({}: {}): what the group holds was not checked", e.place, e.reason));
            }
        }
        let search = match searched {
            Some(d) => Ok(d),
            None => fheap::dense_links(&mut self.src, link_info),
        };
        match search {
            Ok(d) => {
                for (name, file, to) in d.external {
                    if links.iter().any(|(n, _)| *n == name) {
                        continue; // judged with the group's other links
                    }
                    let child = if path.is_empty() {
                        name
                    } else {
                        format!("{path}/{name}")
                    };
                    let hidden = if read {
                        ", where the group's name index does not reach it"
                    } else {
                        ""
                    };
                    self.find(Severity::Fail, shown(&child), format!("an external link to {to:?} in the file {file:?}, among the group's links in dense storage (a fractal heap){hidden}: h5py opens that file when the name is read"));
                }
                if !d.unread.is_empty() {
                    self.find(
                        Severity::Lead,
                        place.to_owned(),
                        format!(
                            "its dense storage was searched for external links in part: {}",
                            d.unread.join("; ")
                        ),
                    );
                }
            }
            Err(e) => self.find(
                Severity::Lead,
                place.to_owned(),
                format!(
                    "its fractal heap was not searched to the end for external links ({}: {})",
                    e.place, e.reason
                ),
            ),
        }
        links
    }

    /// An object's attributes in dense storage (`attribute_info` its attribute info message),
    /// read through the name index ([`dense`]).
    fn dense_attributes(
        &mut self,
        attribute_info: &[u8],
        place: &str,
    ) -> Result<Vec<Attribute>, Hdf5Error> {
        let o = self.src.offsets;
        let mut out = Vec::new();
        let store = dense::attributes(attribute_info, o)?;
        let messages = match store {
            Some(store) => {
                dense::messages(&mut self.src, store, &format!("the attributes of {place}"))
            }
            None => Ok(Vec::new()),
        };
        let messages = match messages {
            Ok(m) => m,
            Err(e) => {
                self.find(Severity::Lead, place.to_owned(), format!("its attributes are in dense storage (a fractal heap and a version 2 B-tree), which was not read to the end ({}: {})", e.place, e.reason));
                return Ok(out);
            }
        };
        for m in messages {
            // `H5O_MSG_FLAG_SHARED`: the record's ID names the message in the shared-message
            // table's heap (`H5A__dense_iterate_bt2_cb`, `H5Adense.c`).
            let m = if m.flags & 0x02 != 0 {
                match self.table_message_bytes(kind::ATTRIBUTE, &m.data) {
                    Ok(r) => r.data,
                    Err(why) => {
                        self.find(Severity::Lead, place.to_owned(), format!("an attribute in dense storage whose message is shared, {why}: not read"));
                        continue;
                    }
                }
            } else {
                m.data
            };
            match self.attribute(&m, place) {
                Ok(raw) => {
                    let value = self.value(&raw, place)?;
                    out.push(Attribute {
                        name: raw.name,
                        value,
                    });
                }
                Err(e) => self.find(
                    Severity::Lead,
                    place.to_owned(),
                    format!("an attribute in dense storage not read ({})", e.reason),
                ),
            }
        }
        Ok(out)
    }

    /// The superblock extension (`H5F__super_ext_open`, `H5Fsuper.c`): an object header of
    /// file-wide settings (file-space strategy and page size, the B-tree K values, the shared
    /// message table), none of which changes how an object is read, except a driver's
    /// information, which keeps the file's data in other files.
    fn extension(&mut self, addr: u64) -> Result<(), Hdf5Error> {
        let place = "superblock extension";
        for m in header::read(&mut self.src, addr, place)? {
            match m.kind {
                kind::SHARED_TABLE => {
                    let o = self.src.offsets;
                    let table = sohm::table_message(&m.data, o)
                        .and_then(|(at, n)| sohm::table(&mut self.src, at, n));
                    match table {
                        Ok(indexes) => self.shared_indexes = indexes,
                        Err(e) => self.find(Severity::Lead, place.into(), format!("its shared-message table not read ({}: {}): the messages objects share through it are not read", e.place, e.reason)),
                    }
                }
                kind::BTREE_K | kind::FSINFO => {}
                kind::DRIVER_INFO => self.find(Severity::Lead, place.into(), "it names a file driver's information (the family, multi or split drivers, which keep the file's data in other files): not read".into()),
                k => self.find(Severity::Lead, place.into(), format!("a message of type {k:#x}, which the HDF5 library does not store in a superblock extension: not read")),
            }
        }
        Ok(())
    }

    /// A shared message's own bytes (`H5O__shared_decode`, `H5Oshared.c`): for a message
    /// another object header holds (a committed datatype, as `f["t"] = np.dtype(...)` makes),
    /// that header's message of the same type; for one in the shared-message table, the
    /// object its heap ID names in the heap of the index of its type ([`Walk::table_message_bytes`]).
    fn shared(&mut self, m: &header::Message, place: &str) -> Result<header::Message, String> {
        let (o, l) = (self.src.offsets, self.src.lengths);
        let mut c = Cursor::with(&m.data, o, l, "shared message");
        let version = c.u8().map_err(|e| e.reason)?;
        let kind = c.u8().map_err(|e| e.reason)?;
        let addr = match version {
            1 => {
                c.skip(6 + usize::from(l)).map_err(|e| e.reason)?;
                c.addr()
            }
            2 => c.addr(),
            3 if kind == 2 => c.addr(),
            3 if kind == 1 => {
                // `H5O_fheap_id_t`: 8 bytes.
                let id = c.take(8).map_err(|e| e.reason)?.to_vec();
                return self.table_message_bytes(m.kind, &id);
            }
            v => return Err(format!("in a shared message of version {v}, type {kind}")),
        }
        .map_err(|e| e.reason)?;
        let msgs = header::read(&mut self.src, addr, &format!("{place}'s shared message"))
            .map_err(|e| e.reason)?;
        msgs.into_iter()
            .find(|s| s.kind == m.kind && !s.shared())
            .ok_or_else(|| format!("and the object header at address {addr} holds no such message"))
    }

    /// The message of type `message` whose bytes are the object `id` of the shared-message
    /// heap of its type's index (`H5SM_get_fheap_addr`, `H5SM.c`; `H5O__shared_read`,
    /// `H5Oshared.c`).
    fn table_message_bytes(&mut self, message: u16, id: &[u8]) -> Result<header::Message, String> {
        let heap_at = sohm::heap_for(&self.shared_indexes, message).ok_or_else(|| {
            format!("kept in the shared-message table, where no index holds messages of type {message:#x}")
        })?;
        if !self.shared_heaps.contains_key(&heap_at) {
            let heap = fheap::open(&mut self.src, heap_at).map_err(|e| {
                format!(
                    "kept in the shared-message heap, not read ({}: {})",
                    e.place, e.reason
                )
            })?;
            self.shared_heaps.insert(heap_at, heap);
        }
        let heap = self
            .shared_heaps
            .get(&heap_at)
            .ok_or("a shared-message heap not kept")?;
        let data = heap
            .object(&mut self.src, id)
            .map_err(|why| format!("kept in the shared-message heap, not read ({why})"))?;
        Ok(header::Message {
            kind: message,
            flags: 0,
            data,
        })
    }

    /// A virtual dataset's storage ([`vds`]): data, its elements read from the datasets its
    /// mappings name, in this file or others; a FAIL about each other file the library opens
    /// for it ([`Finding::file`]: a note when it is one of the scanned directory's files that
    /// socair reads). Mappings not read leave the dataset a FAIL, as any unread virtual one.
    fn virtual_storage(&mut self, layout: &messages::Layout, place: &str) -> Storage {
        let &messages::Layout::Virtual { heap, index } = layout else {
            return Storage::Unread("not a virtual dataset".into());
        };
        let (o, l) = (self.src.offsets, self.src.lengths);
        let what = format!("{place}'s virtual dataset mappings");
        let read = self
            .heaps
            .object(&mut self.src, heap, index, &what)
            .and_then(|block| vds::mappings(block, o, l));
        let maps = match read {
            Ok(maps) => maps,
            Err(e) => {
                let why = format!("a virtual dataset whose mappings were not read ({}: {}): its elements are read from other datasets, which may lie in other files the HDF5 library opens when it is read", e.place, e.reason);
                self.find(Severity::Fail, place.to_owned(), why.clone());
                return Storage::Unread(why);
            }
        };
        let mut files: Vec<&str> = Vec::new();
        for m in &maps {
            if m.file != "." && !files.contains(&m.file.as_str()) {
                files.push(&m.file);
            }
        }
        for file in files.iter().take(8) {
            let dataset = maps
                .iter()
                .find(|m| m.file == *file)
                .map(|m| m.dataset.as_str())
                .unwrap_or_default();
            self.find_about(Severity::Fail, place.to_owned(), format!("a virtual dataset mapping the dataset {dataset:?} of the file {file:?}: the HDF5 library opens that file (as named, then in this file's directory, then the working directory) when the dataset is read"), file);
        }
        if files.len() > 8 {
            self.find(Severity::Fail, place.to_owned(), format!("a virtual dataset mapping datasets of {} other files: the HDF5 library opens them when the dataset is read", files.len()));
        }
        let whence = if files.is_empty() {
            "this file".to_owned()
        } else {
            format!("{} other file(s) and this one", files.len())
        };
        Storage::Data(format!("a virtual dataset: its elements are those of {} mapped dataset(s) in {whence}, read where they lie", maps.len()))
    }

    /// An attribute message, its shared datatype or dataspace read ([`Walk::shared`]).
    fn attribute(&mut self, data: &[u8], place: &str) -> Result<messages::RawAttribute, Hdf5Error> {
        let (o, l) = (self.src.offsets, self.src.lengths);
        messages::attribute_with(data, o, l, &mut |message, bytes| {
            let shared = header::Message {
                kind: message,
                flags: 0b10,
                data: bytes.to_vec(),
            };
            self.shared(&shared, place).map(|m| m.data).map_err(|why| {
                Hdf5Error::new(
                    "attribute message",
                    format!("its message of type {message:#x} is shared, {why}"),
                )
            })
        })
    }

    /// An object header's messages read: what the object is made of.
    fn messages(
        &mut self,
        msgs: &[header::Message],
        path: &str,
        place: &str,
    ) -> Result<Messages, Hdf5Error> {
        let mut h = Messages::default();
        let place = place.to_owned();
        let (o, l) = (self.src.offsets, self.src.lengths);
        for m in msgs {
            let resolved;
            let m = if m.shared() {
                match self.shared(m, &place) {
                    Ok(r) => {
                        resolved = r;
                        &resolved
                    }
                    Err(why) => {
                        self.find(
                            Severity::Lead,
                            place.clone(),
                            format!(
                                "its message of type {:#x} is shared, {why}: not read",
                                m.kind
                            ),
                        );
                        h.unread_why.get_or_insert_with(|| {
                            "one of its messages is shared (stored elsewhere) and not read".into()
                        });
                        continue;
                    }
                }
            } else {
                m
            };
            match m.kind {
                kind::ATTRIBUTE => match self.attribute(&m.data, &place) {
                    Ok(raw) => {
                        let value = self.value(&raw, &place)?;
                        h.attributes.push(Attribute {
                            name: raw.name,
                            value,
                        });
                    }
                    Err(e) => self.find(Severity::Lead, place.clone(), format!("an attribute not read ({})", e.reason)),
                },
                kind::ATTRIBUTE_INFO => {
                    let dense = self.dense_attributes(&m.data, &place)?;
                    h.attributes.extend(dense);
                }
                kind::SYMBOL_TABLE => {
                    h.stab = Some(messages::symbol_table(&m.data, o)?);
                    h.group_like = true;
                }
                kind::LINK => {
                    h.links.push(messages::link(&m.data, o)?);
                    h.group_like = true;
                }
                kind::LINK_INFO => {
                    h.group_like = true;
                    if messages::dense_links(&m.data, o)? {
                        let dense = self.dense_links(&m.data, path, &place);
                        h.links.extend(dense);
                    }
                }
                kind::LAYOUT => h.layout = Some(messages::layout(&m.data, o, l)?),
                kind::DATATYPE => h.ty = Some(types::datatype(&m.data, o, l)?),
                kind::DATASPACE => h.dims = Some(types::extent(&m.data, o, l)?),
                kind::FILTERS => h.filters = Some(messages::filters(&m.data)?),
                kind::EXTERNAL => h.external = Some(messages::external(&m.data, o, l)?),
                kind::FILL => h.fill = Some(messages::fill(&m.data, false)?),
                kind::FILL_OLD => h.fill_old = Some(messages::fill(&m.data, true)?),
                kind::GROUP_INFO
                | kind::COMMENT
                | kind::MTIME_OLD
                | kind::MTIME
                | kind::BTREE_K
                | kind::REFCOUNT => {}
                k => self.find(Severity::Lead, place.clone(), format!("a header message of type {k:#x}, outside what h5py writes for Keras: not read")),
            }
        }
        Ok(h)
    }

    /// Filters the library would load a plugin library for: a FAIL each, or a LEAD when the
    /// deployment accepts it ([`Options::accepted_filters`]). LZF (32000) is no plugin for
    /// h5py: h5py compiles the filter in and registers it when it is imported
    /// (h5py/_hl/filters.py `compression="lzf"`, lzf/lzf_filter.c), so Keras' loader reads it
    /// without loading a library; socair decodes it ([`filters`]) as it decodes deflate.
    fn judge_plugin_filters(&mut self, fs: &[messages::Filter], place: &str) {
        for f in fs.iter().filter(|f| !filters::registered(f.id)) {
            let reviewed = format!("{}{}", crate::model::ACCEPTED_FILTER_PREFIX, f.id);
            if self.options.accepted_filters.contains(&f.id) {
                self.find(Severity::Lead, place.to_owned(), format!("its chunks pass through {}, a user-defined filter the deployment accepts (reviewed as {reviewed}): the library loads that plugin library to read them; socair does not decode it, so the dataset is not read", f.describe()));
            } else {
                self.find(Severity::Fail, place.to_owned(), format!("its chunks pass through {}, a user-defined filter (one neither the HDF5 library nor h5py registers): the library loads a plugin library from HDF5_PLUGIN_PATH to read them, which runs that library's code; once that library is reviewed, `--reviewed-classes` naming {reviewed} accepts it", f.describe()));
            }
        }
    }

    /// Reads the object at `addr`, reached by `path`; returns the objects its links lead to,
    /// by their paths, for the walk to read next.
    fn object(&mut self, addr: u64, path: String) -> Result<Vec<(u64, String)>, Hdf5Error> {
        if !self.headers.insert(addr) {
            // Another link to an object already read (a hard link, as h5py's
            // `f["b"] = f["a"]` makes, or a loop back to a group): h5py reads the same object
            // by either name, so it is listed once, by the first path.
            return Ok(Vec::new());
        }
        let msgs = header::read(&mut self.src, addr, &shown(&path))?;
        let place = shown(&path);
        let Messages {
            attributes,
            layout,
            ty,
            dims,
            filters,
            external,
            fill,
            fill_old,
            stab,
            mut links,
            group_like,
            unread_why,
        } = self.messages(&msgs, &path, &place)?;
        let slots = external
            .as_ref()
            .map(|ext| self.external_slots(ext, &place));
        if let Some(fs) = &filters {
            self.judge_plugin_filters(fs, &place);
        }
        let kind = match (layout, ty, dims) {
            (Some(layout), Some(ty), Some(extent)) => {
                let (dims, max) = match extent {
                    Some((d, m)) => (Some(d), m),
                    None => (None, None),
                };
                // The new fill value message wins over the old one (`H5D__open_oid`).
                let fill = fill.or(fill_old).unwrap_or_default();
                let storage = match (&unread_why, &external, dims.as_ref()) {
                    (Some(why), _, _) => Storage::Unread(why.clone()),
                    (_, Some(_), Some(d)) => {
                        external_storage(slots.as_ref(), &ty, d, self.src.offsets)
                    }
                    (_, _, None) => {
                        Storage::Unread("a null dataspace: it holds no elements".into())
                    }
                    (None, None, Some(_)) if matches!(layout, messages::Layout::Virtual { .. }) => {
                        self.virtual_storage(&layout, &place)
                    }
                    (None, None, Some(d)) => {
                        let stored = crate::dataset::Stored {
                            ty: &ty,
                            dims: d,
                            max: max.as_deref(),
                            filters: filters.as_deref().unwrap_or(&[]),
                            fill: &fill,
                        };
                        crate::dataset::Locator {
                            src: &mut self.src,
                            findings: &mut self.findings,
                            read_data: self.options.read_data,
                            inline_left: &mut self.inline_left,
                            chunks_left: &mut self.chunks_left,
                        }
                        .storage(&place, &layout, &stored)?
                    }
                };
                Kind::Dataset(Dataset {
                    ty,
                    dims: dims.unwrap_or_default(),
                    storage,
                })
            }
            // A committed (named) datatype: a type datasets may share, data.
            (None, Some(ty), None) if !group_like => {
                Kind::Other(format!("a committed datatype ({})", ty.describe()))
            }
            (None, None, None) if group_like => Kind::Group,
            (None, None, None) if path.is_empty() => Kind::Group,
            _ => {
                self.find(Severity::Lead, place.clone(), "an object that is neither a group nor a dataset with a type, a dataspace and a layout: not read".into());
                Kind::Other("an object of no kind this reader models".into())
            }
        };
        let is_group = kind == Kind::Group;
        self.objects.push(Object {
            path: path.clone(),
            kind,
            attributes,
        });
        if !is_group {
            return Ok(Vec::new());
        }
        let mut children: Vec<(String, LinkTarget)> = Vec::new();
        if let Some((tree, heap)) = stab {
            for e in btree::group_entries(&mut self.src, tree, heap, &place)? {
                let target = match e.soft {
                    Some(soft) => LinkTarget::Soft(soft),
                    None => LinkTarget::Hard(e.header),
                };
                children.push((e.name, target));
            }
        }
        // Link messages are stored in creation order; the library lists a group by name.
        links.sort_by(|a, b| a.0.cmp(&b.0));
        children.extend(links);
        let mut next = Vec::new();
        let mut names = HashSet::new();
        for (name, target) in children {
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}/{name}")
            };
            if name.is_empty() || name == "." || name.contains('/') {
                self.find(Severity::Fail, shown(&child), format!("a link named {name:?} in group {place}: HDF5 paths cannot name it, and its objects would be confused with others"));
                continue;
            }
            if !names.insert(name.clone()) {
                self.find(Severity::Fail, shown(&child), format!("group {place} holds two links named {name:?}: readers disagree on which one the name reaches"));
                continue;
            }
            match target {
                LinkTarget::Hard(at) => {
                    if child.len() as u64 > self.paths_left {
                        self.find(Severity::Lead, shown(&child), format!("the paths of the groups nested this deep pass what socair holds for a file of this size ({} bytes): what is below was not read", path_budget(self.src.len)));
                        break;
                    }
                    self.paths_left -= child.len() as u64;
                    next.push((at, child));
                }
                // An alias by path, inside this file: h5py resolves it when the name is read
                // (to the object listed under its own path, or to nothing: a KeyError). It
                // opens nothing else and runs nothing.
                LinkTarget::Soft(_) => {}
                // Judged again by the host when a directory is scanned: a file of it that
                // socair reads is data (h5py looks for a relative name in this file's
                // directory first: `H5F_prefix_open_file`, `H5Fint.c`).
                LinkTarget::External { file, path: to } => self.find_about(Severity::Fail, shown(&child), format!("an external link to {to:?} in the file {file:?}: h5py opens that file when the name is read"), &file),
                LinkTarget::User(k) => self.find(Severity::Lead, shown(&child), format!("a link of user-defined type {k}: the HDF5 library runs a registered callback to resolve it; not followed")),
            }
        }
        Ok(next)
    }

    /// A dataset's external storage ([`external`]): its slots, their names read from the
    /// message's local heap, and a FAIL naming each file the library opens to read it, about
    /// that file ([`Finding::file`]: the host makes it a note when the file is one of the
    /// scanned directory's that socair reads, the bytes socair fingerprints there).
    fn external_slots(
        &mut self,
        ext: &messages::External,
        place: &str,
    ) -> Result<Vec<external::Slot>, String> {
        let heap = btree::local_heap(&mut self.src, ext.heap, place);
        let unlimited = if self.src.lengths >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * u32::from(self.src.lengths))) - 1
        };
        let mut slots = Vec::new();
        let mut named: Vec<String> = Vec::new();
        for &(name, offset, size) in &ext.slots {
            let name = heap
                .as_ref()
                .map_err(|e| e.reason.clone())
                .and_then(|h| btree::heap_string(h, name, place).map_err(|e| e.reason));
            match name {
                Ok(name) => {
                    if !named.contains(&name) && named.len() < 8 {
                        named.push(name.clone());
                        self.find_about(Severity::Fail, place.to_owned(), format!("its raw data lives in the file {name:?} (an External Data Files message): the HDF5 library opens that file, as named or against the working directory, when the dataset is read; outside the scanned directory, that reads a local file into the weights"), &name);
                    }
                    slots.push(external::Slot {
                        name,
                        offset,
                        size: (size != unlimited).then_some(size),
                    });
                }
                Err(why) => {
                    self.find(Severity::Fail, place.to_owned(), format!("its raw data lives in other files (an External Data Files message) whose names were not read ({why}): the HDF5 library opens them when the dataset is read"));
                    return Err(
                        "its bytes are in other files (external storage) whose names were not read"
                            .into(),
                    );
                }
            }
        }
        if ext.slots.is_empty() {
            self.find(Severity::Fail, place.to_owned(), "an External Data Files message of no slot: the HDF5 library refuses to read the dataset".into());
        }
        Ok(slots)
    }

    /// An attribute's value; a malformed one is an error naming the attribute.
    fn value(&mut self, raw: &messages::RawAttribute, place: &str) -> Result<Value, Hdf5Error> {
        let what = format!("attribute {:?} of {place}", raw.name);
        let Some(dims) = &raw.dims else {
            return Ok(Value::Other("a null dataspace".into()));
        };
        let size = raw.ty.size(self.src.offsets);
        let count = types::elements(dims)
            .filter(|n| {
                n.checked_mul(size)
                    .is_some_and(|b| b <= raw.data.len() as u64)
            })
            .ok_or_else(|| {
                Hdf5Error::new(
                    &what,
                    format!(
                        "{} bytes of value for {dims:?} elements of {size} bytes",
                        raw.data.len()
                    ),
                )
            })?;
        let n = count as usize;
        let sz = size as usize;
        // A packed integer is read as the integer of its size (`Type::widen`).
        let widened;
        let (ty, data) = match raw.ty {
            Type::PackedInt {
                size,
                signed,
                order,
                ..
            } => {
                let mut data = raw.data.clone();
                raw.ty.widen(&mut data);
                widened = (
                    Type::Int {
                        size,
                        signed,
                        order,
                    },
                    data,
                );
                (&widened.0, &widened.1[..])
            }
            ref ty => (ty, &raw.data[..]),
        };
        let elem = |i: usize| data.get(i * sz..(i + 1) * sz).unwrap_or_default();
        let uint = |b: &[u8], order: types::Order| -> u64 {
            let f = |acc: u64, x: &u8| (acc << 8) | u64::from(*x);
            match order {
                types::Order::Little => b.iter().rev().fold(0, f),
                types::Order::Big => b.iter().fold(0, f),
            }
        };
        Ok(match ty {
            Type::Int {
                signed: true,
                order,
                size,
            } => Value::Ints(
                (0..n)
                    .map(|i| {
                        let v = uint(elem(i), *order);
                        let shift = 64 - 8 * size;
                        ((v << shift) as i64) >> shift
                    })
                    .collect(),
            ),
            Type::Int {
                signed: false,
                order,
                ..
            } => Value::UInts((0..n).map(|i| uint(elem(i), *order)).collect()),
            Type::Float { size, order } => Value::Floats(
                (0..n)
                    .map(|i| {
                        let v = uint(elem(i), *order);
                        match size {
                            4 => f64::from(f32::from_bits(v as u32)),
                            8 => f64::from_bits(v),
                            _ => f64::NAN,
                        }
                    })
                    .collect(),
            ),
            Type::Bool => Value::Bools((0..n).map(|i| elem(i) != [0]).collect()),
            Type::FixedString { pad, .. } => Value::Strings(
                (0..n)
                    .map(|i| {
                        let b = elem(i);
                        let b = match pad {
                            2 => {
                                let end = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
                                b.get(..end).unwrap_or_default()
                            }
                            _ => {
                                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                                b.get(..end).unwrap_or_default()
                            }
                        };
                        String::from_utf8_lossy(b).into_owned()
                    })
                    .collect(),
            ),
            Type::VarString => {
                let mut out = Vec::with_capacity(n.min(1 << 16));
                for i in 0..n {
                    let mut c = Cursor::with(elem(i), self.src.offsets, self.src.lengths, "string");
                    let len = c.u32()?;
                    let heap = c.addr()?;
                    let index = c.u32()?;
                    if heap == UNDEFINED || (len == 0 && index == 0) {
                        out.push(String::new());
                        continue;
                    }
                    if u64::from(len) > self.text_left {
                        self.find(Severity::Lead, place.to_owned(), format!("the strings of attribute {:?} would pass what socair decodes for a file of this size (its size and 1 MiB): not read", raw.name));
                        return Ok(Value::Other("strings past the decoding budget".into()));
                    }
                    self.text_left -= u64::from(len);
                    let bytes = self.heaps.object(&mut self.src, heap, index, &what)?;
                    let s = usize::try_from(len)
                        .ok()
                        .and_then(|l| bytes.get(..l))
                        .ok_or_else(|| {
                            Hdf5Error::new(
                                &what,
                                format!(
                                    "a string of {len} bytes in a global heap object of {}",
                                    bytes.len()
                                ),
                            )
                        })?;
                    out.push(String::from_utf8_lossy(s).into_owned());
                }
                Value::Strings(out)
            }
            Type::Other { what, .. } => Value::Other(what.clone()),
            Type::Array { .. } => Value::Other(raw.ty.describe()),
            // Widened to `Type::Int` above; never met here.
            Type::PackedInt { .. } => Value::Other(raw.ty.describe()),
            Type::Opaque { size } => Value::Other(format!("an opaque type of {size} bytes")),
            Type::Complex { size, .. } => Value::Other(format!("complex numbers of {size} bytes")),
        })
    }
}
