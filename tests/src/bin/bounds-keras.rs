//! `bounds-keras FILE`: the Keras plugin's whole side of one `open` on FILE (a `.keras` zip
//! when it starts with `PK`, an HDF5 model otherwise), then a summary of what it returned and
//! this program's own peak resident memory. `plugins/keras/plugin/tests/bounds.rs` runs it on
//! each hostile shape and holds it to the readers' bounds (`socair_test_support::measure`).

use socair_test_support::{measure, saved};

fn main() {
    let data = measure::child_input();
    let opened = if data.starts_with(b"PK") {
        let a = socair_keras::archive::read(&data[..], true, &[]);
        socair_plugin_keras::opened(a, "keras", data.len() as u64)
    } else {
        let a = socair_keras::h5model::read(&data[..], true, &[]);
        socair_plugin_keras::opened(a, "hdf5", data.len() as u64)
    };
    println!("plugin: {}", saved::summary(&opened));
    measure::print_own_peak();
}
