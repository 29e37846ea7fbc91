//! See `socair::fuzzing::check_zip_hints`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = socair::fuzzing::check_zip_hints(data);
});
