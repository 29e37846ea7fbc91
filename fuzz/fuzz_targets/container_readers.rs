//! See `socair_archive::fuzzing::check_containers`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_archive::fuzzing::check_containers(data);
});
