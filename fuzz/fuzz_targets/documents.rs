//! See `socair::fuzzing::check_documents`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair::fuzzing::check_documents(data);
});
