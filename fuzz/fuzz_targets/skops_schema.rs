//! See `socair_skops::fuzzing::check_schema`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_skops::fuzzing::check_schema(data);
});
