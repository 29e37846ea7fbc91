//! See `socair_plugin_joblib::fuzzing::joblib_reader`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_plugin_joblib::fuzzing::joblib_reader(data);
});
