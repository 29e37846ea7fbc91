//! The ExecuTorch `.pte` reader on arbitrary bytes (see `fuzzing::check_reader`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_executorch::fuzzing::check_reader(data);
});
