//! A strict, bounded reader of the HDF5 subset h5py writes for Keras (`model.weights.h5` in a
//! `.keras` archive, legacy `.h5` models and `.weights.h5` files): superblocks 0 to 3
//! ([`superblock`]), object headers 1 and 2 ([`header`]), old-style groups (symbol tables,
//! version 1 B-trees, local heaps) and compact new-style ones (link messages), attributes of
//! the types Keras stores (strings fixed and variable-length, through the global heap; numbers;
//! booleans), and datasets: their type, shape and where their bytes are, contiguous, compact or
//! chunked through a version 1 B-tree ([`types`], [`messages`], [`btree`], [`walk`]).
//!
//! It reads metadata only and names every dataset's bytes as byte ranges of the file (or,
//! when chunks do not lie in row-major order, their bytes assembled within a budget), so a
//! host fingerprints them without this crate decoding a value. What makes the HDF5 library
//! open other files is a [`Severity::Fail`] finding naming the object: external raw storage
//! (the External Data Files message), external links, virtual datasets, and user-defined
//! filters (ids 256 and above, loaded from plugin libraries). Everything else outside the
//! subset is a [`Severity::Lead`] finding, and a malformed structure an [`Hdf5Error`] naming
//! the place.
//!
//! Why not a crate from crates.io (`hdf5-reader` 0.12, `hdf5-pure` 0.47, `rustyhdf5` 1.93,
//! `hdf5-rust` 1.1, read in December 2026): each reads far more of the format than Keras
//! writes (fractal heaps, version 2 B-trees, every filter; 6,000 to 130,000 lines), allocates
//! from header fields in hundreds of places, decodes values where socair needs byte ranges,
//! and follows or rejects external storage rather than reporting it; `hdf5-reader` brings
//! `libc`, `lru` and `rayon`, `rustyhdf5` memory-mapping. What socair reports is the product,
//! so the subset is read here, by a reader that refuses what it does not model.
//!
//! Pure functions over [`ReadAt`]: nothing here writes, opens another file or runs anything.

pub mod btree;
pub mod header;
pub mod io;
pub mod messages;
pub mod superblock;
pub mod types;
pub mod walk;

pub use socair_plugin_api::ReadAt;
pub use types::{Order, Type};

/// HDF5's undefined address (all bits set).
pub const UNDEFINED: u64 = u64::MAX;

/// Why a file is refused: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {reason}")]
pub struct Hdf5Error {
    /// The place: a structure and its address, an object's path.
    pub place: String,
    /// What is wrong there.
    pub reason: String,
}

impl Hdf5Error {
    /// An error at `place`.
    pub fn new(place: impl Into<String>, reason: impl Into<String>) -> Self {
        Hdf5Error {
            place: place.into(),
            reason: reason.into(),
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Outside what this reader models: a person looks.
    Lead,
    /// The HDF5 library would open another file (or load a plugin) reading this one.
    Fail,
}

/// One thing found, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// Where: an object's path (`/layers/dense/vars/0`), a byte offset.
    pub place: String,
    /// Why.
    pub reason: String,
}

/// Findings: the first [`MAX_FINDINGS`] listed, the rest counted, the worst kept (one type
/// for the HDF5 walk and the Keras checks built on it).
#[derive(Debug, Clone, Default)]
pub struct Listed {
    /// Listed.
    pub shown: Vec<Finding>,
    /// Counted past those.
    pub more: u64,
    /// The worst of all of them.
    pub worst: Option<Severity>,
}

impl Listed {
    /// Adds one.
    pub fn add(&mut self, severity: Severity, place: impl Into<String>, reason: impl Into<String>) {
        self.worst = self.worst.max(Some(severity));
        if self.shown.len() < MAX_FINDINGS {
            self.shown.push(Finding {
                severity,
                place: place.into(),
                reason: reason.into(),
            });
        } else {
            self.more += 1;
        }
    }

    /// Adds every finding of `other`, listed or counted.
    pub fn extend(&mut self, other: Listed) {
        for f in other.shown {
            self.add(f.severity, f.place, f.reason);
        }
        self.more += other.more;
        self.worst = self.worst.max(other.worst);
    }
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Strings (fixed-length ones with their padding removed), decoded as UTF-8 with
    /// replacement.
    Strings(Vec<String>),
    /// Signed integers.
    Ints(Vec<i64>),
    /// Unsigned integers.
    UInts(Vec<u64>),
    /// Floats.
    Floats(Vec<f64>),
    /// Booleans.
    Bools(Vec<bool>),
    /// Not decoded: why.
    Other(String),
}

/// An attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: Value,
}

/// Where a dataset's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// Absolute `(offset, len)` ranges of the file, in row-major order.
    Ranges(Vec<(u64, u64)>),
    /// The bytes themselves (compact storage, or chunks assembled in row-major order).
    Inline(Vec<u8>),
    /// No elements.
    Empty,
    /// Not located: why.
    Unread(String),
}

/// A dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    /// Its type.
    pub ty: Type,
    /// Its dimensions (empty for a scalar).
    pub dims: Vec<u64>,
    /// Its bytes.
    pub storage: Storage,
}

/// What an object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A group.
    Group,
    /// A dataset.
    Dataset(Dataset),
    /// Something else (a committed datatype): what.
    Other(String),
}

/// One object, reached by one path.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Its path from the root, `/`-separated, without a leading `/` (the root is ``).
    pub path: String,
    /// What it is.
    pub kind: Kind,
    /// Its attributes, in header order.
    pub attributes: Vec<Attribute>,
}

impl Object {
    /// The attribute named `name`.
    pub fn attribute(&self, name: &str) -> Option<&Value> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| &a.value)
    }
}

/// What a read found.
#[derive(Debug, Clone)]
pub struct File {
    /// The superblock's offset (a user block's size).
    pub superblock_at: u64,
    /// The superblock's version.
    pub superblock_version: u8,
    /// Every object, depth first, each group's links by name.
    pub objects: Vec<Object>,
    /// What lies outside the subset or opens other files.
    pub findings: Listed,
    /// Metadata bytes read.
    pub metadata_read: u64,
}

impl File {
    /// The object at `path`.
    pub fn object(&self, path: &str) -> Option<&Object> {
        self.objects.iter().find(|o| o.path == path)
    }

    /// The worst finding's severity.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.worst
    }
}

/// Findings listed; the rest are counted.
pub const MAX_FINDINGS: usize = 256;

/// Options of one read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Read chunks that do not lie in row-major order and assemble them (within
    /// [`walk::inline_budget`]); without it such datasets are left unread.
    pub read_data: bool,
}

/// Reads the HDF5 file `src`.
pub fn read<S: ReadAt + ?Sized>(src: &S, options: Options) -> Result<File, Hdf5Error> {
    walk::read(src, options)
}

/// Whether `head` (a file's first bytes) holds the HDF5 signature where the library looks.
pub fn detect(head: &[u8]) -> bool {
    superblock::signature_in(head).is_some()
}
