//! See `socair_plugin_keras::fuzzing::check_codecs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_plugin_keras::fuzzing::check_codecs(data);
});
