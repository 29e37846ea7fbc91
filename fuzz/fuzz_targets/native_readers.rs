//! See `socair_native::fuzzing::check_readers`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_native::fuzzing::check_readers(data);
});
