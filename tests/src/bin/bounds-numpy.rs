//! `bounds-numpy FILE`: the NumPy plugin's whole side of one `open` of an `.npz` (the reader
//! and the plugin's `opened_file` glue) on FILE, then a summary of what it returned and this
//! program's own peak resident memory. `plugins/numpy/reader/tests/bounds.rs` runs it on each hostile
//! shape and holds it to the readers' bounds (`socair_test_support::measure`).

use socair_numpy::{opened_file, read, span::Span};
use socair_test_support::{measure, saved};

fn main() {
    let data = measure::child_input();
    let opened = opened_file(read::read_npz(Span::file_bytes(&data), false, &[]));
    println!("plugin: {}", saved::summary(&opened));
    measure::print_own_peak();
}
