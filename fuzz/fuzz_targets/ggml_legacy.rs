//! See `socair_gguf::legacy_ggml::check_legacy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_gguf::legacy_ggml::check_legacy(data);
});
