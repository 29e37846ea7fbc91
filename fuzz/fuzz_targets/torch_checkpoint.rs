//! See `socair_torch_zip::fuzzing::check_checkpoint`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_torch_zip::fuzzing::check_checkpoint(data);
});
