//! Keras rules without Keras or TensorFlow: the grammar of what `keras.saving` serializes
//! ([`grammar`], against the tables of Keras' own registries in [`table`]), and the reading of
//! the files Keras writes: `.keras` archives ([`archive`]: `config.json`, `metadata.json`,
//! `model.weights.h5`, `assets/`), a model directory's `config.json` ([`config`]) and HDF5 files ([`h5model`]: legacy `.h5` models whose
//! `model_config` attribute is judged, `.weights.h5` files, and any other HDF5 file, through
//! `socair-hdf5`).
//!
//! Each read yields an [`Analysis`]: what the file is, every weight as a [`Tensor`] named by
//! its HDF5 path and located by byte ranges of the opened file (or held inline), and the
//! findings of each check. The Keras plugin turns it into rows; the archive plugin calls
//! [`archive::read_bytes`] and [`h5model::read_bytes`] for members it meets. Pure functions
//! over `ReadAt`: nothing here runs, imports or extracts anything.

pub mod archive;
pub mod config;
pub mod grammar;
pub mod h5model;
pub mod pickles;
pub mod table;

pub use socair_hdf5::Severity;
use socair_hdf5::{Finding, Order};

/// A weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name: its HDF5 path (inside `model.weights.h5` for a `.keras` archive).
    pub name: String,
    /// Its element type in socair's vocabulary (`F32`, `BF16`, `I64`, `BOOL`, …).
    pub element: &'static str,
    /// Byte order of each element.
    pub order: Order,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Where its bytes are.
    pub bytes: Bytes,
}

/// Where a tensor's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bytes {
    /// `(offset, len)` ranges of the opened file, in row-major order (none: no elements).
    Ranges(Vec<(u64, u64)>),
    /// The bytes themselves (a deflated member's, compact storage, reordered chunks).
    Inline(Vec<u8>),
    /// `(offset, len)` ranges of another file (HDF5 external raw storage), named relative to
    /// the opened file's directory as the HDF5 file names it.
    Elsewhere {
        /// The other file.
        file: String,
        /// Its ranges, in row-major order.
        ranges: Vec<(u64, u64)>,
    },
}

/// Findings of one check: the first 256 listed, the rest counted.
pub use socair_plugin_kit::model::Findings;

/// What one read of a Keras or HDF5 file found.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// What the file is, in words (`a Keras 3 archive (keras 3.15.1)`).
    pub kind: String,
    /// An HDF5 file nothing marks as Keras': its datasets are datasets, not a model's weights.
    pub plain_hdf5: bool,
    /// The structure: the zip's and the HDF5 file's, what lies outside the subset, what opens
    /// other files.
    pub structure: Findings,
    /// The config grammar's outcome, when a config was judged.
    pub config: Option<grammar::Judged>,
    /// Why no config was judged, when none was.
    pub no_config: String,
    /// Members of an archive beside the model's own (assets, code, pickles).
    pub members: Findings,
    /// Members read as data (assets that are JSON or text).
    pub data_members: u64,
    /// Every weight located.
    pub tensors: Vec<Tensor>,
    /// Weights not located: `(name, why)`.
    pub unread: Vec<(String, String)>,
    /// Weights located but not assembled in a read of headers only: `(name, why)`.
    pub deferred: Vec<(String, String)>,
    /// Datasets of data that is no tensor's (strings, compound records…), by path, with what
    /// they hold: sound, listed, not fingerprinted.
    pub data: Vec<(String, String)>,
    /// File-level metadata (`keras_version`, `backend`, …).
    pub metadata: Vec<(String, String)>,
    /// For a stored `model.weights.h5` read in place: the member's name and where its bytes
    /// start in the opened file, so a tensor's range is also a place in that zip record (the
    /// second path a conversion reads through the `zip` crate).
    pub record: Option<(String, u64)>,
    /// Set when the file is refused as a whole.
    pub refused: Option<Finding>,
}

/// An [`Analysis`] of a file refused as a whole.
pub fn refused(kind: &str, place: String, reason: String) -> Analysis {
    Analysis {
        kind: kind.to_owned(),
        no_config: "the file was refused before its config was read".into(),
        refused: Some(Finding::new(Severity::Fail, place, reason)),
        ..Analysis::default()
    }
}
