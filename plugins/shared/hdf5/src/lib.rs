//! A strict, bounded reader of HDF5 as libhdf5 1.14 and 2.0 write it for h5py, Keras and
//! their neighbours (`model.weights.h5` in a `.keras` archive, legacy `.h5` models,
//! `.weights.h5` files): superblocks 0 to 3 ([`superblock`]), object headers 1 and 2
//! ([`header`]), old-style groups (symbol tables, version 1 B-trees, local heaps) and compact
//! new-style ones (link messages), attributes of the types Keras stores (strings fixed and
//! variable-length, through the global heap; numbers; booleans), and datasets: their type,
//! shape and bytes ([`types`], [`messages`], [`dataset`]), contiguous, compact or chunked under
//! every chunk index the library writes (a version 1 B-tree [`btree`], a single chunk, an
//! implicit layout, a fixed or extensible array [`chunk_index`], a version 2 B-tree
//! [`btree2`]), their filters undone (deflate, shuffle, Fletcher-32, scale-offset, szip,
//! n-bit, h5py's LZF: [`filters`])
//! and what was never written read as the fill value; of a group whose links are in dense
//! storage, the external links in its fractal heap ([`fheap`]); messages kept once in the
//! shared-message table ([`sohm`]); array elements of numbers as more dimensions.
//!
//! It names every dataset's bytes as byte ranges of the file where they lie there in row-major
//! order, and otherwise assembles them (tiles, filtered chunks, fill values) within a budget,
//! so a host fingerprints them as h5py reads them. What makes the HDF5 library
//! open other files is a [`Severity::Fail`] finding naming the object: external raw storage
//! (the External Data Files message, [`external`]: its bytes named as ranges of that file),
//! external links, virtual datasets mapped from other files ([`vds`]), each about the file
//! it opens (`Finding::file`, which a host scanning that file's directory judges), and
//! user-defined filters (ids 256 and above, loaded from plugin libraries). Everything else outside the
//! subset is a [`Severity::Lead`] finding, and a malformed structure an [`Hdf5Error`] naming
//! the place.
//!
//! Why not a crate from crates.io (`hdf5-reader` 0.12, `hdf5-pure` 0.47, `rustyhdf5` 1.93,
//! `hdf5-rust` 1.1, read in December 2026): each allocates from header fields in hundreds of
//! places (6,000 to 130,000 lines), decodes values where socair needs byte ranges, and follows
//! or rejects external storage rather than reporting it; `hdf5-reader` brings `libc`, `lru`
//! and `rayon`, `rustyhdf5` memory-mapping. What socair reports is the product, so the format
//! is read here, by a reader that bounds every count and refuses what it does not model.
//!
//! Pure functions over [`ReadAt`]: nothing here writes, opens another file or runs anything.

pub mod ahead;
pub mod btree;
pub mod btree2;
pub mod chunk_index;
pub mod dataset;
pub mod dense;
pub mod external;
pub mod fheap;
pub mod filters;
pub mod header;
pub mod io;
pub mod messages;
pub mod model;
pub mod nbit;
pub mod sohm;
pub mod superblock;
pub mod szip;
pub mod types;
pub mod vds;
pub mod walk;

pub use model::{
    Attribute, Dataset, File, Finding, Findings, Hdf5Error, Kind, Object, Options, Severity,
    Storage, Value, UNDEFINED,
};
pub use socair_plugin_api::ReadAt;
pub use types::{Order, Type};

/// Reads the HDF5 file `src`.
pub fn read<S: ReadAt + ?Sized>(src: &S, options: Options) -> Result<File, Hdf5Error> {
    walk::read(src, options)
}

/// Whether `head` (a file's first bytes) holds the HDF5 signature where the library looks.
pub fn detect(head: &[u8]) -> bool {
    superblock::signature_in(head).is_some()
}

/// Whether the file is HDF5 with its superblock past the first 4096 bytes, after a user block
/// (see [`superblock::signature_past_head`]).
pub fn detect_past_head<S: ReadAt + ?Sized>(src: &S) -> bool {
    superblock::signature_past_head(src).is_some()
}
