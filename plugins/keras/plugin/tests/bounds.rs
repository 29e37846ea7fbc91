//! The plugin alone on hostile shapes (`shapes.rs`): each written to a file and read by
//! `bounds-keras` (a program of `socair-tests`), whose peak RSS, CPU time and output are held
//! to 64 MiB + 8x the input, 5 s per 30 MB and 8x the input (`socair_test_support::measure`).

use crate::shapes::*;
use socair_test_support::measure::{plugin_alone, TARGET};

#[test]
fn hdf5_hundreds_of_thousands_of_datasets() {
    let data = hdf5_many_datasets(TARGET / 136);
    plugin_alone("hdf5-many-datasets", "many.h5", data, "bounds-keras");
}

/// 32 MiB of zeros deflated into a file of some 50 KB (fixtures/hdf5/features/, h5py 3.16):
/// decoded, fingerprinted whole, and still within 64 MiB + 8x the input.
#[test]
fn hdf5_deflated_chunks_hundreds_of_times_their_size() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../fixtures/hdf5/features/deflated-zeros.h5"
    );
    let data = std::fs::read(path).unwrap();
    assert!(data.len() < 1 << 20, "{} bytes", data.len());
    plugin_alone("hdf5-deflated-zeros", "zeros.h5", data, "bounds-keras");
}

#[test]
fn keras_config_of_millions_of_unknown_objects() {
    let data = keras_unknown_objects(TARGET / 60);
    plugin_alone(
        "keras-unknown-objects",
        "unknown.keras",
        data,
        "bounds-keras",
    );
}

#[test]
fn keras_config_nested_as_deep_as_json_goes() {
    let data = keras_deep_config(TARGET / 2);
    plugin_alone("keras-deep-config", "deep.keras", data, "bounds-keras");
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
        "bounds-keras",
    );
}
