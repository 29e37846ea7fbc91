//! Reading an artifact: the input files and their bytes ([`source`], the crate's only
//! `unsafe`), plugin discovery and loading ([`plugins`]), model directories and their digest
//! ([`modeldir`]), the Hugging Face cache's snapshots and `hf://` URIs ([`hfcache`]),
//! resolving a path into files and the readers that claim them ([`artifact`]), the artifacts
//! under a directory ([`discover`]), objects in object storage read in ranges ([`remote`]), a
//! file's digest computed from its readers' reads ([`tap`]), the local headers a zip's
//! directory lists ([`zip_hints`]), and a tensor's bytes in row-major order whatever their
//! layout ([`layout`]). May use `base` only.

pub mod artifact;
pub mod discover;
pub mod hfcache;
pub mod layout;
pub mod modeldir;
pub mod plugins;
pub mod remote;
pub mod remote_dir;
pub mod source;
pub mod tap;
pub mod zip_hints;
