//! See `socair_config::fuzzing::check_reader`: the YAML judge and the native-code magic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_config::fuzzing::check_reader(data);
});
