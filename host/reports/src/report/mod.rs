//! Reports: what a scan found, as the `socair.report/v1` document.
//!
//! Lives here: the document's types ([`document`]), the scan that gathers every plugin's rows
//! into one report ([`scan`]), what the host says of files no plugin reads ([`companion`], by
//! the plugin kit's rules), what the files point at (index files, GGUF splits, external data:
//! [`pointers`]), the Tensor reference row ([`reference`]), and where a clean artifact's
//! tensors lie for a loader ([`load`]). May use `base`,
//! `read` and `fingerprint`; never `convert`, `airlock` or `cli`.

pub mod batch;
pub mod companion;
pub mod cyclonedx;
pub mod document;
pub mod hub;
pub mod load;
pub mod pointers;
pub mod reference;
pub mod sarif;
pub mod scan;
pub mod scanned;
