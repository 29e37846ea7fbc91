//! A strict, bounded reader of the HDF5 subset h5py writes for Keras (`model.weights.h5` in a
//! `.keras` archive, legacy `.h5` models and `.weights.h5` files): superblocks 0 to 3
//! ([`superblock`]), object headers 1 and 2 ([`header`]), old-style groups (symbol tables,
//! version 1 B-trees, local heaps) and compact new-style ones (link messages), attributes of
//! the types Keras stores (strings fixed and variable-length, through the global heap; numbers;
//! booleans), and datasets: their type, shape and where their bytes are, contiguous, compact or
//! chunked through a version 1 B-tree ([`types`], [`messages`], [`btree`], [`walk`]); of a
//! group whose links are in dense storage, the external links in its fractal heap ([`fheap`]).
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

pub mod ahead;
pub mod btree;
pub mod fheap;
pub mod header;
pub mod io;
pub mod messages;
pub mod model;
pub mod superblock;
pub mod types;
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
