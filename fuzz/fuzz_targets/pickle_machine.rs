//! See `socair_torch_zip::fuzzing::check_pickle`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_torch_zip::fuzzing::check_pickle(data);
});
