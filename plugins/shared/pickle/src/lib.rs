//! The `socair-wo` pickle machine, shared by every first-party plugin that meets pickles
//! (torch checkpoints, NumPy object arrays, pickles in archives): [`pickle`] runs a pickle
//! over typed values and, once it leaves the grammar, over abstract ones, never over Python
//! objects; [`globals`] says what each global means (part of the grammar, code that runs, or
//! unknown). Pure functions over bytes: nothing here reads files or talks to the host.

pub mod globals;
pub mod pickle;
