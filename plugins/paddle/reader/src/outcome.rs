//! Every reader of this plugin gathers what it reads into the reading model's one
//! [`Reading`], listing its FAILs first ([`read`]).

pub use socair_plugin_kit::reading::{listed, Reading};

/// A read of a file of `file_len` bytes in `format`, its FAILs listed first.
pub fn read(format: &'static str, file_len: u64) -> Reading {
    let mut r = Reading::new(format, file_len);
    r.fails_first = true;
    r
}
