//! The `socair-wo` pickle machine, shared by every first-party plugin that meets pickles
//! (torch checkpoints, NumPy object arrays, pickles in archives): [`pickle`] runs a pickle
//! over typed values and, once it leaves the grammar, over abstract ones, never over Python
//! objects; [`globals`] says what each global means (part of the grammar, code that runs, or
//! unknown). Pure functions over bytes: nothing here reads files or talks to the host.
//!
//! [`grammar`] (the versions of `socair-wo`) and [`profile`] (the library profiles, and the
//! arrays a run finds) are the vocabulary both sides use: leaves, importing neither, so that
//! `globals` and `pickle` never import each other in a circle.

pub mod globals;
pub mod grammar;
pub mod pickle;
pub mod profile;
