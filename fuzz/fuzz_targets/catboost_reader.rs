//! See `socair_catboost::fuzzing::check_reader`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_catboost::fuzzing::check_reader(data);
});
