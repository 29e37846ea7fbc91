//! See `socair_torch7::fuzzing::check_reader` (Lua Torch7 `.t7` files, plugins/torch7).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_torch7::fuzzing::check_reader(data);
});
