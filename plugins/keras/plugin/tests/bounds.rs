//! The plugin alone on hostile shapes (`shapes.rs`): each written to a file and read in a
//! child process (`child`), whose peak RSS, time and output are held to 64 MiB + 8x the
//! input, 5 s per 30 MB and 8x the input (`tests/tests/bounds/measure.rs`).

use crate::measure::{plugin_alone, TARGET};
use crate::shapes::*;

/// In a child run only: reads the file named by `SOCAIR_BOUNDS_CHILD` and opens it as the
/// plugin would.
#[test]
fn child() {
    let Some(data) = crate::measure::child_input() else {
        return;
    };
    let opened = if data.starts_with(b"PK") {
        let a = socair_keras::archive::read(&data[..], true, &[]);
        socair_plugin_keras::opened(a, "keras", data.len() as u64)
    } else {
        let a = socair_keras::h5model::read(&data[..], true, &[]);
        socair_plugin_keras::opened(a, "hdf5", data.len() as u64)
    };
    println!("plugin: {}", socair_plugin_kit::testing::summary(&opened));
    crate::measure::print_own_peak();
}

#[test]
fn hdf5_hundreds_of_thousands_of_datasets() {
    let data = hdf5_many_datasets(TARGET / 136);
    plugin_alone("hdf5-many-datasets", "many.h5", data, "bounds::child");
}

#[test]
fn keras_config_of_millions_of_unknown_objects() {
    let data = keras_unknown_objects(TARGET / 60);
    plugin_alone(
        "keras-unknown-objects",
        "unknown.keras",
        data,
        "bounds::child",
    );
}

#[test]
fn keras_config_nested_as_deep_as_json_goes() {
    let data = keras_deep_config(TARGET / 2);
    plugin_alone("keras-deep-config", "deep.keras", data, "bounds::child");
}

#[test]
fn keras_config_just_under_the_parse_cap() {
    // Eight values an object: 36,000 objects is about as many values as the grammar parses for a
    // config of this size (64 MiB + 4x its size at 256 bytes a value), every one judged.
    let data = keras_unknown_objects(36_000);
    plugin_alone(
        "keras-objects-at-the-cap",
        "cap.keras",
        data,
        "bounds::child",
    );
}
