//! See `socair_ggml_quants::fuzzing::check`: a type byte and tensor bytes, dequantized.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_ggml_quants::fuzzing::check(data);
});
