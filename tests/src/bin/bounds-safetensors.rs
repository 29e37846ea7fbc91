//! `bounds-safetensors FILE`: the safetensors plugin's whole side of one `open` (the header
//! parser and the plugin's `opened_file` glue) on FILE, then a summary of what it returned
//! and this program's own peak resident memory. `plugins/safetensors/reader/tests/bounds.rs` runs it
//! on each hostile shape and holds it to the readers' bounds (`socair_test_support::measure`).

use socair_test_support::{measure, saved};

fn main() {
    let data = measure::child_input();
    let opened = socair_safetensors::opened_file(socair_safetensors::header::parse_header(
        &data,
        data.len() as u64,
    ));
    println!("plugin: {}", saved::summary(&opened));
    measure::print_own_peak();
}
