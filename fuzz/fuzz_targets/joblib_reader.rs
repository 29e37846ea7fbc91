//! See `socair_joblib::fuzzing::joblib_reader`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_joblib::fuzzing::joblib_reader(data);
});
