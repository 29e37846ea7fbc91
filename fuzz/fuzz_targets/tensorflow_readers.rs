//! See `socair_tensorflow::fuzzing::check_readers`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_tensorflow::fuzzing::check_readers(data);
});
