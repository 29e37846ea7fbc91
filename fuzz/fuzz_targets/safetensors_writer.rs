//! Reader-accepted headers re-planned by the writer (see `fuzzing::check_writer_round_trip`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_safetensors::fuzzing::check_writer_round_trip(data);
});
