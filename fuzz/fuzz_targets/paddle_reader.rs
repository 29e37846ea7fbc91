//! See `socair_paddle::fuzzing::check_readers`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_paddle::fuzzing::check_readers(data);
});
